"""Episodes per second of rule players on a local Ray cluster against the plain runner, in one run.

1. ``run(..., ray=RayOptions(workers=W, batch=B))`` against ``run(...)`` in this process, for
   el_farol_v0 with ten rule and random seats (a few milliseconds an episode), in ``--rounds``
   interleaved rounds (local, then Ray, into new folders; goal >= 1.6x with 2 workers on 2 cores).
   ``wall`` is the whole run as a user gets it (the workers' start included); ``played`` counts
   from the moment the workers were up (``RayOptions.on_start``) to the end; the driver's CPU
   time per episode shows how far it is from being the bottleneck.
2. Ray's cost per episode: one worker, batch 1 (a round trip per episode), against the plain
   runner: (T(ray, from the worker's start) - T(local)) / episodes, median over the rounds.
3. The start of the local cluster (``ray_session``: ``ray.init`` on 127.0.0.1) and its shutdown.
0. First, the ceiling: how much faster ``W`` processes doing the same pure-Python work finish
   than one does it ``W`` times (a shared or busy machine gives less than W).

Times are wall-clock (``time.perf_counter``): the point is to use more than one core.

    python benchmarks/bench_ray.py [--episodes 2000] [--rounds 3] [--workers 2] [--batch 64]
"""
from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path

from arena_envs.runner.policy_specs import split_players
from arena_envs.runner.ray_cluster import ray_session
from arena_envs.runner.ray_runner import RayOptions
from arena_envs.runner.runner import RunConfig, run

GAME, PLAYERS = "el_farol_v0", "contrarian*5,random*5"


def _spin(loops: int) -> None:
    total = 0
    for i in range(loops):
        total += i


def ceiling(workers: int, loops: int = 10_000_000) -> None:
    begin = time.perf_counter()
    for _ in range(workers):
        _spin(loops)
    alone = time.perf_counter() - begin
    with multiprocessing.Pool(workers) as pool:
        begin = time.perf_counter()
        pool.map(_spin, [loops] * workers)
        together = time.perf_counter() - begin
    print(f"0. ceiling: {workers} processes side by side finish {alone / together:.2f}x faster than one "
          "doing their work in turn")


def timed_run(config: RunConfig, out: Path, options: RayOptions | None = None) -> tuple[float, float, float]:
    """Wall seconds of the whole run, and from the workers' start (the whole run when local); CPU
    seconds of this process (for Ray: the driver's)."""
    started: list[float] = []
    if options is not None:
        options = RayOptions(workers=options.workers, batch=options.batch,
                             on_start=lambda pids: started.append(time.perf_counter()))
    begin, cpu = time.perf_counter(), time.process_time()
    summary = run(config, out, ray=options, plots=False)
    end, cpu = time.perf_counter(), time.process_time() - cpu
    if summary.played != config.episodes:
        raise RuntimeError(f"{out}: {summary.played} of {config.episodes} episodes played")
    return end - begin, end - (started[0] if started else begin), cpu


def throughput(config: RunConfig, rounds: int, workers: int, batch: int | None, tmp: Path) -> None:
    n = config.episodes
    print(f"1. {GAME} ({PLAYERS}), {n} episodes: local runner vs Ray, {workers} workers, "
          f"batch {batch or 'auto'} (goal >= 1.6x)")
    local, wall, played, driver = [], [], [], []
    for r in range(rounds):
        local.append(timed_run(config, tmp / f"local-{r}")[0])
        w, p, cpu = timed_run(config, tmp / f"ray-{r}", RayOptions(workers=workers, batch=batch))
        wall.append(w)
        played.append(p)
        driver.append(cpu)
        print(f"   round {r + 1}: local {n / local[-1]:7.1f} ep/s   ray {n / w:7.1f} ep/s wall, "
              f"{n / p:7.1f} ep/s played   speed-up {local[-1] / w:.2f}x wall, {local[-1] / p:.2f}x played")
    print(f"   median: local {n / statistics.median(local):.1f} ep/s, ray {n / statistics.median(wall):.1f} ep/s "
          f"wall ({statistics.median([a / b for a, b in zip(local, wall)]):.2f}x), "
          f"{n / statistics.median(played):.1f} ep/s played "
          f"({statistics.median([a / b for a, b in zip(local, played)]):.2f}x); "
          f"workers' start {statistics.median([w - p for w, p in zip(wall, played)]):.2f} s; "
          f"driver CPU {1e3 * statistics.median(driver) / n:.2f} ms per episode")


def overhead(config: RunConfig, rounds: int, tmp: Path) -> None:
    n = config.episodes
    print(f"2. Ray's cost per episode: 1 worker, batch 1, {n} episodes, against the local runner")
    local, ray_played, per_episode = [], [], []
    for r in range(rounds):
        local.append(timed_run(config, tmp / f"one-local-{r}")[0])
        ray_played.append(timed_run(config, tmp / f"one-ray-{r}", RayOptions(workers=1, batch=1))[1])
        per_episode.append((ray_played[-1] - local[-1]) / n)
    print(f"   local {1e3 * statistics.median(local) / n:.2f} ms/ep, ray {1e3 * statistics.median(ray_played) / n:.2f} "
          f"ms/ep: overhead {1e3 * statistics.median(per_episode):.2f} ms per episode (one actor call each)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds, medians reported")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=None, help="episodes per actor call (default: the runner's)")
    parser.add_argument("--overhead-episodes", type=int, default=300)
    args = parser.parse_args()
    if min(args.episodes, args.rounds, args.workers, args.overhead_episodes) < 1:
        parser.error("--episodes, --rounds, --workers and --overhead-episodes must be >= 1")
    players = tuple(split_players(PLAYERS))
    ceiling(args.workers)
    with tempfile.TemporaryDirectory() as tmp:
        begin = time.perf_counter()
        with ray_session(num_cpus=args.workers) as session:
            started = time.perf_counter() - begin
            if not session.started:
                raise SystemExit("bench_ray: Ray is already initialised in this process; run it on its own")
            throughput(RunConfig(GAME, players, episodes=args.episodes), args.rounds, args.workers, args.batch,
                       Path(tmp))
            overhead(RunConfig(GAME, players, episodes=args.overhead_episodes), args.rounds, Path(tmp))
            stop = time.perf_counter()
        print(f"3. local cluster ({args.workers} CPUs, 127.0.0.1): start {started:.2f} s, "
              f"shutdown {time.perf_counter() - stop:.2f} s")


if __name__ == "__main__":
    main()
