"""Every budget and count has a maximum, checked when it is read, and the pages list them.

* Every numeric keyword of every registered agent that is a budget, a count or a seed is refused
  above its maximum when the spec is read, by one ``ValueError`` naming the agent, the key and the
  maximum.
* A search with a ``seconds`` budget stops at ``MAX_SIMULATIONS`` simulations at the latest, so its
  tree stays bounded (the compiled one never allocates more nodes than that many simulations take).
* ``draw-eval``'s counts (``--games``, ``--workers``, the agents of ``--league``, the values of
  ``--sweep``, the games of a whole run) have maxima, refused in one line before anything is played.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import agents
import agents.ismcts as python_search
import agents.ismcts_compiled as compiled_search
from agents.base import observe
from agents.ismcts import MAX_PROTECTED, MAX_SECONDS, MAX_SIMULATIONS, ISMCTSAgent
from agents.ismcts_compiled import CompiledISMCTSAgent
from arena.options import MAX_GAMES, MAX_LEAGUE_AGENTS, MAX_SWEEP_VALUES, MAX_WORKERS, RunOptions
from arena.specs import parse_agent_spec
from draw_env.observation import view_from_observation
from tests.positions import random_positions

ROOT = Path(__file__).resolve().parents[1]
#: Numeric keywords that weigh the agents' choices rather than spend time, memory or seats.
WEIGHTS = {"exploration", "rollout_randomness", "prior_visits", "temperature", "value_weight", "prior_weight", "uct_c"}
#: What a message names as the maximum: ``in [1, 1000000]``, ``(0, 3600.0]``, ``<= 9``, ``one of 2, 3, 4``, ``below 2**64``.
MAXIMUM = re.compile(r"(, [\d.]+\]|<= [\d.]+|one of [\d, ]+|below 2\*\*64)")


def numeric_keywords() -> list[tuple[str, str]]:
    found = []
    for name in agents.available():
        try:
            parameters = inspect.signature(agents.agent_class(name)).parameters
        except ImportError:  # OpenSpiel's bots without the openspiel extra
            continue
        for key, parameter in parameters.items():
            numeric = parameter.default is None or type(parameter.default) in (int, float)
            if numeric and key not in WEIGHTS and key not in ("path", "inference"):
                found.append((name, key))
    return found


@pytest.mark.parametrize(("name", "key"), numeric_keywords(), ids=lambda value: str(value))
def test_every_budget_and_count_of_every_agent_is_refused_above_its_maximum(name: str, key: str) -> None:
    needs = [key for key, parameter in inspect.signature(agents.agent_class(name)).parameters.items()
             if parameter.default is inspect.Parameter.empty]  # tabular's path: the file is read when built
    with pytest.raises(ValueError) as refused:
        parse_agent_spec(f"{name}:{key}={10**30}" + "".join(f",{needed}=missing.npz" for needed in needs))
    message = str(refused.value)
    assert message.startswith(f"agent {name!r}: {key} must be") and MAXIMUM.search(message), message
    assert "\n" not in message


def test_the_maxima_are_the_documented_ones() -> None:
    with pytest.raises(ValueError, match=re.escape("seconds must be a finite number in (0, 3600.0], got 1e+300")):
        parse_agent_spec("ismcts:seconds=1e300")
    with pytest.raises(ValueError, match=re.escape(f"simulations must be an integer in [1, {MAX_SIMULATIONS}]")):
        parse_agent_spec(f"ismcts_python:simulations={MAX_SIMULATIONS + 1}")
    with pytest.raises(ValueError, match=re.escape(f"protected must be an integer in [0, {MAX_PROTECTED}]")):
        parse_agent_spec(f"pimc:protected={MAX_PROTECTED + 1}")
    assert parse_agent_spec(f"ismcts:seconds={MAX_SECONDS:g},simulations={MAX_SIMULATIONS}")[1]["seconds"] == 3600


def position():  # type: ignore[no-untyped-def]
    state = random_positions(2, hands=1, seed=1, min_legal=2)[0]
    return state, observe(state, state.current)


def test_a_timed_compiled_search_stops_at_the_simulation_cap_and_its_tree_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compiled_search, "MAX_SIMULATIONS", 60)
    state, observation = position()
    width = state.game.num_actions
    agent = CompiledISMCTSAgent(seconds=5.0, seed=0)
    result = agent.search(observation)
    roots = len(state.legal_actions())
    assert result.simulations < 60 + roots  # whole determinizations, up to the cap (or the 5 seconds)
    assert agent._tree is not None and agent._tree.capacity <= 3 * (60 + width) + 1
    assert result.nodes <= 3 * (60 + width) + 1


def test_a_timed_python_search_stops_at_the_simulation_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(python_search, "MAX_SIMULATIONS", 30)
    state, observation = position()
    vector = observation["observation"]
    root = ISMCTSAgent(seconds=5.0, seed=0).search(view_from_observation(vector, state.game.num_players))
    done = sum(child.visits for child in root.children.values())
    assert done < 30 + len(state.legal_actions())


# ---------------------------------------------------------------------- draw-eval


def test_a_run_refuses_more_games_or_workers_than_its_maxima() -> None:
    with pytest.raises(ValueError, match=re.escape(f"num_games must be an integer in [1, {MAX_GAMES}], got 100000000000")):
        RunOptions(2, 10**11)
    with pytest.raises(ValueError, match=re.escape(f"workers must be an integer in [1, {MAX_WORKERS}]")):
        RunOptions(2, 10, workers=10**6)
    from arena.league import league, sweep

    with pytest.raises(ValueError, match=f"are 120000 games, more than the {MAX_GAMES} a run plays at most"):
        league(["random", "heaviest", "variety"], 2, 40_000, progress=False)
    with pytest.raises(ValueError, match=f"agent_specs must be a sequence of 2 to {MAX_LEAGUE_AGENTS} agent specs"):
        league(["random", "heaviest"] * 9, 2, 10, progress=False)
    with pytest.raises(ValueError, match=f"sweep takes at most {MAX_SWEEP_VALUES} values, got 33"):
        sweep("ismcts", ["heaviest"], "simulations", list(range(1, 34)), 10, progress=False)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--games", "100000000000"], f"--games must be an integer in [1, {MAX_GAMES}], got 100000000000"),
        (["--workers", "100000"], f"--workers must be an integer in [1, {MAX_WORKERS}], got 100000"),
        (["--sweep", "simulations=" + ",".join(map(str, range(1, 41)))], f"--sweep takes at most {MAX_SWEEP_VALUES} values, got 40"),
        ([*["random"] * 15, "--league", "--players", "2"], f"--league takes at most {MAX_LEAGUE_AGENTS} agents, got 17"),
    ],
)
def test_draw_eval_refuses_a_count_above_its_maximum_in_one_line(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.cli import main as draw_eval

    # --json names a folder: an older draw-eval that let the count through stops there, before playing.
    with pytest.raises(SystemExit) as stopped:
        draw_eval(["heaviest", "variety", *arguments, "--quiet", "--json", str(tmp_path)])  # agents before options
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and error == f"draw-eval: error: {message}\n"


def test_the_pages_list_the_maxima() -> None:
    agents_page = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    for value in (MAX_SIMULATIONS, int(MAX_SECONDS), MAX_PROTECTED, 3 * MAX_SIMULATIONS):
        assert f"{value:,}" in agents_page, value
    evaluation_page = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    for value in (MAX_GAMES, MAX_WORKERS, MAX_LEAGUE_AGENTS, MAX_SWEEP_VALUES):
        assert f"{value:,}" in evaluation_page, value
