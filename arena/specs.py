"""Agent specs: how the evaluation names an agent, labels it and builds it with a derived seed.

A spec is a registry name, a name with keyword arguments after a colon
(``"ismcts:simulations=200,seed=1"``), or a ``(name, kwargs)`` pair. :func:`normalise_spec`
turns any of them into ``(name, kwargs)``; :func:`spec_label` gives the readable label the
results use (``ismcts(seed=1, simulations=200)``).
"""

from __future__ import annotations

import argparse
import functools
import inspect
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

import agents
from draw_env.checks import check_path, check_seed
from draw_env.commands import reported_errors

#: An agent as the evaluator takes it: a registry name, or a name and its keyword arguments.
AgentSpec = str | tuple[str, Mapping[str, Any]]
#: A normalised spec: the registry name and its keyword arguments.
Spec = tuple[str, dict[str, Any]]


def parse_value(text: str) -> Any:
    """A command-line keyword value: int, float, ``true``/``false``/``none``, else the string."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    return text


#: Keyword arguments that name a file: their value stays text (``path=123`` is the file ``123``),
#: and the file is read where the agent is built to play, not when its spec is checked.
FILE_ARGUMENTS = ("path", "inference")


def parse_agent_spec(text: str) -> Spec:
    """Parse ``"name"`` or ``"name:key=value,key=value"`` (e.g. ``"ismcts:simulations=200"``) and
    check it (:func:`check_arguments`): what it returns builds, files aside.

    Raises:
        ValueError: on an unknown agent name, a keyword without ``=`` or given twice, or an
            argument the agent does not take or whose value it refuses (naming the agent).
    """
    name, kwargs = _split_spec(text)
    check_arguments(name, kwargs)
    return name, kwargs


def _split_spec(text: str) -> Spec:
    """``text``'s name and keyword arguments, unchecked but for the name and repeated keys."""
    name, _, arguments = text.partition(":")
    name = name.strip()
    if name not in agents.available():
        raise ValueError(f"agent must be one of {', '.join(agents.available())}, got {name!r} (in {text!r})")
    kwargs: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in arguments.split(","))):
        key, equals, value = item.partition("=")
        key = key.strip()
        if not equals or not key:
            raise ValueError(f"agent keyword arguments are written key=value, got {item!r} in {text!r}")
        if key in kwargs:
            raise ValueError(f"agent keyword {key!r} is given twice in {text!r}")
        kwargs[key] = value.strip() if key in FILE_ARGUMENTS else parse_value(value.strip())
    return name, kwargs


def check_arguments(name: str, kwargs: Mapping[str, Any]) -> None:
    """Check an agent's keyword arguments before anything runs or is written: every keyword is one
    the agent takes, and every value one it accepts (each agent's constructor bounds its numbers
    to what its code holds: ``docs/agents.md``).

    The values are checked by building the agent with its file arguments (:data:`FILE_ARGUMENTS`)
    left out, which only have to be paths here: without them an agent's constructor reads nothing.

    Raises:
        ValueError: naming the agent and the argument, e.g. ``agent 'pimc': worlds must be an
            integer in [1, 1000000000], got 100000000000000000000``.
    """
    cls = agents.check_keywords(name, kwargs)
    files = [key for key in kwargs if key in FILE_ARGUMENTS]
    parameters = inspect.signature(cls).parameters
    try:
        for key in files:
            check_path(key, kwargs[key])
        if "seed" in kwargs and "seed" in parameters:  # also for an agent checked only when built
            check_seed("seed", kwargs["seed"])
        if any(key in parameters and parameters[key].default is inspect.Parameter.empty for key in files):
            return  # an agent that cannot be built without its file is checked when it is built
        cls(**{key: value for key, value in kwargs.items() if key not in files})
    except (ValueError, TypeError) as error:
        raise ValueError(f"agent {name!r}: {error}") from None


def normalise_spec(spec: AgentSpec) -> Spec:
    """``spec`` as ``(name, kwargs)``, checked (:func:`check_arguments`); a string may carry
    ``:key=value`` arguments, and a pair's keyword arguments must not repeat them."""
    if isinstance(spec, str):
        return parse_agent_spec(spec)
    if (
        isinstance(spec, (tuple, list))
        and len(spec) == 2
        and isinstance(spec[0], str)
        and isinstance(spec[1], Mapping)
    ):
        name, kwargs = _split_spec(spec[0])
        repeated = sorted(set(kwargs) & set(spec[1]))
        if repeated:
            raise ValueError(f"agent keyword {repeated[0]!r} is given twice in {spec!r}")
        kwargs.update(spec[1])
        check_arguments(name, kwargs)
        return name, kwargs
    raise ValueError(f"an agent spec must be a name or a (name, kwargs) pair, got {spec!r}")


def normalise_specs(name: str, specs: object, minimum: int, maximum: int | None = None) -> list[Spec]:
    """A sequence of ``minimum`` to ``maximum`` (no bound if ``None``) agent specs, each normalised.

    Raises:
        ValueError: naming ``name`` if ``specs`` is not such a sequence, or a spec is malformed.
    """
    if (
        isinstance(specs, (str, bytes))
        or not isinstance(specs, Sequence)
        or len(specs) < minimum
        or (maximum is not None and len(specs) > maximum)
    ):
        count = f"at least {minimum}" if maximum is None else f"{minimum} to {maximum}"
        raise ValueError(f"{name} must be a sequence of {count} agent specs, got {specs!r}")
    return [normalise_spec(spec) for spec in specs]


def check_buildable(specs: Sequence[Spec]) -> None:
    """Check each spec's arguments, then build each agent once (its files read), so that a bad
    keyword, value or file fails now rather than in a worker."""
    for name, kwargs in specs:
        check_arguments(name, kwargs)
        try:
            agents.make(name, **kwargs)
        except ValueError as error:
            raise ValueError(f"agent {name!r}: {error}") from None


def spec_label(name: str, kwargs: Mapping[str, Any]) -> str:
    """A readable label such as ``ismcts(simulations=200)``."""
    if not kwargs:
        return name
    return f"{name}({', '.join(f'{key}={value}' for key, value in sorted(kwargs.items()))})"


def participant_labels(specs: Sequence[Spec]) -> list[str]:
    """Labels, made unique with ``#1``, ``#2``... when the same agent takes several seats."""
    labels = [spec_label(name, kwargs) for name, kwargs in specs]
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if labels.count(label) == 1 else f"{label}#{seen[label]}")
    return unique


@functools.cache
def takes_seed(name: str) -> bool:
    """Whether the agent registered as ``name`` accepts a ``seed`` argument."""
    return "seed" in inspect.signature(agents.agent_class(name)).parameters


def seed_sequence_int(*entropy: int) -> int:
    """A 63-bit seed drawn from NumPy's ``SeedSequence`` of ``entropy`` (all non-negative)."""
    return int(np.random.SeedSequence(list(entropy)).generate_state(2, np.uint64)[0] >> np.uint64(1))


#: Agents that take no seed are built once per process and reused (a PPO agent loads a file).
_unseeded_agents: dict[tuple[str, tuple[tuple[str, Any], ...]], agents.Agent] = {}


def build_agent(name: str, kwargs: Mapping[str, Any], *coordinates: int) -> agents.Agent:
    """The agent of spec ``(name, kwargs)``, seeded from ``coordinates`` if it takes a seed.

    An agent that takes a seed is built afresh with ``seed_sequence_int(*coordinates)`` (a seed in
    ``kwargs`` is mixed in, so ``"ismcts:seed=1"`` and ``"ismcts:seed=2"`` still differ); one that
    takes none is built once per process and shared.
    """
    if not takes_seed(name):
        key = (name, tuple(sorted(kwargs.items())))
        if key not in _unseeded_agents:
            _unseeded_agents[key] = agents.make(name, **kwargs)
        return _unseeded_agents[key]
    options = dict(kwargs)
    options.pop("seed", None)
    return agents.make(name, seed=agent_seed(kwargs, *coordinates), **options)


def agent_seed(kwargs: Mapping[str, Any], *coordinates: int) -> int:
    """The seed :func:`build_agent` gives an agent of keyword arguments ``kwargs`` at ``coordinates``:
    from the coordinates and the spec's own ``seed`` (if any)."""
    user_seed = kwargs.get("seed")
    return seed_sequence_int(*coordinates, *([] if user_seed is None else [int(user_seed)]))


@contextmanager
def agent_command(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> Iterator[tuple[argparse.Namespace, list[Spec]]]:
    """A command that plays the agent specs of its ``agents`` argument: its parsed arguments and
    those specs, with any ``ValueError`` of the body reported as one line and exit status 2."""
    # The eval extra: imported once the command's draw_env.commands.check_extras found it.
    from threadpoolctl import threadpool_limits

    args = parser.parse_args(argv)
    # Networks choose for many games at once with small matrix products, where several BLAS
    # threads only wait for each other (docs/agents.md measures it: benchmarks/policy_speed.py).
    threadpool_limits(1, user_api="blas")
    with reported_errors(parser):
        yield args, [parse_agent_spec(text) for text in args.agents]
