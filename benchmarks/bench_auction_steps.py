"""Random-play steps per second of ``auction_v0`` beside PettingZoo's ``connect_four_v3``.

Both environments are measured in the same process, with the same loop (``agent_iter``, ``last``,
masked random action), so the ratio is meaningful on any machine. Goal: ratio >= 1.0.

    python benchmarks/bench_auction_steps.py [--seconds 5]
"""
from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from pettingzoo.classic import connect_four_v3

from arena_envs import auction_v0


def steps_per_second(make_env: Callable, seconds: float, seed: int = 0) -> float:
    """Play seeded random episodes for about ``seconds``; return environment steps per second."""
    env = make_env()
    rng = np.random.default_rng(seed)
    steps, episode = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + episode)
        episode += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
            steps += 1
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per environment")
    args = parser.parse_args()
    reference = steps_per_second(connect_four_v3.env, args.seconds)
    results = {"auction_v0": steps_per_second(auction_v0.env, args.seconds)}
    print(f"{'environment':<24}{'steps/s':>12}{'ratio vs connect_four_v3':>28}")
    print(f"{'connect_four_v3':<24}{reference:>12.0f}{1.0:>28.2f}")
    for name, rate in results.items():
        print(f"{name:<24}{rate:>12.0f}{rate / reference:>28.2f}")


if __name__ == "__main__":
    main()
