"""Pirate Game (γ-Bench game 8) rules, free of PettingZoo.

N pirates, ranked 1 (most senior, ``player_0``) to N, share G coins. In round j the most senior
survivor (rank j) proposes integer shares for the n = N - j + 1 survivors, in rank order and
summing to G; every other survivor votes. The plan passes when at least half of the survivors
accept, the proposer counting as an accept; otherwise the proposer goes overboard and the next
pirate proposes. A lone pirate takes everything.

Equilibrium (after Stewart 1999, as γ-Bench states it): the proposer keeps G - floor((n-1)/2)
and offers 1 coin to each survivor at an even distance behind it; a voter accepts 2 or more
coins, rejects 0, and accepts 1 coin only at an even distance from the proposer.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_int
from arena_envs.gamma.simultaneous_rules import MAX_VALUE

DEFAULT_PLAYERS = 10
DEFAULT_GOLDS = 100
#: The most pirates (the paper: 10); a proposal's mask holds MAX_PLAYERS x (MAX_VALUE + 1) entries.
MAX_PLAYERS = 100


def min_golds(n_players: int) -> int:
    """The smallest G allowed: the equilibrium proposal of :func:`ne_proposal` needs
    floor((N-1)/2) coins, and the score normalises by 2G, so at least 1."""
    return max(1, (n_players - 1) // 2)


def check_params(n_players: int, golds: int) -> None:
    """ValueError naming the argument if (N, G) is outside the range: 1 <= N <= :data:`MAX_PLAYERS`,
    :func:`min_golds` (N) <= G <= ``MAX_VALUE``."""
    check_int("n_players", n_players, 1, MAX_PLAYERS)
    if isinstance(golds, bool) or not isinstance(golds, int) or not min_golds(n_players) <= golds <= MAX_VALUE:
        raise ValueError(f"golds must be an integer from max(1, floor((n_players - 1) / 2)) = {min_golds(n_players)} "
                         f"to {MAX_VALUE}, got {excerpt(golds)}")


def ne_proposal(n_survivors: int, golds: int) -> list[int]:
    """O(n, G): the equilibrium shares, proposer first, then the juniors in rank order."""
    check_params(n_survivors, golds)
    shares = [1 if k > 0 and k % 2 == 0 else 0 for k in range(n_survivors)]
    shares[0] = golds - sum(shares)
    return shares


def optimal_vote(position: int, offered: int) -> bool:
    """Equilibrium vote (True = accept) of the voter ``position`` places behind the proposer."""
    if position < 1:
        raise ValueError(f"position must be >= 1 (the proposer does not vote), got {position}")
    if offered >= 2:
        return True
    if offered == 1:
        return position % 2 == 0
    return False


def accepts_needed(n_survivors: int) -> int:
    """Accepts (proposer included) a plan needs: at least half, ties pass."""
    return (n_survivors + 1) // 2


def passes(n_accepts: int, n_survivors: int) -> bool:
    return 2 * n_accepts >= n_survivors


def proposal_problem(shares: Sequence[Any], n_survivors: int, golds: int) -> str | None:
    """Why ``shares`` is not a valid proposal (``None``: it is valid)."""
    if len(shares) != n_survivors:
        return f"the proposal must have exactly {n_survivors} shares, one per surviving pirate; got {len(shares)}"
    for share in shares:
        if isinstance(share, bool) or not isinstance(share, int):
            return f"every share must be an integer, got {share!r}"
        if share < 0:
            return f"every share must be non-negative, got {share}"
    total = sum(shares)
    if total != golds:
        return f"the shares must sum to {golds}, got {total}"
    return None


class PirateGame:
    """The state of one game: the round, the survivors, the proposal under vote and the votes."""

    def __init__(self, n_players: int = DEFAULT_PLAYERS, golds: int = DEFAULT_GOLDS):
        check_params(n_players, golds)
        self.n_players = n_players
        self.golds = golds
        self.round = 1
        self.proposal: list[int] | None = None  # shares of the survivors, proposer first
        self.votes: dict[int, bool] = {}
        self.final_shares: list[int] | None = None  # per player once a plan passed

    @property
    def proposer(self) -> int:
        return self.round - 1

    @property
    def survivors(self) -> list[int]:
        return list(range(self.proposer, self.n_players))

    @property
    def n_survivors(self) -> int:
        return self.n_players - self.proposer

    @property
    def over(self) -> bool:
        return self.final_shares is not None

    @property
    def phase(self) -> str:
        if self.over:
            return "over"
        return "propose" if self.proposal is None else "vote"

    def voters(self) -> list[int]:
        return list(range(self.proposer + 1, self.n_players))

    def next_voter(self) -> int | None:
        for voter in self.voters():
            if voter not in self.votes:
                return voter
        return None

    def offered(self, player: int) -> int:
        """Coins the proposal under vote gives ``player``."""
        if self.proposal is None:
            raise RuntimeError("no proposal under vote")
        return self.proposal[player - self.proposer]

    def propose(self, shares: Sequence[int]) -> None:
        problem = proposal_problem(shares, self.n_survivors, self.golds)
        if problem:
            raise ValueError(problem)
        if self.phase != "propose":
            raise RuntimeError(f"cannot propose in phase {self.phase!r}")
        self.proposal = [int(s) for s in shares]

    def vote(self, player: int, accept: bool) -> None:
        if player != self.next_voter():
            raise RuntimeError(f"player {player} is not the next voter")
        self.votes[player] = bool(accept)

    def resolve(self) -> dict[str, Any]:
        """Count the votes of the finished round; returns the round record (history schema)."""
        if self.proposal is None or self.next_voter() is not None:
            raise RuntimeError("the round has not been fully voted on")
        return self._close_round(self.proposal, {self.proposer: True, **self.votes})

    def resolve_last_pirate(self) -> dict[str, Any]:
        """A lone survivor takes all G without a vote (recorded as the proposal [G])."""
        if self.n_survivors != 1 or self.over:
            raise RuntimeError("only a lone surviving pirate is resolved automatically")
        return self._close_round([self.golds], {self.proposer: True})

    def _close_round(self, shares: list[int], votes: dict[int, bool]) -> dict[str, Any]:
        n = self.n_survivors
        n_accepts = sum(votes.values())
        accepted = passes(n_accepts, n)
        per_player: list[int | None] = [None] * self.proposer + shares
        record = {
            "round": self.round,
            "proposer": self.proposer,
            "proposal": per_player,
            "votes": [votes.get(p) if p >= self.proposer else None for p in range(self.n_players)],
            "n_accepts": n_accepts,
            "accepted": accepted,
        }
        if accepted:
            self.final_shares = [0 if s is None else s for s in per_player]
        else:
            self.round += 1
            self.proposal = None
            self.votes = {}
        return record
