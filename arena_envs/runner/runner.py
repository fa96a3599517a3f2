"""Play N seeded episodes of any environment with any policies, into a results folder.

The core is async: ``concurrency`` workers each play one episode at a time with their own
environment (built once, ``reset`` for every episode) and their own policy instances, awaiting the
policies' ``aact`` (so an LLM server batches the requests of concurrent episodes); environment
steps run in the event loop. Seeds and seats depend only on the run seed and the episode id
(:mod:`arena_envs.runner.seeding`), so the results are the same for any ``concurrency``; only the
order of the episodes in ``episodes.jsonl`` and ``log.jsonl`` varies. Nothing a run keeps in memory
grows with its number of episodes: finished episodes go to the folder and to an incremental
leaderboard (:class:`arena_envs.runner.leaderboard.Standings`), written when the run ends.

Each episode is played by an :class:`arena_envs.runner.episode.EpisodePlayer`; another executor
(``ray=``: :class:`arena_envs.runner.ray_runner.RayOptions`) plays them elsewhere with the same
player and hands them back to the :class:`Runner`, which alone writes the folder.
"""
from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from pettingzoo import AECEnv
from tqdm.auto import tqdm

from arena_envs.core import Policy
from arena_envs.core.arguments import listing
from arena_envs.core.event_loops import run_to_end
from arena_envs.runner.env_settings import settled_env_kwargs
from arena_envs.runner.episode import INVALID_KINDS, EpisodePlayer, PlayedEpisode, RunError, RunFault, play_episodes
from arena_envs.runner.figures import write_run_figures
from arena_envs.runner.leaderboard import Standings, rating_of, write_leaderboard
from arena_envs.runner.policy_specs import make_policy
from arena_envs.runner.provenance import session
from arena_envs.runner.results import SYNC_INTERVAL, ResultsFolder, read_episodes
from arena_envs.runner.run_config import EnvFactory, PolicyFactory, RunConfig, env_builder, env_factory

__all__ = ["INVALID_KINDS", "EnvFactory", "Executor", "PolicyFactory", "RunConfig", "RunError", "RunFault",
           "RunSummary", "Runner", "WorkerFailure", "arun", "env_factory", "run"]


@dataclass(frozen=True)
class WorkerFailure:
    """A worker process of a distributed run that died: its number, process id and node (when
    known), the episodes it was playing (played again elsewhere) and what was reported."""

    worker: int
    pid: int | None
    node: str | None
    episodes: tuple[int, ...]
    error: str


@dataclass
class RunSummary:
    out: Path
    config: RunConfig
    played: int
    resumed: int  # episodes already in the folder when the run started
    figures: list[Path] = field(default_factory=list)  # written into out/figures (arena_envs.runner.figures)
    worker_failures: list[WorkerFailure] = field(default_factory=list)  # workers that died (Ray runs)

    @property
    def finished(self) -> int:
        return self.played + self.resumed

    @property
    def episodes(self) -> list[dict[str, Any]]:
        """Every finished episode's ``episodes.jsonl`` entry, sorted by id (read from the folder)."""
        return sorted(read_episodes(self.out / "episodes.jsonl"), key=lambda e: e["episode"])


class Runner:
    """Plays the episodes of ``config`` that ``out`` does not hold yet; see :func:`run`.

    The bookkeeping of a run (:meth:`begin`, :meth:`commit`, :meth:`end`, :meth:`summary`) is
    what any executor hands its finished episodes to; :meth:`run` plays them in this process.
    ``builder``: the ``env`` function of ``config.env`` when the caller has resolved the name
    (:func:`~arena_envs.runner.run_config.env_builder`).
    """

    def __init__(self, config: RunConfig, out: str | Path, *, concurrency: int = 1, progress: bool = False,
                 make_env: EnvFactory | None = None, policy_factory: PolicyFactory | None = None,
                 sync_interval: float = SYNC_INTERVAL, plots: bool = True,
                 on_episode: Callable[[dict[str, Any]], None] | None = None,
                 builder: Callable[..., AECEnv] | None = None):
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.config = config
        self.labels = config.labels
        self.concurrency = concurrency
        self.progress = progress
        self.plots = plots
        self.on_episode = on_episode
        self.policy_factory = policy_factory or make_policy
        self.run_token = uuid.uuid4().hex  # episode keys (run_token, episode) are unique in any process
        # the environment is resolved once (``builder``: by the caller): an unknown one is named
        # before any player is built
        if make_env is None and builder is None:
            builder = env_builder(config.env)
        team = self.policies()  # bad specs fail here, before any environment or folder
        try:
            # the settings the players carry join the run's own (run.json records them)
            kwargs = settled_env_kwargs(config.env_kwargs, self.labels, team, can_add=make_env is None)
            self.config = config = replace(config, env_kwargs=kwargs)
            self.make_env = make_env or env_factory(config.env, kwargs, builder)
            self._envs = [self.make_env()]  # the first worker's
            try:
                self.agents = list(self._envs[0].unwrapped.possible_agents)
                if len(self.agents) != len(config.players):
                    raise ValueError(f"{config.env} has {len(self.agents)} seats ({listing(self.agents, 100)}) "
                                     f"but players lists {len(config.players)}: {listing(config.players, 100)}")
                self.folder = ResultsFolder(out, config.to_dict(), sync_interval,
                                            session(self.labels, team, self.make_env, config.seed))
            except BaseException:
                self._envs[0].close()
                raise
        except BaseException:
            for policy in team:
                policy.close()
            raise
        self._teams = [team]
        self.played = 0
        self.resumed = len(self.folder.finished)
        self._ended = False
        self._sync_timer: asyncio.TimerHandle | None = None

    def policies(self) -> list[Policy]:
        """A new policy for every player, in the order of ``config.players``."""
        return [self.policy_factory(spec, self.config.env) for spec in self.config.players]

    def player(self, env: AECEnv, policies: list[Policy]) -> EpisodePlayer:
        return EpisodePlayer(self.config, env, policies, self.agents, self.run_token)

    def release_players(self) -> list[EpisodePlayer]:
        """The players of the environment and policies built so far (the check of the specs), which
        the caller now owns."""
        players = [self.player(env, team) for env, team in zip(self._envs, self._teams)]
        self._envs, self._teams = [], []
        return players

    def missing(self) -> list[int]:
        """The ids of the episodes the folder does not hold, ascending."""
        return [k for k in range(self.config.episodes) if k not in self.folder.finished]

    def begin(self) -> None:
        """Start the bookkeeping: the standings with the folder's episodes, the progress bar."""
        self.table = Standings(self.labels, rating_of(self.config.env))
        for entry in self.folder.resumed:
            self.table.add(entry)
        self.folder.resumed = []
        self.bar = tqdm(total=self.config.episodes, initial=self.resumed, disable=not self.progress,
                        desc=self.config.env, unit="ep", dynamic_ncols=True)

    def commit(self, played: PlayedEpisode) -> None:
        """A finished episode: into the folder, the standings, the bar and ``on_episode``."""
        self.folder.commit(played.line, played.block)
        self._sync_later()
        self.table.add(played.entry)
        self.played += 1
        self.bar.update(1)
        if self.on_episode is not None:
            self.on_episode(played.entry)

    def _sync_later(self) -> None:
        """In an event loop, a held episode is committed ``sync_interval`` seconds later at the latest,
        even when no other episode ends before (a long LLM episode, a person thinking). An executor
        without a loop syncs on its own (the Ray driver, between its waits)."""
        if self._sync_timer is not None or not self.folder.held:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._sync_timer = loop.call_later(self.folder.sync_interval, self._sync_due)

    def _sync_due(self) -> None:
        self._sync_timer = None
        try:
            self.folder.sync()
        except OSError:  # kept in folder.error: the next commit, or the end of the run, reports it
            pass

    def end(self) -> None:
        """Commit every finished episode and write the leaderboard (once; also after a failure; not
        after a failed write to the folder, whose error is the one to report)."""
        if self._ended:
            return
        self._ended = True
        if self._sync_timer is not None:
            self._sync_timer.cancel()
            self._sync_timer = None
        self.bar.close()
        self.folder.close()
        if self.folder.error is None:
            write_leaderboard(self.folder.path, self.table)

    def summary(self, worker_failures: list[WorkerFailure] | None = None) -> RunSummary:
        """The summary of an ended run (its figures written first, when ``plots``)."""
        figures = write_run_figures(self.config.env, self.folder.path) if self.plots else []
        return RunSummary(self.folder.path, self.config, self.played, self.resumed, figures,
                          list(worker_failures or []))

    async def run(self) -> RunSummary:
        todo = self.missing()
        workers = max(1, min(self.concurrency, len(todo)))
        self._teams += [self.policies() for _ in range(workers - 1)]
        self._envs += [self.make_env() for _ in range(workers - 1)]
        players = self.release_players()
        try:
            self.begin()
            try:
                await play_episodes(players, iter(todo), self.commit)
            finally:
                self.end()
        finally:
            for player in players:
                player.close()
        return self.summary()


class Executor(Protocol):
    """Plays a run somewhere else than in this process (:class:`arena_envs.runner.ray_runner.RayOptions`:
    on a Ray cluster), with :func:`run`'s arguments."""

    def run(self, config: RunConfig, out: str | Path, **options: Any) -> RunSummary: ...


async def arun(config: RunConfig, out: str | Path, **options: Any) -> RunSummary:
    """Async :func:`run` (in this process), for callers that already have an event loop."""
    return await Runner(config, out, **options).run()


def run(config: RunConfig, out: str | Path, *, concurrency: int = 1, progress: bool = False,
        make_env: EnvFactory | None = None, policy_factory: PolicyFactory | None = None,
        sync_interval: float = SYNC_INTERVAL, plots: bool = True,
        on_episode: Callable[[dict[str, Any]], None] | None = None, ray: Executor | None = None) -> RunSummary:
    """Play the episodes of ``config`` missing from results folder ``out`` (creating or resuming it).

    ``make_env`` overrides how environments are built (default: ``config.env`` with
    ``config.env_kwargs``; one per worker, reset for every episode); ``policy_factory(spec,
    env_name)`` overrides how specs become policies; ``sync_interval`` is the most seconds between
    two group commits (:mod:`arena_envs.runner.results`; 0 commits every episode on its own);
    ``plots``: whether a finished run writes its environment's figures into ``out/figures``
    (:mod:`arena_envs.runner.figures`; ``trading_v0`` has some); ``on_episode(entry)`` is called
    with each episode's ``episodes.jsonl`` entry once it is committed or held for the next group
    commit (a caller's own progress bar, e.g. ``arena eval``'s one bar over many runs).
    ``ray``: a :class:`arena_envs.runner.ray_runner.RayOptions` plays the episodes on a Ray
    cluster (``concurrency`` is then the episodes in flight per Ray worker); the folder's content
    is the same as a local run's.
    The settings the players carry (:attr:`arena_envs.core.Policy.env_settings`, a trained model's)
    join ``config.env_kwargs`` before the environment is built (:mod:`arena_envs.runner.env_settings`;
    with ``make_env`` they must be there already); the summary's ``config`` and ``run.json`` hold them.
    Raises :class:`RunError` when a policy or the environment raises (finished episodes are kept; its
    :class:`RunFault` when a policy said it cannot play as it is, which resuming repeats) and
    ``ValueError`` for a bad configuration, settings a player contradicts, or a folder holding another
    configuration.
    """
    options: dict[str, Any] = dict(concurrency=concurrency, progress=progress, make_env=make_env,
                                   policy_factory=policy_factory, sync_interval=sync_interval, plots=plots,
                                   on_episode=on_episode)
    if ray is not None:
        return ray.run(config, out, **options)
    return run_to_end(Runner(config, out, **options).run)
