"""SB3 checkpoints: the ``.zip`` files ``MaskablePPO.save`` writes, read as policy weights.

:func:`read_checkpoint` reads a checkpoint without unpickling anything: only its ``policy.pth``
entry, as a torch archive of plain tensors (:mod:`agents.torch_archive`), and the side file
:func:`write_checkpoint_record` writes beside it (``final.zip`` -> ``final.policy.json``), which
says the activation, the features, the player count, the variant and the ``obs_type``. The SB3 parameter names of an MLP policy
live here too (:func:`sb3_layers`, :func:`weights_from_state_dict`, :func:`sb3_state_dict`). The
project's own format, the policy file ``.npz`` + ``.json``, is :mod:`agents.policy_file`.

This module imports numpy, draw_env and :mod:`agents.policy_file` only (no torch).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from agents.inputs import DEFAULT_OBS_TYPE, check_obs_type, input_size
from agents.policy_file import (
    ACTIVATIONS,
    MAX_RECORD_BYTES,
    OUTPUTS,
    VARIANT_KEYS,
    VERSION,
    PolicyWeights,
    read_obs_type,
)
from agents.torch_archive import TensorHeader, read_tensors
from draw_env.checks import check_choice
from draw_env.features import FEATURES
from draw_env.io.files import write_text_atomic
from draw_env.io.untrusted import MAX_ARRAY_BYTES, ZIP_ERRORS, open_zip, read_bytes, read_json
from draw_env.rules import PLAYER_COUNTS, DrawGame

CHECKPOINT_FORMAT = "draw-dominoes-checkpoint"
#: The activation assumed for an SB3 checkpoint without a side file: MaskablePPO's default.
SB3_DEFAULT_ACTIVATION = "tanh"
#: The most members a zip read here may list (an SB3 model zip holds about 6).
MAX_ZIP_MEMBERS = 4096

# SB3 names in policy.pth: hidden layers of the MLP extractor, then the output layer. The one
# place that knows them (with sb3_state_dict and weights_from_state_dict below).
_SB3_HIDDEN = {"policy": "mlp_extractor.policy_net", "value": "mlp_extractor.value_net"}
_SB3_OUTPUT = {"policy": "action_net", "value": "value_net"}
_SB3_KEY = re.compile(
    r"^mlp_extractor\.(policy|value)_net\.(\d+)\.(weight|bias)$|^(action|value)_net\.(weight|bias)$"
)


def _short(value: Any) -> str:
    """``repr(value)``, cut to 200 characters (a hostile file may hold anything)."""
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


class WeightsRecord(TypedDict, total=False):
    """What :func:`weights_from_state_dict` keeps beside the networks, as the keywords that the
    functions built on it pass through unchanged (``train.sb3_adapter.weights_of``,
    ``train.export.export_policy``); meanings and defaults are :func:`weights_from_state_dict`'s."""

    value: bool
    provenance: Mapping[str, Any] | None
    game: DrawGame | None
    obs_type: str
    value_unit: float | None


def weights_from_state_dict(
    state: Mapping[str, Any],
    activation: str,
    num_players: int | None,
    *,
    features: str | None = None,
    value: bool = True,
    provenance: Mapping[str, Any] | None = None,
    game: DrawGame | None = None,
    obs_type: str = DEFAULT_OBS_TYPE,
    value_unit: float | None = None,
) -> PolicyWeights:
    """The networks of a ``MaskableActorCriticPolicy`` state dict (an MLP policy, SB3's names).

    Args:
        state: parameter name -> tensor or array, as ``policy.state_dict()`` or ``policy.pth`` give.
        activation: ``"relu"`` or ``"tanh"`` (the state dict does not say).
        num_players: the table size the policy was trained for, or ``None`` if unknown.
        features: the input encoding; ``None`` picks the one whose size matches the input layer.
        value: keep the value network too.
        provenance: stored with the weights.
        game: the variant it was trained for (``None``: the seeds' game), recorded with the weights.
        obs_type: what it reads (:mod:`agents.inputs`), recorded with the weights.
        value_unit: zero-sum hand points per unit of the value network's output (1 / the reward
            scale it was trained at), recorded with the weights; ``None``: unknown.

    Raises:
        ValueError: if a parameter is not one of an MLP policy's, or the shapes do not fit
            (checked before any parameter is converted).
    """
    shapes = {key: _shape_of(tensor) for key, tensor in state.items()}
    layers, features = sb3_layers(
        shapes, features=features, value=value, game=_sized_game(game, num_players), obs_type=obs_type
    )
    networks = {
        name: tuple((_to_float32(weight, state[weight]), _to_float32(bias, state[bias])) for weight, bias in keys)
        for name, keys in layers.items()
    }
    return PolicyWeights(
        policy=networks["policy"],
        activation=activation,
        features=features,
        num_players=num_players,
        value=networks.get("value"),
        provenance=dict(provenance or {}),
        variant=None if game is None else game.variant,
        obs_type=obs_type,
        value_unit=value_unit if value else None,
    )


def _sized_game(game: DrawGame | None, num_players: int | None) -> DrawGame:
    """The game that sizes a network's input: ``game``, or the seeds' game at the table (an
    information state's length depends on the player count)."""
    return game if game is not None else DrawGame(num_players or 2)


def sb3_layers(
    shapes: Mapping[Any, tuple[int, ...]],
    *,
    features: str | None = None,
    value: bool = True,
    game: DrawGame | None = None,
    obs_type: str = DEFAULT_OBS_TYPE,
) -> tuple[dict[str, tuple[tuple[str, str], ...]], str]:
    """The layers of an SB3 MLP policy from its parameters' names and shapes alone.

    Args:
        shapes: parameter name -> shape, as in a ``MaskableActorCriticPolicy`` state dict.
        features: the input encoding; ``None`` picks the one whose size matches the input layer.
        value: the value network too (without, its parameters need only SB3's names).
        game: the variant the network plays (``None``: the seeds' game), which sizes its input
            and its action logits.
        obs_type: what it reads (:mod:`agents.inputs`), which sizes its input too.

    Returns:
        ``{"policy": layers, "value": layers}``, each layer its ``(weight name, bias name)``,
        input first, and the input encoding.

    Raises:
        ValueError: a name that is not an MLP policy's, or a shape that does not fit (weights
            ``(out, in)`` chained from the encoding's size, biases ``(out,)``, 58 action logits
            and 1 value); the message names the parameter.
    """
    hidden: dict[str, dict[int, dict[str, str]]] = {"policy": {}, "value": {}}
    output: dict[str, dict[str, str]] = {"policy": {}, "value": {}}
    for key in shapes:
        match = _SB3_KEY.match(key) if isinstance(key, str) else None
        if match is None:
            raise ValueError(
                f"parameter {_short(key)} is not part of an MLP policy (Linear layers with ReLU or Tanh, "
                "no feature-extractor weights): this network cannot be read as a policy file"
            )
        if match.group(1):
            hidden[match.group(1)].setdefault(int(match.group(2)), {})[match.group(3)] = key
        else:
            output[match.group(4).replace("action", "policy")][match.group(5)] = key
    layers: dict[str, tuple[tuple[str, str], ...]] = {}
    for name in ("policy", "value") if value else ("policy",):
        indices = sorted(hidden[name])
        # SB3 builds [Linear, activation, Linear, activation, ...]: Linear layers sit at even indices.
        if indices != list(range(0, 2 * len(indices), 2)) or len(output[name]) != 2:
            raise ValueError(
                f"the {name} network's parameters are not an MLP's: {_SB3_HIDDEN[name]} {indices}"
            )
        parts = [hidden[name][index] for index in indices] + [output[name]]
        if any(set(part) != {"weight", "bias"} for part in parts):
            raise ValueError(f"the {name} network lacks a weight or a bias")
        layers[name] = tuple((part["weight"], part["bias"]) for part in parts)
    first = layers["policy"][0][0]
    if len(shapes[first]) != 2:
        raise ValueError(f"{first} has the shape {shapes[first]}, not (out, in)")
    inputs = shapes[first][1]
    sized = game or DrawGame(2)
    if features is None:
        matching = [name for name in FEATURES if input_size(name, sized, obs_type) == inputs]
        if not matching:
            raise ValueError(f"input size {inputs} matches no encoding of draw_env.features ({FEATURES}) "
                             f"with obs_type={obs_type!r}")
        features = matching[0]
    elif input_size(features, sized, obs_type) != inputs:
        raise ValueError(
            f"features {features!r} with obs_type={obs_type!r} give {input_size(features, sized, obs_type)} inputs, "
            f"the network takes {inputs}"
        )
    outputs = {**OUTPUTS, "policy": game.num_actions} if game is not None else OUTPUTS
    for name, keys in layers.items():
        _check_sb3_shapes(name, keys, shapes, inputs, outputs[name])
    return layers, features


def _check_sb3_shapes(
    name: str, keys: tuple[tuple[str, str], ...], shapes: Mapping[Any, tuple[int, ...]], inputs: int, outputs: int
) -> None:
    """Network ``name``'s layers chain from ``inputs`` to its outputs: weights ``(out, in)``, biases ``(out,)``."""
    width = inputs
    for weight, bias in keys:
        if len(shapes[weight]) != 2 or shapes[weight][1] != width:
            raise ValueError(f"{weight} has the shape {shapes[weight]}, not (out, {width})")
        width = shapes[weight][0]
        if shapes[bias] != (width,):
            raise ValueError(f"{bias} has the shape {shapes[bias]}, not ({width},) as {weight} gives")
    if width != outputs:
        raise ValueError(f"the {name} network must end with {outputs} outputs, got {width}")


def sb3_state_dict(weights: PolicyWeights) -> dict[str, np.ndarray]:
    """``weights``' arrays under the names of a ``MaskableActorCriticPolicy`` state dict: the
    inverse of :func:`weights_from_state_dict`."""
    state = {}
    for name, layers in weights.networks().items():
        for index, (weight, bias) in enumerate(layers):
            # SB3 builds [Linear, activation, Linear, ...]: the Linear layers sit at even indices.
            prefix = _SB3_OUTPUT[name] if index == len(layers) - 1 else f"{_SB3_HIDDEN[name]}.{2 * index}"
            state[f"{prefix}.weight"], state[f"{prefix}.bias"] = weight, bias
    return state


def _shape_of(tensor: Any) -> tuple[int, ...]:
    return tuple(int(length) for length in (tensor.shape if hasattr(tensor, "shape") else np.shape(tensor)))


def _to_float32(key: str, tensor: Any) -> np.ndarray:
    """Parameter ``key``'s values as a float32 array (a dense torch tensor of any float dtype, or
    an array)."""
    try:
        if hasattr(tensor, "detach"):  # a torch tensor: bfloat16 has no NumPy twin, so as float32 first
            tensor = tensor.detach().cpu().float().numpy()
        with np.errstate(over="ignore"):  # a float64 beyond float32's range: inf, refused as not finite
            return np.ascontiguousarray(tensor, dtype=np.float32)
    except (TypeError, RuntimeError, ValueError) as error:
        raise ValueError(f"parameter {key!r} is not an array of numbers ({_one_line(error)})") from None


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:200]


def checkpoint_record_path(checkpoint: str | os.PathLike[str]) -> Path:
    """The side file of an SB3 checkpoint: ``final.zip`` -> ``final.policy.json``."""
    return Path(checkpoint).with_suffix(".policy.json")


def write_checkpoint_record(
    checkpoint: str | os.PathLike[str],
    *,
    num_players: int,
    features: str,
    activation: str,
    game: DrawGame | None = None,
    obs_type: str = DEFAULT_OBS_TYPE,
) -> Path:
    """Write the side file that lets :func:`read_checkpoint` play ``checkpoint`` (atomically);
    ``game``: the variant it plays, recorded unless it is the seeds' game; ``obs_type``: what it
    reads.

    Training calls this next to every ``model.save(checkpoint)``.

    Returns:
        The side file's path.
    """
    check_choice("num_players", num_players, PLAYER_COUNTS)
    check_choice("features", features, FEATURES)
    check_choice("activation", activation, ACTIVATIONS)
    check_obs_type("obs_type", obs_type)
    record = {
        "format": CHECKPOINT_FORMAT,
        "version": VERSION,
        "num_players": int(num_players),
        "features": features,
        **({} if obs_type == DEFAULT_OBS_TYPE else {"obs_type": obs_type}),  # as a policy file's record
        "activation": activation,
        **(game.variant if game is not None and not game.is_default else {}),
    }
    target = checkpoint_record_path(checkpoint)
    write_text_atomic(target, json.dumps(record, indent=1) + "\n")
    return target


def read_checkpoint(path: str | os.PathLike[str]) -> PolicyWeights:
    """The networks of an SB3 ``MaskablePPO`` checkpoint ``.zip``, read without unpickling.

    Only the ``policy.pth`` entry is read, as a torch archive of plain tensors
    (:func:`agents.torch_archive.read_tensors`: its pickle is interpreted, never run, and every
    tensor's dtype, shape, strides and storage are checked against an MLP policy's before any
    is read); the activation, features and player count come from the side file
    (:func:`checkpoint_record_path`). Without one, a warning says that SB3's default activation
    (``tanh``) is assumed and the player count is unknown.

    Raises:
        ValueError: if ``path`` is not a zip holding a plain tensor state dict of an MLP policy,
            or its side file is malformed or contradicts the tensors; the message names the file
            and, where there is one, the tensor.
    """
    target = Path(path)
    if not target.is_file():
        raise ValueError(f"{target}: no such checkpoint file")
    payload = read_zip_member(target, "policy.pth", MAX_ARRAY_BYTES, what="an SB3 model")
    side = checkpoint_record_path(target)
    if side.is_file():
        settings = _read_checkpoint_record(side)
    else:
        warnings.warn(
            f"{target}: no side file {side.name}, so its activation and player count are unknown; "
            f"assuming SB3's default activation {SB3_DEFAULT_ACTIVATION!r} and any table size "
            "(write one with agents.sb3_checkpoint.write_checkpoint_record)",
            stacklevel=2,
        )
        settings = {"activation": SB3_DEFAULT_ACTIVATION, "features": None, "num_players": None, "game": None,
                    "obs_type": DEFAULT_OBS_TYPE}

    def check(headers: Mapping[str, TensorHeader]) -> None:
        shapes = {key: header.shape for key, header in headers.items()}
        sb3_layers(shapes, features=settings["features"], game=_sized_game(settings["game"], settings["num_players"]),
                   obs_type=settings["obs_type"])

    tensors = read_tensors(payload, f"{target}: policy.pth", check, MAX_ARRAY_BYTES // 4)
    try:
        return weights_from_state_dict(tensors, **settings, provenance={"checkpoint": str(target)})
    except ValueError as error:
        raise ValueError(f"{target}: {error}") from None


def read_zip_member(path: Path, member: str, max_bytes: int, *, what: str) -> bytes:
    """The bytes of ``member`` of the zip ``path`` (``what`` it should be, for messages), read
    with at most ``max_bytes`` bytes decompressed whatever the zip directory claims.

    Raises:
        ValueError: ``path`` is no zip, lacks ``member``, or ``member`` is larger than ``max_bytes``.
    """
    data = read_bytes(path, MAX_ARRAY_BYTES)
    with open_zip(data, MAX_ZIP_MEMBERS, lambda message: ValueError(f"{path}: {message}"), f"not {what}") as archive:
        if member not in archive.namelist():
            raise ValueError(f"{path}: not {what} (no {member} entry)")
        info = archive.getinfo(member)
        if info.file_size > max_bytes:
            raise ValueError(f"{path}: its {member} is {info.file_size} bytes, more than the {max_bytes} allowed")
        try:
            with archive.open(info) as handle:
                payload: bytes = handle.read(max_bytes + 1)
        except ZIP_ERRORS as error:
            raise ValueError(f"{path}: not {what} (its {member} cannot be read: {error})") from None
    if len(payload) > max_bytes:
        raise ValueError(f"{path}: its {member} holds more than the {max_bytes} bytes allowed")
    return payload


def _read_checkpoint_record(side: Path) -> dict[str, Any]:
    record = read_json(side, max_bytes=MAX_RECORD_BYTES, expect=dict)
    if not isinstance(record, dict) or record.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{side}: 'format' must be {CHECKPOINT_FORMAT!r}")
    settings = {key: record.get(key) for key in ("activation", "features", "num_players")}
    for key, allowed in (("activation", ACTIVATIONS), ("features", FEATURES), ("num_players", PLAYER_COUNTS)):
        try:
            check_choice(key, settings[key], allowed)
        except ValueError as error:
            raise ValueError(f"{side}: {error}") from None
    settings["game"] = _read_game(record, side, record["num_players"])  # checked above
    settings["obs_type"] = read_obs_type(record, side)
    return settings


def _read_game(record: Mapping[str, Any], side: Path, num_players: int) -> DrawGame | None:
    """The variant a side file records: ``None`` (the seeds' game) when it names none."""
    variant = {key: record[key] for key in VARIANT_KEYS if key in record}
    if not variant:
        return None
    if len(variant) != len(VARIANT_KEYS) or any(type(value) is not int for value in variant.values()):
        shown = ", ".join(f"{key}={_short(record.get(key))}" for key in VARIANT_KEYS)
        raise ValueError(f"{side}: a variant names {', '.join(VARIANT_KEYS)}, each an integer; got {shown}")
    try:
        return DrawGame(num_players, **variant)
    except ValueError as error:
        raise ValueError(f"{side}: {error}") from None
