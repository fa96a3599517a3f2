"""``arena eval``: a model's report card across the twelve games (dispatched from ``arena``).

    arena eval SPEC [--games all|NAME,...] [--episodes N] [--quick] [--out DIR] [--seed S]
                    [--concurrency K] [--no-progress] [--env-arg GAME.KEY=VALUE ...]
    arena eval --compare DIR DIR ... [--out DIR]

Exit status as ``arena run``: 0 done, 2 a usage error (one line ``arena: error: ...``), 1 a run
stopped by a failing policy or environment or by an OS error (finished episodes are kept; the same
command resumes), 130 interrupted (the same command resumes).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from arena_envs.evaluation.formatting import FLAG
from arena_envs.evaluation.settings import SETTINGS
from arena_envs.runner.cli_errors import (
    USER_ERRORS,
    UsageError,
    path_arg,
    report_os_error,
    report_run_interrupted,
    report_run_stopped,
    report_user_error,
)
from arena_envs.runner.folders import eval_folder
from arena_envs.runner.policy_specs import game_env_arg
from arena_envs.runner.runner import RunError
from arena_envs.runner.validity import FLAG_FALLBACK_SHARE, percent


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="arena eval", description="Play a policy in every game's paper setting and write its report "
                "card (resumable), or compare the report cards of several evaluations.")
    p.add_argument("spec", nargs="?", help="policy spec of the evaluated model (vllm:MODEL@URL, hf:PATH, random...)")
    p.add_argument("--compare", nargs="+", type=path_arg, metavar="DIR",
                   help="evaluation folders to put in one table and chart")
    p.add_argument("--games", default="all", help=f"all (default) or a comma-separated subset of {', '.join(SETTINGS)}")
    p.add_argument("--episodes", type=int, help="episodes of every part (default: the paper's counts)")
    p.add_argument("--quick", action="store_true", help="few episodes per game (1 per part)")
    p.add_argument("--out", type=path_arg, help="folder (default: results/eval-<backend>-<model>-seed<S>, -quick "
                   "added with --quick, a short hash when the spec says more; printed at the start; with --compare: "
                   "results/compare)")
    p.add_argument("--seed", type=int, default=0, help="run seed of every run (default 0)")
    p.add_argument("--concurrency", type=int, default=1, help="episodes in flight at once over all runs (default 1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--env-arg", action="append", default=[], metavar="GAME.KEY=VALUE",
                   help="environment keyword argument of one game, JSON value when it parses (repeatable)")
    return p


def env_overrides(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``["tank_battle_v0.max_rounds=5"]`` -> ``{"tank_battle_v0": {"max_rounds": 5}}``."""
    overrides: dict[str, dict[str, Any]] = {}
    for item in items:
        game, name, value = game_env_arg(item, list(SETTINGS), prefixed=True)
        assert game is not None  # prefixed: the game is required
        overrides.setdefault(game, {})[name] = value
    return overrides


def _compare(args: argparse.Namespace) -> int:
    given = [name for name, default in (("spec", None), ("--episodes", None), ("--quick", False),
                                        ("--env-arg", []), ("--no-progress", False))
             if getattr(args, name.lstrip("-").replace("-", "_")) != default]
    if args.games != "all" or args.seed != 0 or args.concurrency != 1:
        given.append("an evaluation option")
    if given:
        raise UsageError(f"--compare takes evaluation folders and --out only, not {given[0]}")
    if len(args.compare) < 2:
        raise UsageError(f"--compare needs two or more evaluation folders, got {len(args.compare)}")
    from arena_envs.evaluation.report import compare
    path = compare([Path(d) for d in args.compare], Path(args.out) if args.out else None)
    print(f"comparison: {path}")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from arena_envs.evaluation.evaluate import evaluate
    if not args.spec:
        raise UsageError("give the SPEC of the policy to evaluate (vllm:MODEL@URL, random...), or --compare DIR DIR")
    games = None if args.games.strip() == "all" else [g.strip() for g in args.games.split(",")]
    out = Path(args.out) if args.out else eval_folder(args.spec, args.seed, args.quick)
    progress = not args.no_progress and sys.stderr.isatty()
    print(f"evaluation folder: {out}", flush=True)
    try:
        report = evaluate(args.spec, out, games=games, episodes=args.episodes, quick=args.quick, seed=args.seed,
                          concurrency=args.concurrency, progress=progress, env_overrides=env_overrides(args.env_arg))
    except RunError as err:
        return report_run_stopped(err, out)
    except KeyboardInterrupt:
        return report_run_interrupted(out)
    print(f"results: {out}\nreport: {report}")
    flagged = json.loads((report.parent / "card.json").read_text("utf-8"))["flagged"]
    if flagged:
        print(f"arena: warning: not the model's play in {', '.join(flagged)}: more than "
              f"{percent(FLAG_FALLBACK_SHARE)} of its decisions there fell back to the game's default action "
              f"(marked {FLAG} in the report)", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``arena eval ARGS``; the exit status."""
    try:
        args = parser().parse_args(list(sys.argv[1:] if argv is None else argv))
        return _compare(args) if args.compare else _evaluate(args)
    except USER_ERRORS as err:
        return report_user_error(err)
    except OSError as err:
        return report_os_error(err)
