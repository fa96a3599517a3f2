"""One decision day of the trading game, without PettingZoo.

Every live agent has given one order per asset, unseen by the others; :func:`resolve_day` applies
them at once, at the day's close:

1. each order becomes a target exposure under the :class:`~arena_envs.trading.accounting.PositionRules`;
   an asset whose market does not take orders today keeps its exposure (a non-HOLD order on it is
   ignored and counted as HOLD);
2. with price impact ``κ > 0``, the crowd's net trade per asset sets one impact rate
   ``κ·F_a/ADV_a`` that every trader of the asset pays (or earns, trading against the crowd);
3. each account pays its costs and moves to the next trading day's close;
4. each agent's reward is its step reward (``reward_type``), 0 on a day that is not rewarded.

The accounts are the books: :func:`resolve_day` changes them, nothing else. It returns one
:class:`Fill` per agent; :func:`book_decisions` turns an agent's log of :class:`Taken` days into
the per-book decisions the behavioural statistics read.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from arena_envs.trading.accounting import Account, OrderLike, PositionRules, impact_rates, is_noop, step_reward
from arena_envs.trading.metrics import Decision


class DayRules(NamedTuple):
    """The settings of every day: the position rule, the step reward, the impact factor ``κ``."""

    position: PositionRules
    reward_type: str = "return"
    price_impact: float = 0.0


class MarketMove(NamedTuple):
    """The market's side of one day, one value per asset: which assets take orders today, each
    asset's return from its last close to the next trading day's close and which assets trade on
    that day (a closed one moves 0), the average dollar volumes (read only with price impact), and
    whether the day's step is rewarded (not in an unrewarded warm-up)."""

    tradable: tuple[bool, ...]
    returns: tuple[float, ...]
    opened: tuple[bool, ...]
    adv: tuple[float, ...] = ()
    rewarded: bool = True


class Fill(NamedTuple):
    """What one day did to one agent."""

    kinds: tuple[str, ...]  #: the order kind applied per asset (HOLD where the order was ignored)
    noops: tuple[bool, ...]  #: per asset: a BUY, SELL or TARGET that left the exposure where it was
    ignored: tuple[str, ...]  #: the assets whose non-HOLD order was ignored (no orders taken today)
    before: tuple[float, ...]  #: exposures before the decision
    after: tuple[float, ...]  #: exposures the decision set, held to the next close
    cost: float  #: fees plus impact paid (USD, negative for a net rebate)
    step_return: float
    pnl: float  #: the change of equity over the day (USD)
    equity: float  #: equity at the next close
    reward: float

    @property
    def noop(self) -> bool:
        return any(self.noops)


class Taken(NamedTuple):
    """One day an agent decided, as the metrics read it: the market row of the decision, its
    :class:`Fill`, and whether the orders were the fallback of an invalid answer."""

    row: int
    fill: Fill
    invalid: bool


def crowd_impact(accounts: Sequence[Account], targets: Sequence[Sequence[float]], market: MarketMove,
                 kappa: float) -> list[float]:
    """The impact rate per asset when ``accounts`` move to ``targets`` (0 where no orders are taken)."""
    flows = np.array([account.trade_flow(target) for account, target in zip(accounts, targets)])
    rates = impact_rates(flows, np.array(market.adv), kappa) * np.array(market.tradable, dtype=bool)
    return rates.tolist()  # type: ignore[no-any-return]


def resolve_day(accounts: Mapping[str, Account], orders: Mapping[str, Sequence[OrderLike]], market: MarketMove,
                rules: DayRules) -> dict[str, Fill]:
    """Apply the day's ``orders`` (per agent, one per asset) to the agents' ``accounts``; the
    :class:`Fill` per agent, in the order of ``orders``."""
    agents = list(orders)
    tradable = market.tradable
    apply_all = rules.position.apply_all
    targets = {a: apply_all(orders[a], accounts[a].exposure, tradable) for a in agents}
    rates = None
    if rules.price_impact > 0:  # the crowd's flows: every target first
        rates = crowd_impact([accounts[a] for a in agents], [targets[a] for a in agents], market, rules.price_impact)
    return {a: _fill(accounts[a], orders[a], targets[a], rates, market, rules.reward_type) for a in agents}


def _fill(account: Account, orders: Sequence[OrderLike], targets: list[float], rates: list[float] | None,
          market: MarketMove, reward_type: str) -> Fill:
    before = account.exposure
    rebalance = account.rebalance(targets, is_open=market.tradable, impact_rate=rates)
    advance = account.advance(market.returns, is_open=market.opened)
    reward = step_reward(reward_type, advance, market.returns, market.opened) if market.rewarded else 0.0
    after = rebalance.exposure
    kinds, noops, ignored = [], [], []
    for j, order in enumerate(orders):
        if market.tradable[j]:
            kinds.append(order.kind)
            noops.append(is_noop(order, before[j], after[j]))
        else:
            if order.kind != "HOLD":
                ignored.append(account.assets[j])
            kinds.append("HOLD")
            noops.append(False)
    return Fill(tuple(kinds), tuple(noops), tuple(ignored), before, after, rebalance.total_cost, advance.step_return,
                advance.pnl, advance.equity, reward)


def book_decisions(log: Sequence[Taken], asset_returns: np.ndarray) -> tuple[list[Decision], list[float]]:
    """An agent's decisions book by book (every day of the first asset, then of the next...), and
    the return each held exposure realised (``asset_returns[row + 1, j]``, rows of the market)."""
    n = asset_returns.shape[1]
    flat = [Decision(t.fill.kinds[j], t.fill.before[j], t.fill.after[j], t.invalid, t.fill.noops[j], t.invalid)
            for j in range(n) for t in log]
    held = [t.fill.after[j] * float(asset_returns[t.row + 1, j]) for j in range(n) for t in log]
    return flat, held
