"""The rule baselines of the trading arena, on :class:`arena_envs.core.Policy`.

Every trader reads only ``info["snapshot"]`` (the closes of each asset up to today, whether its
market is open), never the text, and answers ``{symbol: Order}`` for every asset, which every
action mode of ``trading_v0`` accepts. A rule decides each open asset on its own; a closed asset
gets HOLD (the environment would ignore a BUY or SELL there).

* :class:`BuyAndHold` (always BUY size 1), :class:`Cash` (always HOLD), :class:`ShortAndHold`
  (always SELL size 1);
* :class:`SmaCrossover`, :class:`Momentum`, :class:`MeanReversion`: the technical rules, HOLD
  while the history is too short or the signal is a tie;
* :class:`RandomTrader`: uniform over BUY/SELL/HOLD from its own seeded generator.

:meth:`RuleTrader.decide` gives the orders from a snapshot alone, so that scripted answer engines
(a fake LLM) can reuse the rules.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from arena_envs.core.answers import excerpt
from arena_envs.core.policy import Policy
from arena_envs.trading.accounting import Order

BUY = Order("BUY", 1.0)
SELL = Order("SELL", 1.0)
HOLD = Order("HOLD")

#: Relative gap below which two moving averages count as equal: float noise of the mean, far
#: below any real difference of prices quoted in cents.
TIE_RTOL = 1e-12


class SnapshotLike(Protocol):
    """What the rules read of ``info["snapshot"]`` (:mod:`arena_envs.trading.snapshot`)."""

    @property
    def assets(self) -> Sequence[str]: ...
    def closes(self, sym: str) -> np.ndarray: ...
    def is_open(self, sym: str) -> bool: ...


def _positive_int(name: str, value: Any, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {excerpt(value)}")
    return int(value)


def _non_negative(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {excerpt(value)}")
    return float(value)


class RuleTrader(Policy):
    """A per-asset rule: :meth:`signal` maps one asset's closes to an order."""

    name = "rule"
    backbone = "rule"
    reads_text = False  # decides from info["snapshot"]
    follows_game = True  # info["snapshot"] is the game's object

    def signal(self, closes: np.ndarray) -> Order:
        """The order for one open asset whose closes up to today are ``closes`` (oldest first)."""
        raise NotImplementedError

    def decide(self, snapshot: SnapshotLike) -> dict[str, Order]:
        """The orders of one decision: the rule's for each open asset, HOLD for a closed one."""
        return {sym: self.signal(snapshot.closes(sym)) if snapshot.is_open(sym) else HOLD
                for sym in snapshot.assets}

    def act(self, observation: Any, info: dict[str, Any]) -> dict[str, Order]:
        return self.decide(info["snapshot"])


class BuyAndHold(RuleTrader):
    """Always BUY size 1: fully long from the first decision (CR = last/first close − 1)."""

    name = "buy_and_hold"

    def signal(self, closes: np.ndarray) -> Order:
        return BUY


class Cash(RuleTrader):
    """Always HOLD: stays flat, since every episode starts flat."""

    name = "cash"

    def signal(self, closes: np.ndarray) -> Order:
        return HOLD


class ShortAndHold(RuleTrader):
    """Always SELL size 1 (fully short where shorting is allowed, else flat)."""

    name = "short_and_hold"

    def signal(self, closes: np.ndarray) -> Order:
        return SELL


class SmaCrossover(RuleTrader):
    """BUY when the ``fast``-day simple moving average is above the ``slow``-day one, SELL when it
    is below, HOLD when they are equal or fewer than ``slow`` closes exist."""

    name = "sma_crossover"

    def __init__(self, fast: int = 5, slow: int = 20) -> None:
        self.fast = _positive_int("fast", fast)
        self.slow = _positive_int("slow", slow)
        if self.slow <= self.fast:
            raise ValueError(f"slow must be greater than fast ({self.fast}), got {excerpt(slow)}")

    def signal(self, closes: np.ndarray) -> Order:
        if len(closes) < self.slow:
            return HOLD
        fast = float(closes[-self.fast:].sum()) / self.fast  # np.mean's value without its overhead
        slow = float(closes[-self.slow:].sum()) / self.slow
        if abs(fast - slow) <= TIE_RTOL * abs(slow):
            return HOLD
        return BUY if fast > slow else SELL


class Momentum(RuleTrader):
    """``m = close_t / close_{t−lookback} − 1``: BUY when m > threshold, SELL when m < −threshold,
    else HOLD; HOLD while fewer than ``lookback + 1`` closes exist."""

    name = "momentum"

    def __init__(self, lookback: int = 10, threshold: float = 0.0) -> None:
        self.lookback = _positive_int("lookback", lookback)
        self.threshold = _non_negative("threshold", threshold)

    def signal(self, closes: np.ndarray) -> Order:
        if len(closes) < self.lookback + 1:
            return HOLD
        m = float(closes[-1] / closes[-1 - self.lookback] - 1.0)
        if m > self.threshold:
            return BUY
        if m < -self.threshold:
            return SELL
        return HOLD


class MeanReversion(RuleTrader):
    """``z = (close_t − mean) / std`` over the last ``window`` closes (std with ddof = 1): BUY when
    z < −k, SELL when z > k, else HOLD; HOLD while fewer than ``window`` closes exist or when the
    window is constant (std = 0)."""

    name = "mean_reversion"

    def __init__(self, window: int = 20, k: float = 1.0) -> None:
        self.window = _positive_int("window", window, least=2)
        self.k = _non_negative("k", k)

    def signal(self, closes: np.ndarray) -> Order:
        if len(closes) < self.window:
            return HOLD
        last = closes[-self.window:]
        if last.max() == last.min():  # std = 0 exactly, whatever the float noise of np.std
            return HOLD
        z = float((last[-1] - last.mean()) / last.std(ddof=1))
        if z < -self.k:
            return BUY
        if z > self.k:
            return SELL
        return HOLD


class RandomTrader(RuleTrader):
    """Uniform over BUY / SELL / HOLD for each open asset, from its own ``Generator(PCG64(seed))``
    (the seed given to :meth:`reset`)."""

    name = "random"

    _CHOICES = (BUY, SELL, HOLD)

    def __init__(self) -> None:
        self._rng = np.random.Generator(np.random.PCG64(None))

    def reset(self, agent: str, seed: int | None = None) -> None:
        self._rng = np.random.Generator(np.random.PCG64(seed))

    def signal(self, closes: np.ndarray) -> Order:
        return self._CHOICES[int(self._rng.integers(3))]
