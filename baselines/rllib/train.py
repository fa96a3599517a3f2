"""Multi-agent PPO on RLlib in several seats of a suite game, against given players in the others.

    python -m baselines.rllib.train ENV --others SPEC,... --iterations N --out DIR [--learners SEAT,...]
        [--seed S] [--env-arg k=v ...] [--batch B] [--minibatch M] [--epochs E] [--lr LR]
        [--algo-arg k=v ...] [--env-runners K] [--address ADDRESS]

The learners see the game through :class:`arena_envs.rl.NumericAEC` under RLlib's ``PettingZooEnv``
(:mod:`baselines.rllib.env`). Learner seats with equal spaces share one module (``learner``:
self-play), others get one each (``learner_<seat>``); ``Discrete`` seats use the masking PPO module
(:mod:`baselines.rllib.masking`). The other seats are played by policy specs, LLM ones included.
Ray: the cluster at ``address`` or a local one (:func:`arena_envs.runner.ray_cluster.ray_session`);
``env_runners`` 0 samples in the driver, K > 0 on K EnvRunner actors.

``out`` receives ``progress.jsonl`` (per iteration: sampled steps, episodes, mean episode return per
module and per seat), ``modules/<id>/`` (RLlib's ``save_to_path``) and last ``model.json``: the spec
``rllib:DIR`` plays it with its settings (:func:`baselines.rl.envs.carried_settings`).

Reproducibility: RLlib and the episodes are seeded from ``seed``, so a run with rule or random
players and ``env_runners`` 0 samples the same episodes.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from arena_envs.core.extras import needs_extra

with needs_extra("ray", __name__):
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from arena_envs.registration import ENVIRONMENTS
from arena_envs.rl.numeric_aec import LearnerSpaces
from arena_envs.runner.cli_errors import USER_ERRORS, OneLineParser, report_user_error
from arena_envs.runner.line_json import dumps
from arena_envs.runner.policy_specs import env_args, split_players
from arena_envs.runner.ray_cluster import ray_session
from baselines.rl.envs import expand_specs, learner_env_kwargs, seat_names
from baselines.rllib.env import numeric_env, register
from baselines.rllib.masking import MaskedPPOModule

#: The module every learner seat uses when their spaces are equal.
SHARED_MODULE = "learner"


@dataclass(frozen=True)
class RllibConfig:
    """What defines a training. ``others``: seat -> policy spec, or a list of specs for the last
    seats in seat order (``rule*2`` expands); ``learners``: the learner seats (default: every seat
    ``others`` leaves); ``batch``: environment steps per iteration; ``minibatch``, ``epochs``,
    ``lr``: PPO's SGD; ``algo_kwargs``: more of ``PPOConfig.training`` (``vf_loss_coeff``,
    ``entropy_coeff``...); ``env_runners``: EnvRunner actors (0: sample in the driver); ``address``:
    a Ray cluster (None: a local one)."""

    env: str
    others: Mapping[str, str] | Sequence[str] = ()
    learners: tuple[str, ...] | None = None
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    iterations: int = 10
    seed: int = 0
    batch: int = 1000
    minibatch: int = 128
    epochs: int = 4
    lr: float = 3e-4
    algo_kwargs: Mapping[str, Any] = field(default_factory=dict)
    env_runners: int = 0
    address: str | None = None

    def __post_init__(self) -> None:
        if self.env not in ENVIRONMENTS:
            raise ValueError(f"unknown environment {self.env!r}; known: {', '.join(sorted(ENVIRONMENTS))}")
        object.__setattr__(self, "env_kwargs", learner_env_kwargs(self.env, self.env_kwargs))
        object.__setattr__(self, "algo_kwargs", dict(self.algo_kwargs))
        seats = seat_names(self.env, self.env_kwargs)
        if self.learners is not None:
            object.__setattr__(self, "learners", tuple(self.learners))
        object.__setattr__(self, "others", _seat_specs(self.others, seats, self.learners))
        for name in ("iterations", "batch", "minibatch", "epochs"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")
        if not isinstance(self.env_runners, int) or self.env_runners < 0:
            raise ValueError(f"env_runners must be an integer >= 0, got {self.env_runners!r}")
        unknown = sorted(set(self.algo_kwargs) - set(vars(PPOConfig())))
        if unknown:
            raise ValueError(f"unknown PPO setting {unknown[0]!r} in algo_kwargs; accepted: the attributes of "
                             "ray.rllib.algorithms.ppo.PPOConfig (vf_loss_coeff, entropy_coeff, ...)")
        if self.minibatch > self.batch:
            raise ValueError(f"minibatch ({self.minibatch}) must not exceed batch ({self.batch})")

    @property
    def seat_specs(self) -> dict[str, str]:
        """``others`` as seat -> spec (what ``__post_init__`` made of a list)."""
        assert isinstance(self.others, Mapping)
        return dict(self.others)

    def env_config(self) -> dict[str, Any]:
        """RLlib's ``env_config`` (:mod:`baselines.rllib.env`)."""
        return {"env": self.env, "env_kwargs": dict(self.env_kwargs), "others": self.seat_specs,
                "learners": list(self.learners) if self.learners is not None else None}

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "others": self.seat_specs, "env_kwargs": dict(self.env_kwargs),
                "algo_kwargs": dict(self.algo_kwargs)}


@dataclass
class RllibSummary:
    """What :func:`train` did: the folder, the modules (id -> learner seats), iterations, sampled
    environment steps, the last iteration's mean episode return per module (summed over the
    module's seats, as RLlib reports it), and seconds of training."""

    out: Path
    config: RllibConfig
    modules: dict[str, list[str]]
    iterations: int
    env_steps: int
    returns: dict[str, float]
    seconds: float


def train(config: RllibConfig, out: str | Path, *, progress: bool = False) -> RllibSummary:
    """Train as ``config`` says into the new folder ``out`` (see the module docstring)."""
    out = Path(out)
    if (out / "model.json").exists() or (out / "progress.jsonl").exists():
        raise ValueError(f"{out} already holds a training; choose another --out")
    probe = numeric_env(config.env_config())
    try:
        views = dict(probe.seat_spaces)
    finally:
        probe.close()
    modules = module_seats(views)
    module_of = {seat: module for module, seats in modules.items() for seat in seats}
    specs = {module: _module_spec(views[seats[0]]) for module, seats in modules.items()}
    out.mkdir(parents=True, exist_ok=True)
    with ray_session(config.address):
        algo = _ppo(config, specs, module_of).build_algo()
        try:
            began = time.perf_counter()
            steps, returns = 0, {}
            bar = tqdm(total=config.iterations, desc="rllib ppo", unit="it", disable=not progress)
            with bar, (out / "progress.jsonl").open("a", encoding="utf-8") as log:
                for iteration in range(1, config.iterations + 1):
                    row = _progress_row(iteration, algo.train(), time.perf_counter() - began)
                    log.write(dumps(row) + "\n")
                    log.flush()
                    steps, returns = row["env_steps"], row["returns"]
                    bar.update(1)
            seconds = time.perf_counter() - began
            for module in modules:
                algo.get_module(module).save_to_path(str((out / "modules" / module).resolve()))
        finally:
            algo.stop()
    meta = {"env": config.env, "env_kwargs": dict(config.env_kwargs), "others": config.seat_specs,
            "modules": {module: {"seats": seats, "observation_space": repr(views[seats[0]].observation_space),
                                 "action_space": repr(views[seats[0]].action_space)}
                        for module, seats in modules.items()},
            "config": config.to_dict(), "iterations": config.iterations, "env_steps": steps,
            "versions": {"ray": ray.__version__, "torch": torch.__version__}}
    (out / "model.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")  # last: finished
    return RllibSummary(out, config, modules, config.iterations, steps, returns, seconds)


def module_seats(views: Mapping[str, LearnerSpaces]) -> dict[str, list[str]]:
    """Module id -> the learner seats it plays: seats with equal spaces share one; one group is
    :data:`SHARED_MODULE`, several are ``learner_<first seat>``."""
    groups: list[list[str]] = []
    for seat, view in views.items():
        for group in groups:
            first = views[group[0]]
            if first.observation_space == view.observation_space and first.action_space == view.action_space:
                group.append(seat)
                break
        else:
            groups.append([seat])
    if len(groups) == 1:
        return {SHARED_MODULE: groups[0]}
    return {f"{SHARED_MODULE}_{group[0]}": group for group in groups}


def _module_spec(view: LearnerSpaces) -> RLModuleSpec:
    return RLModuleSpec(module_class=MaskedPPOModule if view.masked else None,
                        observation_space=view.observation_space, action_space=view.action_space)


def _ppo(config: RllibConfig, specs: dict[str, RLModuleSpec], module_of: dict[str, str]) -> PPOConfig:
    def policy_mapping(agent_id: str, episode: Any, **kwargs: Any) -> str:
        return module_of[agent_id]

    # sample_timeout_s=None: wait for every remote EnvRunner. RLlib's default (60 s) drops the
    # samples of a runner that takes longer, which LLM players in the other seats easily do.
    return (PPOConfig()
            .environment(register(), env_config=config.env_config())
            .framework("torch")
            .env_runners(num_env_runners=config.env_runners, num_envs_per_env_runner=1, sample_timeout_s=None)
            .learners(num_learners=0)
            .multi_agent(policies=set(specs), policy_mapping_fn=policy_mapping)
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
            .training(train_batch_size_per_learner=config.batch, minibatch_size=config.minibatch,
                      num_epochs=config.epochs, lr=config.lr, **config.algo_kwargs)
            .debugging(seed=config.seed))


def _progress_row(iteration: int, result: Mapping[str, Any], seconds: float) -> dict[str, Any]:
    runners = result.get("env_runners", {})
    returns = runners.get("module_episode_returns_mean", {})
    seats = runners.get("agent_episode_returns_mean", {})
    return {"iteration": iteration, "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
            "episodes": int(runners.get("num_episodes_lifetime", 0)),
            "episode_return_mean": _number(runners.get("episode_return_mean")),
            "returns": {module: _number(value) for module, value in returns.items()},
            "seat_returns": {seat: _number(value) for seat, value in seats.items()},
            "seconds": round(seconds, 3)}


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _seat_specs(others: Mapping[str, str] | Sequence[str], seats: list[str],
                learners: tuple[str, ...] | None) -> dict[str, str]:
    """``others`` as seat -> spec: a list fills the seats that are not learners (the last seats
    when no learner is named), in seat order."""
    if isinstance(others, Mapping):
        return {str(seat): str(spec) for seat, spec in others.items()}
    if isinstance(others, str):
        others = split_players(others)
    specs = expand_specs(list(others))
    free = [s for s in seats if s not in learners] if learners is not None else seats[len(seats) - len(specs):]
    if len(specs) != len(free):
        raise ValueError(f"{len(seats)} seats ({', '.join(seats)}): others gives {len(specs)} specs "
                         f"({','.join(specs) or 'none'}) for {len(free)} seats that are not learners")
    return dict(zip(free, specs))


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="arena train-rllib",
                                description="Train RLlib multi-agent PPO in the learner seats of a game, other seats "
                                "played by policy specs (a Ray cluster or a local one).")
    p.add_argument("env", help="environment name (see `arena list`)")
    p.add_argument("--others", default="", help="comma-separated policy specs for the last seats (rule*2 repeats); "
                   "with --learners, for the seats that are not learners, in seat order")
    p.add_argument("--learners", help="comma-separated learner seats (default: the seats --others leaves)")
    p.add_argument("--iterations", type=int, default=10, help="PPO iterations (default 10)")
    p.add_argument("--out", required=True, help="training folder (new)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--env-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="environment keyword argument, JSON value when it parses (repeatable)")
    p.add_argument("--batch", type=int, default=1000, help="environment steps per iteration (default 1000)")
    p.add_argument("--minibatch", type=int, default=128, help="SGD minibatch (default 128)")
    p.add_argument("--epochs", type=int, default=4, help="SGD epochs per iteration (default 4)")
    p.add_argument("--lr", type=float, default=3e-4, help="learning rate (default 3e-4)")
    p.add_argument("--algo-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="a PPOConfig.training setting, JSON value when it parses (repeatable)")
    p.add_argument("--env-runners", type=int, default=0, help="EnvRunner actors (default 0: sample in the driver)")
    p.add_argument("--address", help="Ray cluster address (default: a local cluster on 127.0.0.1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m baselines.rllib.train ARGS`` -> exit status (2 with one line on stderr for bad input)."""
    args = parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    try:
        config = RllibConfig(env=args.env, others=split_players(args.others) if args.others else (),
                             learners=tuple(args.learners.split(",")) if args.learners else None,
                             env_kwargs=env_args(args.env_arg), iterations=args.iterations, seed=args.seed,
                             batch=args.batch, minibatch=args.minibatch, epochs=args.epochs, lr=args.lr,
                             algo_kwargs=env_args(args.algo_arg, "--algo-arg"),
                             env_runners=args.env_runners, address=args.address)
        summary = train(config, args.out, progress=not args.no_progress and sys.stderr.isatty())
    except USER_ERRORS as err:
        return report_user_error(err)
    modules = ", ".join(f"{module} ({', '.join(seats)})" for module, seats in summary.modules.items())
    print(f"model: {summary.out} ({summary.iterations} iterations, {summary.env_steps} steps, "
          f"{summary.seconds:.0f} s of training); modules: {modules}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
