"""``arena train``: train a stable-baselines3 agent in one seat of a suite game against given opponents.

    arena train ENV --algo ppo|maskable_ppo|dqn --opponents SPEC,... --steps N --out DIR
                [--seed S] [--seat SEAT|random] [--env-arg k=v ...] [--n-envs K] [--vec auto|dummy|subproc|concurrent]
                [--eval-every K] [--eval-episodes N] [--checkpoint-every K] [--snapshot-every K]
                [--algo-arg k=v ...] [--resume] [--no-progress]

The learner sees the game through :class:`arena_envs.rl.LearnerEnv`; opponents are policy specs,
``self`` being frozen snapshots of the learner (:mod:`baselines.rl.envs`); the network follows the
observation (:mod:`baselines.rl.models`); ``n_envs`` copies (:func:`baselines.rl.vec_env.make_vec_env`,
``auto``: concurrent when an opponent is an LLM) under sb3's ``VecMonitor``. ``out`` receives
``config.json`` (a folder resumes only the same configuration), ``checkpoints/step_<N>.zip``,
``tb/run_1/`` (TensorBoard, with ``eval/<opponent>/mean_return``), ``evaluation.jsonl``
(:mod:`baselines.rl.evaluation`), at the end ``model.zip`` and ``model.json`` (the spec
``sb3:DIR`` plays it with its settings, :func:`baselines.rl.envs.carried_settings`), and ``.lock``
while training (a second ``arena train`` into ``out`` is refused).

Reproducible on the CPU (unless an opponent is an LLM) for the same configuration, ``n_envs`` (copy ``i``
seeded ``seed + i``) and vectorisation; a resumed run reseeds from ``seed`` and its checkpoint step.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from arena_envs.core.extras import needs_extra

with needs_extra("rl", __name__):
    import sb3_contrib
    import stable_baselines3
    import tensorboard  # noqa: F401  (sb3 writes the TensorBoard events with it)
    import torch
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from arena_envs.registration import ENVIRONMENTS
from arena_envs.rl import SELF
from arena_envs.runner.cli_errors import USER_ERRORS, OneLineParser, path_arg, report_os_error, report_user_error
from arena_envs.runner.policy_specs import env_args, split_players
from arena_envs.runner.results import WriterLock, dumps_indented
from baselines.rl.callbacks import Checkpoints, Evaluations, ProgressBar, SelfPlaySnapshots
from baselines.rl.envs import check_opponents, expand_specs, learner_env_fn, learner_env_kwargs, seat_names
from baselines.rl.evaluation import EvalRow, append_rows, evaluate, opponent_types, table
from baselines.rl.models import ALGORITHMS, check_action_space, load_model, network_for
from baselines.rl.vec_env import VEC_KINDS, make_vec_env

#: Evaluation episodes are seeded ``seed + EVAL_SEED_OFFSET``: games the training copies (seeded
#: ``seed + i``) do not play.
EVAL_SEED_OFFSET = 1_000_000


@dataclass(frozen=True)
class TrainConfig:
    """What defines a training (``config.json``). ``opponents``: one policy spec per other seat
    (``rule*2`` expands); ``checkpoint_every`` None: a tenth of ``steps``; ``snapshot_every``: steps
    between two self-play snapshots (used when an opponent is ``self``); ``algo_kwargs`` go to the
    sb3 constructor (``n_steps``, ``learning_rate``, ``policy_kwargs``...)."""

    env: str
    algo: str = "ppo"
    opponents: tuple[str, ...] = ()
    steps: int = 10_000
    seed: int = 0
    seat: str | None = None
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    n_envs: int = 1
    vec: str = "auto"
    eval_every: int | None = None
    eval_episodes: int = 100
    algo_kwargs: Mapping[str, Any] = field(default_factory=dict)
    checkpoint_every: int | None = None
    snapshot_every: int = 10_000

    def __post_init__(self) -> None:
        object.__setattr__(self, "opponents", tuple(expand_specs(self.opponents)))
        object.__setattr__(self, "env_kwargs", dict(self.env_kwargs))
        object.__setattr__(self, "algo_kwargs", dict(self.algo_kwargs))
        if self.env not in ENVIRONMENTS:
            raise ValueError(f"unknown environment {self.env!r}; known: {', '.join(sorted(ENVIRONMENTS))}")
        if self.algo not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {self.algo!r}; accepted: {', '.join(ALGORITHMS)}")
        if self.vec not in VEC_KINDS:
            raise ValueError(f"unknown vectorisation {self.vec!r}; accepted: {', '.join(VEC_KINDS)}")
        _positive("steps", self.steps)
        _positive("n_envs", self.n_envs)
        _positive("eval_episodes", self.eval_episodes)
        _positive("snapshot_every", self.snapshot_every)
        for name in ("eval_every", "checkpoint_every"):
            if getattr(self, name) is not None:
                _positive(name, getattr(self, name))
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")

    @property
    def checkpoint_period(self) -> int:
        return self.checkpoint_every or max(1, self.steps // 10)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "opponents": list(self.opponents)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrainConfig:
        return cls(**{**data, "opponents": tuple(data.get("opponents", ()))})


@dataclass
class TrainSummary:
    """What :func:`train` did: the folder, the model's step count, the step it resumed from (0: a
    new training), this call's seconds, and the final evaluation (empty when the folder was
    already finished)."""

    out: Path
    config: TrainConfig
    steps: int
    resumed_from: int
    seconds: float
    evaluation: list[EvalRow]
    already_finished: bool = False

    @property
    def model(self) -> Path:
        return self.out / "model.zip"


def train(config: TrainConfig, out: str | Path, *, progress: bool = False, resume: bool = False) -> TrainSummary:
    """Train as ``config`` says into the folder ``out`` (see the module docstring); ``resume``
    continues the folder's training from its last checkpoint up to the same ``steps``."""
    out = Path(out)
    env_kwargs = learner_env_kwargs(config.env, config.env_kwargs)
    seats = seat_names(config.env, env_kwargs)
    check_opponents(config.env, seats, config.opponents)
    build = learner_env_fn(config.env, env_kwargs, config.opponents, config.seat)
    probe = build()
    observation_space, action_space = probe.observation_space, probe.action_space
    probe.close()
    check_action_space(config.algo, action_space)
    if (out / "config.json").exists():
        _check_folder(out, config, resume)
        if (out / "model.zip").exists():
            meta = json.loads((out / "model.json").read_text(encoding="utf-8"))
            return TrainSummary(out, config, int(meta["steps"]), int(meta["steps"]), 0.0, [], already_finished=True)
    out.mkdir(parents=True, exist_ok=True)
    lock = WriterLock(out)  # one training at a time in out
    vec_env: VecEnv | None = None
    try:
        (out / "config.json").write_text(dumps_indented(config.to_dict()), encoding="utf-8")
        vec_env = VecMonitor(make_vec_env([build] * config.n_envs, config.vec))
        checkpoint = _last_checkpoint(out / "checkpoints") if resume else None
        model = _resumed(checkpoint, config, vec_env, out) if checkpoint else _new_model(config, vec_env, out)
        start = model.num_timesteps
        evaluated: list[list[EvalRow]] = []

        def evaluate_now(step: int) -> None:
            evaluated.append(_evaluate(model, config, env_kwargs, len(seats), step, out))

        callbacks: list[BaseCallback] = [Checkpoints(config.checkpoint_period, out / "checkpoints")]
        if config.eval_every:
            callbacks.append(Evaluations(config.eval_every, evaluate_now))
        if SELF in config.opponents:
            callbacks.append(SelfPlaySnapshots(config.snapshot_every))
        if progress:
            callbacks.append(ProgressBar(config.steps))
        began = time.perf_counter()
        if config.steps > start:
            model.learn(total_timesteps=config.steps - start, callback=callbacks, tb_log_name="run",
                        reset_num_timesteps=checkpoint is None)
        seconds = time.perf_counter() - began
        meta = _metadata(config, env_kwargs, model, observation_space, action_space)
        (out / "model.json").write_text(dumps_indented(meta), encoding="utf-8")
        model.save(out / "model.zip")  # last: a folder with a model.zip is finished
        if not evaluated or evaluated[-1][0].step != model.num_timesteps:
            evaluate_now(model.num_timesteps)
        return TrainSummary(out, config, model.num_timesteps, start, seconds, evaluated[-1])
    finally:
        if vec_env is not None:
            vec_env.close()
        lock.release()


def _new_model(config: TrainConfig, vec_env: VecEnv, out: Path) -> BaseAlgorithm:
    policy, network_kwargs = network_for(vec_env.observation_space)
    kwargs = {"device": "cpu", **_algo_defaults(config, vec_env), **config.algo_kwargs}
    kwargs["policy_kwargs"] = {**network_kwargs, **kwargs.get("policy_kwargs", {})}
    try:
        return ALGORITHMS[config.algo](policy, vec_env, seed=config.seed, tensorboard_log=str(out / "tb"),
                                       verbose=0, **kwargs)
    except TypeError as err:
        raise ValueError(f"--algo-arg for {config.algo}: {err}") from err


def _algo_defaults(config: TrainConfig, vec_env: VecEnv) -> dict[str, Any]:
    """DQN's replay buffer sized to the training (sb3's default of a million grids would not fit in memory)."""
    if config.algo != "dqn":
        return {}
    cap = 10_000 if len(vec_env.observation_space.shape or ()) == 3 else 100_000
    return {"buffer_size": min(cap, config.steps)}


def _resumed(checkpoint: Path, config: TrainConfig, vec_env: VecEnv, out: Path) -> BaseAlgorithm:
    model = load_model(checkpoint, config.algo, env=vec_env, tensorboard_log=str(out / "tb"))
    model.set_random_seed(config.seed + model.num_timesteps)
    replay = checkpoint.with_suffix(".replay.pkl")
    if replay.exists():
        model.load_replay_buffer(replay)  # type: ignore[attr-defined]
    return model


def _last_checkpoint(folder: Path) -> Path | None:
    found = [(int(m[1]), path) for path in folder.glob("step_*.zip")
             if (m := re.fullmatch(r"step_(\d+)\.zip", path.name))]
    return max(found)[1] if found else None


def _check_folder(out: Path, config: TrainConfig, resume: bool) -> None:
    """A folder that holds a training: resumed only when asked, and only with the same configuration."""
    if not resume:
        raise ValueError(f"{out} already holds a training; --resume continues it, or choose another --out")
    stored = json.loads((out / "config.json").read_text(encoding="utf-8"))
    mine = config.to_dict()
    differ = sorted(k for k in set(stored) | set(mine) if stored.get(k) != mine.get(k))
    if differ:
        raise ValueError(f"{out} holds a training with another configuration (differs in {', '.join(differ)}); "
                         "resume with the same options, or choose another --out")


def _evaluate(model: BaseAlgorithm, config: TrainConfig, env_kwargs: dict[str, Any], n_seats: int, step: int,
              out: Path) -> list[EvalRow]:
    """Evaluate against each opponent type: rows to ``evaluation.jsonl`` and TensorBoard, table printed."""
    rows = [evaluate(model, config.env, [kind] * (n_seats - 1), config.eval_episodes, config.seed + EVAL_SEED_OFFSET,
                     env_kwargs=env_kwargs, seat=config.seat, step=step, label=kind)
            for kind in opponent_types(config.opponents) or ["none"]]
    append_rows(out / "evaluation.jsonl", rows)
    for row in rows:
        tag = re.sub(r"[^\w.-]+", "_", row.opponent)
        model.logger.record(f"eval/{tag}/mean_return", row.learner.mean)
        model.logger.record(f"eval/{tag}/random_mean_return", row.random.mean)
    model.logger.dump(step)
    tqdm.write(table(rows))
    return rows


def _metadata(config: TrainConfig, env_kwargs: dict[str, Any], model: BaseAlgorithm, observation_space: Any,
              action_space: Any) -> dict[str, Any]:
    return {"env": config.env, "env_kwargs": env_kwargs, "algo": config.algo, "seat": config.seat,
            "opponents": list(config.opponents), "steps": model.num_timesteps, "seed": config.seed,
            "observation_space": repr(observation_space), "action_space": repr(action_space),
            "versions": {"stable_baselines3": stable_baselines3.__version__, "sb3_contrib": sb3_contrib.__version__,
                         "torch": torch.__version__}}


def _positive(name: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="arena train", description="Train a stable-baselines3 agent in one seat of a "
                                "game against given opponents (checkpoints, TensorBoard, evaluation table).")
    p.add_argument("env", help="environment name (see `arena list`)")
    p.add_argument("--algo", default="ppo", help=f"{' | '.join(ALGORITHMS)} (default ppo)")
    p.add_argument("--opponents", default="", help="comma-separated policy specs, one per other seat (rule*2 "
                   "repeats; self = snapshots of the learner)")
    p.add_argument("--steps", type=int, default=10_000, help="environment steps of the learner (default 10000)")
    p.add_argument("--out", required=True, type=path_arg, help="training folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seat", help="the learner's seat (default: the first), or 'random' (drawn per episode)")
    p.add_argument("--env-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="environment keyword argument, JSON value when it parses (repeatable)")
    p.add_argument("--n-envs", type=int, default=1, help="environment copies (default 1)")
    p.add_argument("--vec", default="auto", help=f"{' | '.join(VEC_KINDS)} (default auto)")
    p.add_argument("--eval-every", type=int, help="steps between evaluations (default: only at the end)")
    p.add_argument("--eval-episodes", type=int, default=100, help="episodes per opponent type (default 100)")
    p.add_argument("--checkpoint-every", type=int, help="steps between checkpoints (default: a tenth of --steps)")
    p.add_argument("--snapshot-every", type=int, default=10_000,
                   help="steps between self-play snapshots of the learner (default 10000)")
    p.add_argument("--algo-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="keyword argument of the sb3 algorithm, JSON value when it parses (repeatable)")
    p.add_argument("--resume", action="store_true", help="continue the folder's training from its last checkpoint")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``arena train ARGS`` -> exit status (2 with one line on stderr for bad input)."""
    args = parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    try:
        config = TrainConfig(env=args.env, algo=args.algo, opponents=tuple(split_players(args.opponents))
                             if args.opponents else (), steps=args.steps, seed=args.seed, seat=args.seat,
                             env_kwargs=env_args(args.env_arg), n_envs=args.n_envs, vec=args.vec,
                             eval_every=args.eval_every, eval_episodes=args.eval_episodes,
                             algo_kwargs=env_args(args.algo_arg, "--algo-arg"),
                             checkpoint_every=args.checkpoint_every, snapshot_every=args.snapshot_every)
        # no bar in non-interactive runs (logs), as `arena run`
        summary = train(config, args.out, progress=not args.no_progress and sys.stderr.isatty(), resume=args.resume)
    except USER_ERRORS as err:
        return report_user_error(err)
    except OSError as err:  # disk full, read-only folder: one line, status 1
        return report_os_error(err)
    except KeyboardInterrupt:
        print(f"\narena: interrupted; `arena train ... --out {args.out} --resume` continues from the last checkpoint",
              file=sys.stderr)
        return 130
    if summary.already_finished:
        print(f"{summary.out} is finished: {summary.model} ({summary.steps} steps); nothing to do")
    else:
        print(f"model: {summary.model} ({summary.steps} steps, {summary.seconds:.0f} s of training)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
