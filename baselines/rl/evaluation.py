"""Evaluation of a learner: its mean episode return against each opponent type, beside random play.

For one opponent list, :func:`evaluate` plays ``episodes`` seeded episodes with the model in the
learner's seat (deterministic actions), then the same episodes (same seeds, so the same deals,
opponents' draws and seats) with a uniformly random learner that takes only legal actions. Each
side gets its mean return with a 95% interval (mean ± 1.96 standard errors, the normal
approximation) and, where the game reports one (``episode_metrics()``), its mean score.

:func:`opponent_types` splits a training's opponents into types: each distinct spec, playing
every other seat, so a learner trained against ``rule,random`` is reported against two ``rule``
and against two ``random``. The type ``self`` is the evaluated model itself (sampling its actions).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from arena_envs.core.extras import needs_extra

with needs_extra("rl", __name__):
    from stable_baselines3.common.base_class import BaseAlgorithm

from arena_envs.rl import SELF, LearnerEnv, random_action
from arena_envs.runner.line_json import dumps
from baselines.rl.envs import expand_specs, learner_env_fn, learner_env_kwargs
from baselines.rl.models import ActFn, Snapshot, act_fn, load_model, training_metadata


@dataclass(frozen=True)
class Stat:
    """Mean over episodes, the half-width of its 95% interval, and the mean game score (None: no score)."""

    mean: float
    ci95: float
    score: float | None

    @classmethod
    def of(cls, returns: Sequence[float], scores: Sequence[float]) -> Stat:
        values = np.asarray(returns, dtype=float)
        half = 1.96 * float(values.std(ddof=1)) / math.sqrt(len(values)) if len(values) > 1 else math.nan
        score = float(np.mean(scores)) if scores and len(scores) == len(values) else None
        return cls(float(values.mean()), half, score)

    def text(self) -> str:
        return f"{self.mean:.2f} ± {self.ci95:.2f}"


@dataclass(frozen=True)
class EvalRow:
    """One evaluation of a learner against one opponent type (one line of ``evaluation.jsonl``)."""

    opponent: str
    step: int
    episodes: int
    seed: int
    learner: Stat
    random: Stat
    returns: tuple[float, ...]         # per episode, the learner's
    random_returns: tuple[float, ...]  # per episode, the random learner's (same seeds)

    def to_json(self) -> dict[str, Any]:
        """The row without the per-episode returns."""
        row = asdict(self)
        del row["returns"], row["random_returns"]
        return row


def opponent_types(specs: Sequence[str]) -> list[str]:
    """The distinct specs of an opponent list, in order of first appearance."""
    return list(dict.fromkeys(s.strip() for s in specs))


def evaluate(model: str | Path | BaseAlgorithm, env: str, opponents: Sequence[str], episodes: int, seed: int, *,
             env_kwargs: Mapping[str, Any] | None = None, seat: str | None = None, step: int = 0,
             label: str | None = None, progress: bool = False) -> EvalRow:
    """``model`` (a trained model or the path of its zip) against ``opponents`` (one spec per other
    seat, ``rule*2`` repeats; ``self`` is the model), beside a random learner; see the module
    docstring. ``env_kwargs`` None: those of the model's training (its ``model.json``), else none;
    the learner defaults (:data:`baselines.rl.envs.LEARNER_DEFAULTS`) fill in the rest."""
    if isinstance(model, BaseAlgorithm):
        trained = model
    else:
        trained = load_model(Path(model))
        if env_kwargs is None:
            env_kwargs = training_metadata(Path(model)).get("env_kwargs")
    opponents = expand_specs(opponents)
    build = learner_env_fn(env, learner_env_kwargs(env, env_kwargs or {}), opponents, seat)
    label = label or ",".join(opponents)
    results = []
    for side in ("learner", "random"):
        view = build()
        try:
            if SELF in (o.strip() for o in opponents):
                view.add_snapshot(Snapshot(trained))
            act = act_fn(trained.policy, deterministic=True) if side == "learner" \
                else _random_fn(view.action_space, np.random.default_rng(seed))
            results.append(_play(view, act, episodes, seed, progress, f"{side} vs {label}"))
        finally:
            view.close()
    (returns, scores), (random_returns, random_scores) = results
    return EvalRow(label, step, episodes, seed, Stat.of(returns, scores), Stat.of(random_returns, random_scores),
                   tuple(returns), tuple(random_returns))


def _random_fn(space: Any, rng: np.random.Generator) -> ActFn:
    return lambda observation, mask: random_action(space, mask, rng)


def _play(view: LearnerEnv, act: ActFn, episodes: int, seed: int, progress: bool,
          label: str) -> tuple[list[float], list[float]]:
    """Returns (and game scores, where the game has them) of ``episodes`` episodes from ``seed``."""
    returns: list[float] = []
    scores: list[float] = []
    for episode in tqdm(range(episodes), desc=label, unit="ep", disable=not progress, leave=False):
        observation, _ = view.reset(seed=seed) if episode == 0 else view.reset()
        total, done = 0.0, False
        while not done:
            observation, reward, terminated, truncated, _ = view.step(act(observation, view.action_masks()))
            total += reward
            done = terminated or truncated
        returns.append(total)
        score = _score(view)
        if score is not None:
            scores.append(score)
    return returns, scores


def _score(view: LearnerEnv) -> float | None:
    """The learner's ``score`` in the game's episode metrics, when the game reports them."""
    metrics = getattr(view.raw, "episode_metrics", None)
    if metrics is None:
        return None
    try:
        value = metrics()["agents"][view.learner]["score"]
    except (KeyError, TypeError, RuntimeError, ValueError):
        return None
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def table(rows: Sequence[EvalRow]) -> str:
    """The evaluation table: per opponent type, learner and random mean return (± 95%), difference, scores."""
    if not rows:
        return ""
    first = rows[0]
    header = ["opponent", "learner", "random", "difference"]
    scored = any(r.learner.score is not None for r in rows)
    if scored:
        header += ["learner score", "random score"]
    lines = [header]
    for row in rows:
        line = [row.opponent, row.learner.text(), row.random.text(), f"{row.learner.mean - row.random.mean:+.2f}"]
        if scored:
            line += [_fmt(row.learner.score), _fmt(row.random.score)]
        lines.append(line)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    body = "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines)
    return (f"evaluation at step {first.step}: mean episode return over {first.episodes} episodes "
            f"(seed {first.seed}), ± 95% interval\n{body}")


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def append_rows(path: Path, rows: Sequence[EvalRow]) -> None:
    """Append the rows to ``evaluation.jsonl``."""
    with path.open("a", encoding="utf-8") as out:
        for row in rows:
            out.write(dumps(row.to_json()) + "\n")
