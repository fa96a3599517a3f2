"""Positions and money (spec §4): how a signal moves an exposure, and how exposures, costs and
price moves change an agent's books.

* :class:`PositionRules` maps ``(order, e_prev) -> e_new`` under the three readings of §4.2
  (``target``, the default: HOLD keeps the exposure; ``signal``, the paper's literal formula:
  HOLD is flat; ``ladder``: BUY/SELL step by the size), with shorting on or off.
* :class:`Account` is one agent's books (one per asset, or one shared book) and runs the exact
  algorithm of §4.3: cost, then the close-to-close advance, the step return and the per-book
  returns. Each daily update costs O(assets).
* Pure helpers: asset returns from closes, the cross-agent impact rate of §4.4, the rewards of
  §7.5.

Exposure ``e`` is a signed fraction of a book's equity held from one close to the next; equity
and costs are in the account's currency (USD).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice

#: The readings of HOLD/BUY/SELL (§4.2); the first is the default.
POSITION_RULES: tuple[str, ...] = ("target", "signal", "ladder")
#: Order kinds; every other action form (discrete index, box weight, text) becomes one of these.
ORDER_KINDS: tuple[str, ...] = ("BUY", "SELL", "HOLD", "TARGET")
#: ``per_asset``: an independent book per asset (default); ``shared``: one book for all assets.
BOOK_MODES: tuple[str, ...] = ("per_asset", "shared")
#: Rewards of §7.5 built from one advance.
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


def target_orders(weights: Sequence[float] | np.ndarray) -> list[Order]:
    """Target-weight actions (the box action space, one weight per asset) as TARGET orders."""
    return [Order("TARGET", target=float(w)) for w in np.asarray(weights, dtype=float).reshape(-1)]


@dataclass(frozen=True)
class PositionRules:
    """The position rule of §4.2 with its bounds: ``lo = -max_exposure`` when shorting is allowed,
    else 0; ``hi = +max_exposure``; BUY/SELL without a size use ``default_size``."""

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
        lo, hi = self._bounds  # type: ignore[attr-defined]
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

    def apply_all(self, orders: Sequence[OrderLike], e_prev: np.ndarray,
                  is_open: np.ndarray | None = None) -> np.ndarray:
        """One order per asset; an asset whose market is closed keeps its exposure (its order is
        ignored, §4.2)."""
        prev = np.asarray(e_prev, dtype=float)
        if len(orders) != prev.size:
            raise ValueError(f"need one order per asset ({prev.size}), got {len(orders)}")
        opened = np.ones(prev.size, dtype=bool) if is_open is None else np.asarray(is_open, dtype=bool)
        return np.array([self.apply(o, p) if ok else p for o, p, ok in zip(orders, prev, opened)], dtype=float)


def is_noop(order: OrderLike, e_prev: float, e_new: float) -> bool:
    """A BUY, SELL or TARGET that leaves the exposure where it was (e.g. SELL from flat when
    shorting is off, BUY at the maximum): no cost, still counted as its kind (§4.2)."""
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
    gross = _total([abs(e) for e in exposure])
    if gross > max_gross_exposure:
        scale = max_gross_exposure / gross
        return [e * scale for e in exposure]
    return exposure


def cap_gross_exposure(exposure: np.ndarray, max_gross_exposure: float = 1.0) -> np.ndarray:
    """Shared book (§7.8): scale all exposures by ``max_gross/Σ|e|`` when ``Σ|e|`` exceeds it."""
    return np.array(_capped(np.asarray(exposure, dtype=float).reshape(-1).tolist(), max_gross_exposure))


def price_returns(closes: Sequence[float] | np.ndarray) -> np.ndarray:
    """Simple close-to-close returns ``R_k = P(d_k)/P(d_{k-1}) - 1`` (§0): n closes, n - 1 returns."""
    p = np.asarray(closes, dtype=float)
    if p.ndim != 1 or not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError("closes must be a 1-D series of finite prices > 0")
    return p[1:] / p[:-1] - 1.0


def average_dollar_volume(closes: Sequence[float] | np.ndarray, volumes: Sequence[float] | np.ndarray,
                          window: int = 20) -> float:
    """ADV of §4.4: mean of ``close·volume`` over the last ``window`` bars given (fewer if fewer)."""
    c = np.asarray(closes, dtype=float)[-window:]
    v = np.asarray(volumes, dtype=float)[-window:]
    if c.size == 0 or c.size != v.size:
        raise ValueError(f"need equally many closes and volumes (at least one), got {c.size} and {v.size}")
    return float(np.mean(c * v))


def impact_rates(flows: np.ndarray, adv: np.ndarray, kappa: float) -> np.ndarray:
    """Temporary impact rate ``ι_a = κ·F_a/ADV_a`` (§4.4) from the agents' signed trade notionals.

    ``flows``: shape (agents, assets), each row an :meth:`Account.trade_flow`. An asset with no
    dollar volume (ADV ≤ 0) gets no impact: there is nothing to scale the crowd's trade by.
    """
    if kappa < 0 or not math.isfinite(kappa):
        raise ValueError(f"price_impact must be a finite number >= 0, got {excerpt(kappa)}")
    crowd = np.atleast_2d(np.asarray(flows, dtype=float)).sum(axis=0)
    volume = np.asarray(adv, dtype=float)
    if crowd.shape != volume.shape:
        raise ValueError(f"need one ADV per asset ({crowd.size}), got {volume.size}")
    rates = np.zeros_like(crowd)
    liquid = volume > 0
    rates[liquid] = kappa * crowd[liquid] / volume[liquid]
    return rates


@dataclass(frozen=True)
class Rebalance:
    """What one decision did to an account: the exposures now held (per asset), the cost charged
    to each asset's trade (fee plus impact, negative for an impact rebate), and ``|Δe|``."""

    exposure: np.ndarray
    cost: np.ndarray
    traded: np.ndarray

    @property
    def total_cost(self) -> float:
        return float(self.cost.sum())


@dataclass(frozen=True)
class Advance:
    """One close-to-close move of an account (§4.3 steps 3-5)."""

    step_return: float  #: ``Σ W / V_pre - 1``, V_pre the equity before the decision's costs
    pnl: float  #: the change of total equity since before the decision's costs (USD)
    equity: float  #: total equity after the move
    book_returns: np.ndarray  #: per-book return per asset, NaN where none is recorded (§4.3 step 5)
    ruined: tuple[int, ...]  #: books closed for good by this move (equity reached 0)


_TWICE = "rebalance called twice without an advance in between"
_RUINED = "the account is ruined (equity 0): it takes no more decisions"


class Account:
    """One agent's books under §4.3: equity ``W`` per book, exposure ``e`` per asset.

    A day is :meth:`rebalance` (the decision on ``d_k``: exposures set, costs paid) followed by
    :meth:`advance` (the move to ``d_{k+1}``). Both cost O(assets): the books are kept as Python
    floats (numpy's per-call cost dominates at a few assets), with the same arithmetic as numpy's;
    :meth:`trade_day` is both on plain lists, without the checks (the environment's path). The
    account keeps the equity curve, the step returns and the per-book return series (with the
    calendar positions they were realised on) for the metrics; position ``i`` of the curve is the
    environment day ``d_i``.
    """

    def __init__(self, assets: Sequence[str], initial_capital: float = 100_000.0, *, cost_bps: float = 0.0,
                 book_mode: str = "per_asset", max_gross_exposure: float = 1.0,
                 exposure_drift: bool = False) -> None:
        names = [str(a) for a in assets]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"assets must be a non-empty list of distinct symbols, got {list(assets)!r}")
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
        #: book equities and exposures as Python floats (read them, never change them: the
        #: properties ``equity_by_book`` and ``exposure`` give them as arrays), ruined books
        self.books: list[float] = [self.initial_capital] * books
        self.exposures: list[float] = [0.0] * n
        self._closed = [False] * books
        self.peak_equity = self.total_initial
        self.equity_curve: list[float] = [self.total_initial]
        self.step_returns: list[float] = []
        # per-book series (per_asset only): return values, the calendar positions they were realised
        # on, and the position of the book's first open day (its starting point), None until seen
        self.book_returns: list[list[float]] = [[] for _ in range(n)]
        self.book_return_days: list[list[int]] = [[] for _ in range(n)]
        self.book_start_day: list[int | None] = [None] * n
        self._book_base = list(self.books) if self._per_asset else []
        self._v_pre: float | None = None

    # ------------------------------------------------------------------------------- read-outs

    @property
    def equity_by_book(self) -> np.ndarray:
        return np.array(self.books)

    @property
    def exposure(self) -> np.ndarray:
        return np.array(self.exposures)

    @property
    def closed(self) -> np.ndarray:
        return np.array(self._closed, dtype=bool)

    @property
    def total_initial(self) -> float:
        return self.initial_capital * len(self.books)

    @property
    def equity(self) -> float:
        return _total(self.books)

    @property
    def day(self) -> int:
        """Calendar position of the last close the account has moved to (0 before any advance)."""
        return len(self.step_returns)

    @property
    def ruined(self) -> bool:
        return self.equity <= 0.0

    @property
    def cumulative_return(self) -> float:
        return self.equity / self.total_initial - 1.0

    def return_since(self, day: int) -> float:
        """Total return from the close of calendar position ``day`` (e.g. the eval start) to now."""
        return self.equity / self.equity_curve[day] - 1.0

    @property
    def drawdown(self) -> float:
        """Current drawdown from the equity peak (start included), a fraction ≥ 0."""
        return 1.0 - self.equity / self.peak_equity

    def book_values(self) -> list[float]:
        """Equity each asset's exposure refers to (its own book, or the shared book), as floats."""
        return list(self.books) if self._per_asset else self.books * len(self.assets)

    def book_equity_per_asset(self) -> np.ndarray:
        """Equity each asset's exposure refers to: its own book, or the shared book for every asset."""
        return np.array(self.book_values())

    def holdings(self, prices: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Display quantities of §4.3 at the latest closes ``prices`` (one per asset): units per
        asset ``e·W/P`` and implied cash per book ``W - Σ units·P`` (above W for a short)."""
        p = np.asarray(prices, dtype=float)
        if p.shape != (len(self.assets),) or not np.all(p > 0):
            raise ValueError(f"need one price > 0 per asset ({len(self.assets)}), got {list(p)!r}")
        units = self.exposure * self.book_equity_per_asset() / p
        if self._per_asset:
            return units, self.equity_by_book - units * p
        return units, self.equity_by_book - float((units * p).sum())

    # ------------------------------------------------------------------------------- the day

    def trade_flow(self, new_exposure: Sequence[float] | np.ndarray) -> np.ndarray:
        """Signed notional ``(e_new - e)·W`` per asset this decision would trade (§4.4's F terms)."""
        target = self._checked_exposure(new_exposure)
        return (target - self.exposure) * self.book_equity_per_asset()

    def rebalance(self, new_exposure: Sequence[float] | np.ndarray, *, is_open: np.ndarray | None = None,
                  impact_rate: np.ndarray | None = None) -> Rebalance:
        """The decision on ``d_k`` (§4.3 steps 1-2): move to ``new_exposure`` and pay for it.

        A closed market keeps its exposure and pays nothing; a ruined book stays flat; a shared
        book is first scaled to ``max_gross_exposure``. Cost per asset:
        ``(cost_bps·1e-4·|Δe| + ι·Δe)·W``.
        """
        self._check_rebalance()
        target = self._checked_exposure(new_exposure)
        opened = np.ones(target.size, dtype=bool) if is_open is None else np.asarray(is_open, dtype=bool)
        if opened.shape != target.shape:
            raise ValueError(f"need one is_open flag per asset ({target.size}), got {opened.size}")
        impact = None
        if impact_rate is not None:
            rates = np.asarray(impact_rate, dtype=float)
            if rates.shape != target.shape or not np.all(np.isfinite(rates)):
                raise ValueError(f"need one finite impact rate per asset ({target.size}), got {list(rates.ravel())!r}")
            impact = rates.tolist()
        before = self.exposures
        cost = self._rebalance(target.tolist(), opened.tolist(), impact)
        return Rebalance(exposure=np.array(self.exposures), cost=np.array(cost),
                         traded=np.array([abs(e - b) for e, b in zip(self.exposures, before)]))

    def advance(self, asset_returns: Sequence[float] | np.ndarray, is_open: np.ndarray | None = None) -> Advance:
        """The move to ``d_{k+1}`` (§4.3 steps 3-5). ``asset_returns``: ``R_a`` against each asset's
        last close; ``is_open``: which assets trade on ``d_{k+1}`` (a closed one moves 0)."""
        if self._v_pre is None:
            raise RuntimeError("advance called without a rebalance for the day")
        r = np.asarray(asset_returns, dtype=float)
        opened = np.ones(r.size, dtype=bool) if is_open is None else np.asarray(is_open, dtype=bool)
        if r.shape != (len(self.assets),) or opened.shape != r.shape:
            raise ValueError(f"need one return and one is_open flag per asset ({len(self.assets)})")
        r = np.where(opened, r, 0.0)
        if not np.all(np.isfinite(r)) or np.any(r <= -1.0):
            raise ValueError(f"asset returns must be finite and > -1, got {list(r)!r}")
        step, pnl, equity, book_returns, ruined = self._advance(r.tolist(), opened.tolist())
        return Advance(step_return=step, pnl=pnl, equity=equity, book_returns=np.array(book_returns),
                       ruined=ruined)

    def trade_day(self, targets: list[float], tradable: list[bool], returns: list[float], opened: list[bool],
                  impact: list[float] | None = None) -> tuple[list[float], float, float, float, float]:
        """:meth:`rebalance` then :meth:`advance` on lists (one value per asset) that the caller has
        checked (finite targets and impact rates, returns > -1 where open): (exposures after the
        decision, its total cost, step return, P&L, equity)."""
        if self._v_pre is not None:
            raise RuntimeError(_TWICE)
        cost = self._rebalance(targets, tradable, impact)  # checks the ruin itself
        exposure = self.exposures
        step, pnl, equity, _, _ = self._advance([x if ok else 0.0 for x, ok in zip(returns, opened)], opened)
        return exposure, _total(cost), step, pnl, equity

    # ------------------------------------------------------------------------------- internals

    def _check_rebalance(self) -> None:
        """The errors :meth:`rebalance` raises before it reads its arguments."""
        if self._v_pre is not None:
            raise RuntimeError(_TWICE)
        if _total(self.books) <= 0.0:
            raise RuntimeError(_RUINED)

    def _rebalance(self, target: list[float], opened: list[bool], impact: list[float] | None) -> list[float]:
        """§4.3 steps 1-2 on checked lists; the cost per asset."""
        prev, books, closed = self.exposures, self.books, self._closed
        fee = self.cost_bps * 1e-4
        v_pre = _total(books)
        if v_pre <= 0.0:
            raise RuntimeError(_RUINED)
        self._v_pre = v_pre
        cost = []
        if self._per_asset:
            exposures, after = [], []
            for j, e in enumerate(prev):
                t = 0.0 if closed[j] else (target[j] if opened[j] else e)
                delta = t - e
                rate = fee * abs(delta)
                if impact is not None:
                    rate = rate + impact[j] * delta
                c = rate * books[j]
                exposures.append(t)
                cost.append(c)
                after.append(books[j] - c)
                if opened[j] and self.book_start_day[j] is None:
                    self.book_start_day[j] = len(self.step_returns)
            self.exposures, self.books = exposures, after
            return cost
        exposures = _capped([t if ok else e for t, ok, e in zip(target, opened, prev)], self.max_gross_exposure)
        if closed[0]:
            exposures = [0.0] * len(exposures)
        w = book = books[0]
        for t, e in zip(exposures, prev):
            delta = t - e
            rate = fee * abs(delta)
            if impact is not None:
                rate = rate + impact[len(cost)] * delta
            c = rate * book
            cost.append(c)
            w -= c
        self.exposures, self.books = exposures, [w]
        return cost

    def _advance(self, r: list[float], opened: list[bool]) -> tuple[float, float, float, list[float], tuple[int, ...]]:
        """§4.3 steps 3-5 on checked lists (``r`` already 0 where closed)."""
        e, books, was_closed = self.exposures, self.books, self._closed
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
        self.exposures, self.books, self._closed = e, new_books, closed
        v_pre, self._v_pre = self._v_pre, None
        assert v_pre is not None
        equity = _total(new_books)
        step = equity / v_pre - 1.0
        self.step_returns.append(step)
        self.equity_curve.append(equity)
        if equity > self.peak_equity:
            self.peak_equity = equity
        return step, equity - v_pre, equity, self._record_book_returns(opened, was_closed), tuple(ruined)

    def _checked_exposure(self, new_exposure: Sequence[float] | np.ndarray) -> np.ndarray:
        e = np.asarray(new_exposure, dtype=float).reshape(-1)
        if e.shape != (len(self.assets),) or not np.all(np.isfinite(e)):
            raise ValueError(f"need one finite exposure per asset ({len(self.assets)}), got {list(e)!r}")
        return e

    def _record_book_returns(self, opened: list[bool], was_closed: list[bool]) -> list[float]:
        """§4.3 step 5: on each open asset's trading day after its first, ``W_a/W_a(base) - 1``,
        the base being the book's equity before the cost of its previous trading day's decision."""
        out = [math.nan] * len(self.assets)
        if not self._per_asset:
            return out
        day = self.day
        books, base = self.books, self._book_base
        for a, ok in enumerate(opened):
            if not ok or was_closed[a] or self.book_start_day[a] is None:
                continue
            value = books[a] / base[a] - 1.0
            out[a] = value
            self.book_returns[a].append(value)
            self.book_return_days[a].append(day)
            base[a] = books[a]
        return out


def step_reward(reward_type: str, advance: Advance, asset_returns: Sequence[float] | np.ndarray | None = None,
                is_open: np.ndarray | None = None) -> float:
    """The reward of §7.5 for one advance: ``return`` (default) r; ``log_return``
    ``log(max(1 + r, 1e-12))``; ``pnl`` ΔW in USD; ``excess_return`` r minus the mean asset
    return over the assets that traded (0 when none did)."""
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
