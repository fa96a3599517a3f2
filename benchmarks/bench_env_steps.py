"""Random-play steps per second of the suite's environments, beside PettingZoo's connect_four_v3.

Every environment is driven the same way as connect four: the AEC loop with ``env.last()`` (a full
observation: text, features, mask) and a masked ``action_space.sample`` per step, resetting when
the episode ends. The ratio is game steps/s over connect-four steps/s in the same run (goal >= 1.0).
On a shared machine the rates are noisy, so every game is timed ``--repeats`` times, each time
right after connect four, and the best rate of each is kept.

    python benchmarks/bench_env_steps.py [--envs auction_v0,el_farol_v0] [--steps 20000] [--repeats 3]
"""
from __future__ import annotations

import argparse
import time
from typing import Any

from pettingzoo.classic import connect_four_v3

from arena_envs.registration import ENVIRONMENTS, env_module


def steps_per_second(env: Any, steps: int, seed: int = 0) -> float:
    """Random-play steps per second over ``steps`` AEC steps (dead-agent steps included)."""
    env.reset(seed=seed)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)
    episode = 0
    start = time.perf_counter()
    for _ in range(steps):
        if not env.agents:
            episode += 1
            env.reset(seed=seed + episode)
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        mask = obs.get("action_mask") if isinstance(obs, dict) else None
        env.step(env.action_space(agent).sample(mask))
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", default=",".join(ENVIRONMENTS), help="comma-separated names (default: all)")
    parser.add_argument("--steps", type=int, default=20_000, help="AEC steps per timing (default 20000)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per game, best kept (default 3)")
    args = parser.parse_args()
    reference = 0.0
    rates: dict[str, float] = {}
    for name in args.envs.split(","):
        module = env_module(name)
        best = 0.0
        for _ in range(args.repeats):
            reference = max(reference, steps_per_second(connect_four_v3.env(), args.steps))
            best = max(best, steps_per_second(module.env(), args.steps))
        rates[name] = best
    print(f"{'environment':<24}{'steps/s':>12}{'ratio':>9}")
    print(f"{'connect_four_v3':<24}{reference:>12,.0f}{1.0:>9.2f}")
    for name, rate in rates.items():
        print(f"{name:<24}{rate:>12,.0f}{rate / reference:>9.2f}")


if __name__ == "__main__":
    main()
