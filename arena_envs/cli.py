"""The ``arena`` command: list environments, run evaluations, print leaderboards.

    arena --version | list | policies ENV     the version; the environments; ENV's policies and options
    arena run ENV --players p1,p2,... --episodes N --seed S [--out DIR] [--concurrency K]
              [--env-arg key=value ...] [--fixed-seats] [--no-progress] [--record DIR] [--no-plots]
              [--ray [ADDRESS] [--ray-workers N] [--ray-batch B]]
    arena replay RESULTS_DIR --episode N [--out FILE] [--fps F] [--env NAME] | leaderboard DIR
    arena play ENV [--seat N] [--players SPEC,...] [--seed S] [--env-arg key=value ...] [--out DIR]
              [--web [--host H] [--port P] [--open]]   play a seat yourself (terminal or page), recorded
    arena rescore DIR [--version V]  the γ-Bench table of published logs (arena_envs.analysis.gamma_rescore)
    arena run gamma ...           the γ-Bench suite (arena_envs.runner.gamma_suite)
    arena eval SPEC ... | --compare DIR DIR ...   report cards (arena_envs.evaluation.cli)
    arena serve MODEL_PATH ... | --stop [--port P]   a local vLLM server on 127.0.0.1 (llm_policies.serve)
    arena view [DIR ...] [--host H] [--port P] [--open] [--export SITE]   results in the browser (arena_envs.view)
    arena train ENV ...           train an RL agent in one seat (baselines.rl.train)
    arena serve-agent ENV SPEC [--host H] [--port P]   a policy spec as an agent service (agent_service.serve_agent)

``serve`` and ``train`` come from the ``arena_envs.commands`` entry points; their arguments go to
the registered function unparsed. ``arena run`` prints its results folder first. User errors print
one line on stderr and exit 2 (``ARENA_DEBUG=1``: the traceback); a run stopped by a failing policy
or environment or an OS error exits 1, keeping finished episodes (the same command resumes); a
second run into a folder being written is refused, naming the writer's pid.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from arena_envs.core.answers import excerpt
from arena_envs.core.extras import MissingExtra, install_command, needs_extra
from arena_envs.registration import ENVIRONMENTS, env_module
from arena_envs.runner import policy_registry as registry
from arena_envs.runner.cli_errors import (
    USER_ERRORS,
    OneLineParser,
    UsageError,
    path_arg,
    report_os_error,
    report_run_interrupted,
    report_run_stopped,
    report_user_error,
)
from arena_envs.runner.folders import run_folder
from arena_envs.runner.leaderboard import leaderboard_text
from arena_envs.runner.policy_specs import env_args, load_object, policy_options, split_players
from arena_envs.runner.ray_cluster import LOCAL
from arena_envs.runner.replay import check_drawable, record_episodes, replay_episode
from arena_envs.runner.runner import Executor, RunConfig, RunError, run

_REST_MARKUP = re.compile(r"(?::[\w:]+:)?``?([^`]+)``?")


def describe(name: str) -> str:
    """The first paragraph of the environment's entry-module docstring, as plain text on one line."""
    try:
        module = env_module(name)
    except Exception as err:  # a broken optional environment must not break `arena list`
        return f"(cannot import: {type(err).__name__}: {err})"
    return plain_text((module.__doc__ or "").strip().split("\n\n")[0])


def plain_text(rest: str) -> str:
    """reST as a reader sees it, on one line: ``:role:`x```, ````x```` and ```x``` become ``x``."""
    return " ".join(_REST_MARKUP.sub(r"\1", rest).split())


def cmd_list(args: argparse.Namespace) -> int:
    width = max(map(len, ENVIRONMENTS), default=0)
    for name in sorted(ENVIRONMENTS):
        print(f"{name.ljust(width)}  {describe(name)}")
    return 0


def cmd_policies(args: argparse.Namespace) -> int:
    if args.env not in ENVIRONMENTS and ":" not in args.env:
        raise UsageError(f"unknown environment {excerpt(args.env)}; known: {', '.join(sorted(ENVIRONMENTS))}")
    rows = [(name, registry.lookup(args.env, name) or registry.PREFIXES.get(name.removesuffix(":..."), ""),
             policy_options(args.env, name)) for name in registry.policy_names(args.env)]
    name_width = max((len(name) for name, _, _ in rows), default=0)
    target_width = max((len(target) for _, target, _ in rows), default=0)
    for name, target, options in rows:
        print(f"{name:<{name_width}}  {target:<{target_width}}  {options}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    players = split_players(args.players)
    config = RunConfig(env=args.env, players=tuple(players), episodes=args.episodes, seed=args.seed,
                       env_kwargs=env_args(args.env_arg), rotate=not args.fixed_seats)
    out = Path(args.out) if args.out else run_folder(config.env, config.env_kwargs, config.players, config.episodes,
                                                     config.seed, config.rotate)
    # no bar in non-interactive runs, nor over a human player's prompts
    progress = not args.no_progress and sys.stderr.isatty() and all(p.split(":")[0] != "human" for p in players)
    if args.record:  # fail before playing, not after
        check_drawable(config.env, dict(config.env_kwargs))
    ray = ray_options(args)
    print(f"results folder: {out}", flush=True)
    try:
        summary = run(config, out, concurrency=args.concurrency, progress=progress, plots=not args.no_plots, ray=ray)
    except RunError as err:
        status = report_run_stopped(err, out)
        if args.record:
            _record(out, args.record, config.env)
        return status
    except KeyboardInterrupt:  # the first Ctrl-C: the runner stopped after committing what finished
        return report_run_interrupted(out)
    if args.record:
        _record(summary.out, args.record, config.env)
    print(f"results: {summary.out} ({summary.played} episodes played, {summary.resumed} already there, "
          f"{summary.finished}/{config.episodes} finished)")
    if summary.figures:
        print(f"figures: {len(summary.figures)} written to {summary.figures[0].parent}")
    if summary.worker_failures:
        replayed = sorted(e for failure in summary.worker_failures for e in failure.episodes)
        print(f"ray: {len(summary.worker_failures)} worker(s) died; episodes {', '.join(map(str, replayed))} "
              "were played again")
    print(leaderboard_text(summary.out))
    return 0


def ray_options(args: argparse.Namespace) -> Executor | None:
    """The Ray options of ``arena run`` (None without ``--ray``); Ray itself is imported when the run starts."""
    if args.ray is None:
        for flag, value in (("--ray-workers", args.ray_workers), ("--ray-batch", args.ray_batch)):
            if value is not None:
                raise UsageError(f"{flag} {value} needs --ray (a local cluster, or --ray ADDRESS)")
        return None
    from arena_envs.runner.ray_runner import RayOptions
    return RayOptions(address=args.ray, workers=args.ray_workers, batch=args.ray_batch)


def _record(results: Path, record_dir: str, env: str) -> None:
    """Replays of the committed episodes that have none in ``record_dir`` yet (re-rendered from the log of
    the run of ``env``, the environment named on the command line)."""
    written = record_episodes(results, record_dir, env=env)
    print(f"replays: {len(written)} written to {record_dir}")


def cmd_replay(args: argparse.Namespace) -> int:
    path = replay_episode(args.dir, args.episode, args.out, args.fps, args.env)
    print(f"replay: {path}")
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    print(leaderboard_text(args.dir))
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from arena_envs.runner.play import PolicyFailed, play, result_text
    opponents = split_players(args.players) if args.players else ()
    if not args.web:
        for flag, value in (("--host", args.host), ("--port", args.port), ("--open", args.open or None)):
            if value is not None:
                raise UsageError(f"{flag} needs --web (the game in a browser page)")
    try:
        if args.web:
            with needs_extra("view", "arena play --web"):
                from arena_envs.view.play_app import play_web
            result = play_web(args.env, args.seat, opponents, args.seed, env_args(args.env_arg), args.out,
                              host=args.host or "127.0.0.1", port=args.port or 0, open_browser=args.open)
        else:
            result = play(args.env, args.seat, opponents, args.seed, env_args(args.env_arg), out=args.out)
    except (PolicyFailed, RunError) as err:
        print(f"arena: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\narena: game abandoned (Ctrl-C or the game window closed)", file=sys.stderr)
        return 130
    print(result_text(result))
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    with needs_extra("view", "arena view"):
        from arena_envs.view.app import create_app
        from arena_envs.view.export import export_site
        from arena_envs.view.pages import Links, Viewer
        from arena_envs.view.server import bind, serve
    folders = args.dirs or ["results"]
    try:
        viewer = Viewer(folders, Links(export=True) if args.export else None)
    except PermissionError as err:
        raise UsageError(f"cannot read folder {err.filename!r}: permission denied") from None
    except (FileNotFoundError, NotADirectoryError) as err:
        raise UsageError(f"cannot view {err.filename!r}: {err.strerror}; give the folders `arena run` or `arena eval` "
                         "wrote (default: results/)") from None
    if args.export:
        pages = export_site(viewer, Path(args.export))
        print(f"arena view: {pages} pages written to {args.export} (open {Path(args.export) / 'index.html'})")
        return 0
    serve(create_app(viewer), bind(args.host, args.port), args.open)
    return 0


def version_text() -> str:
    """``arena_envs 0.1.0``: the installed distribution's version."""
    try:
        return f"arena_envs {version('arena_envs')}"
    except PackageNotFoundError:
        return "arena_envs (version unknown: not installed as a package; pip install -e . in the repository)"


def parser() -> argparse.ArgumentParser:
    top = OneLineParser(prog="arena", description="Multi-agent LLM game arenas: run evaluations.")
    top.add_argument("--version", action="version", version=version_text(),
                     help="print the installed arena_envs version and exit")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("list", help="list the environments").set_defaults(func=cmd_list)
    pol = sub.add_parser("policies", help="list the policies usable for an environment, with their options and "
                         "defaults")
    pol.add_argument("env")
    pol.set_defaults(func=cmd_policies)
    r = sub.add_parser("run", help="play seeded episodes into a results folder (resumable)")
    r.add_argument("env", help="environment name (see `arena list`) or package.module:callable")
    r.add_argument("--players", required=True, help="comma-separated policy specs, one per seat (rule,rule,random)")
    r.add_argument("--episodes", type=int, required=True)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--out", type=path_arg, help="results folder (default: results/ and a name of the env, "
                   "--env-arg values, players, episodes and seed, printed at the start)")
    r.add_argument("--concurrency", type=int, default=1, help="episodes in flight at once (default 1)")
    r.add_argument("--env-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="environment keyword argument, JSON value when it parses (repeatable)")
    r.add_argument("--fixed-seats", action="store_true",
                   help="player i plays seat i in every episode (default: seats rotate over episodes)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    r.add_argument("--record", metavar="DIR",
                   help="after the run, write DIR/episode_<N>.mp4 (or .gif) for each episode, re-rendered from the log")
    r.add_argument("--no-plots", action="store_true",
                   help="write no figures into the results folder (trading_v0 writes equity and drawdown PNGs)")
    r.add_argument("--ray", nargs="?", const=LOCAL, metavar="ADDRESS",
                   help="play the episodes on Ray: a local cluster on 127.0.0.1 started for the run, or the running "
                        "cluster at ADDRESS (HOST:PORT, auto); the results are the same as without --ray")
    r.add_argument("--ray-workers", type=int, metavar="N",
                   help="Ray workers, one CPU each (default: this machine's CPUs, or the cluster's)")
    r.add_argument("--ray-batch", type=int, metavar="B",
                   help="episodes per Ray worker call (default: up to 64, by the run's size; --concurrency when > 1)")
    r.set_defaults(func=cmd_run)
    rp = sub.add_parser("replay", help="re-render a finished episode of a results folder into a video")
    rp.add_argument("dir", help="results folder")
    rp.add_argument("--episode", type=int, required=True, help="episode id")
    rp.add_argument("--out", type=path_arg, help="video file, .mp4 or .gif (default: DIR/replays/episode_<N>.mp4, "
                    ".gif without imageio-ffmpeg)")
    rp.add_argument("--fps", type=float, help="frames per second (default: the environment's render_fps, else 4)")
    rp.add_argument("--env", help="the folder's environment when it is not a registered one "
                    "(package.module:callable): a folder is data, so only a name you give is imported")
    rp.set_defaults(func=cmd_replay)
    lb = sub.add_parser("leaderboard", help="print (and rewrite) the leaderboard of a results folder")
    lb.add_argument("dir")
    lb.set_defaults(func=cmd_leaderboard)
    pl = sub.add_parser("play", help="play one seat of a game yourself (at the terminal, or --web in a browser "
                        "page) against chosen policies, recorded as a results folder")
    pl.add_argument("env", help="environment name (see `arena list`)")
    pl.add_argument("--seat", type=int, default=0, help="your seat, an index into the game's seats (default 0)")
    pl.add_argument("--players", help="the other seats' policy specs, one for all or one per seat in seat order "
                    "(default: the game's rule policy, else random)")
    pl.add_argument("--seed", type=int, default=0, help="run seed; the same seed and answers replay the same game")
    pl.add_argument("--env-arg", action="append", default=[], metavar="KEY=VALUE",
                    help="environment keyword argument, JSON value when it parses (repeatable)")
    pl.add_argument("--out", type=path_arg, help="results folder (default: results/play-<env>-seat<N>-... and the "
                    "next free -2, -3..., printed at the start)")
    pl.add_argument("--web", action="store_true", help="play in a browser page served on --host:--port (needs the "
                    "view extra)")
    pl.add_argument("--host", help="with --web: the address to serve on (default 127.0.0.1: this machine only)")
    pl.add_argument("--port", type=int, help="with --web: the port (default: a free one; the URL is printed)")
    pl.add_argument("--open", action="store_true", help="with --web: open the page in a browser")
    pl.set_defaults(func=cmd_play)
    vw = sub.add_parser("view", help="results folders, evaluations and report cards in the browser: leaderboards, "
                        "transcripts, game views, live runs (needs the view extra)")
    vw.add_argument("dirs", nargs="*", metavar="DIR", type=path_arg,
                    help="folders to look in, recursively (default: results/)")
    vw.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    vw.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one; the URL is printed)")
    vw.add_argument("--open", action="store_true", help="open the URL in a browser")
    vw.add_argument("--export", type=path_arg, metavar="SITE",
                    help="write the pages as a static site into SITE/ (openable from file://) instead of serving")
    vw.set_defaults(func=cmd_view)
    sub.add_parser("rescore", help="the γ-Bench table of every model in a folder of published logs", add_help=False)
    sub.add_parser("eval", help="a model's report card: every game in its paper's setting (resumable), or --compare",
                   add_help=False)
    # listed for `arena --help`; main() hands their arguments to the registered function unparsed
    for name in sorted(set(registry.COMMANDS) | set(COMMAND_HELP)):
        sub.add_parser(name, help=COMMAND_HELP.get(name, registry.COMMANDS.get(name)), add_help=False)
    return top


#: ``arena --help`` lines of the commands that packages register (group arena_envs.commands).
COMMAND_HELP = {
    "serve": "start a local vLLM OpenAI server for a model folder and wait until it is ready (--stop: stop a "
             "detached one)",
    "train": "train a stable-baselines3 agent in one seat against given opponents (its own options)",
    "train-rllib": "train RLlib PPO learners in one or more seats against given players (its own options)",
    "serve-agent": "serve a policy spec of a game over the agent protocol on 127.0.0.1 (docs/agents.md)",
}


def run_command(name: str, argv: list[str]) -> int:
    """``arena NAME ARGS`` for a command of the arena_envs.commands entry points (``serve``, ``train``); a
    missing entry point, or a missing extra of the command, is one line with exit status 2."""
    extra = registry.COMMAND_EXTRAS.get(name)
    target = registry.COMMANDS.get(name)
    try:
        if target is None:
            hint = f"; {install_command(extra)}" if extra else ""
            raise UsageError(f"no installed package provides 'arena {name}' (entry point {name!r} of group "
                             f"{registry.COMMAND_GROUP}){hint}")
        with needs_extra(extra, f"arena {name}"):
            command: Callable[[list[str]], int] = load_object(target)
        return command(argv)
    except (UsageError, MissingExtra) as err:
        return report_user_error(err)


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep `arena list` output clean
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["run", "gamma"]:  # the γ-Bench suite (eight games, its own options)
        from arena_envs.runner.gamma_suite import main as gamma_main
        return gamma_main(argv[2:])
    if argv[:1] == ["eval"]:  # the report card over the twelve paper settings (its own options)
        from arena_envs.evaluation.cli import main as eval_main
        return eval_main(argv[1:])
    if argv[:1] == ["rescore"]:  # γ-Bench logs -> per-model table (its own options)
        from arena_envs.analysis.gamma_rescore import main as rescore_main
        return rescore_main(argv[1:])
    if argv[:1] and (argv[0] in registry.COMMANDS or argv[0] in COMMAND_HELP):  # serve, train: own options
        return run_command(argv[0], argv[1:])
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except USER_ERRORS as err:
        return report_user_error(err)
    except BrokenPipeError:  # `arena list | head`: stop quietly, like other command-line tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("\narena: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    except OSError as err:  # disk full, read-only folder, no permission: one line, status 1
        return report_os_error(err)


if __name__ == "__main__":
    sys.exit(main())
