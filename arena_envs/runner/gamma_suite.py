"""The γ-Bench suite: play the eight games with the paper's protocol and print the table row.

Every game is played ``runs`` times (default 5, as the γ-Bench paper) by the same players (by
default ten seats of one policy), each through the runner in its own resumable results folder
``OUT/<game>/`` with the run seed ``seed`` (episode ``k`` gets the runner's seeds of ``(seed, k)``).
An episode's score is the env's γ-Bench score (:mod:`arena_envs.gamma.scoring`, paper variant
unless the game's kwargs pass ``score_variant``); run ``k`` of the row is episode ``k`` of every
game. The row: Overall (per run the mean of the game scores) and the eight games, mean ± sample
std over runs. ``OUT`` gets ``gamma_row.json`` (players, protocol, per-episode scores, the row),
``gamma_row.md``, ``episode_scores.jsonl`` and the figures of :mod:`arena_envs.analysis.gamma_plots`.

Command line (through ``arena run gamma``)::

    arena run gamma --players SPEC[,SPEC...] [--runs 5] [--seed S] [--out DIR]
                    [--games g1,g2] [--env-arg [GAME.]KEY=VALUE ...] [--concurrency K]
                    [--no-plots] [--no-progress]

One spec is repeated on every seat; otherwise give one spec per seat (``spec*N`` expands).
"""
from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import MAX_EPISODES, check_games, check_int, check_played
from arena_envs.gamma.history import GAME_LABELS, GAMES
from arena_envs.gamma.scoring import score as gamma_score
from arena_envs.gamma.scoring import table_row
from arena_envs.registration import env_module
from arena_envs.runner.cli_errors import (
    USER_ERRORS,
    OneLineParser,
    path_arg,
    report_os_error,
    report_run_interrupted,
    report_run_stopped,
    report_user_error,
)
from arena_envs.runner.folders import gamma_folder
from arena_envs.runner.line_json import dumps
from arena_envs.runner.policy_specs import env_args, game_env_arg, keyword_parameters, split_players
from arena_envs.runner.results import ResultsError, dumps_indented, iter_log, write_durably
from arena_envs.runner.runner import RunConfig, RunError, run

#: Players per game in the paper.
DEFAULT_PLAYERS = 10
#: Runs per game in the paper.
DEFAULT_RUNS = 5
#: Event types under which the environments log their round records (Battle Royale: turns).
ROUND_EVENTS = ("round", "turn")


@dataclass
class SuiteResult:
    """What :func:`play_suite` produced."""

    out: Path
    players: list[str]
    scores: dict[str, list[float]]  #: game -> score of run 1..R
    row: dict[str, dict[str, float]]  #: column -> {"mean", "std", "n"} (see scoring.table_row)
    logs: dict[str, list[dict[str, Any]]]  #: game -> per run {"params", "history"} (for plots)
    figures: list[Path]


def seat_specs(players: Sequence[str], n_seats: int) -> list[str]:
    """One spec for every seat: a single spec is repeated, otherwise exactly ``n_seats`` specs."""
    players = list(players)
    if len(players) == 1:
        return players * n_seats
    if len(players) != n_seats:
        raise ValueError(f"players must give 1 spec or one per seat ({n_seats}), "
                         f"got {len(players)}: {', '.join(players)}")
    return players


def history_from_record(record: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(params, history) of a saved episode record: its config and its round/turn events."""
    history = [{k: v for k, v in e.items() if k != "type"} for e in record["events"] if e["type"] in ROUND_EVENTS]
    return dict(record["config"]), history


def _episode_score(game: str, entry: Mapping[str, Any], params: dict[str, Any], history: list[dict]) -> float:
    """The env's own γ score of the episode; rescored from the record when the env gave none."""
    reported = entry["metrics"].get("game", {}).get("score")
    if reported is not None:
        return float(reported)
    return gamma_score(game, params, history, params.get("score_variant"))


def play_suite(
    players: Sequence[str],
    out: str | Path,
    *,
    runs: int = DEFAULT_RUNS,
    seed: int = 0,
    games: Sequence[str] = GAMES,
    env_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    concurrency: int = 1,
    progress: bool = False,
    plots: bool = True,
) -> SuiteResult:
    """Play ``games`` ``runs`` times each into ``out`` and write the γ-Bench row (resumable).

    ``players``: policy specs (one for every seat, or one per seat); ``env_kwargs``: per game
    keyword arguments of the environment (e.g. ``{"guess_two_thirds_v0": {"n_rounds": 5}}``).
    """
    check_games(games, GAMES)
    check_int("runs", runs, 1, MAX_EPISODES)
    env_kwargs = {g: dict(kw) for g, kw in (env_kwargs or {}).items()}
    check_played("env_kwargs", env_kwargs, games)
    seats = {g: seat_specs(players, env_kwargs.get(g, {}).get("n_players", DEFAULT_PLAYERS)) for g in games}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    scores: dict[str, list[float]] = {}
    logs: dict[str, list[dict[str, Any]]] = {}
    lines = []
    for game in games:
        kwargs = env_kwargs.get(game, {})
        config = RunConfig(env=game, players=tuple(seats[game]), episodes=runs, seed=seed, env_kwargs=kwargs)
        summary = run(config, out / game, concurrency=concurrency, progress=progress)
        scores[game], logs[game] = [], []
        records = {block.episode: block.record for block in iter_log(summary.out)}
        for entry in summary.episodes:
            record = records[entry["episode"]]
            if record is None:
                raise ResultsError(f"{summary.out}: episode {entry['episode']} of {game} has no record")
            params, history = history_from_record(record)
            value = _episode_score(game, entry, params, history)
            scores[game].append(value)
            logs[game].append({"params": params, "history": history})
            lines.append({"game": game, "run": entry["episode"] + 1, "seed": entry["seed"], "score": value,
                          "raw_score": entry["metrics"].get("game", {}).get("raw_score")})
    per_run = [{g: scores[g][k] for g in games} for k in range(runs)]
    row = table_row(per_run)
    document = {"players": list(players), "seats": seats[games[0]], "runs": runs, "seed": seed, "games": list(games),
                "env_kwargs": env_kwargs, "scores": scores,
                "per_run_overall": [sum(r.values()) / len(r) for r in per_run], "row": row}
    write_durably(out / "gamma_row.json", dumps_indented(document))
    write_durably(out / "gamma_row.md", format_row(row, label=", ".join(players)) + "\n")
    write_durably(out / "episode_scores.jsonl", "".join(dumps(line) + "\n" for line in lines))
    figures: list[Path] = []
    if plots:
        from arena_envs.analysis.gamma_plots import save_figures
        figures = save_figures(logs, row, out)
    return SuiteResult(out, list(players), scores, row, logs, figures)


def format_row(row: Mapping[str, Mapping[str, float]], label: str = "players") -> str:
    """The row as a Markdown table: Overall first, then the games in the paper's order."""
    columns = ["overall"] + [g for g in GAMES if g in row]
    header = ["Players"] + ["Overall" if c == "overall" else GAME_LABELS[c] for c in columns]
    cells = [label] + [f"{row[c]['mean']:.1f} ± {row[c]['std']:.1f}" for c in columns]
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header), "| " + " | ".join(cells) + " |"])


# --- command line -------------------------------------------------------------------------------

def _env_args(items: Sequence[str], games: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``["n_rounds=5", "battle_royale_v0.max_turns=8"]`` -> per-game kwargs. Without a ``GAME.`` prefix
    an argument goes to every game whose environment takes it (``n_rounds``: all but Battle Royale and
    the Pirate Game, which count turns); one that no game of the run takes is an error."""
    kwargs: dict[str, dict[str, Any]] = {}
    for item in items:
        game, name, value = game_env_arg(item, games, prefixed=False)
        targets = [game] if game else [g for g in games if _takes(g, name)]
        if not targets:
            raise ValueError(f"--env-arg {excerpt(item)}: no game of this run takes {excerpt(name)}; played: "
                             f"{', '.join(games)}")
        for target in targets:
            kwargs.setdefault(target, {})[name] = value
    return kwargs


def _takes(game: str, name: str) -> bool:
    """Whether ``game``'s environment class has the keyword ``name``."""
    accepted = _keywords_of(game)
    return accepted is None or name in accepted


@functools.cache
def _keywords_of(game: str) -> frozenset[str] | None:
    """The keywords of ``game``'s environment class (read from one built with defaults, once a game)."""
    probe = env_module(game).env()
    try:
        accepted = keyword_parameters(type(probe.unwrapped))
    finally:
        probe.close()
    return None if accepted is None else frozenset(accepted)


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="arena run gamma", description="Play the eight γ-Bench games and print the row.")
    p.add_argument("--players", required=True, help="policy spec for every seat, or one per seat (comma-separated)")
    p.add_argument("--runs", type=int, default=DEFAULT_RUNS, help=f"runs per game (default {DEFAULT_RUNS})")
    p.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    p.add_argument("--out", type=path_arg, help="results folder (default: results/gamma- and a name of the "
                   "--env-arg values, players, runs and seed, printed at the start)")
    p.add_argument("--games", help=f"comma-separated subset of {', '.join(GAMES)}")
    p.add_argument("--env-arg", action="append", default=[], metavar="[GAME.]KEY=VALUE",
                   help="environment keyword argument for one game or (no GAME.) all of them (repeatable)")
    p.add_argument("--concurrency", type=int, default=1, help="episodes in flight at once per game")
    p.add_argument("--no-plots", action="store_true", help="do not draw the PNG figures")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``arena run gamma ...``; exit status 0, 1 (a policy, the env or the OS failed; resumable) or 2 (usage)."""
    args = parser().parse_args(argv)
    try:
        games = [g.strip() for g in args.games.split(",")] if args.games else list(GAMES)
        players, env_kwargs = split_players(args.players), _env_args(args.env_arg, games)
        out = Path(args.out) if args.out else gamma_folder(players, env_args(args.env_arg), args.runs, args.seed)
    except USER_ERRORS as err:
        return report_user_error(err)
    print(f"results folder: {out}", flush=True)
    try:
        result = play_suite(players, out, runs=args.runs, seed=args.seed, games=games, env_kwargs=env_kwargs,
                            concurrency=args.concurrency, progress=not args.no_progress and sys.stderr.isatty(),
                            plots=not args.no_plots)
    except RunError as err:
        return report_run_stopped(err, out)
    except KeyboardInterrupt:
        return report_run_interrupted(out)
    except USER_ERRORS as err:
        return report_user_error(err)
    except OSError as err:
        return report_os_error(err)
    print(f"results: {result.out}")
    print(format_row(result.row, label=args.players))
    return 0
