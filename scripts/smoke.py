"""What the README's first command installs is enough for every game: each registered environment
and each of its documented variants constructs with its defaults, resets and plays a few steps of
random actions (the trading game on its default real market data), and the tank battle draws an
``rgb_array`` frame and opens its ``human`` window. CI runs this before it installs the test extras,
so a missing dependency fails in seconds, with its name.

Usage: ``python scripts/smoke.py [--steps N]``; exit status 1 when any check failed.
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import time
import traceback
from collections.abc import Callable

import numpy as np


def play(name: str, kwargs: dict, steps: int) -> str:
    """``steps`` turns of uniformly random actions (masked where the game masks) after a seeded reset."""
    from arena_envs.registration import make
    from baselines.random_policy import RandomPolicy

    env = make(name, **kwargs)
    try:
        env.reset(seed=0)
        policies: dict[str, RandomPolicy] = {}
        played = 0
        for agent in env.agent_iter(max_iter=steps):
            observation, _, termination, truncation, info = env.last()
            if agent not in policies:
                policies[agent] = RandomPolicy()
                policies[agent].bind(env)
                policies[agent].reset(agent, seed=len(policies))
            env.step(None if termination or truncation else policies[agent].act(observation, info))
            played += 1
        return f"{played} steps"
    finally:
        env.close()


def tank_frames() -> str:
    """An ``rgb_array`` frame that is a picture (not one colour), then the ``human`` window."""
    from arena_envs.registration import make

    env = make("tank_battle_v0", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    env.close()
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise AssertionError(f"rgb_array frame is {type(frame).__name__} {getattr(frame, 'shape', '')}")
    if len(np.unique(frame.reshape(-1, 3), axis=0)) < 3:
        raise AssertionError("rgb_array frame has fewer than 3 colours")
    window = make("tank_battle_v0", render_mode="human")
    window.reset(seed=0)
    window.render()
    window.close()
    return f"rgb_array {frame.shape[1]}x{frame.shape[0]}, human window opened"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=12, help="turns played per environment and variant")
    args = parser.parse_args(argv)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # the human window without a display
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    os.environ.setdefault("MPLBACKEND", "Agg")

    from arena_envs.registration import ENVIRONMENTS

    checks: list[tuple[str, Callable[[], str]]] = [
        (f"{name} {label}", functools.partial(play, name, kwargs, args.steps))
        for name, entry in ENVIRONMENTS.items() for label, kwargs in {"default": {}, **entry.variants}.items()]
    checks.append(("tank_battle_v0 frames", tank_frames))
    failed = []
    for label, check in checks:
        start = time.perf_counter()
        try:
            outcome = check()
        except Exception as error:  # every check runs; each failure is reported with its cause
            failed.append(label)
            print(f"FAILED {label}: {type(error).__name__}: {error}", flush=True)
            traceback.print_exc(limit=-3)
        else:
            print(f"ok {label}: {outcome} ({time.perf_counter() - start:.2f} s)", flush=True)
    if failed:
        print(f"smoke: {len(failed)} of {len(checks)} checks failed: {', '.join(failed)}", flush=True)
        return 1
    print(f"smoke: all {len(checks)} checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
