"""Import GAMA-Bench's published JSON logs (``meta``, ``round_records``, ``player_data``) into
the round-record schema of :mod:`arena_envs.gamma.history`, so they can be rescored offline.

A log file is named ``[<model>_]<game>_<version>[_<run>|_<tag>].json``: no model prefix means
GPT-3.5-turbo-0125, the paper's default model; ``<game>`` is one of the nine folders of the
published results (:data:`LOG_GAMES`); ``<run>`` numbers the default-setting runs (``_v1_1`` ..
``_v1_5`` are the paper's T1..T5); a ``<tag>`` marks another experiment (``cot1``, ``role3``,
``t0``, ``r0``, ``savept1``, ...), and a name with neither is an unnumbered run. A run's setting
is read from its ``meta``, never from the name. Only ``meta`` and ``round_records`` are read, plus
from ``player_data`` each player's own answers in Guess 2/3 and Divide the Dollar (the repo logs
those rounds' responses shuffled) and the starting tokens of randomly initialised Public Goods
runs; the chat transcripts carry nothing a score needs.

:func:`scan_logs` reads a whole folder and never stops on one file: a file it cannot import is
reported with a one-line reason (:class:`LogProblem`) and one :class:`SkippedLogWarning` naming
the file and the reason; :meth:`LogScan.summary` says how many files were read, imported and
skipped, and why.
"""
from __future__ import annotations

import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice
from arena_envs.gamma.history import GameLog
from arena_envs.gamma.scoring import score, table_row

#: Model of the log files without a model prefix (the repo's default runs).
DEFAULT_MODEL = "gpt-3.5-turbo-0125"

#: Log game name -> our env name. Both El Farol settings and both auction modes map to one env.
LOG_GAMES: dict[str, str] = {
    "guessing_game": "guess_two_thirds_v0",
    "bar_game_implicit": "el_farol_v0",
    "bar_game_explicit": "el_farol_v0",
    "divide_dollar": "divide_dollar_v0",
    "public_goods": "public_goods_v0",
    "diner_dilemma": "diners_dilemma_v0",
    "sealed_bid_auction": "sealed_bid_auction_v0",
    "battle_royale": "battle_royale_v0",
    "pirate_game": "pirate_game_v0",
}

_FILE_NAME = re.compile(
    r"^(?:(?P<model>.+)_)?(?P<game>" + "|".join(sorted(LOG_GAMES, key=len, reverse=True))
    + r")_(?P<version>v\d+)(?:_(?P<run>\d+)|_(?P<tag>[A-Za-z]\w*))?$"
)


@dataclass(frozen=True)
class LogFile:
    """Identity of one published log file, parsed from its name."""

    path: Path
    log_game: str  #: the log's game name (a key of LOG_GAMES)
    model: str
    version: str  #: prompt version, e.g. "v1"
    run: int | None = None  #: 1-based run index of a numbered run (T1..T5); None: unnumbered
    tag: str | None = None  #: experiment tag after the version ("cot1", "role3", "t0", "r0", ...)

    @property
    def game(self) -> str:
        return LOG_GAMES[self.log_game]

    @property
    def default_run(self) -> bool:
        """A numbered untagged run (``_<version>_<k>``): the runs the paper's tables average."""
        return self.run is not None and self.tag is None


def parse_log_name(path: str | Path) -> LogFile:
    """Identity of a log file from its name; ValueError for a name outside the convention."""
    path = Path(path)
    match = _FILE_NAME.match(path.stem) if path.suffix == ".json" else None
    if match is None:
        raise ValueError(
            f"log file name {path.name!r} is not '[<model>_]<game>_<version>[_<run>|_<tag>].json' "
            f"with <game> in {', '.join(LOG_GAMES)}"
        )
    run = int(match["run"]) if match["run"] else None
    return LogFile(path, match["game"], match["model"] or DEFAULT_MODEL, match["version"], run, match["tag"])


# --- per game converters: (meta, round_records, player_data) -> (params, history) ---------------

_Converter = Callable[[Mapping[str, Any], list[dict], list[dict]], tuple[dict, list[dict]]]


def _responses(record: Mapping[str, Any], n: int) -> list[Any]:
    """A simultaneous round's answers, one per player."""
    answers = record["responses"]
    if not isinstance(answers, list) or len(answers) != n:
        raise ValueError(f"a round record's responses must list {n} answers (player_num); got {answers!r:.60}")
    return answers


def _own_answers(record: Mapping[str, Any], players: list[dict], round_index: int, n: int) -> list[Any]:
    """Each player's answer of round ``round_index`` (0-based) from that player's own records.

    The repo shuffles a round's responses in place before logging them (Guess 2/3, Divide the
    Dollar), so the record's order is not the players' order; ``player_data[i]["records"]`` is.
    The two must hold the same answers. A log without ``player_data`` has only the record's order.
    """
    logged = _responses(record, n)
    if not players:
        return logged
    if len(players) != n:
        raise ValueError(f"player_data lists {len(players)} players, not player_num={n}")
    by_index = {_player_index(p.get("id", i)): p for i, p in enumerate(players)}
    if set(by_index) != set(range(n)):
        raise ValueError(f"player_data ids must be player_0 .. player_{n - 1}; got {sorted(map(str, by_index))}")
    own = [by_index[i]["records"][round_index] for i in range(n)]
    if sorted(map(str, own)) != sorted(map(str, logged)):
        raise ValueError(f"round {round_index + 1}: the players' own records {own} are not the logged "
                         f"responses {logged}")
    return own


def _guess(meta: Mapping[str, Any], records: list[dict], players: list[dict]) -> tuple[dict, list[dict]]:
    n = meta["player_num"]
    params = {"n_players": n, "n_rounds": len(records), "min_value": meta["min"],
              "max_value": meta["max"], "ratio": meta["ratio"]}
    history = []
    for j, r in enumerate(records, start=1):
        choices = [int(c) for c in _own_answers(r, players, j - 1, n)]
        # The repo declares one winning number: the first closest choice in player order.
        history.append({"round": j, "choices": choices, "average": r["mean"], "target": r["mean_ratio"],
                        "winners": [i for i, c in enumerate(choices) if c == r["winner"]],
                        "winning_numbers": [int(r["winner"])]})
    return params, history


def _el_farol(meta: Mapping[str, Any], records: list[dict], players: list[dict]) -> tuple[dict, list[dict]]:
    n, ratio = meta["player_num"], meta["ratio"]
    params = {"n_players": n, "n_rounds": len(records), "capacity_ratio": ratio, "max_utility": meta["max"],
              "min_utility": meta["min"], "home_utility": meta["home"], "mode": meta["mode"]}
    history = []
    for j, r in enumerate(records, start=1):
        go = [str(d).strip().lower() == "go" for d in _responses(r, n)]
        attendance = sum(go)
        crowded = attendance / n > ratio
        goer = meta["min"] if crowded else meta["max"]
        history.append({"round": j, "go": go, "attendance": attendance, "go_rate": attendance / n,
                        "crowded": crowded, "utilities": [goer if g else meta["home"] for g in go]})
    return params, history


def _divide_dollar(meta: Mapping[str, Any], records: list[dict], players: list[dict]) -> tuple[dict, list[dict]]:
    n, golds = meta["player_num"], meta["golds"]
    params = {"n_players": n, "n_rounds": len(records), "golds": golds}
    history = []
    for j, r in enumerate(records, start=1):
        bids = [int(b) for b in _own_answers(r, players, j - 1, n)]
        total = sum(bids)
        history.append({"round": j, "bids": bids, "total": total, "exceeded": total > golds,
                        "payoffs": [0 if total > golds else b for b in bids]})
    return params, history


def _public_goods(meta: Mapping[str, Any], records: list[dict], players: list[dict]) -> tuple[dict, list[dict]]:
    n, ratio, start = meta["player_num"], meta["ratio"], meta["tokens"]
    token_init, reset = meta.get("token_initialization", "fixed"), bool(meta["reset"])
    if token_init == "fixed":
        initial = [float(start)] * n
    elif token_init == "random" and reset:
        raise ValueError("Public Goods with random token initialisation and reset: the repo resets to the fixed "
                         "tokens after round 1, our env to each player's drawn tokens (setting not supported)")
    elif token_init == "random":
        # The drawn holdings are each player's first "tokens" entry; the env draws them from its RNG.
        initial = [float(p["tokens"][0]) for p in players]
        if len(initial) != n:
            raise ValueError(f"random-token Public Goods log lists {len(initial)} players in player_data, not {n}")
    else:
        raise ValueError(f"Public Goods token_initialization must be 'fixed' or 'random'; got {excerpt(token_init)}")
    params = {"n_players": n, "n_rounds": len(records), "ratio": ratio, "tokens": start, "reset": reset,
              "token_init": token_init, "rand_min": meta.get("rand_min", 11)}
    history: list[dict] = []
    tokens = initial
    for j, r in enumerate(records, start=1):
        contributions = [int(c) for c in _responses(r, n)]
        if reset:
            tokens = initial
        pot = sum(contributions)
        share = ratio * pot / n
        payoffs = [t - c + share for t, c in zip(tokens, contributions)]
        history.append({"round": j, "contributions": contributions, "tokens": tokens, "pot": pot,
                        "share": share, "payoffs": payoffs})
        tokens = payoffs
    return params, history


def _diners(meta: Mapping[str, Any], records: list[dict], players: list[dict]) -> tuple[dict, list[dict]]:
    n = meta["player_num"]
    prices = {"costly": meta["exp_cost"], "cheap": meta["cheap_cost"]}
    utility = {"costly": meta["exp_utility"], "cheap": meta["cheap_utility"]}
    params = {"n_players": n, "n_rounds": len(records), "costly_price": prices["costly"],
              "cheap_price": prices["cheap"], "costly_utility": utility["costly"],
              "cheap_utility": utility["cheap"]}
    history = []
    for j, r in enumerate(records, start=1):
        # The repo counted every answer other than "cheap" as costly.
        orders = ["cheap" if str(o).strip().lower() == "cheap" else "costly" for o in _responses(r, n)]
        total = sum(prices[o] for o in orders)
        share = total / n
        history.append({"round": j, "orders": orders, "n_costly": orders.count("costly"), "total_cost": total,
                        "bill_share": share, "utilities": [utility[o] - share for o in orders]})
    return params, history


#: The repo's auction ``meta["mode"]``, and the ``sealed_bid_auction/<folder>`` that holds each mode.
_AUCTION_MODES = {"highest bid": "first", "second highest bid": "second"}
_AUCTION_FOLDERS = {"first_price": "highest bid", "second_price": "second highest bid"}


def _sealed_bid(meta: Mapping[str, Any], records: list[dict], players: list[dict]) -> tuple[dict, list[dict]]:
    if meta.get("mode") not in _AUCTION_MODES:
        raise ValueError(f"sealed-bid auction meta 'mode' must be one of {', '.join(map(repr, _AUCTION_MODES))}; "
                         f"got {meta.get('mode')!r}")
    n, mode = meta["player_num"], _AUCTION_MODES[meta["mode"]]
    params = {"n_players": n, "n_rounds": len(records), "valuation_min": meta["valuation_min"],
              "valuation_max": meta["valuation_max"], "interval": meta["interval"], "mode": mode}
    history = [
        {"round": j, "valuations": list(r["valuations"]), "bids": [int(b) for b in _responses(r, n)],
         "winner": _player_index(r["bid_winner"]), "winning_bid": r["bid_winner_proposed"],
         "price": r["bid_winner_payment"], "utilities": list(r["utility"]), "mode": mode}
        for j, r in enumerate(records, start=1)
    ]
    return params, history


def _player_index(value: Any) -> int | None:
    """``"player_3"``, ``"3"`` or 3 -> 3; ``"null"``/None/"" -> None."""
    text = str(value).strip().lower()
    if text in ("", "null", "none", "-1"):
        return None
    return int(text.removeprefix("player_"))


def _battle_royale(meta: Mapping[str, Any], records: list[dict], players: list[dict]) -> tuple[dict, list[dict]]:
    n = meta["player_num"]
    rates = [meta["base_hit_rate"] + i * meta["interval"] for i in range(n)]
    if records and "initial_players" in records[0]:
        listed = {_player_index(name): rate for name, rate in records[0]["initial_players"]}
        rates = [listed[i] for i in range(n)]
    params = {"n_players": n, "hit_rates": rates, "max_turns": None}
    alive = list(range(n))
    history = []
    for j, r in enumerate(records, start=1):
        target = None if r.get("action") == "miss" else _player_index(r["shot_player"])
        hit = bool(r["out"]) and target is not None and target in alive
        after = [i for i in alive if not (hit and i == target)]
        history.append({"round": j, "shooter": _player_index(r["player_shooting"]), "target": target,
                        "hit": hit, "alive_before": alive, "alive_after": after})
        alive = after
    return params, history


def _pirate(meta: Mapping[str, Any], records: list[dict], players: list[dict]) -> tuple[dict, list[dict]]:
    n = meta["player_num"]
    golds = meta.get("gold", 100)
    params = {"n_players": n, "golds": golds}
    history = []
    for j, r in enumerate(records, start=1):
        survivors = list(range(n - len(r["gold_distribution"]), n))
        proposal: list[int | None] = [None] * n
        votes: list[bool | None] = [None] * n
        for player, coins, vote in zip(survivors, r["gold_distribution"], r["responses"]):
            proposal[player] = int(coins)
            votes[player] = "accept" in str(vote).lower()
        votes[survivors[0]] = True
        accepts = sum(v is True for v in votes)
        history.append({"round": j, "proposer": survivors[0], "proposal": proposal, "votes": votes,
                        "n_accepts": accepts, "accepted": accepts >= len(survivors) / 2})
    return params, history


_CONVERTERS: dict[str, _Converter] = {
    "guessing_game": _guess,
    "bar_game_implicit": _el_farol,
    "bar_game_explicit": _el_farol,
    "divide_dollar": _divide_dollar,
    "public_goods": _public_goods,
    "diner_dilemma": _diners,
    "sealed_bid_auction": _sealed_bid,
    "battle_royale": _battle_royale,
    "pirate_game": _pirate,
}


def convert(log_game: str, data: Any, source: str = "") -> GameLog:
    """Convert one loaded log (``{"meta", "round_records", ...}``) of game ``log_game``.

    ValueError (one line) when ``data`` is not a γ-Bench run this importer can read; a missing
    field raises KeyError.
    """
    check_choice("log_game", log_game, LOG_GAMES)
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
        raise ValueError("not a γ-Bench log: expected a JSON object with a 'meta' object")
    records, players = data.get("round_records"), data.get("player_data", [])
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ValueError("not a γ-Bench log: 'round_records' must be a list of objects")
    if not records:
        raise ValueError("log has no round records: nothing to import or score")
    if not isinstance(players, list):
        raise ValueError("not a γ-Bench log: 'player_data' must be a list")
    params, history = _CONVERTERS[log_game](data["meta"], records, players)
    return {"game": LOG_GAMES[log_game], "params": params, "history": history, "source": source}


def _read(info: LogFile) -> GameLog:
    with open(info.path, encoding="utf-8") as f:
        data = json.load(f)
    if (info.log_game == "sealed_bid_auction" and isinstance(data, dict) and isinstance(data.get("meta"), dict)
            and "mode" not in data["meta"] and info.path.parent.name in _AUCTION_FOLDERS):
        # Some runs' meta leave the mode out; the published layout files them by mode.
        data = {**data, "meta": {**data["meta"], "mode": _AUCTION_FOLDERS[info.path.parent.name]}}
    return convert(info.log_game, data, source=str(info.path))


def load_log(path: str | Path) -> GameLog:
    """Read and convert one published log file (the game is taken from the file name).

    A sealed-bid log whose meta has no ``mode`` takes it from its folder (``first_price``,
    ``second_price``).
    """
    return _read(parse_log_name(path))


@dataclass(frozen=True)
class LogProblem:
    """A file :func:`scan_logs` did not import: the kind of problem and the reason (one line)."""

    path: Path
    reason: str
    kind: str = "content the importer cannot convert"  #: what the summary groups skipped files by


class SkippedLogWarning(UserWarning):
    """A file of a scanned folder is not a γ-Bench run the importer can read (one per file)."""


@dataclass
class LogScan:
    """What :func:`scan_logs` found: the imported logs and the files it could not import."""

    logs: list[tuple[LogFile, GameLog]] = field(default_factory=list)
    problems: list[LogProblem] = field(default_factory=list)

    def summary(self) -> str:
        """``"<n> files read: <i> imported, <s> skipped"``, then one line per kind of problem (most first)."""
        lines = [f"{len(self.logs) + len(self.problems)} files read: {len(self.logs)} imported, "
                 f"{len(self.problems)} skipped"]
        kinds = Counter(p.kind for p in self.problems)
        lines += [f"  skipped {count}: {kind}" for kind, count in sorted(kinds.items(), key=lambda kc: (-kc[1], kc[0]))]
        return "\n".join(lines)


#: What a bad file can raise while being read and converted (the scan goes on after each).
_FILE_ERRORS = (OSError, ValueError, LookupError, TypeError, ArithmeticError)


def _problem(path: Path, error: Exception) -> LogProblem:
    if isinstance(error, json.JSONDecodeError):
        kind, text = "not valid JSON", f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
    elif isinstance(error, KeyError):
        kind, text = "a field is missing", f"missing field {error.args[0]!r}"
    elif isinstance(error, OSError):
        kind, text = "unreadable", f"{type(error).__name__}: {error}"
    elif isinstance(error, ValueError):
        kind, text = "content the importer cannot convert", str(error)
    else:
        kind, text = "content the importer cannot convert", f"{type(error).__name__}: {error}"
    return LogProblem(path, " ".join(text.split()), kind)


def scan_logs(root: str | Path) -> LogScan:
    """Every ``*.json`` log under ``root`` (the published ``raw_results`` layout), sorted by path.

    Never stops on one file: a file that cannot be imported (name outside the convention, broken
    JSON, a setting or result type the importer cannot convert) lands in ``problems`` with its reason
    and is announced by one :class:`SkippedLogWarning` line (``"<path>: <reason>"``).
    """
    scan = LogScan()
    for path in sorted(Path(root).rglob("*.json")):
        try:
            info = parse_log_name(path)
        except ValueError as error:
            problem = LogProblem(path, str(error), "name outside the γ-Bench convention")
        else:
            try:
                scan.logs.append((info, _read(info)))
                continue
            except _FILE_ERRORS as error:
                problem = _problem(path, error)
        scan.problems.append(problem)
        warnings.warn(f"{problem.path}: {problem.reason}", SkippedLogWarning, stacklevel=2)
    return scan


#: The settings γ-Bench scores: implicit El Farol, first-price auction (the other two are variants).
SCORED_LOG_GAMES = tuple(g for g in LOG_GAMES if g != "bar_game_explicit")


def in_table(info: LogFile, log: GameLog, version: str = "v1") -> bool:
    """Whether :func:`rescore` puts this imported log in the table: a numbered default run of
    prompt ``version`` in a scored setting (implicit El Farol, first-price auction)."""
    return (info.default_run and info.log_game in SCORED_LOG_GAMES and info.version == version
            and log["params"].get("mode") != "second")


def rescore(root: str | Path | LogScan, version: str = "v1") -> dict[str, dict[str, dict[str, float]]]:
    """The γ-Bench row (:func:`~arena_envs.gamma.scoring.table_row`) of every model under ``root``.

    Uses the logs :func:`in_table` accepts: run ``k`` of a model is its ``_<version>_<k>`` file of
    every game. Tagged and unnumbered runs are read but left out, and so are files the scan could
    not import (a game's ``n`` in the row then counts fewer runs; :func:`scan_logs` warns about
    each). ``root`` may be a finished :class:`LogScan`.
    """
    scan = root if isinstance(root, LogScan) else scan_logs(root)
    runs: dict[str, dict[int, dict[str, float]]] = {}
    for info, log in scan.logs:
        if in_table(info, log, version) and info.run is not None:
            value = score(log["game"], log["params"], log["history"])
            runs.setdefault(info.model, {}).setdefault(info.run, {})[info.game] = value
    return {model: table_row([by_run[k] for k in sorted(by_run)]) for model, by_run in sorted(runs.items())}
