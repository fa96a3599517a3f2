"""Checks of the arguments of the suite's functions and games: each raises a ValueError of one line
naming the argument, what is accepted (the limit included) and the value given, quoted in at most
:data:`~arena_envs.core.answers.EXCERPT_CHARS` characters (:func:`~arena_envs.core.answers.excerpt`).

Every size a caller chooses has a limit, checked before anything is built: the limits of a run are
here; each game declares its own (players, rounds, values) next to its rules and checks them with
:func:`check_int`; :func:`check_real` refuses non-finite numbers. ``docs/runner.md`` lists them all.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from numbers import Integral, Real

import numpy as np

from arena_envs.core.answers import EXCERPT_CHARS, excerpt

#: The most episodes of one run (``arena run --episodes``, ``arena eval --episodes``, γ-Bench ``--runs``).
MAX_EPISODES = 1_000_000
#: The most seats of one ``--players`` list, ``SPEC*N`` expanded.
MAX_SEATS = 1_000
#: The most re-asks after an invalid answer (every game's ``max_retries``).
MAX_RETRIES = 100


def check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``low..high`` (``high`` None: no upper limit), or a ValueError naming
    the argument."""
    number = int(value) if isinstance(value, Integral) and not isinstance(value, bool) else None
    if number is None or number < low or (high is not None and number > high):
        accepted = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{name} must be an integer {accepted}, got {excerpt(value)}")
    return number


def check_bool(name: str, value: object) -> bool:
    """``value`` as a bool (Python's or NumPy's), or a ValueError naming the argument."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {excerpt(value)}")
    return bool(value)


def check_real(name: str, value: object, low: float | None = None, high: float | None = None) -> float:
    """``value`` as a finite float in ``[low, high]`` (an end None: open), or a ValueError naming the
    argument; NaN, infinities, bools and numbers too large for a float are refused."""
    number = math.nan
    if isinstance(value, Real) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an int or Fraction beyond the float range
            pass
    if not math.isfinite(number) or (low is not None and number < low) or (high is not None and number > high):
        accepted = (f" in [{low:g}, {high:g}]" if low is not None and high is not None else f" >= {low:g}"
                    if low is not None else f" <= {high:g}" if high is not None else "")
        raise ValueError(f"{name} must be a finite number{accepted}, got {excerpt(value)}")
    return number


def check_choice(name: str, value: object, choices: Collection[str]) -> str:
    """``value`` when it is one of the strings ``choices``, or a ValueError naming the argument."""
    if not (isinstance(value, str) and value in choices):
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {excerpt(value)}")
    return value


def listing(items: Sequence[str], limit: int = EXCERPT_CHARS) -> str:
    """``items`` joined by commas for a message, cut to ``limit`` characters (then how many in all)."""
    text = ", ".join(item[:limit] for item in items[:limit])
    return text if len(text) <= limit else f"{text[:limit]}... ({len(items)} in all)"


def check_games(games: Sequence[str], known: Sequence[str]) -> None:
    """ValueError when ``games`` names a game not in ``known`` (the first one) or none at all."""
    unknown = [game for game in games if game not in known]
    if unknown:
        raise ValueError(f"unknown game {excerpt(unknown[0])}; known: {', '.join(known)}")
    if not games:
        raise ValueError(f"no game given; known: {', '.join(known)}")


def check_played(option: str, named: Iterable[str], played: Sequence[str]) -> None:
    """ValueError when ``option`` (settings given per game) names a game that is not in ``played``."""
    stray = [game for game in named if game not in played]
    if stray:
        raise ValueError(f"{option} names game {excerpt(stray[0])}, which this run does not play; "
                         f"games played: {', '.join(played)}")
