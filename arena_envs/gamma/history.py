"""Round-record schema of the eight γ-Bench games: what the environments append to
``self.history`` and what :mod:`arena_envs.gamma.scoring` reads.

Conventions, the same for every game:

* a history is a ``list`` of round records, one plain ``dict`` per resolved round (Battle Royale:
  per turn), in play order; ``round`` is 1-based;
* per-player lists are indexed by player number (``player_i`` -> index ``i``) and have length
  ``n_players``; ``None`` marks a player that did not decide (eliminated, or not asked);
* every value is JSON-safe (``int``, ``float``, ``bool``, ``str``, ``None``, lists of those);
* a game's parameters are a plain ``dict`` with the keys of its ``*Params`` type below;
  scores are pure functions of ``(params, history)``;
* :class:`GameLog` bundles both, which is what the importer produces and what the suite saves.

Environments may add extra keys to a record (scoring ignores unknown keys); they must not leave
out any key listed here.
"""
from __future__ import annotations

from typing import Literal, TypedDict

from arena_envs.core.arguments import check_choice

#: The eight games in the paper's table order (env names as registered).
GAMES: tuple[str, ...] = (
    "guess_two_thirds_v0",
    "el_farol_v0",
    "divide_dollar_v0",
    "public_goods_v0",
    "diners_dilemma_v0",
    "sealed_bid_auction_v0",
    "battle_royale_v0",
    "pirate_game_v0",
)

#: Short column labels of the γ-Bench table, in :data:`GAMES` order.
GAME_LABELS: dict[str, str] = {
    "guess_two_thirds_v0": "Guess 2/3",
    "el_farol_v0": "El Farol",
    "divide_dollar_v0": "Divide $",
    "public_goods_v0": "Public Goods",
    "diners_dilemma_v0": "Diner",
    "sealed_bid_auction_v0": "SBA",
    "battle_royale_v0": "Battle Royale",
    "pirate_game_v0": "Pirate",
}


# --- 1. Guess 2/3 of the Average ---------------------------------------------------------------

class GuessParams(TypedDict):
    n_players: int  #: N (default 10)
    n_rounds: int  #: K (default 20)
    min_value: int  #: MIN, smallest legal number (default 0)
    max_value: int  #: MAX, largest legal number (default 100)
    ratio: float  #: R, the target is R x the mean (default 2/3)


class GuessRound(TypedDict):
    round: int  #: 1-based round number
    choices: list[int | None]  #: chosen number per player (None: did not decide)
    average: float  #: mean of the chosen numbers, all players
    target: float  #: ratio x average (unrounded)
    winners: list[int]  #: indices of the winning players, ascending
    winning_numbers: list[int]  #: distinct winning numbers, ascending


# --- 2. El Farol Bar ---------------------------------------------------------------------------

class ElFarolParams(TypedDict):
    n_players: int  #: N (default 10)
    n_rounds: int  #: K (default 20)
    capacity_ratio: float  #: R, going is fun iff go-rate <= R (default 0.6)
    max_utility: float  #: MAX, a goer's utility when not crowded (default 10)
    min_utility: float  #: MIN, a goer's utility when crowded (default 0)
    home_utility: float  #: HOME, a stayer's utility (default 5)
    mode: Literal["implicit", "explicit"]  #: implicit (scored, default) or explicit feedback


class ElFarolRound(TypedDict):
    round: int  #: 1-based round number
    go: list[bool | None]  #: True = went to the bar, False = stayed home, per player
    attendance: int  #: number of goers g
    go_rate: float  #: g / N
    crowded: bool  #: g / N > R (goers got MIN)
    utilities: list[float]  #: per-player utility this round


# --- 3. Divide the Dollar ----------------------------------------------------------------------

class DivideDollarParams(TypedDict):
    n_players: int  #: N (default 10)
    n_rounds: int  #: K (default 20)
    golds: int  #: G, the amount to divide (default 100)


class DivideDollarRound(TypedDict):
    round: int  #: 1-based round number
    bids: list[int | None]  #: bid per player
    total: int  #: sum of all bids
    exceeded: bool  #: total > G (everyone got 0)
    payoffs: list[int]  #: amount received per player (the bid, or 0)


# --- 4. Public Goods Game ----------------------------------------------------------------------

class PublicGoodsParams(TypedDict):
    n_players: int  #: N (default 10)
    n_rounds: int  #: K (default 20)
    ratio: float  #: R, the pot multiplier (default 2)
    tokens: int  #: T, tokens per player (per round when reset, default 20)
    reset: bool  #: True: every round starts again from T tokens (paper setting)


class PublicGoodsRound(TypedDict):
    round: int  #: 1-based round number
    contributions: list[int | None]  #: tokens put in the pot, per player
    tokens: list[float]  #: tokens each player held at the start of the round
    pot: int  #: sum of the contributions S
    share: float  #: R x S / N, what every player gets back
    payoffs: list[float]  #: tokens held at the end of the round (= tokens - contribution + share)


# --- 5. Diner's Dilemma ------------------------------------------------------------------------

class DinersParams(TypedDict):
    n_players: int  #: N (default 10)
    n_rounds: int  #: K (default 20)
    costly_price: float  #: P_h (default 20)
    cheap_price: float  #: P_l (default 10)
    costly_utility: float  #: U_h (default 20)
    cheap_utility: float  #: U_l (default 15)


class DinersRound(TypedDict):
    round: int  #: 1-based round number
    orders: list[Literal["costly", "cheap"] | None]  #: dish ordered, per player
    n_costly: int  #: number of costly orders
    total_cost: float  #: n_costly x P_h + n_cheap x P_l
    bill_share: float  #: total_cost / N, what everyone pays
    utilities: list[float]  #: U(dish) - bill_share, per player


# --- 6. Sealed-Bid Auction ---------------------------------------------------------------------

class SealedBidParams(TypedDict):
    n_players: int  #: N (default 10)
    n_rounds: int  #: K (default 20)
    valuation_min: int  #: smallest valuation on the grid (default 0)
    valuation_max: int  #: largest valuation on the grid (default 200)
    interval: int  #: grid step (default 10)
    mode: Literal["first", "second"]  #: first-price (scored) or second-price


class SealedBidRound(TypedDict):
    round: int  #: 1-based round number
    valuations: list[int]  #: private valuation per player
    bids: list[int | None]  #: bid per player
    winner: int  #: index of the winning player (ties broken at random)
    winning_bid: int  #: the highest bid
    price: int  #: what the winner pays (highest bid, or second-highest in second-price)
    utilities: list[float]  #: valuation - price for the winner, 0 for everyone else
    mode: Literal["first", "second"]  #: the pricing rule of this round


# --- 7. Battle Royale --------------------------------------------------------------------------

class BattleRoyaleParams(TypedDict):
    n_players: int  #: N (default 10)
    hit_rates: list[float]  #: hit rate of each player in percent (default 35, 40, ..., 80)
    max_turns: int | None  #: turn cap (default 20; None = until one is left)


class BattleRoyaleRound(TypedDict):
    round: int  #: 1-based turn number (each turn is one "round" of the paper)
    shooter: int  #: index of the player whose turn it is
    target: int | None  #: index of the player shot at; None = intentional miss
    hit: bool  #: the shot hit (the target is eliminated); False for a miss
    alive_before: list[int]  #: indices of the players alive when the turn started, ascending
    alive_after: list[int]  #: indices of the players alive after the turn, ascending


# --- 8. Pirate Game ----------------------------------------------------------------------------

class PirateParams(TypedDict):
    n_players: int  #: N pirates; player_i has rank i+1, rank 1 the most senior (default 10)
    golds: int  #: G coins to divide (default 100)


class PirateRound(TypedDict):
    round: int  #: 1-based round number
    proposer: int  #: index of the proposing (most senior surviving) pirate
    proposal: list[int | None]  #: coins offered per player; None for pirates already overboard
    votes: list[bool | None]  #: True = accept per player; the proposer counts as True;
    #: None for pirates already overboard (and for voters of an auto-resolved last round)
    n_accepts: int  #: accepts including the proposer's
    accepted: bool  #: n_accepts >= survivors / 2 (ties pass)


# --- the bundle -------------------------------------------------------------------------------

Params = (
    GuessParams | ElFarolParams | DivideDollarParams | PublicGoodsParams | DinersParams
    | SealedBidParams | BattleRoyaleParams | PirateParams
)
RoundRecord = (
    GuessRound | ElFarolRound | DivideDollarRound | PublicGoodsRound | DinersRound
    | SealedBidRound | BattleRoyaleRound | PirateRound
)


class GameLog(TypedDict):
    """One played (or imported) game: enough to rescore it offline."""

    game: str  #: env name, one of :data:`GAMES`
    params: dict  #: the game's ``*Params`` dict
    history: list[dict]  #: the round records, in play order
    source: str  #: where it came from (a log file path, or "env")


#: Per game: (params type, round type) — for documentation, validation and tests.
SCHEMAS: dict[str, tuple[type, type]] = {
    "guess_two_thirds_v0": (GuessParams, GuessRound),
    "el_farol_v0": (ElFarolParams, ElFarolRound),
    "divide_dollar_v0": (DivideDollarParams, DivideDollarRound),
    "public_goods_v0": (PublicGoodsParams, PublicGoodsRound),
    "diners_dilemma_v0": (DinersParams, DinersRound),
    "sealed_bid_auction_v0": (SealedBidParams, SealedBidRound),
    "battle_royale_v0": (BattleRoyaleParams, BattleRoyaleRound),
    "pirate_game_v0": (PirateParams, PirateRound),
}


def missing_keys(game: str, params: dict, history: list[dict]) -> list[str]:
    """Schema keys absent from ``params`` or from any round record (empty list = conforming)."""
    check_choice("game", game, GAMES)
    params_type, round_type = SCHEMAS[game]
    missing = [f"params.{k}" for k in params_type.__annotations__ if k not in params]
    for i, record in enumerate(history):
        missing += [f"history[{i}].{k}" for k in round_type.__annotations__ if k not in record]
    return missing
