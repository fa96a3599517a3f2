"""Random-play decisions per CPU second of the suite's environments, beside PettingZoo's connect_four_v3.

Every environment is driven the same way as connect four: the AEC loop with ``env.last()`` (a full
observation: text, features, mask) and a random *legal* action per decision (masked
``action_space.sample``, per part for a ``Dict`` action: ``legal_actions.sample``), resetting when
an episode ends. Only
decisions count: a dead agent's ``step(None)`` and an invalid answer that is asked again cost time
but are not counted. Time is CPU time (``time.process_time``). Each round times connect four then
every game, ``--runs`` rounds in all; the figures are the medians over rounds of the rate and of
the rate divided by connect four's in the same round (goal >= 1.0).

The tank battle is timed per stage (``--tank-stages``, default 1, 4 and 7; NPCs on; goal >= 0.5)
twice: with random legal ``dict`` actions as every game, and (rows ``... tanks``) played by the
paper's random tank (``baselines.tank.random_policy.RandomTank``, native actions: a uniform operation and
a uniform enemy target); its ``rgb_array`` frames per CPU second are measured on a stage 7 game
(``--frames``, default 300 frames; goal >= 60).

Who is Spy is timed twice too: with random legal actions (random text: clues, unreadable ballots)
and (row ``who_is_spy_v0 rule``) played by its rule player, ``baselines.wis.agents.LexiconAgent``,
in every seat (text mode; goal >= 1.0).

The trading arena is timed in trading *days* per CPU second (rows ``trading_v0 rule, N traders``),
every seat played by the default rule trader (``baselines.trading.rules.SmaCrossover``, reading
``info["snapshot"]``) on the default real S&P 500 window: with one trader (the paper's setting:
every AMA agent trades its own run; goal >= 1.0) and with the default four (a day is then four
decisions).

    python benchmarks/bench_env_steps.py [--envs auction_v0,el_farol_v0] [--decisions 5000] [--runs 5] [--quick]
"""
from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from legal_actions import play, sample
from pettingzoo.classic import connect_four_v3

from arena_envs.registration import ENVIRONMENTS, env_module
from baselines.tank.random_policy import RandomTank
from baselines.trading.rules import SmaCrossover
from baselines.wis.agents import LexiconAgent


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--envs", default=",".join(ENVIRONMENTS), help="comma-separated names (default: all)")
    parser.add_argument("--decisions", type=int, default=5_000, help="decisions per timing (default 5000)")
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds, medians reported (default 5)")
    parser.add_argument("--quick", action="store_true", help="1000 decisions per timing")
    parser.add_argument("--tank-stages", default="1,4,7", help="tank battle stages to time (default 1,4,7)")
    parser.add_argument("--frames", type=int, default=300, help="tank battle frames to time (0: none)")
    args = parser.parse_args()
    decisions = 1_000 if args.quick else args.decisions
    if args.runs < 1 or decisions < 1:
        parser.error("--runs and --decisions must be >= 1")
    builders: dict[str, Callable[[], Any]] = {"connect_four_v3": connect_four_v3.env}
    tanks: set[str] = set()  # the rows played by the paper's random tank rather than masked sampling
    seated: dict[str, Callable[[], Any]] = {}  # other rows played by a policy in every seat: its class
    per_day: dict[str, int] = {}  # rows timed in days: decisions per day
    for name in args.envs.split(","):
        if name == "tank_battle_v0":
            for stage in (int(k) for k in args.tank_stages.split(",")):
                stage_env = functools.partial(env_module(name).env, stage=stage)
                builders[f"{name}/stage{stage}"] = builders[f"{name}/stage{stage} tanks"] = stage_env
                tanks.add(f"{name}/stage{stage} tanks")
        else:
            builders[name] = env_module(name).env
        if name == "who_is_spy_v0":
            builders[f"{name} rule"] = env_module(name).env
            seated[f"{name} rule"] = LexiconAgent
        if name == "trading_v0":
            for traders in (1, 4):
                row = f"{name} rule, {traders} trader{'s' if traders > 1 else ''}"
                builders[row] = functools.partial(env_module(name).env, n_agents=traders)
                seated[row], per_day[row] = SmaCrossover, traders
    rates: dict[str, list[float]] = {name: [] for name in builders}
    for run in range(args.runs):
        for name, build in builders.items():
            env = build()
            policies = {agent: RandomTank(native=True) for agent in env.possible_agents} if name in tanks else None
            if name in seated:
                policies = {agent: seated[name]() for agent in env.possible_agents}
            spent = play(env, decisions, seed=run, policies=policies).total
            rates[name].append(decisions / per_day.get(name, 1) / spent)
    reference = rates["connect_four_v3"]
    print(f"{'environment':<30}{'decisions/s':>13}{'ratio':>8}   (CPU time, median of {args.runs} interleaved runs)")
    for name, values in rates.items():
        ratio = statistics.median(v / r for v, r in zip(values, reference))
        unit = " (days/s)" if name in per_day else ""
        print(f"{name:<30}{statistics.median(values):>13,.0f}{ratio:>8.2f}{unit}")
    if "tank_battle_v0" in args.envs.split(",") and args.frames:
        frame_rates = [tank_frames(args.frames, seed=run) for run in range(args.runs)]
        print(f"tank_battle_v0 rgb_array frames/s (stage 7, CPU time, median of {args.runs}): "
              f"{statistics.median(frame_rates):,.0f}")


def tank_frames(frames: int, seed: int = 0) -> float:
    """``rgb_array`` frames per CPU second of stage 7 with random legal actions: ``render()`` after
    every round (only the rendering is timed)."""
    env = env_module("tank_battle_v0").env(stage=7, render_mode="rgb_array")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    raw = env.unwrapped
    spent, made, seen = 0.0, 0, -1
    while made < frames:
        if not raw.agents:
            env.reset(seed=seed + made)
            seen = -1
            continue
        if raw.frame_id != seen:
            seen = raw.frame_id
            start = time.process_time()
            env.render()
            spent += time.process_time() - start
            made += 1
        agent = raw.agent_selection
        observation, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else sample(env, agent, observation, rng))
    return made / spent


if __name__ == "__main__":
    main()
