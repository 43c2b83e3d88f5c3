"""Policy files: a network's weights as NumPy arrays, with a JSON record beside them.

A policy file is a pair ``NAME.npz`` + ``NAME.json``, written and read by the project's one
artefact writer and reader (:mod:`agents.artefacts`). Nothing in it runs code when loaded: the
record is plain JSON, read first and bounded; the arrays' names, shapes and dtypes are checked
against it from the archive's directory and ``.npy`` headers before any array is read, and no
pickle is ever loaded (:func:`draw_env.io.untrusted.loads_npz`).

``NAME.npz`` holds float32 arrays only, two per layer (``policy/{i}/weight`` ``(out, in)``,
``policy/{i}/bias``, optionally ``value/{i}/...``), as ``docs/agents.md`` describes.
``NAME.json``, the record::

    {"format": "draw-dominoes-policy", "version": 1,
     "num_players": 2,                 # the table the policy was trained for
     "max_pip": 3, "hand_size": 4, "protected": 1,   # its variant: only when not the seeds' game
     "features": "extended",           # its input encoding (draw_env.features)
     "obs_type": "information_state",  # what it reads (agents.inputs): written only for an
                                       # information state; a record without it reads observations
     "activation": "relu",             # "relu" or "tanh"
     "networks": {"policy": {"widths": [340, 512, 512, 58], "arrays": ["policy/0/weight", ...]},
                  "value": {"widths": [340, 256, 256, 1], "arrays": [...]}},   # optional
     "value_unit": 50.0,               # zero-sum hand points per unit of the value network's
                                       # output (1 / the training's reward scale); absent: unknown
     "sha256": "...",                  # of NAME.npz, so that a mismatched pair is refused
     "provenance": {...}}              # free-form: what it was trained from, commands, results

SB3 checkpoints (the ``.zip`` files ``MaskablePPO.save`` writes during training) are another
format, read by :mod:`agents.sb3_checkpoint`.

This module imports numpy and draw_env only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.artefacts import fail, open_artefact, save_artefact, short
from agents.artefacts import record_path as record_path  # where the record of a policy file lies
from agents.inputs import DEFAULT_OBS_TYPE, OBS_TYPES, check_obs_type, input_size
from draw_env.checks import check_choice, is_number
from draw_env.features import FEATURES
from draw_env.io.untrusted import ArrayHeader
from draw_env.rules import NUM_ACTIONS, PLAYER_COUNTS, DrawGame

FORMAT = "draw-dominoes-policy"
VERSION = 1
ACTIVATIONS = ("relu", "tanh")
#: Network name -> size of its last layer (the seeds' game; a variant's policy has ``2T + 2``).
OUTPUTS = {"policy": NUM_ACTIONS, "value": 1}
#: The record's keys of a variant, written only for a game other than the seeds'.
VARIANT_KEYS = ("max_pip", "hand_size", "protected")

#: The largest ``value_unit`` (points per value unit) a record may hold: a reward scale of 1e-6.
MAX_VALUE_UNIT = 1e6

#: ``(weight (out, in), bias (out,))``.
Layer = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True, eq=False)
class PolicyWeights:
    """Everything a policy file holds.

    Attributes:
        policy: the policy network's layers, input first; the last has 58 outputs (action logits).
        activation: ``"relu"`` or ``"tanh"``, after every layer but the last.
        features: the input encoding, one of :data:`draw_env.features.FEATURES`.
        num_players: the table size it was trained for; ``None`` only for a checkpoint whose
            side file is missing (then nothing says, and it plays at any table).
        value: the value network's layers (last has one output), or ``None``.
        provenance: free-form JSON data: what it was trained from, the commands, the results.
        variant: ``{"max_pip", "hand_size", "protected"}`` of the game it was trained for;
            ``None`` (what a seeds' game variant becomes): the seeds' game.
        obs_type: what the network reads, ``"observation"`` or ``"information_state"``
            (:mod:`agents.inputs`); its input size follows.
        value_unit: zero-sum hand points per unit of the value network's output (1 / the reward
            scale it was trained at; 40 for expert iteration, whose targets are the searches');
            ``None``: unknown (a file written without it, or values that are not zero-sum points),
            and nobody shows its values as points.
    """

    policy: tuple[Layer, ...]
    activation: str
    features: str
    num_players: int | None
    value: tuple[Layer, ...] | None = None
    provenance: Mapping[str, Any] = field(default_factory=dict)
    variant: Mapping[str, int] | None = None
    obs_type: str = DEFAULT_OBS_TYPE
    value_unit: float | None = None

    def __post_init__(self) -> None:
        check_choice("activation", self.activation, ACTIVATIONS)
        if self.value_unit is not None and not (is_number(self.value_unit) and 0 < self.value_unit <= MAX_VALUE_UNIT):
            raise ValueError(f"value_unit must be a number in (0, {MAX_VALUE_UNIT:g}] or None, got {short(self.value_unit)}")
        check_choice("features", self.features, FEATURES)
        check_obs_type("obs_type", self.obs_type)
        if self.num_players is not None:
            check_choice("num_players", self.num_players, PLAYER_COUNTS)
        if self.variant is not None:
            if not isinstance(self.variant, Mapping) or sorted(self.variant) != sorted(VARIANT_KEYS):
                raise ValueError(f"variant must map exactly {', '.join(VARIANT_KEYS)}, got {short(self.variant)}")
            game = DrawGame(self.num_players or 2, **self.variant)
            # The seeds' game is stored as None, so that its files stay as they always were.
            object.__setattr__(self, "variant", None if game.is_default else game.variant)
        game = self.game
        inputs = input_size(self.features, game, self.obs_type)
        for name, layers in self.networks().items():
            check_layers(name, layers, inputs, game.num_actions if name == "policy" else OUTPUTS[name])

    @property
    def game(self) -> DrawGame:
        """The game it was trained for (2 players when the count is unknown)."""
        return DrawGame(self.num_players or 2, **(self.variant or {}))

    def describe_variant(self) -> str:
        """``max_pip=6, hand_size=7, protected=2``: the variant, for messages."""
        return describe_variant(self.game)

    def networks(self) -> dict[str, tuple[Layer, ...]]:
        """``{"policy": layers}``, with ``"value"`` too when there is one."""
        return {"policy": self.policy} | ({} if self.value is None else {"value": self.value})


def describe_variant(game: DrawGame) -> str:
    """``max_pip=6, hand_size=7, protected=2``."""
    return ", ".join(f"{key}={value}" for key, value in game.variant.items())


def check_layers(name: str, layers: tuple[Layer, ...], inputs: int, outputs: int) -> None:
    """Refuse an MLP whose arrays ``NAME/i/weight`` (out, in) and ``NAME/i/bias`` (out,) are not
    finite float32 layers chaining ``inputs`` to ``outputs`` (a ``ValueError`` naming the layer)."""
    if not layers:
        raise ValueError(f"the {name} network has no layers")
    width = inputs
    for index, (weight, bias) in enumerate(layers):
        where = f"{name}/{index}"
        if weight.dtype != np.float32 or bias.dtype != np.float32:
            raise ValueError(f"{where}: arrays must be float32, got {weight.dtype} and {bias.dtype}")
        if weight.ndim != 2 or weight.shape[1] != width or bias.shape != (weight.shape[0],):
            raise ValueError(
                f"{where}: expected weight (out, {width}) and bias (out,), got {weight.shape} and {bias.shape}"
            )
        if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
            raise ValueError(f"{where}: weights must be finite")
        width = weight.shape[0]
    if width != outputs:
        raise ValueError(f"the {name} network must end with {outputs} outputs, got {width}")


def _widths(layers: tuple[Layer, ...]) -> list[int]:
    return [int(layers[0][0].shape[1])] + [int(weight.shape[0]) for weight, _ in layers]


def _array_names(name: str, layers: int) -> list[str]:
    return [f"{name}/{index}/{part}" for index in range(layers) for part in ("weight", "bias")]


# ---------------------------------------------------------------------------- npz + json


def save_policy_file(weights: PolicyWeights, path: str | os.PathLike[str]) -> Path:
    """Write ``weights`` as ``path`` (``.npz``) and its record beside it, each atomically
    (:func:`agents.artefacts.save_artefact`: the record holds the npz's sha256, so an interrupted
    save never leaves a pair that loads as something else).

    Returns:
        The npz path written (parent directories are created).

    Raises:
        ValueError: if ``path`` does not end in ``.npz`` or ``weights`` lacks a player count.
    """
    if weights.num_players is None:
        raise ValueError("num_players must be 2, 3 or 4 to save a policy file, got None")
    arrays: dict[str, np.ndarray] = {}
    networks: dict[str, Any] = {}
    for name, layers in weights.networks().items():
        names = _array_names(name, len(layers))
        arrays.update(zip(names, (array for layer in layers for array in layer), strict=True))
        networks[name] = {"widths": _widths(layers), "arrays": names}
    fields = {
        "num_players": weights.num_players,
        **(weights.variant or {}),
        "features": weights.features,
        # Written for an information state only, so that the files of observations stay as they were.
        **({} if weights.obs_type == DEFAULT_OBS_TYPE else {"obs_type": weights.obs_type}),
        "activation": weights.activation,
        "networks": networks,
        # Only with a value network whose unit is known: a record without it shows no value.
        **({"value_unit": float(weights.value_unit)} if weights.value is not None and weights.value_unit is not None else {}),
    }
    return save_artefact(path, FORMAT, VERSION, arrays, fields, weights.provenance)


#: The largest record (``NAME.json``) read: its provenance is free-form but small.
MAX_RECORD_BYTES = 4 * 1024 * 1024
#: The widest layer a policy file may declare (the shipped ones use 512).
MAX_WIDTH = 65_536


def load_policy_file(path: str | os.PathLike[str]) -> PolicyWeights:
    """Read a policy file ``path`` (``.npz``) and its JSON record, checking one against the other.

    Nothing is trusted: the record is read with :func:`draw_env.io.untrusted.read_json` (bounded
    size and depth) and checked first; it fixes the name, shape and dtype of every array, which
    are compared with the archive's zip directory and ``.npy`` headers before any array is read
    (:func:`draw_env.io.untrusted.loads_npz`: plain numbers only, never a pickle, sizes bounded).

    Raises:
        ValueError: if either file is missing or malformed, they do not match, or an array is
            not float32; the message names the file and the field.
    """
    artefact = open_artefact(path, "policy file", FORMAT, VERSION, max_record_bytes=MAX_RECORD_BYTES)
    record_file, record = artefact.record_file, artefact.record
    networks = record.get("networks")
    if not isinstance(networks, dict) or "policy" not in networks or not set(networks) <= set(OUTPUTS):
        fail(
            record_file,
            "networks",
            f"must map 'policy' (and optionally 'value') to their layers, got {short(networks)}",
        )
    expected: dict[str, tuple[int, ...]] = {}
    layer_names: dict[str, list[str]] = {}
    for name, spec in networks.items():
        widths = spec.get("widths") if isinstance(spec, dict) else None
        if (
            not isinstance(widths, list)
            or len(widths) < 2
            or not all(type(w) is int and 0 < w <= MAX_WIDTH for w in widths)
        ):
            fail(
                record_file,
                f"networks.{name}.widths",
                f"must list at least 2 integers in 1..{MAX_WIDTH}, got {short(widths)}",
            )
        names = _array_names(name, len(widths) - 1)
        if spec.get("arrays") != names:
            fail(record_file, f"networks.{name}.arrays", f"must be {names}, got {short(spec.get('arrays'))}")
        for index, (inputs, outputs) in enumerate(zip(widths, widths[1:], strict=False)):
            expected[f"{name}/{index}/weight"] = (outputs, inputs)
            expected[f"{name}/{index}/bias"] = (outputs,)
        layer_names[name] = names
    variant = _read_variant(record, record_file)
    obs_type = read_obs_type(record, record_file)
    value_unit = record.get("value_unit")
    if value_unit is not None and (type(value_unit) not in (int, float) or not 0 < value_unit <= MAX_VALUE_UNIT
                                   or "value" not in networks):
        fail(record_file, "value_unit",
             f"must be a number in (0, {MAX_VALUE_UNIT:g}] beside a value network, got {short(value_unit)}")
    def check(headers: Mapping[str, ArrayHeader]) -> None:
        missing = [array for array in expected if array not in headers]
        if missing:
            raise ValueError(f"lacks the arrays {missing} listed in {record_file.name}")
        extra = sorted(set(headers) - set(expected))
        if extra:
            raise ValueError(f"holds arrays {[name[:80] for name in extra]} that {record_file.name} does not list")
        for array, shape in expected.items():
            header = headers[array]
            if header.shape != shape:
                network = array.split("/")[0]
                raise ValueError(
                    f"{array} has the shape {header.shape}, but '{network}' widths in "
                    f"{record_file.name} ('networks.{network}.widths') give {shape}"
                )
            if header.dtype != np.float32:
                raise ValueError(f"{array}: arrays must be float32, got {header.dtype}")

    arrays = artefact.arrays(check)
    layers = {
        name: tuple((arrays[weight], arrays[bias]) for weight, bias in zip(names[::2], names[1::2], strict=True))
        for name, names in layer_names.items()
    }
    try:
        return PolicyWeights(
            policy=layers["policy"],
            activation=record.get("activation"),  # type: ignore[arg-type]  # checked here
            features=record.get("features"),  # type: ignore[arg-type]
            num_players=record.get("num_players"),
            value=layers.get("value"),
            provenance=artefact.provenance,
            variant=variant,
            obs_type=obs_type,
            value_unit=None if value_unit is None else float(value_unit),
        )
    except ValueError as error:
        raise ValueError(f"{record_file}: {error}") from None


def read_obs_type(record: Mapping[str, Any], record_file: Path) -> str:
    """The record's ``obs_type``: ``"observation"`` when it names none (a file written before the
    field), else one of :data:`agents.inputs.OBS_TYPES`."""
    obs_type = record.get("obs_type", DEFAULT_OBS_TYPE)
    if obs_type not in OBS_TYPES:
        fail(record_file, "obs_type", f"must be one of {', '.join(map(repr, OBS_TYPES))}, got {short(obs_type)}")
    return str(obs_type)


def _read_variant(record: Mapping[str, Any], record_file: Path) -> dict[str, int] | None:
    """The record's variant: ``None`` (the seeds' game) when it names none; else all three keys,
    integers, that make a game."""
    present = [key for key in VARIANT_KEYS if key in record]
    if not present:
        return None
    for key in VARIANT_KEYS:
        if type(record.get(key)) is not int:
            fail(record_file, key, f"must be an integer (a variant names {', '.join(VARIANT_KEYS)}), "
                                   f"got {short(record.get(key))}")
    variant = {key: record[key] for key in VARIANT_KEYS}
    players = record.get("num_players")
    try:
        DrawGame(players if players in PLAYER_COUNTS else 2, **variant)
    except ValueError as error:
        fail(record_file, "max_pip', 'hand_size', 'protected", f"are no game: {error}")
    return variant
