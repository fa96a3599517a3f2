"""The voters of the Who is Spy rule players.

* :class:`OverlapVoter` (lexicon-based): votes for the candidate whose clues fit its own word's
  lexicon worst, ``fit(p) = |T_p ∩ A| / |T_p|`` with ``T_p`` the tokens of ``p``'s clues and ``A``
  those of its word and its lexicon entry; ties: fewer matched tokens, then earlier in the
  speaking order. Without a lexicon entry for its word it votes as :class:`ConsensusVoter`.
* :class:`ConsensusVoter` (lexicon-free): votes for the candidate whose clues agree least with the
  table's, the mean Jaccard similarity of its tokens to every other player's still in the game;
  ties: earlier in the speaking order. As the spy it still never votes for itself.
* :class:`RandomVoter`: uniform over the candidates, abstaining with probability ``p_abstain``.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from arena_envs.core.answers import excerpt
from arena_envs.who_is_spy.clues import jaccard, tokens
from baselines.wis.seat import Seat

_EMPTY: frozenset[str] = frozenset()


def _order(info: Mapping[str, Any]) -> dict[str, int]:
    """Position in the current speaking order (a tie-break), players not in it last."""
    return {name: i for i, name in enumerate(info["speaking_order"])}


@functools.lru_cache(maxsize=1024)
def _features(word: str, attributes: tuple[str, ...], language: str) -> frozenset[str]:
    return tokens(" ".join(attributes) + " " + word, language)


class Fit(NamedTuple):
    """How well one candidate's clues fit the voter's word (:class:`OverlapVoter`)."""

    name: str
    fit: float
    matched: int


class OverlapVoter:
    """Votes for the candidate whose clues fit its word's lexicon worst (module docstring)."""

    def __init__(self) -> None:
        self._fallback = ConsensusVoter()

    @staticmethod
    def features(seat: Seat, word: str) -> frozenset[str] | None:
        """``A``: the tokens of ``word`` and its lexicon entry; None when it has no entry."""
        attributes = seat.lexicon.get(word)
        return _features(word, tuple(attributes), seat.language) if attributes else None

    def ranking(self, seat: Seat, info: Mapping[str, Any], candidates: Sequence[str]) -> list[Fit] | None:
        """``candidates`` from the most to the least suspect; None without a lexicon entry."""
        rows = self._rows(seat, info, candidates)
        return None if rows is None else [Fit(name, fit, matched) for fit, matched, _, name in sorted(rows)]

    def vote(self, seat: Seat, info: Mapping[str, Any], candidates: Sequence[str]) -> str | None:
        rows = self._rows(seat, info, candidates)
        return self._fallback.vote(seat, info, candidates) if rows is None else min(rows)[3]

    def _rows(self, seat: Seat, info: Mapping[str, Any],
              candidates: Sequence[str]) -> list[tuple[float, int, int, str]] | None:
        """(fit, matched tokens, speaking position, name) per candidate: the order of suspicion."""
        features = self.features(seat, info["word"])
        if features is None:
            return None
        order = _order(info)
        tokens_of = seat.memory.tokens_of
        rows = []
        for name in candidates:
            said = tokens_of.get(name, _EMPTY)
            matched = len(said & features)
            rows.append((matched / len(said) if said else 0.0, matched, order.get(name, len(order)), name))
        return rows


class ConsensusVoter:
    """Votes for the candidate whose clues agree least with the table's (module docstring)."""

    def vote(self, seat: Seat, info: Mapping[str, Any], candidates: Sequence[str]) -> str | None:
        said = seat.memory.tokens_of
        alive = info["alive_players"]
        order = _order(info)

        def consensus(p: str) -> float:
            mine = said.get(p, _EMPTY)
            others = [q for q in alive if q != p]
            return sum(jaccard(mine, said.get(q, _EMPTY)) for q in others) / len(others) if others else 0.0

        return min(candidates, key=lambda p: (consensus(p), order.get(p, len(order))))


class RandomVoter:
    """A uniform candidate; abstains with probability ``p_abstain``."""

    def __init__(self, p_abstain: float = 0.0) -> None:
        if not 0.0 <= p_abstain <= 1.0:
            raise ValueError(f"p_abstain must be in [0, 1], got {excerpt(p_abstain)}")
        self.p_abstain = p_abstain

    def vote(self, seat: Seat, info: Mapping[str, Any], candidates: Sequence[str]) -> str | None:
        if self.p_abstain and seat.rng.random() < self.p_abstain:
            return None
        return candidates[int(seat.rng.integers(len(candidates)))]
