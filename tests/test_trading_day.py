"""The trading game's day (arena_envs.trading.day): orders applied at once to the agents' accounts,
closed markets, the crowd's price impact, rewards, ruin, the per-book decisions the metrics read,
and the environment's days replayed through it exactly."""
from __future__ import annotations

import numpy as np
import pytest

from arena_envs import trading_v0
from arena_envs.trading.accounting import HOLD, Account, Order, PositionRules, step_reward
from arena_envs.trading.day import DayRules, Fill, MarketMove, Taken, book_decisions, crowd_impact, resolve_day

BUY, SELL = Order("BUY"), Order("SELL")
RULES = DayRules(PositionRules())


def accounts(n: int, assets: tuple[str, ...] = ("A",), **kwargs: float) -> dict[str, Account]:
    return {f"trader_{i}": Account(assets, 1000.0, **kwargs) for i in range(n)}  # type: ignore[arg-type]


def test_orders_move_the_accounts_and_each_fill_says_what_happened():
    books = accounts(2, ("A", "B"))
    market = MarketMove(tradable=(True, True), returns=(0.1, -0.2), opened=(True, True))
    fills = resolve_day(books, {"trader_0": (BUY, SELL), "trader_1": (HOLD, Order("TARGET", target=0.5))}, market,
                        RULES)
    assert list(fills) == ["trader_0", "trader_1"]
    first = fills["trader_0"]
    assert first.kinds == ("BUY", "SELL") and first.before == (0.0, 0.0) and first.after == (1.0, -1.0)
    assert first.cost == 0.0 and first.ignored == () and not first.noop and first.equity > 0.0
    assert first.equity == pytest.approx(1100.0 + 1200.0) and first.pnl == pytest.approx(300.0)
    assert first.step_return == first.reward == pytest.approx(0.15)
    assert fills["trader_1"].after == (0.0, 0.5) and fills["trader_1"].equity == pytest.approx(1900.0)
    assert books["trader_0"].exposure == (1.0, -1.0)  # the accounts are the books
    again = resolve_day(books, {"trader_0": (BUY, SELL), "trader_1": (HOLD, HOLD)}, market, RULES)["trader_0"]
    assert again.noops == (True, True) and again.noop  # BUY at +1 and SELL at -1 change nothing


def test_a_market_that_takes_no_orders_keeps_the_exposure_and_counts_hold():
    books = accounts(1, ("S", "C"), cost_bps=10.0)
    fill = resolve_day(books, {"trader_0": (BUY, BUY)}, MarketMove((False, True), (0.5, 0.1), (False, True)),
                       RULES)["trader_0"]
    assert fill.kinds == ("HOLD", "BUY") and fill.ignored == ("S",) and fill.noops == (False, False)
    assert fill.after == (0.0, 1.0) and fill.cost == pytest.approx(1.0)  # 10 bps of the one trade
    assert fill.equity == pytest.approx(1000.0 + 999.0 * 1.1)  # the closed asset moves 0
    hold = resolve_day(books, {"trader_0": (HOLD, HOLD)}, MarketMove((False, True), (0.0, 0.0), (True, True)),
                       RULES)["trader_0"]
    assert hold.ignored == () and hold.kinds == ("HOLD", "HOLD")


def test_the_crowd_pays_the_impact_and_the_contrarian_earns_it():
    books = accounts(3)
    market = MarketMove((True,), (0.0,), (True,), adv=(2500.0,))
    orders = {"trader_0": (BUY,), "trader_1": (Order("BUY", size=0.5),), "trader_2": (SELL,)}
    rate = 0.1 * (1000.0 + 500.0 - 1000.0) / 2500.0
    assert crowd_impact(list(books.values()), [[1.0], [0.5], [-1.0]], market, 0.1) == pytest.approx([rate])
    closed = market._replace(tradable=(False,))
    assert crowd_impact(list(books.values()), [[1.0], [0.5], [-1.0]], closed, 0.1) == [0.0]
    fills = resolve_day(books, orders, market, RULES._replace(price_impact=0.1))
    assert fills["trader_0"].cost == pytest.approx(rate * 1000.0)
    assert fills["trader_1"].cost == pytest.approx(rate * 0.5 * 1000.0)
    assert fills["trader_2"].cost == pytest.approx(-rate * 1000.0) and fills["trader_2"].cost < 0
    free = resolve_day(accounts(3), orders, market, RULES)
    assert [f.cost for f in free.values()] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("reward_type", ["return", "log_return", "pnl", "excess_return"])
def test_rewards_are_the_step_reward_and_zero_on_an_unrewarded_day(reward_type):
    market = MarketMove((True, True), (0.1, 0.3), (True, False))
    rules = RULES._replace(reward_type=reward_type)
    books = accounts(1, ("A", "B"))
    fill = resolve_day(books, {"trader_0": (BUY, HOLD)}, market, rules)["trader_0"]
    twin = Account(("A", "B"), 1000.0)
    twin.rebalance([1.0, 0.0])
    advance = twin.advance([0.1, 0.3], is_open=[True, False])
    assert fill.reward == step_reward(reward_type, advance, market.returns, market.opened)
    if reward_type == "excess_return":
        assert fill.reward == pytest.approx(0.05 - 0.1)  # against the mean of the assets that traded
    quiet = resolve_day(books, {"trader_0": (BUY, HOLD)}, market._replace(rewarded=False), rules)["trader_0"]
    assert quiet.reward == 0.0 and quiet.step_return != 0.0


def test_costs_that_exhaust_an_account_ruin_it():
    books = accounts(1, cost_bps=6000.0)
    market = MarketMove((True,), (0.0,), (True,))
    assert resolve_day(books, {"trader_0": (BUY,)}, market, RULES)["trader_0"].equity > 0.0
    fill = resolve_day(books, {"trader_0": (SELL,)}, market, RULES)["trader_0"]  # the flip costs 120 % of 400
    assert fill.equity == 0.0 and books["trader_0"].ruined
    with pytest.raises(RuntimeError, match="ruined"):
        resolve_day(books, {"trader_0": (BUY,)}, market, RULES)


def test_a_fill_is_the_accounts_own_rebalance_and_advance():
    """The day adds nothing to the books' arithmetic: the same targets through the account's public
    face give the same figures, bit for bit (shared book, drift, costs and impact)."""
    rng = np.random.default_rng(3)
    kwargs = dict(book_mode="shared", exposure_drift=True, cost_bps=7.0, max_gross_exposure=0.8)
    books, twins = accounts(2, ("A", "B"), **kwargs), accounts(2, ("A", "B"), **kwargs)
    rules = DayRules(PositionRules("ladder", default_size=0.3), "log_return", 0.05)
    for _ in range(20):
        market = MarketMove(tuple(bool(x) for x in rng.random(2) < 0.8), tuple(rng.normal(0, 0.03, 2).tolist()),
                            tuple(bool(x) for x in rng.random(2) < 0.8), adv=(5e4, 2e4))
        orders = {a: tuple(Order(("BUY", "SELL", "HOLD")[k]) for k in rng.integers(0, 3, 2)) for a in books}
        targets = {a: rules.position.apply_all(orders[a], twins[a].exposure, market.tradable) for a in twins}
        rates = crowd_impact(list(twins.values()), list(targets.values()), market, rules.price_impact)
        fills = resolve_day(books, orders, market, rules)
        for a, fill in fills.items():
            rebalance = twins[a].rebalance(targets[a], is_open=market.tradable, impact_rate=rates)
            advance = twins[a].advance(market.returns, is_open=market.opened)
            assert (fill.after, fill.cost) == (rebalance.exposure, rebalance.total_cost)
            assert (fill.step_return, fill.pnl, fill.equity) == (advance.step_return, advance.pnl, advance.equity)
            assert books[a].equity_curve == twins[a].equity_curve


def test_book_decisions_go_book_by_book_with_the_returns_held():
    def fill(kinds: tuple[str, ...], after: tuple[float, ...]) -> Fill:
        return Fill(kinds, (False, True), (), (0.0, 0.0), after, 0.0, 0.0, 0.0, 1.0, 0.0)

    log = [Taken(0, fill(("BUY", "SELL"), (1.0, -1.0)), False), Taken(2, fill(("HOLD", "HOLD"), (1.0, 0.0)), True)]
    returns = np.array([[0.0, 0.0], [0.1, 0.2], [0.0, 0.0], [-0.3, 0.4]])
    decisions, held = book_decisions(log, returns)
    assert [(d.kind, d.exposure_after, d.invalid, d.noop, d.fallback) for d in decisions] == [
        ("BUY", 1.0, False, False, False), ("HOLD", 1.0, True, False, True),
        ("SELL", -1.0, False, True, False), ("HOLD", 0.0, True, True, True)]
    assert held == pytest.approx([0.1, -0.3, -0.2, 0.0])
    assert book_decisions([], returns) == ([], [])


def test_the_environments_days_replay_exactly_through_the_day():
    """An episode of trading_v0 (S&P 500 bars, costs, excess-return rewards, three traders) and the
    same orders resolved on fresh accounts: the same equity, step return and reward every day."""
    env = trading_v0.env(n_agents=3, cost_bps=10.0, reward_type="excess_return", position_rule="ladder",
                         default_size=0.5)
    env.reset(seed=0)
    raw = env.unwrapped
    rewards = []  # what each day's resolution gave every trader
    rng = np.random.default_rng(0)
    for _agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        day = raw.step_index
        env.step(None if termination or truncation else int(rng.integers(3)))
        if raw.step_index != day:
            rewards.append(dict(raw.rewards))
    days = [e for e in env.unwrapped.episode_record()["events"] if e["type"] == "day"]
    assert len(days) == env.unwrapped.n_cycles
    books = {a: Account(["SPX"], cost_bps=10.0) for a in env.possible_agents}
    rules = DayRules(PositionRules("ladder", default_size=0.5), "excess_return")
    for day, given in zip(days, rewards, strict=True):
        orders = {a: tuple(Order(kind, target=value) if kind == "TARGET" else Order(kind, size=value)
                           for kind, value in decision["parsed"]) for a, decision in day["decisions"].items()}
        market = MarketMove((True,), tuple(day["asset_returns"]), (True,))
        fills = resolve_day(books, orders, market, rules)
        for a, f in fills.items():
            assert (f.equity, f.step_return, list(f.after)) == (day["equity"][a], day["step_return"][a],
                                                                 day["decisions"][a]["exposure"])
        assert {a: f.reward for a, f in fills.items()} == given
