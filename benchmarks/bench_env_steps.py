"""Random-play decisions per CPU second of the suite's environments, beside PettingZoo's connect_four_v3.

Every environment is driven the same way as connect four: the AEC loop with ``env.last()`` (a full
observation: text, features, mask) and a random *legal* action per decision (masked
``action_space.sample``; the Pirate Game's ``Dict`` action, when it has no mask, a random split of
the gold or a random vote: ``legal_actions.sample``), resetting when an episode ends. Only
decisions count: a dead agent's ``step(None)`` and an invalid answer that is asked again cost time
but are not counted. Time is CPU time (``time.process_time``). Each round times connect four then
every game, ``--runs`` rounds in all; the figures are the medians over rounds of the rate and of
the rate divided by connect four's in the same round (goal >= 1.0).

    python benchmarks/bench_env_steps.py [--envs auction_v0,el_farol_v0] [--decisions 5000] [--runs 5] [--quick]
"""
from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from typing import Any

from legal_actions import play
from pettingzoo.classic import connect_four_v3

from arena_envs.registration import ENVIRONMENTS, env_module


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--envs", default=",".join(ENVIRONMENTS), help="comma-separated names (default: all)")
    parser.add_argument("--decisions", type=int, default=5_000, help="decisions per timing (default 5000)")
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds, medians reported (default 5)")
    parser.add_argument("--quick", action="store_true", help="1000 decisions per timing")
    args = parser.parse_args()
    decisions = 1_000 if args.quick else args.decisions
    if args.runs < 1 or decisions < 1:
        parser.error("--runs and --decisions must be >= 1")
    builders: dict[str, Callable[[], Any]] = {"connect_four_v3": connect_four_v3.env}
    builders.update({name: env_module(name).env for name in args.envs.split(",")})
    rates: dict[str, list[float]] = {name: [] for name in builders}
    for run in range(args.runs):
        for name, build in builders.items():
            rates[name].append(decisions / play(build(), decisions, seed=run).total)
    reference = rates["connect_four_v3"]
    print(f"{'environment':<24}{'decisions/s':>13}{'ratio':>8}   (CPU time, median of {args.runs} interleaved runs)")
    for name, values in rates.items():
        ratio = statistics.median(v / r for v, r in zip(values, reference))
        print(f"{name:<24}{statistics.median(values):>13,.0f}{ratio:>8.2f}")


if __name__ == "__main__":
    main()
