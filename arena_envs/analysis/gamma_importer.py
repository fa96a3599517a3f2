"""Import GAMA-Bench's published JSON logs (``meta``, ``round_records``, ``player_data``) into
the round-record schema of :mod:`arena_envs.gamma.history`, so they can be rescored offline.

A log file is named ``[<model>_]<game>_<version>_<run>.json`` (no model prefix: GPT-3.5-turbo-0125,
the paper's default model); ``<game>`` is one of the nine folders of the published results
(:data:`LOG_GAMES`). Only ``meta`` and ``round_records`` are read; the chat transcripts in
``player_data`` carry nothing a score needs.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    + r")_(?P<version>v\d+)_(?P<run>\d+)$"
)


@dataclass(frozen=True)
class LogFile:
    """Identity of one published log file, parsed from its name."""

    path: Path
    log_game: str  #: the log's game name (a key of LOG_GAMES)
    model: str
    version: str  #: prompt version, e.g. "v1"
    run: int  #: 1-based run index (T1..T5)

    @property
    def game(self) -> str:
        return LOG_GAMES[self.log_game]


def parse_log_name(path: str | Path) -> LogFile:
    """Identity of a log file from its name; ValueError for a name outside the convention."""
    path = Path(path)
    match = _FILE_NAME.match(path.stem)
    if match is None:
        raise ValueError(
            f"log file name {path.name!r} is not '[<model>_]<game>_<version>_<run>.json' "
            f"with <game> in {', '.join(LOG_GAMES)}"
        )
    return LogFile(path, match["game"], match["model"] or DEFAULT_MODEL, match["version"], int(match["run"]))


# --- per game converters: (meta, round_records) -> (params, history) ----------------------------

def _guess(meta: Mapping[str, Any], records: list[dict]) -> tuple[dict, list[dict]]:
    params = {"n_players": meta["player_num"], "n_rounds": len(records), "min_value": meta["min"],
              "max_value": meta["max"], "ratio": meta["ratio"]}
    history = []
    for j, r in enumerate(records, start=1):
        choices = [int(c) for c in r["responses"]]
        # The repo declares one winning number: the first closest choice in player order.
        history.append({"round": j, "choices": choices, "average": r["mean"], "target": r["mean_ratio"],
                        "winners": [i for i, c in enumerate(choices) if c == r["winner"]],
                        "winning_numbers": [int(r["winner"])]})
    return params, history


def _el_farol(meta: Mapping[str, Any], records: list[dict]) -> tuple[dict, list[dict]]:
    n, ratio = meta["player_num"], meta["ratio"]
    params = {"n_players": n, "n_rounds": len(records), "capacity_ratio": ratio, "max_utility": meta["max"],
              "min_utility": meta["min"], "home_utility": meta["home"], "mode": meta["mode"]}
    history = []
    for j, r in enumerate(records, start=1):
        go = [str(d).strip().lower() == "go" for d in r["responses"]]
        attendance = sum(go)
        crowded = attendance / n > ratio
        goer = meta["min"] if crowded else meta["max"]
        history.append({"round": j, "go": go, "attendance": attendance, "go_rate": attendance / n,
                        "crowded": crowded, "utilities": [goer if g else meta["home"] for g in go]})
    return params, history


def _divide_dollar(meta: Mapping[str, Any], records: list[dict]) -> tuple[dict, list[dict]]:
    golds = meta["golds"]
    params = {"n_players": meta["player_num"], "n_rounds": len(records), "golds": golds}
    history = []
    for j, r in enumerate(records, start=1):
        bids = [int(b) for b in r["responses"]]
        total = sum(bids)
        history.append({"round": j, "bids": bids, "total": total, "exceeded": total > golds,
                        "payoffs": [0 if total > golds else b for b in bids]})
    return params, history


def _public_goods(meta: Mapping[str, Any], records: list[dict]) -> tuple[dict, list[dict]]:
    n, ratio, start = meta["player_num"], meta["ratio"], meta["tokens"]
    if meta.get("token_initialization", "fixed") != "fixed":
        raise ValueError("public goods logs with random token initialisation are not supported")
    params = {"n_players": n, "n_rounds": len(records), "ratio": ratio, "tokens": start, "reset": meta["reset"]}
    history: list[dict] = []
    tokens = [float(start)] * n
    for j, r in enumerate(records, start=1):
        contributions = [int(c) for c in r["responses"]]
        if meta["reset"]:
            tokens = [float(start)] * n
        pot = sum(contributions)
        share = ratio * pot / n
        payoffs = [t - c + share for t, c in zip(tokens, contributions)]
        history.append({"round": j, "contributions": contributions, "tokens": tokens, "pot": pot,
                        "share": share, "payoffs": payoffs})
        tokens = payoffs
    return params, history


def _diners(meta: Mapping[str, Any], records: list[dict]) -> tuple[dict, list[dict]]:
    n = meta["player_num"]
    prices = {"costly": meta["exp_cost"], "cheap": meta["cheap_cost"]}
    utility = {"costly": meta["exp_utility"], "cheap": meta["cheap_utility"]}
    params = {"n_players": n, "n_rounds": len(records), "costly_price": prices["costly"],
              "cheap_price": prices["cheap"], "costly_utility": utility["costly"],
              "cheap_utility": utility["cheap"]}
    history = []
    for j, r in enumerate(records, start=1):
        # The repo counted every answer other than "cheap" as costly.
        orders = ["cheap" if str(o).strip().lower() == "cheap" else "costly" for o in r["responses"]]
        total = sum(prices[o] for o in orders)
        share = total / n
        history.append({"round": j, "orders": orders, "n_costly": orders.count("costly"), "total_cost": total,
                        "bill_share": share, "utilities": [utility[o] - share for o in orders]})
    return params, history


_AUCTION_MODES = {"highest bid": "first", "second highest bid": "second"}


def _sealed_bid(meta: Mapping[str, Any], records: list[dict]) -> tuple[dict, list[dict]]:
    mode = _AUCTION_MODES[meta["mode"]]
    params = {"n_players": meta["player_num"], "n_rounds": len(records), "valuation_min": meta["valuation_min"],
              "valuation_max": meta["valuation_max"], "interval": meta["interval"], "mode": mode}
    history = [
        {"round": j, "valuations": list(r["valuations"]), "bids": [int(b) for b in r["responses"]],
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


def _battle_royale(meta: Mapping[str, Any], records: list[dict]) -> tuple[dict, list[dict]]:
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


def _pirate(meta: Mapping[str, Any], records: list[dict]) -> tuple[dict, list[dict]]:
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


_CONVERTERS: dict[str, Callable[[Mapping[str, Any], list[dict]], tuple[dict, list[dict]]]] = {
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


def convert(log_game: str, data: Mapping[str, Any], source: str = "") -> GameLog:
    """Convert one loaded log (``{"meta", "round_records", ...}``) of game ``log_game``."""
    if log_game not in _CONVERTERS:
        raise ValueError(f"log_game must be one of {', '.join(LOG_GAMES)}; got {log_game!r}")
    params, history = _CONVERTERS[log_game](data["meta"], list(data["round_records"]))
    return {"game": LOG_GAMES[log_game], "params": params, "history": history, "source": source}


def load_log(path: str | Path) -> GameLog:
    """Read and convert one published log file (the game is taken from the file name)."""
    info = parse_log_name(path)
    with open(info.path, encoding="utf-8") as f:
        return convert(info.log_game, json.load(f), source=str(info.path))


def iter_logs(root: str | Path) -> Iterator[tuple[LogFile, GameLog]]:
    """Every log under ``root`` (the published ``raw_results`` layout), sorted by path."""
    for path in sorted(Path(root).rglob("*.json")):
        info = parse_log_name(path)
        yield info, load_log(path)


#: The settings γ-Bench scores: implicit El Farol, first-price auction (the other two are variants).
SCORED_LOG_GAMES = tuple(g for g in LOG_GAMES if g != "bar_game_explicit")


def rescore(root: str | Path, version: str = "v1") -> dict[str, dict[str, dict[str, float]]]:
    """The γ-Bench row (:func:`~arena_envs.gamma.scoring.table_row`) of every model under ``root``.

    Uses the scored settings only (implicit El Farol, first-price auction, prompt ``version``);
    run ``k`` of a model is its ``_<version>_<k>`` file of every game.
    """
    runs: dict[str, dict[int, dict[str, float]]] = {}
    for info, log in iter_logs(root):
        if info.log_game not in SCORED_LOG_GAMES or info.version != version or log["params"].get("mode") == "second":
            continue
        value = score(log["game"], log["params"], log["history"])
        runs.setdefault(info.model, {}).setdefault(info.run, {})[info.game] = value
    return {model: table_row([by_run[k] for k in sorted(by_run)]) for model, by_run in sorted(runs.items())}
