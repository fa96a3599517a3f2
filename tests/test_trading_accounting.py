"""Positions and accounting of the trading game: the position rules, the books' daily algorithm
(cost, then the close-to-close move, the step and per-book returns), costs and price impact, the
step rewards, worked examples on a six-day series, and buy-and-hold on the real S&P 500 closes."""
from __future__ import annotations

import datetime as dt
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_envs.trading.accounting import (
    HOLD,
    Account,
    Order,
    PositionRules,
    impact_rates,
    is_noop,
    price_returns,
    step_reward,
)
from arena_envs.trading.features import AssetHistory
from arena_envs.trading.metrics import cumulative_return, five_metrics, window_returns

BUY, SELL = Order("BUY"), Order("SELL")
F1_DAYS = ["2025-08-01", "2025-08-04", "2025-08-05", "2025-08-06", "2025-08-07", "2025-08-08"]
F1_CLOSES = [100.0, 110.0, 121.0, 108.9, 108.9, 119.79]
RULES = ("target", "signal", "ladder")


def run_book(orders, closes=F1_CLOSES, rules=None, **account_kwargs):
    """One agent, one asset: decide on each day but the last, then advance. Returns the account,
    the exposures after each decision, the rebalances and the advances."""
    rules = rules or PositionRules()
    account = Account(["FIX"], **account_kwargs)
    asset_returns = price_returns(closes)
    exposures, rebalances, advances = [], [], []
    for order, r in zip(orders, asset_returns, strict=True):
        e_new = rules.apply(order, account.exposure[0])
        rebalances.append(account.rebalance([e_new]))
        exposures.append(account.exposure[0])
        advances.append(account.advance([r]))
    return account, exposures, rebalances, advances


# ---------------------------------------------------------------------------------------------- position rules


@pytest.mark.parametrize(("rule", "order", "e_prev", "expected"), [
    ("target", BUY, -1.0, 1.0), ("target", SELL, 1.0, -1.0), ("target", HOLD, 0.4, 0.4),
    ("signal", BUY, 0.0, 1.0), ("signal", SELL, 0.0, -1.0), ("signal", HOLD, 0.4, 0.0),
    ("ladder", BUY, 0.0, 1.0), ("ladder", BUY, 0.5, 1.0), ("ladder", SELL, 0.0, -1.0),
    ("ladder", HOLD, 0.4, 0.4), ("ladder", Order("SELL", size=0.25), 0.5, 0.25),
    ("target", Order("BUY", size=0.3), -1.0, 0.3), ("signal", Order("SELL", size=0.5), 1.0, -0.5),
    ("target", Order("TARGET", target=-0.5), 1.0, -0.5), ("ladder", Order("TARGET", target=2.0), 0.0, 1.0),
    ("signal", Order("TARGET", target=-3.0), 0.0, -1.0),
])
def test_position_rule_table(rule, order, e_prev, expected):
    assert PositionRules(rule).apply(order, e_prev) == expected


@pytest.mark.parametrize("rule", RULES)
def test_long_only_clips_at_zero_and_max_exposure_bounds(rule):
    long_only = PositionRules(rule, allow_short=False)
    assert long_only.bounds == (0.0, 1.0)
    assert long_only.apply(SELL, 0.0) == 0.0
    assert long_only.apply(Order("TARGET", target=-0.7), 0.5) == 0.0
    half = PositionRules(rule, max_exposure=0.5)
    assert half.bounds == (-0.5, 0.5)
    assert half.apply(BUY, 0.0) == 0.5
    assert half.apply(SELL, 0.0) == -0.5
    assert PositionRules(rule, default_size=0.2).apply(BUY, 0.0) == 0.2


def test_size_zero_means_flat_under_target_and_signal_and_noop_under_ladder():
    assert PositionRules("target").apply(Order("BUY", size=0.0), 0.7) == 0.0
    assert PositionRules("signal").apply(Order("SELL", size=0.0), -0.7) == 0.0
    order = Order("BUY", size=0.0)
    assert PositionRules("ladder").apply(order, 0.7) == 0.7
    assert is_noop(order, 0.7, 0.7)


def test_noops_and_hold():
    assert is_noop(BUY, 1.0, PositionRules().apply(BUY, 1.0))  # BUY at +max_exposure
    assert is_noop(SELL, 0.0, PositionRules(allow_short=False).apply(SELL, 0.0))
    assert not is_noop(HOLD, 0.5, 0.5)  # HOLD is HOLD, not a no-op
    assert not is_noop(SELL, 0.0, -1.0)


def test_apply_all_ignores_closed_markets_and_clips_targets():
    rules = PositionRules()
    e = rules.apply_all([BUY, SELL, Order("TARGET", target=0.3)], (0.0, 0.5, 0.0), is_open=(True, False, True))
    assert e == [1.0, 0.5, 0.3]
    assert rules.apply_all([Order("TARGET", target=2.0), Order("TARGET", target=-0.25)], (0.0, 0.0)) == [1.0, -0.25]
    with pytest.raises(ValueError, match="one order"):
        rules.apply_all([BUY], (0.0, 0.0))
    with pytest.raises(ValueError, match="is_open flag"):
        rules.apply_all([BUY], (0.0,), is_open=(True, False))


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Order("buy"), "order kind"),
    (lambda: Order("BUY", size=1.5), "order size"),
    (lambda: Order("HOLD", size=0.5), "a size goes with BUY or SELL"),
    (lambda: Order("TARGET"), "TARGET needs a finite target"),
    (lambda: Order("TARGET", target=float("nan")), "TARGET needs a finite target"),
    (lambda: Order("BUY", target=0.5), "a target goes with TARGET only"),
    (lambda: PositionRules().apply(SimpleNamespace(kind="buy", size=None, target=None), 0.0), "order kind"),
    (lambda: PositionRules().apply(SimpleNamespace(kind="SELL", size=2.0, target=None), 0.0), "order size"),
    (lambda: PositionRules("hold_flat"), "position_rule"),
    (lambda: PositionRules(max_exposure=1.5), "max_exposure"),
    (lambda: PositionRules(default_size=0.0), "default_size"),
    (lambda: Account([]), "assets"),
    (lambda: Account(["A", "A"]), "assets"),
    (lambda: Account(["A"], initial_capital=0.0), "initial_capital"),
    (lambda: Account(["A"], cost_bps=-1.0), "cost_bps"),
    (lambda: Account(["A"], book_mode="pooled"), "book_mode"),
    (lambda: price_returns([100.0, 0.0]), "closes"),
    (lambda: impact_rates(np.zeros((2, 1)), np.ones(1), -0.1), "price_impact"),
])
def test_bad_input_gives_one_clear_line(make, message):
    with pytest.raises(ValueError, match=message) as info:
        make()
    assert "\n" not in str(info.value)


def test_account_call_order_and_shapes_are_checked():
    account = Account(["A"])
    with pytest.raises(RuntimeError, match="without a rebalance"):
        account.advance([0.1])
    for bad in ([1.0, 0.0], [math.nan], ["x"], 3.0):
        with pytest.raises(ValueError, match="one finite exposure per asset"):
            account.rebalance(bad)
    with pytest.raises(ValueError, match="is_open flag"):
        account.rebalance([1.0], is_open=[True, True])
    account.rebalance([1.0])
    with pytest.raises(RuntimeError, match="twice"):
        account.rebalance([1.0])
    with pytest.raises(ValueError, match="finite and > -1"):
        account.advance([-1.5])
    with pytest.raises(ValueError, match="one return per asset"):
        account.advance([0.1, 0.2])
    assert account.advance([math.inf], is_open=[False]).step_return == 0.0  # a closed market moves 0
    with pytest.raises(ValueError, match="one finite impact rate per asset"):
        Account(["A", "B"]).rebalance([1.0, 0.0], impact_rate=np.zeros(3))
    with pytest.raises(ValueError, match="one finite exposure per asset"):
        Account(["A", "B"]).trade_flow([1.0])


def test_costs_that_exhaust_a_book_ruin_it_even_if_a_short_then_gains():
    account = Account(["A"], initial_capital=100.0, cost_bps=6000)  # 60 % of the traded notional
    account.rebalance([1.0])
    account.advance([0.0])
    assert account.equity == pytest.approx(40.0)
    account.rebalance([-1.0])  # the flip trades 2 × 40 and costs 48: equity -8
    assert account.equity == pytest.approx(-8.0)
    advance = account.advance([1.5])  # -8 × (1 - 1.5) would be +4: a dead book must not revive
    assert advance.ruined == (0,) and account.equity == 0.0 and account.ruined


# ---------------------------------------------------------------------------------------------- worked examples on F1


def test_f1_asset_returns():
    assert price_returns(F1_CLOSES) == pytest.approx([0.1, 0.1, -0.1, 0.0, 0.1], abs=1e-12)


@pytest.mark.parametrize("rule", RULES)
def test_buy_and_hold_every_rule(rule):
    account, exposures, _, advances = run_book([BUY] * 5, rules=PositionRules(rule))
    assert exposures == [1.0] * 5
    m = five_metrics(account.step_returns)
    assert m.cr == pytest.approx(0.1979, abs=1e-9)
    assert m.cr == pytest.approx(F1_CLOSES[-1] / F1_CLOSES[0] - 1, abs=1e-9)
    assert m.av == pytest.approx(1.4198591479, abs=1e-9)
    assert m.sr == pytest.approx(7.0992957397, abs=1e-9)
    assert m.mdd == pytest.approx(0.1, abs=1e-9)
    assert account.equity == pytest.approx(119790.0, abs=1e-6)
    assert advances[-1].equity == account.equity
    assert account.equity / account.equity_curve[2] - 1 == pytest.approx(F1_CLOSES[-1] / F1_CLOSES[2] - 1, abs=1e-12)
    assert account.peak_equity == pytest.approx(121000.0, abs=1e-6)
    assert account.cumulative_return == pytest.approx(0.1979, abs=1e-9)


def test_rules_take_any_object_with_the_order_fields():
    parsed = SimpleNamespace(kind="SELL", size=0.5, target=None, symbol="FIX", meta={})
    assert PositionRules("ladder").apply(parsed, 1.0) == 0.5


def test_target_buy_then_hold_is_buy_and_hold():
    account, exposures, _, _ = run_book([BUY] + [HOLD] * 4)
    assert exposures == [1.0] * 5
    assert cumulative_return(account.step_returns) == pytest.approx(0.1979, abs=1e-9)


def test_always_sell_is_not_minus_buy_and_hold():
    account, exposures, _, _ = run_book([SELL] * 5)
    assert exposures == [-1.0] * 5
    m = five_metrics(account.step_returns)
    expected = math.prod(1 - r for r in [0.1, 0.1, -0.1, 0.0, 0.1]) - 1
    assert m.cr == pytest.approx(expected, abs=1e-9)
    assert m.cr == pytest.approx(-0.1981, abs=1e-9)
    assert m.mdd == pytest.approx(0.1981, abs=1e-9)
    assert m.sr == pytest.approx(-7.0992957397, abs=1e-9)


@pytest.mark.parametrize(("rule", "allow_short", "exposures", "cr"), [
    ("target", True, [1, 1, -1, -1, 1], 0.4641),
    ("signal", True, [1, 0, -1, 0, 1], 0.331),
    ("ladder", True, [1, 1, 0, 0, 1], 0.331),
    ("target", False, [1, 1, 0, 0, 1], 0.331),
])
def test_mixed_actions(rule, allow_short, exposures, cr):
    account, got, _, _ = run_book([BUY, HOLD, SELL, HOLD, BUY], rules=PositionRules(rule, allow_short=allow_short))
    assert got == exposures
    m = five_metrics(account.step_returns)
    assert m.cr == pytest.approx(cr, abs=1e-9)
    if rule == "target" and allow_short:
        assert m.mdd == 0.0


def test_sell_from_flat():
    rules = PositionRules(allow_short=False)
    account = Account(["FIX"], cost_bps=10)
    e_new = rules.apply(SELL, 0.0)
    assert e_new == 0.0 and is_noop(SELL, 0.0, e_new)
    rebalance = account.rebalance([e_new])
    assert rebalance.total_cost == 0.0
    assert account.advance([0.1]).step_return == 0.0
    assert PositionRules(allow_short=True).apply(SELL, 0.0) == -1.0


@pytest.mark.parametrize("rule", RULES)
def test_always_hold(rule):
    account, exposures, _, advances = run_book([HOLD] * 5, rules=PositionRules(rule))
    assert exposures == [0.0] * 5
    assert [a.step_return for a in advances] == [0.0] * 5
    m = five_metrics(account.step_returns)
    assert (m.cr, m.av, m.mdd) == (0.0, 0.0, 0.0)
    assert math.isnan(m.sr)


def test_costs():
    account, _, rebalances, advances = run_book([BUY, SELL], closes=F1_CLOSES[:3], cost_bps=10,
                                                initial_capital=100000)
    assert rebalances[0].total_cost == pytest.approx(100.0, abs=1e-9)
    assert account.equity_curve[1] == pytest.approx(109890.0, abs=1e-9)
    assert advances[0].step_return == pytest.approx(0.0989, abs=1e-9)
    assert rebalances[1].total_cost == pytest.approx(219.78, abs=1e-9)
    assert rebalances[1].traded == (2.0,)


def test_rewards():
    _, _, _, advances = run_book([BUY] * 5)
    logs = [step_reward("log_return", a) for a in advances]
    assert sum(logs) == pytest.approx(math.log(1.1979), abs=1e-9)
    assert sum(logs) == pytest.approx(0.18057002375514825, abs=1e-9)
    plain = [step_reward("return", a) for a in advances]
    assert math.prod(1 + r for r in plain) - 1 == pytest.approx(0.1979, abs=1e-9)
    assert sum(step_reward("pnl", a) for a in advances) == pytest.approx(19790.0, abs=1e-6)


def test_excess_return_and_unknown_reward():
    account = Account(["A", "B"])
    account.rebalance([1.0, 0.0])
    advance = account.advance([0.1, 0.3], is_open=np.array([True, True]))
    assert advance.step_return == pytest.approx(0.05)
    assert step_reward("excess_return", advance, [0.1, 0.3]) == pytest.approx(0.05 - 0.2)
    assert step_reward("excess_return", advance, [0.1, 0.3], np.array([True, False])) == pytest.approx(-0.05)
    assert step_reward("excess_return", advance, [0.1, 0.3], np.array([False, False])) == 0.0
    account.rebalance([0.0, 0.0])
    assert step_reward("log_return", account.advance([0.2, 0.1])) == 0.0
    with pytest.raises(ValueError, match="reward_type"):
        step_reward("sharpe", advance)


# ---------------------------------------------------------------------------------------------- the books in detail


def test_holdings_notional_units_and_cash():
    account = Account(["A", "B", "C"], initial_capital=1000.0)
    account.rebalance([1.0, -0.5, 0.5])
    account.advance([0.0, 0.0, 0.0])
    held = account.holdings([50.0, 20.0, math.nan])  # C has no price yet
    assert held.notional == (1000.0, -500.0, 500.0)
    assert held.units == (20.0, -25.0, 0.0)
    assert held.cash == 3000.0 - 1000.0  # a short's cash exceeds its book's equity
    shared = Account(["A", "B"], initial_capital=1000.0, book_mode="shared")
    shared.rebalance([0.5, -0.25])
    shared.advance([0.1, 0.0])
    assert shared.equity_by_asset == (1050.0, 1050.0) and shared.books == (1050.0,)
    held = shared.holdings([55.0, 20.0])
    assert held.notional == (525.0, -262.5)
    assert held.units == (525.0 / 55.0, -13.125)
    assert held.cash == 1050.0 - 262.5


def test_ruin_closes_the_book_for_good():
    account = Account(["A", "B"], initial_capital=100.0)
    account.rebalance([-1.0, 1.0])
    advance = account.advance([1.5, 0.1])  # the short loses 150 %: equity would be -50
    assert advance.ruined == (0,)
    assert account.books == pytest.approx((0.0, 110.0))
    assert account.exposure == (0.0, 1.0)
    assert advance.book_returns[0] == -1.0
    assert advance.step_return == pytest.approx(110.0 / 200.0 - 1)
    rebalance = account.rebalance([1.0, 1.0])  # the ruined book cannot reopen
    assert rebalance.exposure == (0.0, 1.0)
    after = account.advance([0.2, 0.0])
    assert math.isnan(after.book_returns[0]) and after.ruined == ()
    assert account.book_returns[0] == [-1.0]
    solo = Account(["A"])
    solo.rebalance([-1.0])
    solo.advance([1.0])  # the price doubles under a full short
    assert solo.ruined and solo.equity == 0.0 and solo.equity_curve[-1] == 0.0
    with pytest.raises(RuntimeError, match="ruined"):
        solo.rebalance([0.0])


def test_exposure_drift_holds_units_fixed():
    closes = [100.0, 90.0, 120.0, 60.0, 75.0]
    account = Account(["A"], initial_capital=1000.0, exposure_drift=True)
    account.rebalance([-0.5])
    units = -0.5 * 1000.0 / closes[0]
    cash = 1000.0 - units * closes[0]
    for k, r in enumerate(price_returns(closes), start=1):
        account.advance([r])
        assert account.equity == pytest.approx(cash + units * closes[k], rel=1e-12)
        assert account.holdings([closes[k]]).units[0] == pytest.approx(units, rel=1e-12)
        account.rebalance(account.exposure)  # HOLD: keep the drifted exposure, no trade
    constant = Account(["A"], initial_capital=1000.0)
    constant.rebalance([-0.5])
    constant.advance([0.2])
    assert constant.exposure[0] == -0.5  # the default rebalances to a constant exposure


def test_closed_market_keeps_exposure_and_pays_nothing():
    account = Account(["S", "C"], cost_bps=10)
    rebalance = account.rebalance([1.0, 1.0], is_open=np.array([False, True]))
    assert rebalance.exposure == (0.0, 1.0)
    assert rebalance.cost[0] == 0.0 and rebalance.cost[1] == pytest.approx(100.0)
    advance = account.advance([0.5, 0.1], is_open=np.array([False, True]))  # a closed asset moves 0
    assert account.books[0] == 100000.0
    assert math.isnan(advance.book_returns[0])


def test_per_book_calendars():
    """A stock and a crypto asset on the union calendar 2025-08-01 (Fri) … 08-12: the stock's
    order on Saturday is ignored, its Monday return is Friday's exposure times P(Mon)/P(Fri) − 1,
    and the per-book series have 7 and 11 returns."""
    days = [dt.date(2025, 8, 1) + dt.timedelta(days=i) for i in range(12)]
    stock_open = np.array([d.weekday() < 5 for d in days])
    rng = np.random.default_rng(0)
    crypto = 100 * np.cumprod(1 + rng.normal(0, 0.03, len(days)))
    stock_trading = 50 * np.cumprod(1 + rng.normal(0, 0.02, int(stock_open.sum())))
    stock_last = np.empty(len(days))  # last close at or before each day
    stock_last[stock_open] = stock_trading
    for i in range(1, len(days)):
        if not stock_open[i]:
            stock_last[i] = stock_last[i - 1]
    rules = PositionRules()
    account = Account(["SYS", "SYC"])
    plan = {0: [Order("BUY", size=0.5), BUY], 1: [BUY, SELL], 3: [SELL, HOLD], 5: [HOLD, BUY]}
    for k in range(len(days) - 1):
        is_open = np.array([stock_open[k], True])
        orders = plan.get(k, [HOLD, HOLD])
        rebalance = account.rebalance(rules.apply_all(orders, account.exposure, is_open), is_open=is_open)
        if k == 1:  # Saturday 2025-08-02: the stock's BUY is ignored
            assert rebalance.exposure[0] == 0.5 and rebalance.cost[0] == 0.0
        asset_r = [stock_last[k + 1] / stock_last[k] - 1, crypto[k + 1] / crypto[k] - 1]
        advance = account.advance(asset_r, is_open=np.array([stock_open[k + 1], True]))
        if days[k + 1] == dt.date(2025, 8, 4):
            assert advance.book_returns[0] == pytest.approx(0.5 * (stock_last[k + 1] / stock_last[0] - 1), abs=1e-12)
    assert len(account.book_returns[0]) == 7 and len(account.book_returns[1]) == 11
    assert [days[i] for i in account.book_return_days[0]] == [d for d in days[1:] if d.weekday() < 5]
    assert account.book_start_day == [0, 0]
    for a in range(2):
        assert math.prod(1 + r for r in account.book_returns[a]) == pytest.approx(
            account.books[a] / account.initial_capital, rel=1e-12)


def test_book_starting_on_a_closed_day_has_no_return_for_its_first_open_day():
    account = Account(["S"])
    opened = [False, False, True, True]  # Sat, Sun, Mon, Tue
    for k in range(3):
        account.rebalance([1.0], is_open=np.array([opened[k]]))
        account.advance([0.01], is_open=np.array([opened[k + 1]]))
    assert account.book_start_day == [2]
    assert account.book_return_days[0] == [3]
    assert account.book_returns[0] == pytest.approx([0.01])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_products_of_returns_equal_equity_ratios(data):
    """∏(1 + r) = W_end/W_start for the step returns and for each book's own series, with costs,
    impact, closed days, drift, both book modes and every rule."""
    n_assets = data.draw(st.integers(1, 3))
    n_days = data.draw(st.integers(1, 25))
    mode = data.draw(st.sampled_from(["per_asset", "shared"]))
    rules = PositionRules(data.draw(st.sampled_from(RULES)), allow_short=data.draw(st.booleans()))
    account = Account([f"A{i}" for i in range(n_assets)], cost_bps=data.draw(st.sampled_from([0.0, 10.0, 50.0])),
                      book_mode=mode, exposure_drift=data.draw(st.booleans()), max_gross_exposure=1.0)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    kinds = ["BUY", "SELL", "HOLD", "TARGET"]
    is_open = np.ones(n_assets, dtype=bool)
    for day in range(n_days):
        orders = []
        for _a in range(n_assets):
            kind = kinds[rng.integers(4)]
            orders.append(Order(kind, target=float(rng.uniform(-1, 1))) if kind == "TARGET"
                          else Order(kind, size=float(rng.uniform(0, 1))) if kind != "HOLD" else HOLD)
        rebalance = account.rebalance(rules.apply_all(orders, account.exposure, is_open), is_open=is_open,
                                      impact_rate=rng.normal(0, 1e-3, n_assets))
        if mode == "shared":
            assert sum(abs(e) for e in rebalance.exposure) <= 1.0 + 1e-12
        # every book ends on one of its trading days, where its last decision's cost is realised
        is_open = rng.random(n_assets) < 0.8 if day < n_days - 1 else np.ones(n_assets, dtype=bool)
        account.advance(rng.normal(0, 0.05, n_assets), is_open=is_open)
    start = account.total_initial
    assert math.prod(1 + r for r in account.step_returns) == pytest.approx(account.equity / start, rel=1e-9)
    assert account.equity_curve[-1] == account.equity and len(account.equity_curve) == n_days + 1
    if mode == "per_asset":
        for a in range(n_assets):
            assert math.prod(1 + r for r in account.book_returns[a]) == pytest.approx(
                account.books[a] / account.initial_capital, rel=1e-9)


# ---------------------------------------------------------------------------------------------- shared book, impact


def test_shared_book_caps_gross_exposure_and_follows_the_exact_algorithm():
    capped = Account(["A", "B"], book_mode="shared")
    assert capped.rebalance([1.0, -1.0]).exposure == (0.5, -0.5)
    capped.advance([0.0, 0.0])
    assert capped.rebalance([0.3, -0.2]).exposure == (0.3, -0.2)
    account = Account(["A", "B"], initial_capital=1000.0, book_mode="shared", cost_bps=10)
    rebalance = account.rebalance([1.0, 1.0])
    assert rebalance.exposure == (0.5, 0.5)
    assert rebalance.total_cost == pytest.approx(1e-3 * 1.0 * 1000.0)
    advance = account.advance([0.1, -0.02])
    assert advance.step_return == pytest.approx((1 - 1e-3) * (1 + 0.5 * 0.1 - 0.5 * 0.02) - 1, rel=1e-12)
    assert all(math.isnan(r) for r in advance.book_returns)


def test_price_impact_charges_the_crowd_and_rebates_the_contrarian():
    kappa = 0.1
    a, b, c = (Account(["X"], initial_capital=1000.0) for _ in range(3))
    targets = {id(a): [1.0], id(b): [0.5], id(c): [-1.0]}
    flows = np.array([acc.trade_flow(targets[id(acc)]) for acc in (a, b, c)])
    assert flows[:, 0].tolist() == [1000.0, 500.0, -1000.0]
    dates = np.array(["2025-08-01", "2025-08-04"], dtype="datetime64[D]")
    history = AssetHistory("X", "stock", np.arange(2), np.array([1, 2]), dates, *([np.array([10.0, 20.0])] * 4),
                           np.array([100.0, 200.0]), *([np.full(2, np.nan)] * 5))
    adv = np.array([history.adv(1)])  # mean(1000, 4000)
    assert adv[0] == 2500.0 and history.adv(0) == 1000.0 and history.adv(-1) == 0.0
    rate = impact_rates(flows, adv, kappa)
    assert rate[0] == pytest.approx(kappa * 500.0 / 2500.0)
    cost_a = a.rebalance(targets[id(a)], impact_rate=rate).total_cost
    cost_c = c.rebalance(targets[id(c)], impact_rate=rate).total_cost
    assert cost_a == pytest.approx(rate[0] * 1.0 * 1000.0) and cost_a > 0
    assert cost_c == pytest.approx(-rate[0] * 1000.0) and cost_c < 0  # against the crowd: a rebate
    assert impact_rates(flows, np.array([0.0]), kappa).tolist() == [0.0]
    assert impact_rates(flows, adv, 0.0).tolist() == [0.0]


# ---------------------------------------------------------------------------------------------- real S&P 500


@pytest.fixture(scope="module")
def sp500():
    data = pytest.importorskip("arch.data.sp500").load()
    # the index pays no dividends: its adjusted close is its close, and the close is what the books use
    assert (data["Close"] == data["Adj Close"]).all()
    days = [d.date() for d in data.index]
    return days, data["Close"].to_numpy(dtype=float)


def test_buy_and_hold_on_sp500_equals_the_price_ratio_for_random_windows(sp500):
    """Issue 15: a BUY every day from the first day of the series; for any window the account's
    cumulative return is last/first close − 1, under every rule."""
    days, closes = sp500
    r = price_returns(closes)
    for rule in RULES:
        rules = PositionRules(rule)
        account = Account(["SPX"])
        for rk in r:
            account.rebalance([rules.apply(BUY, account.exposure[0])])
            account.advance([rk])
        assert account.exposure[0] == 1.0
        assert account.equity / account.initial_capital == pytest.approx(closes[-1] / closes[0], rel=1e-9)
        assert account.book_returns[0] == account.step_returns
        rng = np.random.default_rng(15)
        for _ in range(200):
            i, j = sorted(rng.integers(0, len(days), 2))
            start, end = days[i] - dt.timedelta(days=int(rng.integers(0, 4))), days[j]
            first = max((k for k, d in enumerate(days) if d <= start), default=0)  # the close standing on start
            window = window_returns(days, account.step_returns, start, end)
            assert len(window) == max(j - first, 0)
            if j > first:
                assert cumulative_return(window) == pytest.approx(closes[j] / closes[first] - 1, abs=1e-9)


def test_warmup_positions_carry_into_the_eval_window(sp500):
    days, closes = sp500
    trade_start, eval_start, end = dt.date(2018, 5, 1), dt.date(2018, 8, 1), dt.date(2018, 9, 30)
    i0 = next(k for k, d in enumerate(days) if d >= trade_start)
    j_end = max(k for k, d in enumerate(days) if d <= end)
    sub_days, sub_closes = days[i0:j_end + 1], closes[i0:j_end + 1]
    account = Account(["SPX"])
    for rk in price_returns(sub_closes):
        account.rebalance([1.0])
        account.advance([rk])
    e0 = max(k for k, d in enumerate(sub_days) if d <= eval_start)
    eval_r = window_returns(sub_days, account.step_returns, eval_start, end)
    assert len(eval_r) == len(sub_days) - e0 - 1
    assert cumulative_return(eval_r) == pytest.approx(sub_closes[-1] / sub_closes[e0] - 1, abs=1e-9)
    warm = window_returns(sub_days, account.step_returns, trade_start, eval_start)
    assert (1 + cumulative_return(warm)) * (1 + cumulative_return(eval_r)) == pytest.approx(
        sub_closes[-1] / sub_closes[0], rel=1e-12)
