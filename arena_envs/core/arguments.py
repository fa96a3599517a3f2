"""Checks of the arguments of the suite's functions: each raises a ValueError of one line naming the
argument, the value given and what is accepted."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from numbers import Integral


def check_int(name: str, value: object, low: int) -> int:
    """``value`` as an int >= ``low``, or a ValueError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_games(games: Sequence[str], known: Sequence[str]) -> None:
    """ValueError when ``games`` names a game not in ``known`` (the first one) or none at all."""
    unknown = [game for game in games if game not in known]
    if unknown:
        raise ValueError(f"unknown game {unknown[0]!r}; known: {', '.join(known)}")
    if not games:
        raise ValueError(f"no game given; known: {', '.join(known)}")


def check_played(option: str, named: Iterable[str], played: Sequence[str]) -> None:
    """ValueError when ``option`` (settings given per game) names a game that is not in ``played``."""
    stray = [game for game in named if game not in played]
    if stray:
        raise ValueError(f"{option} names game {stray[0]!r}, which this run does not play; "
                         f"games played: {', '.join(played)}")
