"""Play a model's report card: every (game, subject, part) of the paper settings as an ordinary
runner run into ``OUT/<game>/<subject>/<part>/``, then the report.

Resuming is the runner's: each run's folder keeps what it committed (every episode is committed on
its own, ``sync_interval=0``, so a ``kill -9`` loses only the episodes in flight), and a second
``arena eval`` with the same SPEC, seed and mode plays only the missing episodes. ``eval.json`` is
written before the first game and checked on every later call, so an OUT of another model, seed
or mode is refused with one line instead of being mixed. Before that, every policy of the plan is
built once and an LLM policy's optional ``preflight()`` (a policy hook: the LLM package checks that
its server answers and serves the model) runs, so a bad SPEC or an unreachable server stops the
evaluation before any game starts.

Runs are played in one event loop, longest first, at most ``concurrency`` episodes in flight
together (a run gets the free slots its missing episodes can use), so LLM requests of several runs
batch on the server; the results do not depend on it (the runner's seeds depend only on the run
seed and the episode id). One progress bar counts every episode of every run.
"""
from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pettingzoo import AECEnv
from tqdm.auto import tqdm

from arena_envs.core import Policy
from arena_envs.core.arguments import MAX_EPISODES, check_games, check_int, check_played
from arena_envs.core.event_loops import run_to_end
from arena_envs.evaluation.settings import MANIFEST, SETTINGS, SUBJECTS, PaperSetting, read_manifest
from arena_envs.runner.policy_specs import make_policy
from arena_envs.runner.provenance import describe, package_version, prompt_hash, source_commit
from arena_envs.runner.results import WriterLock, dumps_indented, holds_data, read_episodes, write_durably
from arena_envs.runner.run_config import env_builder
from arena_envs.runner.runner import PolicyFactory, RunConfig, Runner, env_factory

#: The manifest's keys that must be equal for a folder to be resumed.
SAME = ("model", "seed", "quick")


@dataclass(frozen=True)
class PlannedRun:
    """One run of the evaluation and where it goes."""

    setting: PaperSetting
    subject: str
    part: str
    config: RunConfig
    folder: Path

    @property
    def game(self) -> str:
        return self.setting.game

    def finished(self) -> int:
        """Episodes already committed in the run's folder."""
        return len(read_episodes(self.folder / "episodes.jsonl"))


def select_games(games: Sequence[str] | None) -> list[str]:
    """The games to play, in the report's order (``None``: all twelve); ValueError for an unknown one."""
    if games is None:
        return list(SETTINGS)
    check_games(games, list(SETTINGS))
    return [g for g in SETTINGS if g in games]


def plan(spec: str, out: Path, games: Sequence[str], *, episodes: int | None = None, quick: bool = False,
         seed: int = 0, env_overrides: Mapping[str, Mapping[str, Any]] | None = None) -> list[PlannedRun]:
    """Every run of the evaluation, in the report's order (game, subject, part)."""
    runs = []
    for game in games:
        setting = SETTINGS[game]
        for subject in SUBJECTS:
            for part in setting.parts:
                env, kwargs = setting.run_env(part, seed, (env_overrides or {}).get(game))
                count = episodes if episodes is not None else setting.episodes(part, quick)
                config = RunConfig(env=env, players=setting.players(part, spec, subject, kwargs.get("n_players")),
                                   episodes=count, seed=seed, env_kwargs=kwargs, rotate=False)
                runs.append(PlannedRun(setting, subject, part.name, config, out / game / subject / part.name))
    return runs


def manifest(spec: str, seed: int, quick: bool, runs: Sequence[PlannedRun],
             env_overrides: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The ``eval.json`` of an evaluation made of ``runs``."""
    counts: dict[str, dict[str, int]] = {}
    for run in runs:
        counts.setdefault(run.game, {})[run.part] = run.config.episodes
    return {"format": 1, "model": spec, "seed": seed, "quick": quick, "games": list(counts), "episodes": counts,
            "subjects": list(SUBJECTS), "env_args": {g: dict(kw) for g, kw in env_overrides.items()}}


def merge_manifest(out: Path, new: dict[str, Any]) -> dict[str, Any]:
    """``new`` joined with the evaluation already in ``out`` (its games plus the new ones);
    ValueError (one line) when ``out`` holds another model, seed or mode, or plays a game of both
    with other episode counts or environment arguments."""
    if not (out / MANIFEST).exists():
        if out.exists() and holds_data(out):
            raise ValueError(f"{out} exists, is not empty and has no {MANIFEST}; choose another --out")
        return new
    old = read_manifest(out)
    if any(old.get(key) != new[key] for key in SAME):
        raise ValueError(f"{out} holds the evaluation of {_describe(old)}, this command asks for {_describe(new)}; "
                         "use another --out, or repeat the original command to resume it")
    for game in set(old["games"]) & set(new["games"]):
        for key, what in (("episodes", "episodes per part"), ("env_args", "--env-arg")):
            if old[key].get(game) != new[key].get(game):
                raise ValueError(f"{out} played {game} with {what} {old[key].get(game)!r}, this command asks for "
                                 f"{new[key].get(game)!r}; use another --out")
    games = [g for g in SETTINGS if g in old["games"] or g in new["games"]]
    counts = {**old["episodes"], **new["episodes"]}
    return {**new, "games": games, "episodes": {g: counts[g] for g in games},
            "env_args": {**old["env_args"], **new["env_args"]}}


def _describe(manifest: Mapping[str, Any]) -> str:
    mode = "--quick" if manifest.get("quick") else "full"
    return f"model {manifest.get('model')!r}, seed {manifest.get('seed')}, {mode} mode"


def preflight(runs: Sequence[PlannedRun], builders: Mapping[str, Callable[..., AECEnv]]) -> dict[str, Any]:
    """Build every policy and environment of ``runs`` once (a bad spec or --env-arg fails here), and
    run each distinct policy's optional ``preflight()`` (an LLM server that cannot answer fails
    here, with one line); nothing is played and no folder is written. ``builders``: each
    environment name's ``env`` function. The policies built here are closed again (every run
    builds its own, one team per worker, once the whole evaluation is known to start). Returns the
    evaluation's provenance: the package, its commit, and per game the hash of its prompts (of the
    first part) and what the model subject's policy says of itself (:mod:`arena_envs.runner.provenance`)."""
    games: dict[str, dict[str, Any]] = {}
    checked_envs: set[str] = set()
    checked: set[tuple[str, str]] = set()
    ready: set[str] = set()
    for run in runs:
        key = json.dumps([run.config.env, run.config.env_kwargs], sort_keys=True, default=str)
        if key not in checked_envs:
            make_env = env_factory(run.config.env, run.config.env_kwargs, builders[run.config.env])
            checked_envs.add(key)
            if run.game not in games:
                games[run.game] = {"prompt_sha256": prompt_hash(make_env, run.config.seed)}
        for spec in dict.fromkeys(run.config.players):
            if (spec, run.game) in checked:
                continue
            checked.add((spec, run.game))
            policy = make_policy(spec, run.game)
            try:
                check = getattr(policy, "preflight", None)
                if callable(check) and spec not in ready:
                    try:
                        check()
                    except Exception as err:
                        raise ValueError(f"policy {spec!r} is not ready: {err}") from err
                    ready.add(spec)
                if run.subject == "model" and "model" not in games[run.game] and spec == _subject_spec(run):
                    games[run.game]["model"] = describe(policy)
            finally:
                policy.close()
    return {"package": package_version(), "commit": source_commit(), "games": games}


def _subject_spec(run: PlannedRun) -> str:
    """The spec the subject plays in ``run`` (in its first subject seat)."""
    seats = run.setting.part(run.part).subject_seats
    return run.config.players[0 if seats is None else seats[0]]


def policies_of(game: str) -> PolicyFactory:
    """Policy specs resolved for ``game`` (the tank battle's runs name the layout builder as their
    environment; its policies are the tank battle's)."""
    def factory(spec: str, env: str) -> Policy:
        return make_policy(spec, game)
    return factory


async def play(runs: Sequence[PlannedRun], concurrency: int, bar: tqdm,
               builders: Mapping[str, Callable[..., AECEnv]]) -> None:
    """Play the missing episodes of ``runs``, longest first, at most ``concurrency`` in flight
    (``builders``: each environment name's ``env`` function)."""
    todo = sorted(((run, run.config.episodes - run.finished()) for run in runs), key=lambda item: -item[1])
    pending = [(run, missing) for run, missing in todo if missing > 0]
    free = concurrency
    active: dict[asyncio.Future[Any], int] = {}

    def counted(entry: dict[str, Any]) -> None:
        bar.update(1)

    try:
        while pending or active:
            while pending and free > 0:
                run, missing = pending.pop(0)
                slots = min(free, missing)
                free -= slots
                runner = Runner(run.config, run.folder, concurrency=slots, sync_interval=0, plots=False,
                                policy_factory=policies_of(run.game),
                                on_episode=counted, builder=builders[run.config.env])
                bar.set_postfix_str(f"{run.game}/{run.subject}/{run.part}", refresh=False)
                active[asyncio.ensure_future(runner.run())] = slots
            done, _ = await asyncio.wait(active, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                free += active.pop(task)
                task.result()  # a failed run stops the evaluation (the others keep what they finished)
    finally:
        for task in active:
            task.cancel()
        await asyncio.gather(*active, return_exceptions=True)


def evaluate(spec: str, out: str | Path, *, games: Sequence[str] | None = None, episodes: int | None = None,
             quick: bool = False, seed: int = 0, concurrency: int = 1, progress: bool = False,
             env_overrides: Mapping[str, Mapping[str, Any]] | None = None) -> Path:
    """Evaluate policy ``spec`` in the paper settings of ``games`` (default: all twelve) into
    ``out`` (created or resumed) and write the report; returns the path of ``report.md``.

    ``episodes`` overrides every part's count; ``quick`` plays each part's ``quick_episodes``;
    ``env_overrides``: game -> environment keyword arguments replacing the setting's (stored in
    ``eval.json``). Raises ValueError (one line) for bad input or an ``out`` that another process is
    evaluating into (it holds the folder's lock), :class:`RunError` when a policy or an environment
    fails during a run (finished episodes are kept; the same call resumes).
    """
    out = Path(out)
    chosen = select_games(games)
    if episodes is not None:
        check_int("episodes", episodes, 1, MAX_EPISODES)
    check_int("concurrency", concurrency, 1)
    overrides = {game: dict(kwargs) for game, kwargs in (env_overrides or {}).items()}
    check_played("--env-arg", overrides, chosen)
    runs = plan(spec, out, chosen, episodes=episodes, quick=quick, seed=seed, env_overrides=overrides)
    asked = manifest(spec, seed, quick, runs, overrides)
    merge_manifest(out, asked)  # another evaluation's folder is refused before any policy is built
    builders = {env: env_builder(env) for env in dict.fromkeys(run.config.env for run in runs)}  # resolved once
    provenance = preflight(runs, builders)
    out.mkdir(parents=True, exist_ok=True)
    with WriterLock(out):  # one evaluation at a time in out; eval.json is merged again under the lock
        write_durably(out / MANIFEST, dumps_indented({**merge_manifest(out, asked), "provenance": provenance}))
        total = sum(run.config.episodes for run in runs)
        bar = tqdm(total=total, initial=sum(run.finished() for run in runs), disable=not progress,
                   desc="arena eval", unit="ep", dynamic_ncols=True)
        try:
            run_to_end(lambda: play(runs, concurrency, bar, builders))
        finally:
            bar.close()
        from arena_envs.evaluation.report import write_report
        return write_report(out)
