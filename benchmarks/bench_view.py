"""What ``arena view`` costs on a big folder: the run page of a 10,000-episode run (goal <= 1 s) and
a 200-decision transcript (goal <= 0.5 s), served by the real app on 127.0.0.1.

The folder: a real run of ``--base`` (default 20) guess_two_thirds_v0 episodes with ten random
players (200 decisions each), replicated to ``--episodes`` (default 10,000) episodes: each
``episodes.jsonl`` line and each ``log.jsonl`` block is copied byte for byte with its episode id
renumbered (playing 10,000 real episodes would take minutes and give the same file shapes).

Printed, each the median of ``--runs`` (default 5) requests after a first, cold one (the viewer
builds its byte-offset index of the folder then):
1. the run page (first page of episodes), server time: the HTTP request answered in full;
2. the episode page of a 200-decision episode, server time (payload and observation texts included);
3. the same page's render in a headless Chromium (Playwright; skipped without it): from the
   response's end to the end of DOMContentLoaded, when view.js has built the transcript, and the
   whole navigation.

    python benchmarks/bench_view.py [--episodes 10000] [--base 20] [--runs 5] [--keep DIR]
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from arena_envs.view.app import create_app
from arena_envs.view.catalog import folder_id
from arena_envs.view.pages import Viewer
from arena_envs.view.server import running

GAME = "guess_two_thirds_v0"
_ID = re.compile(rb'^\{"episode": (\d+)')


def base_run(out: Path, episodes: int) -> None:
    subprocess.run([sys.executable, "-m", "arena_envs.cli", "run", GAME, "--players", "random*10", "--episodes",
                    str(episodes), "--out", str(out), "--no-progress"], check=True, stdout=subprocess.DEVNULL)


def replicate(base: Path, out: Path, episodes: int) -> None:
    """``out``: ``base``'s run grown to ``episodes`` episodes (its lines copied, ids renumbered)."""
    out.mkdir(parents=True)
    for name in ("run.json", "leaderboard.json", "leaderboard.md"):
        shutil.copyfile(base / name, out / name)
    entries = (base / "episodes.jsonl").read_bytes().splitlines(keepends=True)
    blocks: dict[int, list[bytes]] = {}
    for line in (base / "log.jsonl").read_bytes().splitlines(keepends=True):
        match = _ID.match(line)
        assert match is not None
        blocks.setdefault(int(match[1]), []).append(line[match.end():])
    with open(out / "episodes.jsonl", "wb") as lines, open(out / "log.jsonl", "wb") as log:
        for k in range(episodes):
            entry = entries[k % len(entries)]
            source = int(_ID.match(entry)[1])  # type: ignore[index]
            prefix = b'{"episode": %d' % k
            log.write(b"".join(prefix + rest for rest in blocks[source]))
            lines.write(prefix + entry[_ID.match(entry).end():])  # type: ignore[union-attr]


def timed_get(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as answer:
        answer.read()
    return time.perf_counter() - start


def browser_times(url: str, runs: int) -> tuple[list[float], list[float]] | None:
    """(render: response end to DOMContentLoaded end, whole navigation) in seconds per load; None without a browser."""
    try:
        from playwright.sync_api import sync_playwright
    except ModuleNotFoundError:
        return None
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        return None
    render, whole = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page()
        for _ in range(runs + 1):
            page.goto(url)
            assert page.locator(".decision").count() == 200
            timing = page.evaluate("(() => { const t = performance.getEntriesByType('navigation')[0]; "
                                   "return [t.domContentLoadedEventEnd - t.responseEnd, t.duration]; })()")
            render.append(timing[0] / 1000)
            whole.append(timing[1] / 1000)
        browser.close()
    return render[1:], whole[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--base", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the folder here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-view-"))
    try:
        base, big = work / "base", work / "results" / "big"
        start = time.perf_counter()
        base_run(base, args.base)
        replicate(base, big, args.episodes)
        size = sum(p.stat().st_size for p in big.iterdir()) / 1e6
        print(f"folder: {args.episodes:,} episodes of {GAME} (200 decisions each), {size:,.0f} MB, built in "
              f"{time.perf_counter() - start:.1f} s from {args.base} real episodes")
        with running(create_app(Viewer([work / "results"]))) as url:
            run_url = f"{url}run/{folder_id(big)}"
            episode_url = f"{run_url}/episode/{args.episodes - 1}"
            for what, target in (("run page (50 episodes of 10,000)", run_url),
                                 ("run page, last page", run_url + f"?page={(args.episodes - 1) // 50}"),
                                 ("episode page (200 decisions)", episode_url)):
                cold = timed_get(target)
                warm = statistics.median(timed_get(target) for _ in range(args.runs))
                print(f"{what:36s} server: first {cold * 1000:7.1f} ms, then {warm * 1000:7.1f} ms (median)")
            measured = browser_times(episode_url, args.runs)
            if measured is None:
                print("browser render: skipped (no Playwright or chromium)")
            else:
                render, whole = measured
                print(f"{'transcript render (200 decisions)':36s} browser: {statistics.median(render) * 1000:7.1f} ms "
                      f"(response end to DOMContentLoaded end), navigation {statistics.median(whole) * 1000:7.1f} ms")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
