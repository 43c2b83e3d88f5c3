"""The agents' decisions of ``draw-web``, made in worker processes that can be stopped.

The server process never runs an agent: a game holds each seat's agent spec, and each decision
(a seat's move, a hint) is a :class:`Task` that :func:`decide` answers. :class:`DecisionPool`
runs :func:`decide` in its worker processes, so that

* a search never holds the server's interpreter (its event loop keeps answering other requests);
* a decision longer than the pool's time limit is stopped: its worker is killed and another
  takes its place (:class:`DecisionTimeout`);
* :meth:`DecisionPool.close` (the server stopping, a signal) kills the workers at once, even in
  the middle of a search;
* the agent is built afresh for each decision, from its spec and a seed derived from the game's
  seed, the seat and the step, so its search tree is freed once the decision is made and a game
  holds nothing between decisions but its spec. The exception is a table read from a file
  (``tabular:path=...``), which each worker reads once and shares (:func:`shared_table_agent`).
"""

from __future__ import annotations

import copy
import functools
import multiprocessing
import random
import signal
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, Literal

import agents
from agents.base import Observation, observation_for
from arena.hints import read_hint
from arena.specs import agent_seed, build_agent

#: Tables a worker keeps (``tabular:path=...``, one per distinct file): a table can be hundreds
#: of megabytes, and a server offers one or two.
TABLES_PER_WORKER = 2


class DecisionFailed(RuntimeError):
    """A decision that did not come back: the time limit passed, or the worker stopped."""


class DecisionTimeout(DecisionFailed):
    """A decision stopped at the pool's time limit."""


class PoolClosed(DecisionFailed):
    """The pool was closed (the server is stopping) before the decision came back."""


@dataclass(frozen=True)
class Task:
    """One decision: what the agent of spec ``(name, kwargs)`` does at ``observation``.

    ``kind`` ``"act"`` asks for its action; ``"hint"`` for its reading of the position
    (:func:`decide`). ``coordinates`` seed the agent (:func:`arena.specs.agent_seed`).
    """

    kind: Literal["act", "hint"]
    name: str
    kwargs: Mapping[str, Any]
    coordinates: tuple[int, ...]
    observation: Observation
    num_players: int = field(default=2)


@functools.lru_cache(maxsize=TABLES_PER_WORKER)
def shared_table_agent(path: str, mtime_ns: int, size: int) -> agents.Agent:
    """The tabular agent of the table at ``path`` as it is now (``mtime_ns``, ``size``: a changed
    file is read again), read once per worker; :func:`build` gives each decision a copy with its
    own random numbers, sharing the table."""
    return agents.make("tabular", path=path)


def build(name: str, kwargs: Mapping[str, Any], coordinates: tuple[int, ...]) -> agents.Agent:
    """The agent of spec ``(name, kwargs)`` seeded from ``coordinates``, for one decision."""
    if name == "tabular":
        where = Path(kwargs["path"]).resolve()
        stat = where.stat()
        agent = copy.copy(shared_table_agent(str(where), stat.st_mtime_ns, stat.st_size))
        # The table's only state of its own is its sampler's random numbers.
        agent.rng = random.Random(agent_seed(kwargs, *coordinates))  # type: ignore[attr-defined]
        return agent
    return build_agent(name, kwargs, *coordinates)


def decide(task: Task) -> Any:
    """Answer ``task``: for ``"act"`` the action (int); for ``"hint"`` the agent's
    :class:`arena.hints.Hint` as plain data (:meth:`arena.hints.Hint.to_dict`).

    Raises:
        ValueError: the agent cannot read this position (or its file).
    """
    agent = build(task.name, task.kwargs, task.coordinates)
    if task.kind == "hint":
        return read_hint(agent, task.observation, task.num_players).to_dict()
    # The game's environment gives information states where one of its agents reads them; an
    # agent of observations is given the observation each holds.
    return int(agent.act(observation_for(agent, task.observation)))


def _serve(connection: Connection) -> None:
    """A worker: answer the tasks that come through ``connection`` until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the server, which kills the workers
    while True:
        try:
            task = connection.recv()
        except (EOFError, OSError):
            return
        try:
            answer: tuple[str, Any] = ("ok", decide(task))
        except ValueError as error:
            answer = ("refused", str(error))
        except Exception as error:  # noqa: BLE001 - any failure of an agent is the game's to report
            answer = ("failed", f"{type(error).__name__}: {error}")
        try:
            connection.send(answer)
        except (EOFError, OSError):
            return


class _Worker:
    def __init__(self, context: Any) -> None:
        self.connection, theirs = context.Pipe()
        self.process: BaseProcess = context.Process(target=_serve, args=(theirs,), daemon=True, name="draw-web decisions")
        self.process.start()
        theirs.close()

    def kill(self) -> None:
        self.process.kill()
        self.connection.close()


class DecisionPool:
    """Up to ``workers`` processes that make decisions (:func:`decide`), each stopped after
    ``seconds``.

    :meth:`decide` is called from threads (the server's worker threads) and blocks its caller
    until the answer, the time limit or :meth:`close`; workers start on first use. They start by
    ``forkserver`` (``spawn`` where there is none), never by forking the threaded server; as with
    any such start, a script that makes a pool keeps its own code under
    ``if __name__ == "__main__":`` (``draw-web`` and ``python -m arena.web.server`` do).
    """

    def __init__(self, workers: int = 2, seconds: float = 30.0) -> None:
        if workers < 1 or not seconds > 0:
            raise ValueError(f"workers must be at least 1 and seconds above 0, got {workers} and {seconds}")
        self.workers = workers
        self.seconds = seconds
        methods = multiprocessing.get_all_start_methods()
        # forkserver: a worker forks from a small process that has imported this module, so a
        # new one (after a time limit) starts in a moment without copying the server's threads.
        self._context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if "forkserver" in methods:
            self._context.set_forkserver_preload([__name__])
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._closed = False
        self._changed = threading.Condition()

    def decide(self, task: Task) -> Any:
        """:func:`decide` on a worker, within the pool's time limit.

        Raises:
            ValueError: the agent cannot read this position (as :func:`decide`).
            DecisionTimeout: the decision took longer than the limit (its worker was killed).
            DecisionFailed: the worker stopped, or the agent failed otherwise.
            PoolClosed: the pool was closed before the answer came.
        """
        worker = self._take()
        answer: tuple[str, Any] | None = None
        timed_out = False
        try:
            worker.connection.send(task)
            if worker.connection.poll(self.seconds):
                answer = worker.connection.recv()
            else:
                timed_out = True
        except (EOFError, OSError):
            pass  # the worker ended: killed by close(), or it died
        finally:
            self._give_back(worker, keep=answer is not None)
        if answer is None:
            if self._closed:
                raise PoolClosed("the server is stopping")
            if timed_out:
                raise DecisionTimeout(f"did not decide within {self.seconds:g} s (the server's limit for one decision)")
            raise DecisionFailed("stopped while deciding (its worker ended)")
        status, value = answer
        if status == "refused":
            raise ValueError(value)
        if status == "failed":
            raise DecisionFailed(f"failed: {value}")
        return value

    def _take(self) -> _Worker:
        with self._changed:
            while True:
                if self._closed:
                    raise PoolClosed("the server is stopping")
                if self._idle:
                    worker = self._idle.pop()
                    break
                if len(self._busy) < self.workers:
                    worker = _Worker(self._context)
                    break
                # A timeout too: close() may run in a signal handler, where it cannot notify.
                self._changed.wait(0.2)
            self._busy.add(worker)
            return worker

    def _give_back(self, worker: _Worker, keep: bool) -> None:
        with self._changed:
            self._busy.discard(worker)
            if keep and not self._closed:
                self._idle.append(worker)
            else:
                worker.kill()
                worker.process.join(1)
            self._changed.notify()

    def pids(self) -> list[int]:
        """The process ids of the workers now started (for a look at their memory)."""
        with self._changed:
            return [pid for worker in [*self._idle, *self._busy] if (pid := worker.process.pid) is not None]

    def close(self) -> None:
        """Kill every worker now; decisions in progress raise :class:`PoolClosed`. Safe to call
        from a signal handler (it takes no lock, only sends signals) and more than once."""
        self._closed = True
        for worker in [*self._idle, *self._busy]:
            worker.process.kill()
