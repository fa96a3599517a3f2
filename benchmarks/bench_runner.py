"""What the runner and the environments cost beside their references, in one run.

1. ``arena run`` (in process: the whole command, results folder and printed leaderboard included)
   against a bare ``agent_iter`` loop with the same policies, seeds and seat rotation, for
   auction_v0, el_farol_v0 and pirate_game_v0 (goal <= 1.2). The ``leaderboard`` column is the
   part of the runner's time that its leaderboard takes (its rating, TrueSkill for the auction,
   and the means over the run's episodes), as a fraction of the bare loop's time.
2. ``env()`` construction of every registered environment against PettingZoo's
   ``connect_four_v3.env()`` (goal <= 2).
3. battle_royale_v0's cost at 20 players against 3 (random legal moves, the same hit-rate step;
   goal <= 1.2): per move (the live agents' ``last()`` and ``step()``) and per decision all in
   (with the dead agents' ``step(None)`` that PettingZoo's protocol adds: about one per decision
   at 20 players, 0.17 at 3).
4. The resident memory of a process that ran ``--rss-episodes`` (default 1,000 and 10,000)
   pirate_game_v0 episodes through the runner (flat memory: the growth per episode near 0).

Times are CPU times (``time.process_time``); every figure of 1-3 is the median over ``--runs``
(default 5) interleaved rounds of the ratio measured within the round.

    python benchmarks/bench_runner.py [--runs 5] [--quick] [--skip rss,env]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from legal_actions import play
from pettingzoo.classic import connect_four_v3

from arena_envs.cli import main as arena
from arena_envs.registration import ENVIRONMENTS, env_module
from arena_envs.runner.leaderboard import rating_of, standings
from arena_envs.runner.policy_specs import make_policy, player_labels, split_players
from arena_envs.runner.results import read_episodes
from arena_envs.runner.seeding import episode_seeds, seat_players

#: game -> (players, episodes per timing): cheap rule and random policies, so the runner shows
GAMES = {"auction_v0": ("rule,rule,random", 150), "el_farol_v0": ("contrarian*5,random*5", 100),
         "pirate_game_v0": ("nash*5,random*5", 600)}
RSS_GAME = ("pirate_game_v0", "nash*5,random*5")
SECTIONS = ("runner", "env", "battle", "rss")


def bare_loop(env_name: str, players: str, episodes: int, seed: int = 0) -> float:
    """CPU seconds of the loop a user would write: one env, the same policies, seeds and seats."""
    start = time.process_time()
    policies = [make_policy(spec, env_name) for spec in split_players(players)]
    env = env_module(env_name).env()
    agents = env.possible_agents
    for k in range(episodes):
        seeds = episode_seeds(seed, k, len(agents))
        order = seat_players(len(agents), k)
        env.reset(seed=seeds.env)
        seat = {agent: policies[order[j]] for j, agent in enumerate(agents)}
        for j, agent in enumerate(agents):
            seat[agent].bind(env.unwrapped)
            seat[agent].reset(agent, seeds.seats[j])
        for agent in env.agent_iter():
            observation, _, termination, truncation, info = env.last()
            if termination or truncation:
                seat[agent].finish(observation, info)
                env.step(None)
            else:
                env.step(seat[agent].act(observation, info))
    env.close()
    return time.process_time() - start


def arena_run(env_name: str, players: str, episodes: int, out: Path, seed: int = 0) -> float:
    """CPU seconds of ``arena run`` into the new folder ``out``, in this process."""
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        status = arena(["run", env_name, "--players", players, "--episodes", str(episodes), "--seed", str(seed),
                        "--out", str(out), "--no-progress"])
    elapsed = time.process_time() - start
    if status != 0:
        raise RuntimeError(f"arena run {env_name} exited with {status}")
    return elapsed


def rating_time(out: Path, players: str, game: str) -> float:
    """CPU seconds of the leaderboard (rating and means) over the episodes of folder ``out``."""
    episodes = read_episodes(out / "episodes.jsonl")
    start = time.process_time()
    standings(episodes, player_labels(split_players(players)), rating_of(game))
    return time.process_time() - start


def runner_ratios(runs: int, scale: float, tmp: Path) -> None:
    print("1. arena run / bare agent_iter loop, CPU time (goal <= 1.2)")
    print(f"   {'game':<18}{'episodes':>9}{'bare ms/ep':>12}{'arena ms/ep':>13}{'ratio':>7}{'leaderboard':>13}")
    for game, (players, episodes) in GAMES.items():
        n = max(10, int(episodes * scale))
        bare, ours, ratios, rating = [], [], [], []
        for r in range(runs):
            b = bare_loop(game, players, n)
            out = tmp / f"{game}-{r}"
            a = arena_run(game, players, n, out)
            bare.append(b)
            ours.append(a)
            ratios.append(a / b)
            rating.append(rating_time(out, players, game) / b)
        print(f"   {game:<18}{n:>9}{1e3 * statistics.median(bare) / n:>12.2f}{1e3 * statistics.median(ours) / n:>13.2f}"
              f"{statistics.median(ratios):>7.2f}{statistics.median(rating):>13.2f}")


def cpu_per_call(build: Callable[[], object], calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        build()
    return (time.process_time() - start) / calls


def construction_ratios(runs: int, calls: int) -> None:
    print("2. env() construction / connect_four_v3.env(), CPU time (goal <= 2)")
    ratios: dict[str, list[float]] = {name: [] for name in ENVIRONMENTS}
    reference: list[float] = []
    for _ in range(runs):
        for name in ENVIRONMENTS:
            ref = cpu_per_call(connect_four_v3.env, calls)
            reference.append(ref)
            ratios[name].append(cpu_per_call(env_module(name).env, calls) / ref)
    print(f"   {'connect_four_v3':<24}{1e6 * statistics.median(reference):>8.0f} us")
    for name, values in ratios.items():
        print(f"   {name:<24}{statistics.median(values):>8.2f}")


def battle_royale_ratio(runs: int, decisions: int) -> None:
    """Per move: CPU inside the live agents' ``last()`` and ``step()`` per decision; per decision, all
    in: the whole loop (dead agents' ``step(None)``, resets, sampling) per decision."""
    build = env_module("battle_royale_v0").env
    move_ratios, all_ratios, small, large = [], [], [], []
    for r in range(runs):  # hit rates 35%, 38%, ... (the default step of 5 points stops at 15 players)
        three = play(build(n_players=3, hit_rate_step=3.0), decisions, seed=r)
        twenty = play(build(n_players=20, hit_rate_step=3.0), decisions, seed=r)
        small.append(three)
        large.append(twenty)
        move_ratios.append(twenty.moves / three.moves)
        all_ratios.append(twenty.total / three.total)
    print("3. battle_royale_v0 CPU, 20 players / 3 players (goal <= 1.2)")
    for label, part, ratios in (("per move", "moves", move_ratios), ("per decision, all in", "total", all_ratios)):
        three_us = 1e6 * statistics.median(getattr(t, part) for t in small) / decisions
        twenty_us = 1e6 * statistics.median(getattr(t, part) for t in large) / decisions
        print(f"   {label:<22} 3 players {three_us:6.1f} us, 20 players {twenty_us:6.1f} us, "
              f"ratio {statistics.median(ratios):.2f}")


_RSS_CHILD = """
import json, resource, sys, tempfile
from arena_envs.runner import RunConfig, run
game, players, episodes = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
run(RunConfig(game, tuple(players), episodes=episodes), tempfile.mkdtemp() + "/r")
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"rss_kb": int(status["VmRSS"].split()[0]), "peak_kb": peak}))
"""


def rss_after(counts: list[int]) -> None:
    game, players = RSS_GAME
    specs = ",".join(split_players(players))
    print(f"4. resident memory after N {game} episodes through the runner (flat: growth per episode ~ 0)")
    found = []
    for count in counts:
        done = subprocess.run([sys.executable, "-c", _RSS_CHILD, game, specs, str(count)], capture_output=True,
                              text=True, check=True, cwd=Path(__file__).resolve().parents[1])
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        found.append((count, figures["rss_kb"]))
        print(f"   {count:>6} episodes: RSS {figures['rss_kb'] / 1024:7.1f} MiB "
              f"(peak {figures['peak_kb'] / 1024:.1f} MiB)")
    (n0, r0), (n1, r1) = found[0], found[-1]
    if n1 > n0:
        print(f"   growth {1024 * (r1 - r0) / (n1 - n0):.0f} bytes per episode")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds per figure, medians reported")
    parser.add_argument("--quick", action="store_true", help="a fifth of the episodes, fewer calls and decisions, "
                        "RSS after 300 and 3,000 episodes")
    parser.add_argument("--rss-episodes", default=None, help="comma-separated counts (default 1000,10000)")
    parser.add_argument("--skip", default="", help=f"sections to leave out, comma-separated: {', '.join(SECTIONS)}")
    args = parser.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    if skip - set(SECTIONS) or args.runs < 1:
        parser.error(f"--skip takes {', '.join(SECTIONS)}; --runs must be >= 1")
    scale = 0.2 if args.quick else 1.0
    counts = [int(c) for c in (args.rss_episodes or ("300,3000" if args.quick else "1000,10000")).split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        if "runner" not in skip:
            runner_ratios(args.runs, scale, Path(tmp))
    if "env" not in skip:
        construction_ratios(args.runs, 20 if args.quick else 100)
    if "battle" not in skip:
        battle_royale_ratio(args.runs, 600 if args.quick else 3000)
    if "rss" not in skip:
        rss_after(counts)


if __name__ == "__main__":
    main()
