"""Positions and money: how an order moves an exposure, and how exposures, costs and price moves
change an agent's books.

* :class:`PositionRules` maps ``(order, e_prev) -> e_new`` under three readings of HOLD/BUY/SELL
  (``target``, the default: HOLD keeps the exposure; ``signal``, the Agent Market Arena paper's
  literal formula: HOLD is flat; ``ladder``: BUY/SELL step by the size), shorting on or off.
* :class:`Account` is one agent's books (one per asset, or one shared book). A day is
  :meth:`Account.rebalance` (the decision at the day's close: exposures set, costs paid) then
  :meth:`Account.advance` (the move to the next close); each costs O(assets).
* Pure helpers: asset returns from closes, the crowd's price-impact rate, the step rewards.

Exposure ``e`` is a signed fraction of a book's equity held from one close to the next; equity
and costs are in the account's currency (USD).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice

#: The readings of HOLD/BUY/SELL; the first is the default.
POSITION_RULES: tuple[str, ...] = ("target", "signal", "ladder")
#: Order kinds; every other action form (discrete index, box weight, text) becomes one of these.
ORDER_KINDS: tuple[str, ...] = ("BUY", "SELL", "HOLD", "TARGET")
#: ``per_asset``: an independent book per asset (default); ``shared``: one book for all assets.
BOOK_MODES: tuple[str, ...] = ("per_asset", "shared")
#: The step rewards :func:`step_reward` builds from one advance.
REWARD_TYPES: tuple[str, ...] = ("return", "log_return", "pnl", "excess_return")


def _check_fraction(name: str, value: float, low_open: bool = True) -> float:
    value = float(value)
    ok = (0.0 < value <= 1.0) if low_open else (0.0 <= value <= 1.0)
    if not ok:
        accepted = "(0, 1]" if low_open else "[0, 1]"
        raise ValueError(f"{name} must be in {accepted}, got {excerpt(value)}")
    return value


@dataclass(frozen=True)
class Order:
    """One decision for one asset: BUY/SELL with an optional size in [0, 1] (None: the rules'
    default size), HOLD, or TARGET with a target exposure (clipped to the bounds when applied)."""

    kind: str
    size: float | None = None
    target: float | None = None

    def __post_init__(self) -> None:
        check_choice("order kind", self.kind, ORDER_KINDS)
        if self.size is not None:
            if self.kind not in ("BUY", "SELL"):
                raise ValueError(f"a size goes with BUY or SELL only, got size {excerpt(self.size)} for {self.kind}")
            _check_fraction("order size", self.size, low_open=False)
        if self.kind == "TARGET":
            if self.target is None or not math.isfinite(self.target):
                raise ValueError(f"TARGET needs a finite target exposure, got {excerpt(self.target)}")
        elif self.target is not None:
            raise ValueError(f"a target goes with TARGET only, got target {excerpt(self.target)} for {self.kind}")


HOLD = Order("HOLD")


class OrderLike(Protocol):
    """Anything with an order's fields (an :class:`Order`, or the parser's richer action type)."""

    @property
    def kind(self) -> str: ...
    @property
    def size(self) -> float | None: ...
    @property
    def target(self) -> float | None: ...


@dataclass(frozen=True)
class PositionRules:
    """A position rule with its bounds: ``lo = -max_exposure`` when shorting is allowed, else 0;
    ``hi = +max_exposure``; BUY/SELL without a size use ``default_size``."""

    rule: str = "target"
    allow_short: bool = True
    max_exposure: float = 1.0
    default_size: float = 1.0

    def __post_init__(self) -> None:
        check_choice("position_rule", self.rule, POSITION_RULES)
        _check_fraction("max_exposure", self.max_exposure)
        _check_fraction("default_size", self.default_size)
        # read on every order: computed once
        object.__setattr__(self, "_bounds", ((-self.max_exposure if self.allow_short else 0.0), self.max_exposure))

    @property
    def bounds(self) -> tuple[float, float]:
        return self._bounds  # type: ignore[attr-defined,no-any-return]

    def clip(self, exposure: float) -> float:
        lo, hi = self.bounds
        return min(max(float(exposure), lo), hi)

    def apply(self, order: OrderLike, e_prev: float) -> float:
        """The exposure after ``order`` from ``e_prev``."""
        if order.kind == "TARGET":
            if order.target is None or not math.isfinite(order.target):
                raise ValueError(f"TARGET needs a finite target exposure, got {excerpt(order.target)}")
            return self.clip(order.target)
        if order.kind == "HOLD":
            return 0.0 if self.rule == "signal" else float(e_prev)
        if order.kind not in ("BUY", "SELL"):
            raise ValueError(f"order kind must be one of {', '.join(ORDER_KINDS)}, got {excerpt(order.kind)}")
        size = self.default_size if order.size is None else _check_fraction("order size", order.size, low_open=False)
        step = size if order.kind == "BUY" else -size
        return self.clip(e_prev + step if self.rule == "ladder" else step)

    def apply_all(self, orders: Sequence[OrderLike], e_prev: Sequence[float],
                  is_open: Sequence[bool] | None = None) -> list[float]:
        """One order per asset; an asset whose market is closed keeps its exposure (its order is
        ignored)."""
        if len(orders) != len(e_prev) or (is_open is not None and len(is_open) != len(e_prev)):
            raise ValueError(f"need one order (and one is_open flag) per asset ({len(e_prev)}), got {len(orders)}")
        apply = self.apply
        if is_open is None:
            return [apply(o, e) for o, e in zip(orders, e_prev)]
        return [apply(o, e) if ok else e for o, e, ok in zip(orders, e_prev, is_open)]


def is_noop(order: OrderLike, e_prev: float, e_new: float) -> bool:
    """A BUY, SELL or TARGET that leaves the exposure where it was (e.g. SELL from flat when
    shorting is off, BUY at the maximum): no cost, still counted as its kind."""
    return order.kind != "HOLD" and e_new == e_prev


def _total(values: Sequence[float]) -> float:
    """``np.sum`` of a short list of floats, bit for bit: numpy adds fewer than 8 values in order,
    more pairwise (so those go to numpy)."""
    if len(values) >= 8 or not values:
        return float(np.sum(values))
    total = values[0]
    for v in values[1:]:
        total += v
    return float(total)


def _capped(exposure: list[float], max_gross_exposure: float) -> list[float]:
    """A shared book's exposures scaled by ``max_gross/Σ|e|`` when ``Σ|e|`` exceeds it."""
    gross = _total([abs(e) for e in exposure])
    if gross > max_gross_exposure:
        scale = max_gross_exposure / gross
        return [e * scale for e in exposure]
    return exposure


def price_returns(closes: Sequence[float] | np.ndarray) -> np.ndarray:
    """Simple close-to-close returns ``R_k = P(d_k)/P(d_{k-1}) - 1``: n closes, n - 1 returns."""
    p = np.asarray(closes, dtype=float)
    if p.ndim != 1 or not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError("closes must be a 1-D series of finite prices > 0")
    returns: np.ndarray = p[1:] / p[:-1] - 1.0
    return returns


def impact_rates(flows: np.ndarray, adv: np.ndarray, kappa: float) -> np.ndarray:
    """Temporary impact rate ``ι_a = κ·F_a/ADV_a`` from the agents' signed trade notionals.

    ``flows``: shape (agents, assets), each row an :meth:`Account.trade_flow`; ``F_a`` is their
    sum (the crowd's net trade). An asset with no dollar volume (ADV ≤ 0) gets no impact: there is
    nothing to scale the crowd's trade by.
    """
    if kappa < 0 or not math.isfinite(kappa):
        raise ValueError(f"price_impact must be a finite number >= 0, got {excerpt(kappa)}")
    crowd = np.atleast_2d(np.asarray(flows, dtype=float)).sum(axis=0)
    volume = np.asarray(adv, dtype=float)
    if crowd.shape != volume.shape:
        raise ValueError(f"need one ADV per asset ({crowd.size}), got {volume.size}")
    rates: np.ndarray = np.zeros_like(crowd)
    liquid = volume > 0
    rates[liquid] = kappa * crowd[liquid] / volume[liquid]
    return rates


@dataclass(frozen=True)
class Rebalance:
    """What one decision did to an account: the exposures now held (per asset), the cost charged
    to each asset's trade (fee plus impact, negative for an impact rebate), and ``|Δe|``."""

    exposure: tuple[float, ...]
    cost: tuple[float, ...]
    traded: tuple[float, ...]

    @property
    def total_cost(self) -> float:
        return _total(self.cost)


@dataclass(frozen=True)
class Advance:
    """One close-to-close move of an account."""

    step_return: float  #: ``Σ W / V_pre - 1``, V_pre the equity before the decision's costs
    pnl: float  #: the change of total equity since before the decision's costs (USD)
    equity: float  #: total equity after the move
    book_returns: tuple[float, ...]  #: per-book return per asset, NaN where none is recorded
    ruined: tuple[int, ...]  #: books closed for good by this move (equity reached 0)


class Holdings(NamedTuple):
    """What an account holds at the last close it moved to, per asset: the notional ``e·W`` (USD),
    the units ``e·W/P`` (0 where there is no price), and the implied cash of all books together
    (``equity - Σ notional``, above the equity for a short)."""

    notional: tuple[float, ...]
    units: tuple[float, ...]
    cash: float


_TWICE = "rebalance called twice without an advance in between"
_RUINED = "the account is ruined (equity 0): it takes no more decisions"


def _floats(values: Iterable[float], n: int, what: str) -> list[float]:
    """``values`` as ``n`` finite Python floats (one per asset), else one ValueError line."""
    try:
        out = [float(x) for x in values]
    except (TypeError, ValueError, OverflowError):
        out = []
    if len(out) != n or not all(math.isfinite(x) for x in out):
        raise ValueError(f"need one finite {what} per asset ({n}), got {excerpt(values)}")
    return out


def _flags(values: Iterable[bool] | None, n: int) -> list[bool]:
    if values is None:
        return [True] * n
    flags = [bool(x) for x in values]
    if len(flags) != n:
        raise ValueError(f"need one is_open flag per asset ({n}), got {len(flags)}")
    return flags


class Account:
    """One agent's books: equity ``W`` per book, exposure ``e`` per asset.

    A day is :meth:`rebalance` (the decision at the close of ``d_k``: exposures set, costs paid)
    then :meth:`advance` (the move to ``d_{k+1}``). The books are kept as Python floats (numpy's
    per-call cost dominates at a few assets), with the same arithmetic as numpy's. The account
    keeps the equity curve (position ``i`` is the day ``d_i``), the step returns and, with a book
    per asset, each book's return series with the calendar positions they were realised on.
    """

    def __init__(self, assets: Sequence[str], initial_capital: float = 100_000.0, *, cost_bps: float = 0.0,
                 book_mode: str = "per_asset", max_gross_exposure: float = 1.0,
                 exposure_drift: bool = False) -> None:
        names = [str(a) for a in assets]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"assets must be a non-empty list of distinct symbols, got {excerpt(list(assets))}")
        if not (math.isfinite(initial_capital) and initial_capital > 0):
            raise ValueError(f"initial_capital must be a finite number > 0, got {excerpt(initial_capital)}")
        if not (math.isfinite(cost_bps) and cost_bps >= 0):
            raise ValueError(f"cost_bps must be a finite number >= 0, got {excerpt(cost_bps)}")
        check_choice("book_mode", book_mode, BOOK_MODES)
        if not (math.isfinite(max_gross_exposure) and max_gross_exposure > 0):
            raise ValueError(f"max_gross_exposure must be a finite number > 0, got {excerpt(max_gross_exposure)}")
        self.assets = tuple(names)
        self.initial_capital = float(initial_capital)
        self.cost_bps = float(cost_bps)
        self.book_mode = book_mode
        self.max_gross_exposure = float(max_gross_exposure)
        self.exposure_drift = exposure_drift
        n = len(names)
        self._per_asset = book_mode == "per_asset"
        books = n if self._per_asset else 1
        self._books: list[float] = [self.initial_capital] * books
        self._exposure: list[float] = [0.0] * n
        self._closed = [False] * books  # ruined books
        self.peak_equity = self.total_initial
        self.equity_curve: list[float] = [self.total_initial]
        self.step_returns: list[float] = []
        # per-book series (per_asset only): return values, the calendar positions they were realised
        # on, and the position of the book's first open day (its starting point), None until seen
        self.book_returns: list[list[float]] = [[] for _ in range(n)]
        self.book_return_days: list[list[int]] = [[] for _ in range(n)]
        self.book_start_day: list[int | None] = [None] * n
        self._book_base = list(self._books) if self._per_asset else []
        self._v_pre: float | None = None

    # ------------------------------------------------------------------------------- read-outs

    @property
    def exposure(self) -> tuple[float, ...]:
        """The exposure per asset."""
        return tuple(self._exposure)

    @property
    def books(self) -> tuple[float, ...]:
        """The equity per book (one per asset, or the shared book)."""
        return tuple(self._books)

    @property
    def equity_by_asset(self) -> tuple[float, ...]:
        """The equity each asset's exposure refers to: its own book, or the shared book."""
        return tuple(self._books) if self._per_asset else tuple(self._books) * len(self.assets)

    @property
    def total_initial(self) -> float:
        return self.initial_capital * len(self._books)

    @property
    def equity(self) -> float:
        return _total(self._books)

    @property
    def ruined(self) -> bool:
        return self.equity <= 0.0

    @property
    def cumulative_return(self) -> float:
        return self.equity / self.total_initial - 1.0

    def holdings(self, prices: Sequence[float]) -> Holdings:
        """The :class:`Holdings` at the latest closes ``prices`` (one per asset, NaN where none;
        read between an advance and the next rebalance)."""
        notional = tuple(e * w for e, w in zip(self._exposure, self.equity_by_asset))
        units = tuple(x / p if p > 0 else 0.0 for x, p in zip(notional, prices))
        return Holdings(notional, units, self.equity_curve[-1] - sum(notional))

    # ------------------------------------------------------------------------------- the day

    def trade_flow(self, targets: Sequence[float]) -> tuple[float, ...]:
        """The signed notional ``(e_new - e)·W`` per asset that moving to ``targets`` would trade."""
        target = _floats(targets, len(self.assets), "exposure")
        return tuple((t - e) * w for t, e, w in zip(target, self._exposure, self.equity_by_asset))

    def rebalance(self, targets: Sequence[float], *, is_open: Sequence[bool] | None = None,
                  impact_rate: Sequence[float] | None = None) -> Rebalance:
        """The decision at the close of ``d_k``: move to the exposures ``targets`` and pay for it.

        A closed market (``is_open`` False) keeps its exposure and pays nothing; a ruined book
        stays flat; a shared book is first scaled to ``max_gross_exposure``. Cost per asset:
        ``(cost_bps·1e-4·|Δe| + ι·Δe)·W``, ``ι`` the asset's ``impact_rate`` (default 0).
        """
        if self._v_pre is not None:
            raise RuntimeError(_TWICE)
        v_pre = _total(self._books)
        if v_pre <= 0.0:
            raise RuntimeError(_RUINED)
        n = len(self.assets)
        target = _floats(targets, n, "exposure")
        opened = _flags(is_open, n)
        impact = None if impact_rate is None else _floats(impact_rate, n, "impact rate")
        prev, books, closed = self._exposure, self._books, self._closed
        fee = self.cost_bps * 1e-4
        self._v_pre = v_pre
        cost = []
        if self._per_asset:
            exposure, after = [], []
            for j, e in enumerate(prev):
                t = 0.0 if closed[j] else (target[j] if opened[j] else e)
                delta = t - e
                rate = fee * abs(delta)
                if impact is not None:
                    rate = rate + impact[j] * delta
                c = rate * books[j]
                exposure.append(t)
                cost.append(c)
                after.append(books[j] - c)
                if opened[j] and self.book_start_day[j] is None:
                    self.book_start_day[j] = len(self.step_returns)
        else:
            exposure = _capped([t if ok else e for t, ok, e in zip(target, opened, prev)], self.max_gross_exposure)
            if closed[0]:
                exposure = [0.0] * len(exposure)
            w = book = books[0]
            for t, e in zip(exposure, prev):
                delta = t - e
                rate = fee * abs(delta)
                if impact is not None:
                    rate = rate + impact[len(cost)] * delta
                c = rate * book
                cost.append(c)
                w -= c
            after = [w]
        self._exposure, self._books = exposure, after
        return Rebalance(tuple(exposure), tuple(cost), tuple(abs(e - b) for e, b in zip(exposure, prev)))

    def advance(self, asset_returns: Sequence[float], *, is_open: Sequence[bool] | None = None) -> Advance:
        """The move to ``d_{k+1}``. ``asset_returns``: ``R_a`` against each asset's last close;
        ``is_open``: which assets trade on ``d_{k+1}`` (a closed one moves 0, whatever its return).
        A book whose equity reaches 0 is closed for good."""
        if self._v_pre is None:
            raise RuntimeError("advance called without a rebalance for the day")
        n = len(self.assets)
        opened = _flags(is_open, n)
        try:
            given = list(asset_returns)
        except TypeError:
            given = []
        if len(given) != n:
            raise ValueError(f"need one return per asset ({n}), got {excerpt(asset_returns)}")
        r = [float(x) if ok else 0.0 for x, ok in zip(given, opened)]
        if not all(math.isfinite(x) and x > -1.0 for x in r):
            raise ValueError(f"asset returns must be finite and > -1, got {excerpt(r)}")
        e, books, was_closed = self._exposure, self._books, self._closed
        drift = self.exposure_drift
        if self._per_asset:
            growth = [x * y for x, y in zip(e, r)]
            book_growth = growth
        else:  # numpy's dot, not a loop: its rounding differs from sequential products
            growth = [e[0] * r[0] if len(e) == 1 else float(np.dot(e, r))]
            book_growth = growth * len(e)
        new_books, closed, ruined = [], list(was_closed), []
        for b, (w, g) in enumerate(zip(books, growth)):
            moved = w * (1.0 + g)
            if (moved <= 0.0 or w <= 0.0) and not was_closed[b]:  # costs alone can exhaust a book
                moved = 0.0
                closed[b] = True
                ruined.append(b)
            new_books.append(moved)
        if drift:
            e = [x * (1.0 + y) / (1.0 + g) if 1.0 + g > 0 else x for x, y, g in zip(e, r, book_growth)]
        if ruined or drift:
            gone = closed if self._per_asset else closed * len(e)
            e = [0.0 if c else x for x, c in zip(e, gone)]
        self._exposure, self._books, self._closed = e, new_books, closed
        v_pre, self._v_pre = self._v_pre, None
        equity = _total(new_books)
        step = equity / v_pre - 1.0
        self.step_returns.append(step)
        self.equity_curve.append(equity)
        if equity > self.peak_equity:
            self.peak_equity = equity
        return Advance(step, equity - v_pre, equity, self._record_book_returns(opened, was_closed), tuple(ruined))

    def _record_book_returns(self, opened: list[bool], was_closed: list[bool]) -> tuple[float, ...]:
        """On each open asset's trading day after its first, ``W_a/W_a(base) - 1``, the base being
        the book's equity before the cost of its previous trading day's decision."""
        out = [math.nan] * len(self.assets)
        if not self._per_asset:
            return tuple(out)
        day = len(self.step_returns)
        books, base = self._books, self._book_base
        for a, ok in enumerate(opened):
            if not ok or was_closed[a] or self.book_start_day[a] is None:
                continue
            value = books[a] / base[a] - 1.0
            out[a] = value
            self.book_returns[a].append(value)
            self.book_return_days[a].append(day)
            base[a] = books[a]
        return tuple(out)


def step_reward(reward_type: str, advance: Advance, asset_returns: Sequence[float] | np.ndarray | None = None,
                is_open: Sequence[bool] | np.ndarray | None = None) -> float:
    """The reward of one advance: ``return`` (default) r; ``log_return`` ``log(max(1 + r,
    1e-12))``; ``pnl`` ΔW in USD; ``excess_return`` r minus the mean asset return over the assets
    that traded (0 when none did)."""
    if reward_type == "return":
        return advance.step_return
    if reward_type == "log_return":
        return math.log(max(1.0 + advance.step_return, 1e-12))
    if reward_type == "pnl":
        return advance.pnl
    if reward_type == "excess_return":
        if asset_returns is None:
            raise ValueError("excess_return needs the day's asset returns")
        r = np.asarray(asset_returns, dtype=float)
        opened = np.ones(r.size, dtype=bool) if is_open is None else np.asarray(is_open, dtype=bool)
        return advance.step_return - float(r[opened].mean()) if opened.any() else 0.0
    raise ValueError(f"reward_type must be one of {', '.join(REWARD_TYPES)}, got {excerpt(reward_type)}")
