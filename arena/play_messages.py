"""Every sentence ``draw-play`` says, in each language of ``--lang``.

Tile names stay ``[a|b]``; the game's own words (the ends, draw, pass, tiles) are the rules'
:data:`draw_env.rules.WORDS`, which :mod:`arena.play` uses for moves.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "intro": "Draw dominoes: {players} players, {episode}; you are player_{you}. Opponents: {opponents}. Seed {seed}.",
        "one_hand": "one hand",
        "a_match": "a match to {target}",
        "turn": "--- Hand {hand}, your turn (player_{you}) ---",
        "since": "Since your last turn: ",
        "line": "Line: {line}",
        "empty_line": "(empty: lead any tile)",
        "ends": "Open ends: left {left}, right {right}",
        "boneyard": "Boneyard: {count} tiles ({drawing})",
        "may_draw": "you may draw",
        "no_draw": "no drawing: the last 2 stay",
        "sizes": "Tiles in hand: {sizes}",
        "you": "you (player_{seat})",
        "scores": "Scores: {scores} (target {target})",
        "hand": "Your hand ({pips} pips): {tiles}",
        "moves": "Your moves:",
        "prompt": "Your move (number, e.g. '[1|4] left', 'draw', 'pass', 'hint', 'help', 'quit'): ",
        "played": "You played {move}.",
        "you_drew": "You drew {tile}.",
        "placed": "{who} placed {tile} at the {end} end",
        "drew": "{who} drew {count} {tiles}",
        "drew_then": "{who} drew {count} {tiles}, then placed {tile} at the {end} end",
        "passed": "{who} passed",
        "hand_over": "=== Hand {hand} over, {result} ===",
        "domino": "domino: {who} went out and scores {points}",
        "blocked_shared": "blocked: the lowest total is shared, nobody scores",
        "blocked": "blocked: {who} holds the single lowest total and scores {points}",
        "revealed": "  {who}: {tiles} ({pips} pips, {points} points)",
        "no_tiles": "no tiles",
        "match_you": "=== Match over: you win with {points} points ===",
        "match_win": "=== Match over: {who} wins with {points} points ===",
        "match_drawn": "=== Match over: drawn, the leaders are tied at {points} points ===",
        "ended": "Game ended early ({reason}).",
        "input_ended": "input ended",
        "you_quit": "you quit",
        "saved": "Record saved to {path} (replay it with: draw-replay {path})",
        "hint_choice": "  {agent} would play {move} ({number}).",
        "hint_values": "  Its value of each move (search estimate of your zero-sum hand points):",
        "type_move": "type a move",
        "bad_number": "{number} is not a move number: choose 1 to {count}",
        "cannot_draw": "you cannot draw now: the boneyard is down to its last 2 tiles",
        "cannot_pass": "you cannot pass: you may pass only with 2 tiles left in the boneyard and no tile that fits",
        "not_a_move": "'{text}' is not a move",
        "cannot_place": "{tile} cannot be placed now",
        "both_ends": "{tile} fits both ends: say '{tile} {left}' or '{tile} {right}'",
        "name_end": "'{text}' is not a move: name the end, e.g. '{tile} {left}'",
        "not_legal": "{move} is not legal now",
        "moves_list": "Moves: ",
        "not_utf8": "that line is not UTF-8 text",
        "help": (
            "Type the number of a move, or its name ('[1|4] left', 'draw', 'pass'; a tile alone when it fits one end),\n"
            "'hint' for an agent's advice, 'quit' to stop."
        ),
        "rules": (
            "Rules:\n"
            "- On your turn, place a tile with a half that matches an open end of the line (the first tile: any tile).\n"
            "- While the boneyard holds 3 or more tiles you may draw a tile ('{draw}'), even when one fits; you must\n"
            "  when none fits. Drawing keeps your turn: draw again, or place any tile that fits. The last 2 tiles of\n"
            "  the boneyard are never drawn.\n"
            "- Once the boneyard is down to 2 tiles you pass ('{pass_word}') only when no tile fits. Placing or passing\n"
            "  ends your turn.\n"
            "- A hand ends when someone places their last tile (domino: they score the pips left in every opponent's\n"
            "  hand), or when every player passes in turn (blocked: the player with the single lowest pip total scores\n"
            "  the others' totals minus their own; if the lowest total is shared, nobody scores)."
        ),
        "rules_match": (
            "- The match ends after the hand in which someone reaches {target} points: the highest score wins\n"
            "  (leaders tied: a drawn match)."
        ),
    },
    "ja": {
        "intro": "ドロー・ドミノ: {players}人、{episode}。あなたは player_{you} です。相手: {opponents}。シード {seed}。",
        "one_hand": "1ハンド",
        "a_match": "{target}点先取の試合",
        "turn": "--- ハンド{hand}、あなたの番です (player_{you}) ---",
        "since": "前の番から: ",
        "line": "列: {line}",
        "empty_line": "(空: どの牌でも出せます)",
        "ends": "開いている端: 左 {left}、右 {right}",
        "boneyard": "山札: {count}枚 ({drawing})",
        "may_draw": "引けます",
        "no_draw": "引けません: 最後の2枚は残ります",
        "sizes": "手牌の数: {sizes}",
        "you": "あなた (player_{seat})",
        "scores": "得点: {scores} (目標 {target})",
        "hand": "あなたの手牌 ({pips}目): {tiles}",
        "moves": "指せる手:",
        "prompt": "あなたの手 (番号、'[1|4] 左'、'引く'、'パス'、'hint'、'help'、'quit'): ",
        "played": "あなたは {move} を指しました。",
        "you_drew": "{tile} を引きました。",
        "placed": "{who}が{tile}を{end}端に置いた",
        "drew": "{who}が{count}{tiles}引いた",
        "drew_then": "{who}が{count}{tiles}引いてから{tile}を{end}端に置いた",
        "passed": "{who}がパスした",
        "hand_over": "=== ハンド{hand}終了: {result} ===",
        "domino": "ドミノ: {who}が上がり、{points}点",
        "blocked_shared": "ブロック: 最少の合計が同点のため得点なし",
        "blocked": "ブロック: {who}の合計が単独で最少、{points}点",
        "revealed": "  {who}: {tiles} ({pips}目、{points}点)",
        "no_tiles": "手牌なし",
        "match_you": "=== 試合終了: あなたの勝ち ({points}点) ===",
        "match_win": "=== 試合終了: {who}の勝ち ({points}点) ===",
        "match_drawn": "=== 試合終了: 引き分け (首位が{points}点で同点) ===",
        "ended": "ゲームを途中で終了しました ({reason})。",
        "input_ended": "入力が終わりました",
        "you_quit": "終了しました",
        "saved": "記録を {path} に保存しました (再生: draw-replay {path})",
        "hint_choice": "  {agent}なら {move} ({number}) を指します。",
        "hint_values": "  各手の評価 (探索による、あなたのこのハンドのゼロサム得点の見積もり):",
        "type_move": "手を入力してください",
        "bad_number": "{number}番の手はありません: 1から{count}の番号を選んでください",
        "cannot_draw": "今は引けません: 山札は最後の2枚です",
        "cannot_pass": "パスできません: パスできるのは山札が2枚で置ける牌がないときだけです",
        "not_a_move": "'{text}' は手ではありません",
        "cannot_place": "{tile} は今は置けません",
        "both_ends": "{tile} は両端に置けます: '{tile} {left}' か '{tile} {right}' と入力してください",
        "name_end": "'{text}' は手ではありません: 端を指定してください (例: '{tile} {left}')",
        "not_legal": "{move} は今は指せません",
        "moves_list": "指せる手: ",
        "not_utf8": "その行は UTF-8 のテキストではありません",
        "help": (
            "手の番号か名前 ('[1|4] 左'、'引く'、'パス'; 一方の端にしか置けない牌は牌だけでも可) を入力してください。\n"
            "'hint' でエージェントの助言、'quit' で終了します。"
        ),
        "rules": (
            "ルール:\n"
            "- 自分の番には、列の開いている端の目と合う半分を持つ牌を置きます (最初の牌はどれでも置けます)。\n"
            "- 山札が3枚以上ある間は、置ける牌があっても1枚引けます ('{draw}')。置ける牌がなければ引かなければなりません。\n"
            "  引いても番は続きます: さらに引くか、合う牌を置きます。山札の最後の2枚は引けません。\n"
            "- 山札が2枚になったら、置ける牌がないときだけパスします ('{pass_word}')。牌を置くかパスすると番が終わります。\n"
            "- 誰かが最後の牌を置くとハンドが終わります (ドミノ: その人が相手全員の手牌の目の合計を得点)。全員が続けて\n"
            "  パスしても終わります (ブロック: 手牌の目の合計が単独で最少の人が、他の人の合計から自分の合計を引いた点を得点。\n"
            "  最少が同点なら誰も得点しません)。"
        ),
        "rules_match": "- 誰かが{target}点に達したハンドの後で試合が終わり、最高得点の人が勝ちです (首位が同点なら引き分け)。",
    },
    "it": {
        "intro": "Domino Draw: {players} giocatori, {episode}; tu sei player_{you}. Avversari: {opponents}. Seme {seed}.",
        "one_hand": "una mano",
        "a_match": "una partita a {target}",
        "turn": "--- Mano {hand}, tocca a te (player_{you}) ---",
        "since": "Dal tuo ultimo turno: ",
        "line": "Linea: {line}",
        "empty_line": "(vuota: apri con qualsiasi tessera)",
        "ends": "Estremità libere: sinistra {left}, destra {right}",
        "boneyard": "Mazzo: {count} tessere ({drawing})",
        "may_draw": "puoi pescare",
        "no_draw": "niente pesca: le ultime 2 restano",
        "sizes": "Tessere in mano: {sizes}",
        "you": "tu (player_{seat})",
        "scores": "Punteggi: {scores} (obiettivo {target})",
        "hand": "La tua mano ({pips} punti): {tiles}",
        "moves": "Le tue mosse:",
        "prompt": "La tua mossa (numero, '[1|4] sinistra', 'pesca', 'passo', 'hint', 'help', 'quit'): ",
        "played": "Hai giocato {move}.",
        "you_drew": "Hai pescato {tile}.",
        "placed": "{who} ha messo {tile} all'estremità {end}",
        "drew": "{who} ha pescato {count} {tiles}",
        "drew_then": "{who} ha pescato {count} {tiles}, poi ha messo {tile} all'estremità {end}",
        "passed": "{who} ha passato",
        "hand_over": "=== Mano {hand} finita: {result} ===",
        "domino": "domino: {who} ha chiuso e segna {points}",
        "blocked_shared": "bloccata: il totale più basso è condiviso, nessuno segna",
        "blocked": "bloccata: {who} ha da solo il totale più basso e segna {points}",
        "revealed": "  {who}: {tiles} ({pips} punti in mano, {points} punti segnati)",
        "no_tiles": "nessuna tessera",
        "match_you": "=== Partita finita: hai vinto con {points} punti ===",
        "match_win": "=== Partita finita: vince {who} con {points} punti ===",
        "match_drawn": "=== Partita finita: pareggio, i primi sono pari a {points} punti ===",
        "ended": "Partita interrotta ({reason}).",
        "input_ended": "fine dell'input",
        "you_quit": "hai lasciato",
        "saved": "Partita salvata in {path} (per rivederla: draw-replay {path})",
        "hint_choice": "  {agent} giocherebbe {move} ({number}).",
        "hint_values": "  Il suo valore di ogni mossa (stima della ricerca dei tuoi punti a somma zero nella mano):",
        "type_move": "scrivi una mossa",
        "bad_number": "{number} non è il numero di una mossa: scegli da 1 a {count}",
        "cannot_draw": "ora non puoi pescare: nel mazzo restano le ultime 2 tessere",
        "cannot_pass": "non puoi passare: si passa solo con 2 tessere nel mazzo e nessuna tessera che si attacca",
        "not_a_move": "'{text}' non è una mossa",
        "cannot_place": "{tile} ora non si può mettere",
        "both_ends": "{tile} va a entrambe le estremità: scrivi '{tile} {left}' o '{tile} {right}'",
        "name_end": "'{text}' non è una mossa: indica l'estremità, per esempio '{tile} {left}'",
        "not_legal": "{move} ora non è ammessa",
        "moves_list": "Mosse: ",
        "not_utf8": "quella riga non è testo UTF-8",
        "help": (
            "Scrivi il numero di una mossa o il suo nome ('[1|4] sinistra', 'pesca', 'passo'; la sola tessera se va a\n"
            "una sola estremità), 'hint' per il consiglio di un agente, 'quit' per smettere."
        ),
        "rules": (
            "Regole:\n"
            "- Al tuo turno metti una tessera con una metà uguale a un'estremità libera della linea (la prima: qualsiasi).\n"
            "- Finché il mazzo ha 3 o più tessere puoi pescarne una ('{draw}'), anche se una si attacca; devi pescare\n"
            "  se nessuna si attacca. Pescare non chiude il turno: peschi ancora o metti una tessera che si attacca.\n"
            "  Le ultime 2 tessere del mazzo non si pescano mai.\n"
            "- Con 2 tessere nel mazzo passi ('{pass_word}') solo se nessuna tessera si attacca. Mettere una tessera o\n"
            "  passare chiude il turno.\n"
            "- La mano finisce quando qualcuno mette la sua ultima tessera (domino: segna i punti rimasti in mano a tutti\n"
            "  gli avversari) o quando tutti passano di seguito (bloccata: chi ha da solo il totale più basso segna i totali\n"
            "  degli altri meno il proprio; se il più basso è condiviso, nessuno segna)."
        ),
        "rules_match": (
            "- La partita finisce dopo la mano in cui qualcuno arriva a {target} punti: vince il punteggio più alto\n"
            "  (primi pari: pareggio)."
        ),
    },
}



def message(lang: str, key: str, **fields: object) -> str:
    """The sentence ``key`` in ``lang``, its ``{fields}`` filled in."""
    return MESSAGES[lang][key].format(**fields)
