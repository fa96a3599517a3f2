"""Environment steps per CPU second seen by an SB3 PPO learner on auction_v0, beside PPO on CartPole-v1.

Both learners are stable-baselines3 ``PPO("MlpPolicy", ...)`` with the same hyper-parameters
(``--n-steps``, ``--batch-size``, ``--epochs``; the rest SB3's defaults), one environment copy
(SB3 wraps it in ``Monitor`` and ``DummyVecEnv``), on the CPU with ``--threads`` torch threads.
The auction learner is ``LearnerEnv(auction_v0, [rule, rule])``: seat ``bidder_1`` (the auction's
first seat, default options) against two of the paper's rule bidders
(``baselines.auction.rule.RuleBidder``), its numeric observation only. CartPole is gymnasium's
``CartPole-v1``. What is timed is ``model.learn(--steps)``, rollouts and gradient updates
together (building the model is not), in CPU time (``time.process_time``, the process's threads
summed): steps/s = steps / CPU seconds. Each round times CartPole then the auction, with a fresh
model seeded by the round; ``--runs`` rounds in all. The figures are the medians over rounds of
each rate and of auction / CartPole in the same round (goal >= 0.5).

``--profile`` also prints where the auction learner's environment step goes: CPU time per learner
step of ``LearnerEnv.step`` as a whole and of its parts (the game's ``step``, ``observe_numeric``,
the rule bidders), measured on random legal learner actions outside of training.

    python benchmarks/bench_rl_steps.py [--steps 8192] [--runs 5] [--quick] [--profile]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import PPO

from arena_envs.auction_v0 import env as auction_env
from arena_envs.rl import LearnerEnv, random_action
from baselines.auction.rule import RuleBidder


def auction_learner() -> LearnerEnv:
    return LearnerEnv(auction_env, [RuleBidder(), RuleBidder()])


def cartpole() -> gym.Env[Any, Any]:
    return gym.make("CartPole-v1")


def ppo_rate(build: Callable[[], gym.Env[Any, Any]], steps: int, seed: int, args: argparse.Namespace) -> float:
    """Environment steps per CPU second of ``PPO.learn(steps)`` on the environment ``build`` makes."""
    env = build()
    model = PPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.epochs,
                seed=seed, device="cpu", verbose=0)
    start = time.process_time()
    model.learn(steps)
    spent = time.process_time() - start
    env.close()
    return model.num_timesteps / spent


def profile_auction(steps: int) -> None:
    """CPU time per learner step: LearnerEnv.step in all, and the functions it spends it in."""
    env = auction_learner()
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    profiler = cProfile.Profile()
    start = time.process_time()
    profiler.enable()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(random_action(env.action_space, env.action_masks(), rng))
        if terminated or truncated:
            env.reset()
    profiler.disable()
    spent = time.process_time() - start
    print(f"\nLearnerEnv(auction_v0, [rule, rule]): {steps / spent:,.0f} learner steps per CPU second, random legal "
          f"actions, no training (profiled: cProfile slows it; cumulative microseconds per learner step below)")
    stats = pstats.Stats(profiler)
    rows = []
    for (filename, _, function), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        if "arena_envs" in filename or "baselines" in filename:
            rows.append((cumulative, f"{filename.split('/site-packages/')[-1].split('/wt/')[-1]}:{function}"))
    for cumulative, where in sorted(rows, reverse=True)[:25]:
        print(f"{1e6 * cumulative / steps:>10.1f}  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=8_192, help="learner steps per timing (default 8192)")
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds, medians reported (default 5)")
    parser.add_argument("--n-steps", type=int, default=2_048, help="PPO n_steps (default 2048, SB3's)")
    parser.add_argument("--batch-size", type=int, default=64, help="PPO batch_size (default 64, SB3's)")
    parser.add_argument("--epochs", type=int, default=10, help="PPO n_epochs (default 10, SB3's)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    parser.add_argument("--quick", action="store_true", help="2048 steps per timing, 3 rounds")
    parser.add_argument("--profile", action="store_true", help="also profile the auction learner's step")
    args = parser.parse_args()
    steps, runs = (2_048, 3) if args.quick else (args.steps, args.runs)
    if steps < 1 or runs < 1 or args.threads < 1:
        parser.error("--steps, --runs and --threads must be >= 1")
    torch.set_num_threads(args.threads)
    rates: dict[str, list[float]] = {"CartPole-v1": [], "auction_v0 vs rule, rule": []}
    for run in range(runs):
        rates["CartPole-v1"].append(ppo_rate(cartpole, steps, run, args))
        rates["auction_v0 vs rule, rule"].append(ppo_rate(auction_learner, steps, run, args))
    reference = rates["CartPole-v1"]
    print(f"PPO MlpPolicy, n_steps={args.n_steps}, batch_size={args.batch_size}, n_epochs={args.epochs}, "
          f"{args.threads} torch thread(s), {steps} steps per timing")
    print(f"{'learner':<28}{'steps/s':>10}{'ratio':>8}   (CPU time, median of {runs} interleaved runs)")
    for name, values in rates.items():
        ratio = statistics.median(v / r for v, r in zip(values, reference))
        print(f"{name:<28}{statistics.median(values):>10,.0f}{ratio:>8.2f}")
    if args.profile:
        profile_auction(steps)


if __name__ == "__main__":
    main()
