"""A person's game recorded as an ordinary results folder, played by the runner itself.

A game of ``arena play`` (at the terminal or in the page) is episode 0 of a one-episode run: a
:class:`~arena_envs.runner.run_config.RunConfig` whose players are the opponents' specs with
:data:`PERSON` (``human``) in the person's seat, seats fixed, seeded with the given seed. The
:class:`~arena_envs.runner.runner.Runner` plays it with its own episode player and writes the
folder (``run.json``, ``episodes.jsonl``, ``log.jsonl``, the leaderboard) by its commit protocol, so
a game abandoned before its end commits nothing; the seat's policy is the one the front gives. A
:class:`Front` hears what the person must see that no question carries: an answer the game did not
accept, and the person's last observation.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pettingzoo import AECEnv

from arena_envs.core import Policy
from arena_envs.core.arguments import listing
from arena_envs.runner import policy_registry as registry
from arena_envs.runner.cli_errors import UsageError
from arena_envs.runner.episode import EpisodePlayer, RunError
from arena_envs.runner.folders import play_folder
from arena_envs.runner.policy_specs import make_policy
from arena_envs.runner.results import read_episodes
from arena_envs.runner.run_config import RunConfig, env_factory
from arena_envs.runner.runner import Runner

#: the person's spec and leaderboard label
PERSON = "human"


class Quit(Exception):
    """The person abandoned the game (typed ``quit``, closed the input, closed the page)."""


class PolicyFailed(RuntimeError):
    """An opponent's policy raised; the game stops."""


class Front(Protocol):
    """Where the person plays: told what they must see besides the questions."""

    def rejected(self, kind: str, reason: str) -> None:
        """The person's answer was not accepted (``kind``: unparseable, illegal)."""

    def game_over(self, text: str) -> None:
        """The person's last observation (the game's final word to them)."""


@dataclass(frozen=True)
class PlayResult:
    """The end of a game: the person's seat, each seat's score (None when abandoned) and the steps played."""

    seat: str
    scores: dict[str, float] | None
    steps: int


@dataclass(frozen=True)
class Game:
    """A checked request: the environment, the person's seat index and agent, every seat's spec, the folder."""

    env: str
    env_kwargs: dict[str, Any]
    seat: int
    agents: tuple[str, ...]
    players: tuple[str, ...]
    seed: int
    out: Path

    @property
    def me(self) -> str:
        return self.agents[self.seat]

    def config(self) -> RunConfig:
        return RunConfig(self.env, self.players, 1, self.seed, self.env_kwargs, rotate=False)

    def header(self) -> str:
        """``env, seed S: you are SEAT; other: spec, ...``."""
        others = ", ".join(f"{a}: {s}" for k, (a, s) in enumerate(zip(self.agents, self.players)) if k != self.seat)
        return f"{self.env}, seed {self.seed}: you are {self.me}" + (f"; {others}" if others else "")


def default_opponent(env: str) -> str:
    """The env's ``rule`` policy when it has one, else ``random``."""
    return "rule" if registry.lookup(env, "rule") else "random"


def opponent_specs(env: str, players: Sequence[str], n_others: int) -> list[str]:
    """One spec per other seat: none given -> the default, one -> it for every seat, else one each."""
    if not players:
        return [default_opponent(env)] * n_others
    if len(players) == 1:
        return list(players) * n_others
    if len(players) != n_others:
        raise UsageError(f"--players: {env} needs 1 or {n_others} opponent specs (one per other seat), "
                         f"got {len(players)}: {listing(players, 100)}")
    return list(players)


def prepare(env_name: str, seat: int, opponents: Sequence[str], seed: int, env_kwargs: Mapping[str, Any],
            out: str | Path | None = None) -> Game:
    """Check a request (the environment and its arguments, the seat, the number of specs) and choose
    its folder: ``out``, or the first free :func:`~arena_envs.runner.folders.play_folder`. Nothing is
    written; a folder holding a finished game is refused (:class:`UsageError`)."""
    env = env_factory(env_name, env_kwargs)()
    try:
        agents = tuple(env.unwrapped.possible_agents)
    finally:
        env.close()
    if not 0 <= seat < len(agents):
        raise UsageError(f"--seat {seat}: {env_name} has seats 0..{len(agents) - 1} ({listing(agents, 100)})")
    players = opponent_specs(env_name, opponents, len(agents) - 1)
    players.insert(seat, PERSON)
    if out is None:
        folder = base = play_folder(env_name, env_kwargs, seat, players[:seat] + players[seat + 1:], seed)
        number = 1
        while folder.exists():
            number += 1
            folder = base.with_name(f"{base.name}-{number}")
    else:
        folder = Path(out)
        if folder.is_dir() and read_episodes(folder / "episodes.jsonl"):  # refused before the runner opens it
            raise UsageError(f"{folder} holds a finished game; play into another folder (--out)")
    return Game(env_name, dict(env_kwargs), seat, agents, tuple(players), seed, folder)


class _Watched:
    """The environment as the episode player sees it: tells ``front`` of the person's rejected
    answers and last observation, and keeps the steps played and the agent last asked."""

    def __init__(self, env: AECEnv, me: str, front: Front):
        self.env = env
        self.unwrapped = env.unwrapped
        self.me = me
        self.front = front
        self.steps = 0
        self.agent: str | None = None  # the agent whose decision the player asked for last
        self.in_env = False  # an exception now came from the environment, not a policy

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.steps, self.agent = 0, None
        self.in_env = True
        self.env.reset(seed=seed, options=options)
        self.in_env = False

    def last(self, observe: bool = True) -> Any:
        self.in_env = True
        result = self.env.last(observe)
        self.in_env = False
        observation, _, termination, truncation, _ = result
        self.agent = self.unwrapped.agent_selection
        if (termination or truncation) and self.agent == self.me:
            text = observation.get("text") if isinstance(observation, dict) else observation
            self.front.game_over(str(text))
        return result

    def step(self, action: Any) -> None:
        raw = self.unwrapped
        agent = raw.agent_selection
        moves = not (raw.terminations.get(agent) or raw.truncations.get(agent))
        self.in_env = True
        self.env.step(action)
        self.in_env = False
        if not moves:
            return
        self.steps += 1
        bad = raw.infos.get(agent, {}).get("invalid_action") if agent == self.me else None
        if bad:
            self.front.rejected(str(bad["kind"]), str(bad.get("reason", "")))

    def close(self) -> None:
        self.env.close()


class PlayRunner(Runner):
    """The runner, its episode player watching the person's seat through :class:`_Watched`."""

    def __init__(self, config: RunConfig, out: Path, me: str, front: Front, **options: Any):
        self.me, self.front = me, front
        self.watched: _Watched | None = None
        super().__init__(config, out, **options)

    def player(self, env: AECEnv, policies: list[Policy]) -> EpisodePlayer:
        self.watched = _Watched(env, self.me, self.front)
        return EpisodePlayer(self.config, self.watched, policies, self.agents, self.run_token)  # type: ignore[arg-type]


def start(game: Game, person: Policy, front: Front) -> PlayRunner:
    """The game's runner, its folder created or reopened (an abandoned game of the same request is
    played again; one holding its finished game is refused, :class:`UsageError`), its specs and
    settings checked; :func:`play_game` plays it."""
    built = 0

    def policy(spec: str, env_name: str) -> Policy:
        nonlocal built
        built += 1
        return person if built - 1 == game.seat else make_policy(spec, env_name)

    runner = PlayRunner(game.config(), game.out, game.me, front, policy_factory=policy, sync_interval=0)
    if runner.resumed:
        for player in runner.release_players():
            player.close()
        runner.folder.close()
        raise UsageError(f"{game.out} holds a finished game; play into another folder (--out)")
    return runner


async def play_game(runner: PlayRunner) -> PlayResult:
    """Play the game of ``runner`` (:func:`start`) to its end or until the person quits (scores None:
    nothing committed). Raises :class:`PolicyFailed` when an opponent's policy raises, ``RunError``
    when the environment does."""
    me = runner.me
    try:
        summary = await runner.run()
    except RunError as err:
        watched, cause = runner.watched, err.__cause__
        steps = watched.steps if watched is not None else 0
        if isinstance(cause, Quit):
            return PlayResult(me, None, steps)
        if watched is not None and watched.agent is not None and not watched.in_env and isinstance(cause, Exception):
            spec = runner.config.players[runner.agents.index(watched.agent)]
            raise PolicyFailed(f"policy {spec!r} of seat {watched.agent} raised at step {steps}: "
                               f"{type(cause).__name__}: {cause}") from err
        raise
    entry = summary.episodes[0]
    metrics = entry["metrics"].get("agents", {})
    scores = {agent: float(metrics[agent]["score"]) for agent in runner.agents if agent in metrics}
    return PlayResult(me, scores, int(entry["steps"]))
