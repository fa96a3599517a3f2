"""Learner steps per second with LLM opponents: n LearnerEnv copies in ConcurrentVecEnv vs one copy at a time.

The learner plays one seat of a γ-Bench game (default ``el_farol_v0`` with ``n_players=3``,
``n_rounds=5``: each learner step is one round, in which the two other players each ask the LLM
once); the other seats are LLM policies (``vllm:smollm2-135m-instruct@URL``, the generic policy with its
defaults: guided answers, temperature 0) on one local vLLM server (SmolLM2-135M-Instruct on the
CPU, started here unless ``--url`` names a running one). The learner's actions are random legal
actions (throughput does not depend on what the learner knows), drawn from a generator seeded by
the round.

* baseline: one ``LearnerEnv`` stepped with its sync ``step`` (its opponents' requests one after
  the other), ``--steps`` learner steps;
* ``n`` copies (``--copies``, default 1, 4, 8): ``ConcurrentVecEnv`` of ``n`` copies stepped
  together (every copy's current request in flight at once, so the server batches them) until
  ``--steps`` learner steps are made in all (rounded up to a multiple of ``n``).

Time is wall-clock (``time.perf_counter``): the work is the server's, in another process. Each
timing starts after a warm-up of two vector steps; the episodes restart as they end (the env's
auto-reset). Each round times the baseline then every ``n``; ``--runs`` rounds (default 1: the
server is costly on a small machine); the figures are medians over rounds of learner steps/s and
of the rate divided by the baseline's in the same round.

    python benchmarks/bench_rl_vec.py [--url http://127.0.0.1:8000/v1] [--copies 1,4,8] [--steps 64] [--runs 1]
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from arena_envs.registration import env_module
from arena_envs.rl import LearnerEnv, random_action
from arena_envs.runner.policy_specs import make_policy
from baselines.rl.vec_env import ConcurrentVecEnv

MODEL_NAME = "smollm2-135m-instruct"


@contextlib.contextmanager
def llm_server(url: str | None) -> Iterator[str]:
    """``url``, or the URL of a SmolLM2 vLLM server started here (and stopped at the end)."""
    if url:
        yield url
        return
    from llm_policies.serve import smollm2_server

    started = time.perf_counter()
    with smollm2_server(MODEL_NAME).start(timeout=900) as server:
        print(f"vLLM server ready in {time.perf_counter() - started:.0f}s at {server.url}", flush=True)
        yield server.url


def copy_builder(game: str, env_kwargs: dict[str, Any], spec: str) -> Callable[[], LearnerEnv]:
    def build() -> LearnerEnv:
        env = env_module(game).env(**env_kwargs)
        return LearnerEnv(env, [make_policy(spec, game) for _ in env.possible_agents[1:]])
    return build


def one_at_a_time(build: Callable[[], LearnerEnv], steps: int, seed: int) -> float:
    """Learner steps per second of one copy stepped with its sync ``step``."""
    env = build()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)

    def advance() -> None:
        _, _, terminated, truncated, _ = env.step(random_action(env.action_space, env.action_masks(), rng))
        if terminated or truncated:
            env.reset()

    for _ in range(2):
        advance()
    start = time.perf_counter()
    for _ in range(steps):
        advance()
    spent = time.perf_counter() - start
    env.close()
    return steps / spent


def together(build: Callable[[], LearnerEnv], copies: int, steps: int, seed: int) -> float:
    """Learner steps per second of ``copies`` copies in one ConcurrentVecEnv."""
    venv = ConcurrentVecEnv([build] * copies)
    rng = np.random.default_rng(seed)
    venv.seed(seed)
    venv.reset()

    def advance() -> None:
        masks = venv.env_method("action_masks")
        venv.step(np.array([random_action(venv.action_space, mask, rng) for mask in masks]))

    for _ in range(2):
        advance()
    rounds = -(-steps // copies)
    start = time.perf_counter()
    for _ in range(rounds):
        advance()
    spent = time.perf_counter() - start
    venv.close()
    return rounds * copies / spent


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", help="a running vLLM server serving SmolLM2 as 'smollm2-135m-instruct' "
                                      "(default: start one)")
    parser.add_argument("--env", default="el_farol_v0", help="the game (default el_farol_v0)")
    parser.add_argument("--players", type=int, default=3, help="n_players of the game (default 3)")
    parser.add_argument("--rounds", type=int, default=5, help="n_rounds of the game (default 5)")
    parser.add_argument("--copies", default="1,4,8", help="copy counts to time (default 1,4,8)")
    parser.add_argument("--steps", type=int, default=64, help="learner steps per timing (default 64)")
    parser.add_argument("--runs", type=int, default=1, help="interleaved rounds, medians reported (default 1)")
    args = parser.parse_args()
    counts = [int(k) for k in args.copies.split(",")]
    if args.steps < 1 or args.runs < 1 or min(counts) < 1:
        parser.error("--steps, --runs and every --copies count must be >= 1")
    env_kwargs = {"n_players": args.players, "n_rounds": args.rounds}
    with llm_server(args.url) as url:
        build = copy_builder(args.env, env_kwargs, f"vllm:{MODEL_NAME}@{url}")
        baseline: list[float] = []
        rates: dict[int, list[float]] = {n: [] for n in counts}
        for run in range(args.runs):
            baseline.append(one_at_a_time(build, args.steps, seed=run))
            print(f"round {run}: one at a time {baseline[-1]:.2f} learner steps/s", flush=True)
            for n in counts:
                rates[n].append(together(build, n, args.steps, seed=run))
                print(f"round {run}: {n} copies together {rates[n][-1]:.2f} learner steps/s", flush=True)
    print(f"\n{args.env} ({env_kwargs}), learner vs {args.players - 1} x vllm:{MODEL_NAME}, {args.steps} learner "
          f"steps per timing, wall time, median of {args.runs} round(s)")
    print(f"{'copies':<24}{'learner steps/s':>16}{'gain':>8}")
    print(f"{'1, one at a time':<24}{statistics.median(baseline):>16.2f}{1.0:>8.2f}")
    for n, values in rates.items():
        gain = statistics.median(v / b for v, b in zip(values, baseline))
        print(f"{f'{n}, ConcurrentVecEnv':<24}{statistics.median(values):>16.2f}{gain:>8.2f}")


if __name__ == "__main__":
    main()
