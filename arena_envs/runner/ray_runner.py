"""Play a run's episodes on a Ray cluster; the driver (this process) alone writes the results folder.

``run(config, out, ray=RayOptions(...))`` (or ``arena run ENV ... --ray [ADDRESS]``) starts one
:class:`EpisodeWorker` actor per worker (one CPU each) on a local cluster on 127.0.0.1, or on the
running cluster at ``address``. Each actor plays batches of consecutive episode ids with the same
:class:`arena_envs.runner.episode.EpisodePlayer` as the local runner and returns the finished
episodes' entries and bytes; the driver commits them through the same
:class:`arena_envs.runner.runner.Runner` bookkeeping (group commits, standings, progress bar,
``on_episode``). So the folder is append-only and resumable as ever, its episodes are
byte-identical to a local run's with the same seed (only their order differs), and a folder
started locally resumes on Ray and the other way round (Ray options are not in ``run.json``).

A worker that dies (killed, out of memory, its node lost) is reported on stderr with its process,
node and episodes; those episodes go back to the front of the queue and a new actor takes its
place, so each episode is committed exactly once. A policy or environment error in a worker stops
the run as it does locally (:class:`RunError`; finished episodes are kept).

Ray is imported only when a run starts (:mod:`arena_envs.runner.ray_cluster`).
"""
from __future__ import annotations

import asyncio
import math
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from tqdm.auto import tqdm

from arena_envs.core.arguments import check_int
from arena_envs.runner.episode import EpisodePlayer, PlayedEpisode, RunError, play_episodes
from arena_envs.runner.policy_specs import make_policy
from arena_envs.runner.ray_cluster import LOCAL, import_ray, ray_session
from arena_envs.runner.results import SYNC_INTERVAL
from arena_envs.runner.run_config import EnvFactory, PolicyFactory, RunConfig
from arena_envs.runner.runner import Runner, RunSummary, WorkerFailure

__all__ = ["BatchResult", "EpisodeWorker", "RayOptions", "WorkerFailure", "run_on_ray"]

MAX_AUTO_BATCH = 64
IN_FLIGHT = 2  # batches queued per worker: the next one starts while the driver commits the last


class BatchResult(NamedTuple):
    """What a worker sends back for a batch: the episodes it finished, in the order they finished,
    and the error that stopped it (a :class:`RunError`, of its own kind), if any."""

    done: list[PlayedEpisode]
    error: RunError | None


class EpisodeWorker:
    """A Ray actor's state: ``concurrency`` players (environment and policies each) of ``config``."""

    def __init__(self, config: RunConfig, make_env: EnvFactory, policy_factory: PolicyFactory, concurrency: int,
                 run_token: Hashable):
        self._loop = asyncio.new_event_loop()
        self.players = []
        for _ in range(concurrency):
            env = make_env()
            policies = [policy_factory(spec, config.env) for spec in config.players]
            self.players.append(EpisodePlayer(config, env, policies, env.unwrapped.possible_agents, run_token))

    def where(self) -> tuple[int, str]:
        """This worker's process id and Ray node id."""
        return os.getpid(), import_ray().get_runtime_context().get_node_id()

    def play_batch(self, episodes: list[int]) -> BatchResult:
        done: list[PlayedEpisode] = []
        try:
            self._loop.run_until_complete(play_episodes(self.players, iter(episodes), done.append))
        except RunError as err:
            return BatchResult(done, type(err)(str(err)))  # its kind and message, without the traceback
        return BatchResult(done, None)


@dataclass(frozen=True)
class RayOptions:
    """How a run uses Ray. ``address``: a running cluster (``HOST:PORT``, ``ray://...``, ``auto``),
    or None for a local cluster on 127.0.0.1 started for the run with ``workers`` CPUs; ``workers``:
    actors (one CPU each; default: the cluster's CPUs); ``batch``: episodes per actor call
    (default: a quarter of each worker's share, at most 64; the run's ``concurrency`` when it is
    above 1, for slow LLM episodes); ``max_worker_failures``: worker deaths tolerated before the
    run stops; ``on_start(pids)``: called with the process ids of workers as they start (tests)."""

    address: str | None = None
    workers: int | None = None
    batch: int | None = None
    max_worker_failures: int = 10
    on_start: Callable[[list[int]], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name, value in (("workers", self.workers), ("batch", self.batch)):
            if value is not None:
                check_int(f"ray {name}", value, 1)
        if self.max_worker_failures < 0:
            raise ValueError(f"max_worker_failures must be >= 0, got {self.max_worker_failures!r}")

    def run(self, config: RunConfig, out: str | Path, **options: Any) -> RunSummary:
        """:func:`run_on_ray` with these options (what ``runner.run(..., ray=options)`` calls)."""
        return run_on_ray(config, out, self, **options)


def run_on_ray(config: RunConfig, out: str | Path, options: RayOptions, *, concurrency: int = 1,
               progress: bool = False, make_env: EnvFactory | None = None,
               policy_factory: PolicyFactory | None = None, sync_interval: float = SYNC_INTERVAL,
               plots: bool = True, on_episode: Callable[[dict[str, Any]], None] | None = None) -> RunSummary:
    """:func:`arena_envs.runner.runner.run` on Ray: same arguments and results folder;
    ``concurrency`` is the number of episodes each worker plays at once. ``make_env`` and
    ``policy_factory`` are sent to the workers (cloudpickled: they must be importable there)."""
    import_ray()  # Ray missing: say so before the folder exists
    policy_factory = policy_factory or make_policy
    runner = Runner(config, out, concurrency=concurrency, progress=progress, make_env=make_env,
                    policy_factory=policy_factory, sync_interval=sync_interval, plots=plots, on_episode=on_episode)
    make_env = runner.make_env  # built with the settings the players carry (runner.config holds them)
    for player in runner.release_players():  # built to check the specs; the workers build their own
        player.close()
    local = options.address in (None, LOCAL)
    driver = _Driver(runner, options, make_env, policy_factory)
    runner.begin()
    try:
        with ray_session(options.address, num_cpus=options.workers if local else None):
            try:
                driver.drive()
            finally:
                runner.end()  # commit before the cluster goes
                driver.stop()
    finally:
        runner.end()
    return runner.summary(driver.failures)


@dataclass
class _Worker:
    number: int
    actor: Any
    pid: int | None = None
    node: str | None = None
    batches: int = 0  # in flight


class _Driver:
    """Hands batches to the workers and their finished episodes to the runner's bookkeeping."""

    def __init__(self, runner: Runner, options: RayOptions, make_env: EnvFactory, policy_factory: PolicyFactory):
        self.runner = runner
        self.options = options
        self.make_env = make_env
        self.policy_factory = policy_factory
        self.failures: list[WorkerFailure] = []
        self.workers: list[_Worker] = []
        self.in_flight: dict[Any, tuple[_Worker, list[int]]] = {}
        self.todo: deque[int] = deque()

    def drive(self) -> None:
        ray = self.ray = import_ray()
        self.todo = deque(self.runner.missing())
        if not self.todo:
            return
        cpus = int(ray.cluster_resources().get("CPU", 0))
        wanted = self.options.workers or cpus
        if wanted > cpus:
            raise ValueError(f"ray workers: {wanted} asked for, but the cluster has {cpus} CPUs (a worker takes one)")
        batch = self.options.batch or _auto_batch(len(self.todo), wanted, self.runner.concurrency)
        self.batch = batch
        self.nodes = {node["NodeID"]: node["NodeManagerAddress"] for node in ray.nodes()}
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0,
                                      scheduling_strategy="SPREAD")(EpisodeWorker)
        count = min(wanted, math.ceil(len(self.todo) / batch))
        self._start([_Worker(number, self._new_actor()) for number in range(1, count + 1)])
        for worker in self.workers:
            self._feed(worker)
        with _FirstInterrupt() as interrupt:
            self._collect(interrupt)

    def _collect(self, interrupt: _FirstInterrupt) -> None:
        """Commit the batches as they come back and feed their workers, until none is in flight;
        raises ``KeyboardInterrupt`` between two batches after a Ctrl-C."""
        ray = self.ray
        committed = bytearray(self.runner.config.episodes)  # defensive: an id is never committed twice
        lost_errors = (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError)
        while self.in_flight:
            if interrupt.requested:
                raise KeyboardInterrupt
            ready, _ = ray.wait(list(self.in_flight), num_returns=1, timeout=self.runner.folder.sync_interval)
            if not ready:  # nothing came back: make what is held durable now rather than at the next commit
                self.runner.folder.sync()
                continue
            ref = ready[0]
            worker, episodes = self.in_flight.pop(ref)
            worker.batches -= 1
            try:
                result: BatchResult = ray.get(ref)
            except lost_errors as err:
                self._replace(worker, episodes, err)
                continue
            except ray.exceptions.RayTaskError as err:  # not a RunError: a fault of the worker's own
                raise RunError(f"ray worker {worker.number} (pid {worker.pid}) failed: {_last_line(err)}") from err
            for played in result.done:
                if not committed[played.episode]:
                    committed[played.episode] = 1
                    self.runner.commit(played)
            if result.error is not None:
                raise result.error
            self._feed(worker)

    def _new_actor(self) -> Any:
        return self.actor_class.remote(self.runner.config, self.make_env, self.policy_factory,
                                       self.runner.concurrency, self.runner.run_token)

    def _start(self, workers: list[_Worker]) -> None:
        """Wait for ``workers`` to be built; record their process and node; tell ``on_start``."""
        self.workers += workers
        try:
            places = self.ray.get([worker.actor.where.remote() for worker in workers])
        except self.ray.exceptions.RayActorError as err:
            raise RunError(f"a ray worker could not start: {_last_line(err)}") from err
        for worker, (pid, node) in zip(workers, places):
            worker.pid, worker.node = pid, self.nodes.get(node, node)
        if self.options.on_start is not None:
            self.options.on_start([worker.pid for worker in workers if worker.pid is not None])

    def _feed(self, worker: _Worker) -> None:
        while worker.batches < IN_FLIGHT and self.todo:
            episodes = [self.todo.popleft() for _ in range(min(self.batch, len(self.todo)))]
            self.in_flight[worker.actor.play_batch.remote(episodes)] = (worker, episodes)
            worker.batches += 1

    def _replace(self, worker: _Worker, episodes: list[int], err: Exception) -> None:
        """``worker`` died: collect every batch it held, report it, queue its episodes again first,
        and start a new worker in its place."""
        lost = list(episodes)
        others = [ref for ref, (owner, _) in self.in_flight.items() if owner is worker]
        if others:
            self.ray.wait(others, num_returns=len(others), timeout=30)
        for ref in others:
            _, held = self.in_flight.pop(ref)
            lost += held  # a dead actor's queued calls fail with it
        lost.sort()
        failure = WorkerFailure(worker.number, worker.pid, worker.node, tuple(lost), _last_line(err))
        self.failures.append(failure)
        where = f"pid {worker.pid} on {worker.node}" if worker.pid is not None else "not started"
        tqdm.write(f"arena: ray worker {worker.number} ({where}) died during episodes "
                   f"{', '.join(map(str, lost))}; playing them again", file=sys.stderr)
        if len(self.failures) > self.options.max_worker_failures:
            raise RunError(f"{len(self.failures)} ray workers died (more than max_worker_failures="
                           f"{self.options.max_worker_failures}); the last: {failure.error}")
        self.todo.extendleft(reversed(lost))
        self.workers.remove(worker)
        successor = _Worker(worker.number, self._new_actor())
        self._start([successor])
        for each in self.workers:
            self._feed(each)

    def stop(self) -> None:
        """Kill every worker (the run ended, stopped or was interrupted)."""
        for worker in self.workers:
            try:
                self.ray.kill(worker.actor, no_restart=True)
            except Exception:  # already gone
                pass
        self.workers = []
        self.in_flight.clear()


class _FirstInterrupt:
    """Inside, the first Ctrl-C (SIGINT) only sets :attr:`requested`: a ``KeyboardInterrupt`` raised
    wherever the driver happens to be could land inside a group commit of the folder, after its bytes
    were written and before they were marked written, and the closing commit would write them twice.
    A second Ctrl-C raises at once. Only the main thread can take the signal; elsewhere nothing changes."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def __enter__(self) -> _FirstInterrupt:
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _on_sigint(self, signum: int, frame: object) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True


def _auto_batch(episodes: int, workers: int, concurrency: int) -> int:
    """Episodes per actor call: ``concurrency`` for concurrent (LLM) runs, whose episodes are slow;
    else a quarter of each worker's share (so the last batches end together), 1 to 64."""
    if concurrency > 1:
        return concurrency
    return max(1, min(MAX_AUTO_BATCH, episodes // (4 * workers)))


def _last_line(err: BaseException) -> str:
    """The last non-empty line of ``err`` (Ray's errors carry tracebacks before the reason)."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[-1] if lines else type(err).__name__
