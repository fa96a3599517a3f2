"""Play N seeded episodes of any environment with any policies, into a results folder.

The core is async: ``concurrency`` workers each play one episode at a time with their own
environment (built once, ``reset`` for every episode) and their own policy instances, awaiting the
policies' ``aact`` (so an LLM server batches the requests of concurrent episodes); environment
steps run in the event loop. Seeds and seats depend only on the run seed and the episode id
(:mod:`arena_envs.runner.seeding`), so the results are the same for any ``concurrency``; only the
order of the episodes in ``episodes.jsonl`` and ``log.jsonl`` varies. Nothing a run keeps in memory
grows with its number of episodes: finished episodes go to the folder and to an incremental
leaderboard (:class:`arena_envs.runner.leaderboard.Standings`), written when the run ends.
"""
from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pettingzoo import AECEnv
from tqdm.auto import tqdm

from arena_envs.core import Policy
from arena_envs.registration import ENVIRONMENTS, env_module
from arena_envs.runner.figures import write_run_figures
from arena_envs.runner.leaderboard import Standings, rating_of, write_leaderboard
from arena_envs.runner.policy_specs import make_policy, player_labels
from arena_envs.runner.results import (
    SYNC_INTERVAL,
    EpisodeLines,
    ResultsFolder,
    Seats,
    dumps,
    dumps_with,
    read_episodes,
)
from arena_envs.runner.seeding import episode_seeds, seat_players

EnvFactory = Callable[[], AECEnv]
PolicyFactory = Callable[[str, str], Policy]
INVALID_KINDS = ("unparseable", "illegal", "fallback")
_NO_INVALID = dumps(dict.fromkeys(INVALID_KINDS, 0))


class RunError(RuntimeError):
    """A policy or the environment raised during an episode; the run stopped, finished episodes are kept."""


@dataclass(frozen=True)
class RunConfig:
    """What defines a run (stored in ``run.json``; a folder only resumes the same configuration).

    ``env`` is a name of ``arena_envs.registration.ENVIRONMENTS`` or ``"package.module:callable"``
    returning an AEC environment; ``players`` are policy spec strings, one per seat; ``rotate``:
    whether seats rotate over episodes (:func:`arena_envs.runner.seeding.seat_players`; False:
    player ``i`` always plays seat ``i``).
    """

    env: str
    players: tuple[str, ...]
    episodes: int
    seed: int = 0
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    rotate: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", tuple(self.players))
        object.__setattr__(self, "env_kwargs", dict(self.env_kwargs))
        if not self.players:
            raise ValueError("players must name at least one policy")
        if not isinstance(self.episodes, int) or self.episodes < 1:
            raise ValueError(f"episodes must be an integer >= 1, got {self.episodes!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")

    @property
    def labels(self) -> list[str]:
        return player_labels(list(self.players))

    def to_dict(self) -> dict[str, Any]:
        fixed = {} if self.rotate else {"rotate": False}  # folders of rotating runs keep their run.json
        return {"env": self.env, "env_kwargs": dict(self.env_kwargs), "players": list(self.players),
                "seed": self.seed, "episodes": self.episodes, **fixed}


@dataclass
class RunSummary:
    out: Path
    config: RunConfig
    played: int
    resumed: int  # episodes already in the folder when the run started
    figures: list[Path] = field(default_factory=list)  # written into out/figures (arena_envs.runner.figures)

    @property
    def finished(self) -> int:
        return self.played + self.resumed

    @property
    def episodes(self) -> list[dict[str, Any]]:
        """Every finished episode's ``episodes.jsonl`` entry, sorted by id (read from the folder)."""
        return sorted(read_episodes(self.out / "episodes.jsonl"), key=lambda e: e["episode"])


def env_factory(name: str, kwargs: Mapping[str, Any]) -> EnvFactory:
    """A zero-argument builder of environment ``name`` with ``kwargs`` (checked by building one)."""
    if ":" in name:
        module, _, attribute = name.partition(":")
        try:
            builder = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as err:
            raise ValueError(f"cannot load environment {name!r}: {err}") from err
    else:
        if name not in ENVIRONMENTS:
            raise ValueError(f"unknown environment {name!r}; known: {', '.join(sorted(ENVIRONMENTS))}")
        builder = env_module(name).env
    kwargs = dict(kwargs)
    try:
        builder(**kwargs).close()
    except TypeError as err:
        raise ValueError(f"environment {name}: bad --env-arg: {err}") from err
    return lambda: builder(**kwargs)


class Runner:
    """Plays the episodes of ``config`` that ``out`` does not hold yet; see :func:`run`."""

    def __init__(self, config: RunConfig, out: str | Path, *, concurrency: int = 1, progress: bool = False,
                 make_env: EnvFactory | None = None, policy_factory: PolicyFactory | None = None,
                 sync_interval: float = SYNC_INTERVAL, plots: bool = True,
                 on_episode: Callable[[dict[str, Any]], None] | None = None):
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.config = config
        self.labels = config.labels
        self.concurrency = concurrency
        self.progress = progress
        self.plots = plots
        self.on_episode = on_episode
        self.make_env = make_env or env_factory(config.env, config.env_kwargs)
        self.policy_factory = policy_factory or make_policy
        self._envs = [self.make_env()]  # the first worker's
        self._rotations: dict[int, Seats] = {}
        self.agents = list(self._envs[0].unwrapped.possible_agents)
        try:
            if len(self.agents) != len(config.players):
                raise ValueError(f"{config.env} has {len(self.agents)} seats ({', '.join(self.agents)}) "
                                 f"but players lists {len(config.players)}: {', '.join(config.players)}")
            self._teams = [self._policies()]  # bad specs fail here, before the folder is created
            try:
                self.folder = ResultsFolder(out, config.to_dict(), sync_interval)
            except BaseException:
                for policy in self._teams[0]:
                    policy.close()
                raise
        except BaseException:
            self._envs[0].close()
            raise

    def _policies(self) -> list[Policy]:
        return [self.policy_factory(spec, self.config.env) for spec in self.config.players]

    def _seats(self, episode: int) -> Seats:
        """The seat labels of ``episode``, built once per seat rotation."""
        rotation = episode % len(self.agents) if self.config.rotate else 0
        seats = self._rotations.get(rotation)
        if seats is None:
            order = seat_players(len(self.agents), episode, self.config.rotate)
            seats = self._rotations[rotation] = Seats({agent: self.labels[order[j]]
                                                       for j, agent in enumerate(self.agents)})
        return seats

    async def run(self) -> RunSummary:
        resumed = len(self.folder.finished)
        table = Standings(self.labels, rating_of(self.config.env))
        for entry in self.folder.resumed:
            table.add(entry)
        self.folder.resumed = []
        todo = iter([k for k in range(self.config.episodes) if k not in self.folder.finished])
        workers = max(1, min(self.concurrency, self.config.episodes - resumed))
        teams = self._teams + [self._policies() for _ in range(workers - 1)]
        self._envs += [self.make_env() for _ in range(workers - 1)]
        bar = tqdm(total=self.config.episodes, initial=resumed, disable=not self.progress,
                   desc=self.config.env, unit="ep", dynamic_ncols=True)
        played = 0

        async def worker(policies: list[Policy], env: AECEnv) -> None:
            nonlocal played
            hooks = [_sync_hooks(policy) for policy in policies]
            for episode in todo:
                entry, line, block = await self._play(episode, policies, hooks, env)
                self.folder.commit(line, block)
                table.add(entry)
                played += 1
                bar.update(1)
                if self.on_episode is not None:
                    self.on_episode(entry)

        tasks = [asyncio.ensure_future(worker(team, env)) for team, env in zip(teams, self._envs)]
        try:
            _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            # read every failure (so asyncio reports none as never retrieved), raise the first
            failures = [task.exception() for task in tasks if task.done() and not task.cancelled()]
            errors = [err for err in failures if err is not None]
            if errors:
                raise errors[0]
        finally:
            bar.close()
            self.folder.close()  # commits every finished episode
            write_leaderboard(self.folder.path, table)
            for team in teams:
                for policy in team:
                    policy.close()
            for env in self._envs:
                env.close()
        figures = write_run_figures(self.config.env, self.folder.path) if self.plots else []
        return RunSummary(self.folder.path, self.config, played, resumed, figures)

    async def _play(self, episode: int, policies: list[Policy], hooks: list[tuple[bool, bool, bool]],
                    env: AECEnv) -> tuple[dict[str, Any], bytes, bytes]:
        """Play ``episode`` on ``env`` (reset here) with ``policies`` (their :func:`_sync_hooks` in
        ``hooks``); its ``episodes.jsonl`` entry, that entry's line and its ``log.jsonl`` block."""
        seeds = episode_seeds(self.config.seed, episode, len(self.agents))
        order = seat_players(len(self.agents), episode, self.config.rotate)
        seat_policy = {agent: policies[order[j]] for j, agent in enumerate(self.agents)}
        sync = {agent: hooks[order[j]] for j, agent in enumerate(self.agents)}
        seats = self._seats(episode)
        seat_label = seats.labels
        invalid = {agent: dict.fromkeys(INVALID_KINDS, 0) for agent in self.agents}
        lines = EpisodeLines(episode, seats)
        step = 0
        agent = None
        try:
            env.reset(seed=seeds.env)
            raw = env.unwrapped
            returns = None if hasattr(raw, "episode_metrics") else dict.fromkeys(self.agents, 0.0)
            for j, agent in enumerate(self.agents):
                try:
                    seat_policy[agent].bind(raw)
                    seat_policy[agent].reset(agent, seeds.seats[j])
                except Exception as err:
                    raise _policy_failed(seat_label[agent], agent, episode, step, err) from err
            while raw.agents:  # read from the raw env: a wrapper's attribute lookup costs more than a step
                agent = raw.agent_selection
                observation, _, termination, truncation, info = env.last()
                policy = seat_policy[agent]
                sync_act, sync_finish, traced = sync[agent]
                if termination or truncation:  # an AEC env selects each done agent exactly once
                    try:
                        worked = (policy.finish(observation, info) if sync_finish
                                  else await policy.afinish(observation, info))
                    except Exception as err:
                        raise _policy_failed(seat_label[agent], agent, episode, step, err) from err
                    if worked:  # the seat's end-of-episode work gets a step-log line with no action
                        lines.finish(step, agent, policy.trace())
                    env.step(None)
                    continue
                try:
                    action = policy.act(observation, info) if sync_act else await policy.aact(observation, info)
                except Exception as err:
                    raise _policy_failed(seat_label[agent], agent, episode, step, err) from err
                env.step(action)
                if returns is not None:
                    for other, reward in raw.rewards.items():
                        returns[other] += float(reward)
                after = raw.infos.get(agent, {})
                bad = after.get("invalid_action")
                if bad:
                    invalid[agent][bad["kind"]] += 1
                fallback = bool(after.get("fallback"))
                if fallback:
                    invalid[agent]["fallback"] += 1
                lines.decision(step, agent, action, getattr(raw, "last_move", None), bad, fallback,
                               after.get("retries"), raw.rewards, policy.trace() if traced else None)
                step += 1
            record = raw.episode_record() if hasattr(raw, "episode_record") else None
            if returns is not None:
                metrics = _return_metrics(returns)
            elif isinstance(record, dict) and "metrics" in record:  # TextEnv records carry them: no second pass
                metrics = record["metrics"]
            else:
                metrics = raw.episode_metrics()
            entry = {"episode": episode, "seed": seeds.env, "seats": seat_label,
                     "policy_seeds": dict(zip(self.agents, seeds.seats)), "metrics": metrics,
                     "steps": step, "invalid": invalid}
            metrics_json = dumps(metrics)  # once for the entry and the record that holds them
            known = {"metrics": metrics_json, "seats": seats.json, "invalid": _invalid_json(invalid, seats)}
            line = (dumps_with(entry, known) + "\n").encode("utf-8")
            shared = isinstance(record, dict) and record.get("metrics") is metrics
            block = lines.block(record, {"metrics": metrics_json} if shared else None)
        except Exception as err:
            if isinstance(err, RunError):
                raise
            raise RunError(f"environment {self.config.env} raised in episode {episode} "
                           f"(seat {agent}, step {step}): {type(err).__name__}: {err}") from err
        return entry, line, block


def _sync_hooks(policy: Policy) -> tuple[bool, bool, bool]:
    """Whether ``policy`` keeps :class:`Policy`'s ``aact`` and ``afinish``, which only call ``act``
    and ``finish`` (the runner then calls those directly, as a bare loop does, rather than create
    and await a coroutine per decision), and whether it has its own ``trace`` (the base one has
    nothing to say, so the runner does not ask it at every decision)."""
    def inherited(name: str) -> bool:
        return getattr(getattr(policy, name, None), "__func__", None) is getattr(Policy, name)

    return inherited("aact"), inherited("afinish"), not inherited("trace")


def _invalid_json(invalid: dict[str, dict[str, int]], seats: Seats) -> str:
    """``dumps(invalid)``, with the usual all-zero counts of an agent written from one string."""
    return "{" + ", ".join([f"{seats.keys[agent]}: {dumps(counts) if any(counts.values()) else _NO_INVALID}"
                            for agent, counts in invalid.items()]) + "}"


def _policy_failed(label: str, agent: str, episode: int, step: int, err: Exception) -> RunError:
    return RunError(f"policy {label!r} raised in episode {episode} (seat {agent}, step {step}): "
                    f"{type(err).__name__}: {err}")


def _return_metrics(returns: dict[str, float]) -> dict[str, Any]:
    """Metrics of an environment without ``episode_metrics()``: the score is the episode return."""
    return {"agents": {agent: {"score": value} for agent, value in returns.items()}, "game": {}}


async def arun(config: RunConfig, out: str | Path, **options: Any) -> RunSummary:
    """Async :func:`run`, for callers that already have an event loop."""
    return await Runner(config, out, **options).run()


def run(config: RunConfig, out: str | Path, *, concurrency: int = 1, progress: bool = False,
        make_env: EnvFactory | None = None, policy_factory: PolicyFactory | None = None,
        sync_interval: float = SYNC_INTERVAL, plots: bool = True,
        on_episode: Callable[[dict[str, Any]], None] | None = None) -> RunSummary:
    """Play the episodes of ``config`` missing from results folder ``out`` (creating or resuming it).

    ``make_env`` overrides how environments are built (default: ``config.env`` with
    ``config.env_kwargs``; one per worker, reset for every episode); ``policy_factory(spec,
    env_name)`` overrides how specs become policies; ``sync_interval`` is the most seconds between
    two group commits (:mod:`arena_envs.runner.results`; 0 commits every episode on its own);
    ``plots``: whether a finished run writes its environment's figures into ``out/figures``
    (:mod:`arena_envs.runner.figures`; ``trading_v0`` has some); ``on_episode(entry)`` is called
    with each episode's ``episodes.jsonl`` entry once it is committed or held for the next group
    commit (a caller's own progress bar, e.g. ``arena eval``'s one bar over many runs).
    Raises :class:`RunError` when a policy or the environment raises (finished episodes are kept)
    and ``ValueError`` for a bad configuration or a folder holding another configuration.
    """
    runner = Runner(config, out, concurrency=concurrency, progress=progress, make_env=make_env,
                    policy_factory=policy_factory, sync_interval=sync_interval, plots=plots, on_episode=on_episode)
    return asyncio.run(runner.run())
