"""One episode, played the same way by every executor (the local runner's workers, Ray workers).

:class:`EpisodePlayer` owns one environment and one policy per player; :meth:`EpisodePlayer.play`
resets them with the seeds and seats that follow from the run seed and the episode id alone
(:mod:`arena_envs.runner.seeding`) and returns the episode's ``episodes.jsonl`` entry with the
exact bytes of its line and of its ``log.jsonl`` block. Whoever writes the results folder commits
those bytes untouched, so an episode is byte-identical wherever it was played. Each episode runs
inside :func:`arena_envs.core.episode_context.episode_scope` with the key ``(run_token, episode)``.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from pettingzoo import AECEnv

from arena_envs.core import Policy, PolicyFault
from arena_envs.core.episode_context import episode_scope
from arena_envs.runner.line_json import EpisodeLines, Seats, dumps, dumps_with, utf8
from arena_envs.runner.seeding import episode_seeds, seat_players
from arena_envs.runner.validity import KEYS as VALIDITY_KEYS

if TYPE_CHECKING:
    from arena_envs.runner.run_config import RunConfig

INVALID_KINDS = ("unparseable", "illegal", "fallback")
#: The most seconds a lane plays on without giving the event loop a turn: episodes whose policies
#: never await would otherwise hold the loop, and a cancellation (Ctrl-C) would wait for the run's end.
YIELD_INTERVAL = 0.05
_NO_INVALID = dumps(dict.fromkeys(INVALID_KINDS, 0))


class RunError(RuntimeError):
    """A policy or the environment raised during an episode; the run stopped, finished episodes are kept."""


class RunFault(RunError):
    """A run stopped by a policy's own fault (:class:`~arena_envs.core.PolicyFault`): playing the same
    episodes again fails the same way, so resuming does not help."""


class PlayedEpisode(NamedTuple):
    """A finished episode: its ``episodes.jsonl`` entry, that entry's line and its ``log.jsonl`` block."""

    episode: int
    entry: dict[str, Any]
    line: bytes
    block: bytes


class EpisodePlayer:
    """Plays episodes of ``config`` on ``env`` (reset for each) with ``policies`` (one per player,
    in the order of ``config.players``); ``agents``: the environment's possible agents."""

    def __init__(self, config: RunConfig, env: AECEnv, policies: list[Policy], agents: Sequence[str],
                 run_token: Hashable = None):
        self.config = config
        self.env = env
        self.policies = policies
        self.agents = list(agents)
        self.run_token = run_token
        self.labels = config.labels
        self._hooks = [_sync_hooks(policy) for policy in policies]
        self._rotations: dict[int, Seats] = {}

    def close(self) -> None:
        for policy in self.policies:
            policy.close()
        self.env.close()

    def _seats(self, episode: int) -> Seats:
        """The seat labels of ``episode``, built once per seat rotation."""
        rotation = episode % len(self.agents) if self.config.rotate else 0
        seats = self._rotations.get(rotation)
        if seats is None:
            order = seat_players(len(self.agents), episode, self.config.rotate)
            seats = self._rotations[rotation] = Seats({agent: self.labels[order[j]]
                                                       for j, agent in enumerate(self.agents)})
        return seats

    async def play(self, episode: int) -> PlayedEpisode:
        """Play ``episode``; raises :class:`RunError` when a policy or the environment raises."""
        with episode_scope((self.run_token, episode)):
            entry, line, block = await self._play(episode)
        return PlayedEpisode(episode, entry, line, block)

    async def _play(self, episode: int) -> tuple[dict[str, Any], bytes, bytes]:
        env = self.env
        seeds = episode_seeds(self.config.seed, episode, len(self.agents))
        order = seat_players(len(self.agents), episode, self.config.rotate)
        seat_policy = {agent: self.policies[order[j]] for j, agent in enumerate(self.agents)}
        sync = {agent: self._hooks[order[j]] for j, agent in enumerate(self.agents)}
        seats = self._seats(episode)
        seat_label = seats.labels
        invalid = {agent: dict.fromkeys(INVALID_KINDS, 0) for agent in self.agents}
        validity = {agent: dict.fromkeys(VALIDITY_KEYS, 0) for agent in self.agents}
        reasked: set[str] = set()  # the agents whose open decision had an invalid answer
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
            moves: list[tuple[str, Any]] | None = None  # every step's move, for policies that watch them
            for watcher in seat_policy.values():
                if watcher.watches_moves:
                    moves = [] if moves is None else moves
                    watcher.watch(seeds.env, moves)
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
                    if moves is not None:
                        moves.append((agent, None))
                    continue
                try:
                    action = policy.act(observation, info) if sync_act else await policy.aact(observation, info)
                except Exception as err:
                    raise _policy_failed(seat_label[agent], agent, episode, step, err) from err
                env.step(action)
                if moves is not None:
                    moves.append((agent, action))
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
                trace = policy.trace() if traced else None
                if bad and not fallback:  # asked again: the decision goes on
                    reasked.add(agent)
                else:
                    counts = validity[agent]
                    counts["decisions"] += 1
                    # the game's fallback, or the policy's own (its trace says so: its model gave no usable answer)
                    counts["fallback"] += fallback or (trace is not None and trace.get("fallback") is True)
                    if agent in reasked:
                        counts["retried"] += 1
                        reasked.discard(agent)
                lines.decision(step, agent, action, getattr(raw, "last_move", None), bad, fallback,
                               after.get("retries"), raw.rewards, trace)
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
                     "steps": step, "invalid": invalid, "validity": validity}
            metrics_json = dumps(metrics)  # once for the entry and the record that holds them
            known = {"metrics": metrics_json, "seats": seats.json, "invalid": _invalid_json(invalid, seats)}
            line = utf8(dumps_with(entry, known) + "\n")
            shared = isinstance(record, dict) and record.get("metrics") is metrics
            block = lines.block(record, {"metrics": metrics_json} if shared else None)
        except Exception as err:
            if isinstance(err, RunError):
                raise
            raise RunError(f"environment {self.config.env} raised in episode {episode} "
                           f"(seat {agent}, step {step}): {described(err)}") from err
        return entry, line, block


async def play_episodes(players: Sequence[EpisodePlayer], episodes: Iterator[int],
                        on_played: Callable[[PlayedEpisode], None]) -> None:
    """Play ``episodes`` with ``players`` side by side (each takes the next id when it is free),
    handing each finished one to ``on_played``; the first :class:`RunError` stops the others and
    is raised (episodes handed over before it stay handed over). A cancellation (Ctrl-C in
    ``asyncio.run``) stops the lanes within :data:`YIELD_INTERVAL` plus one episode: each lane
    finishes the episode it plays unless that episode awaits, which abandons it."""
    async def lane(player: EpisodePlayer) -> None:
        turn = time.monotonic() + YIELD_INTERVAL
        for episode in episodes:
            on_played(await player.play(episode))
            if time.monotonic() > turn:
                await asyncio.sleep(0)
                turn = time.monotonic() + YIELD_INTERVAL

    tasks = [asyncio.ensure_future(lane(player)) for player in players]
    try:
        _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except BaseException:  # cancelled or interrupted: stop the lanes with it
        for task in tasks:
            task.cancel()
        raise
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    # read every failure (so asyncio reports none as never retrieved), raise the first
    failures = [task.exception() for task in tasks if task.done() and not task.cancelled()]
    errors = [err for err in failures if err is not None]
    if errors:
        raise errors[0]


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
    kind = RunFault if isinstance(err, PolicyFault) else RunError
    return kind(f"policy {label!r} raised in episode {episode} (seat {agent}, step {step}): {described(err)}")


def described(err: BaseException) -> str:
    """``Type: message`` of ``err``; an exception group (task groups raise them, anyio's in an HTTP
    client among others) is described by its first real error, never as the group."""
    inner = getattr(err, "exceptions", None)
    while isinstance(inner, tuple) and inner and isinstance(inner[0], BaseException):
        err = inner[0]
        inner = getattr(err, "exceptions", None)
    return f"{type(err).__name__}: {err}"


def _return_metrics(returns: dict[str, float]) -> dict[str, Any]:
    """Metrics of an environment without ``episode_metrics()``: the score is the episode return."""
    return {"agents": {agent: {"score": value} for agent, value in returns.items()}, "game": {}}
