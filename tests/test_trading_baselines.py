"""The trading rule baselines: each rule on hand-computed close series, the edge cases,
the seeded random trader, the spec-string arguments and entry points, and every baseline in a
full episode on real S&P 500 data."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomllib

from arena_envs import trading_v0
from arena_envs.runner.policy_specs import load_object, parse_arguments
from arena_envs.trading.accounting import Order
from arena_envs.trading.data import ArchSource
from baselines.trading.rules import (
    BuyAndHold,
    Cash,
    MeanReversion,
    Momentum,
    RandomTrader,
    RuleTrader,
    ShortAndHold,
    SmaCrossover,
)

BUY, SELL, HOLD = Order("BUY", 1.0), Order("SELL", 1.0), Order("HOLD")


@dataclass
class FakeSnapshot:
    """The part of ``info["snapshot"]`` the rules read."""

    prices: Mapping[str, Sequence[float]]
    closed: set[str] = field(default_factory=set)

    @property
    def assets(self) -> tuple[str, ...]:
        return tuple(self.prices)

    def closes(self, sym: str) -> np.ndarray:
        return np.asarray(self.prices[sym], dtype=np.float64)

    def is_open(self, sym: str) -> bool:
        return sym not in self.closed


def kind(policy: RuleTrader, closes: Sequence[float]) -> str:
    """The order kind ``policy`` gives one open asset with these closes, through ``act``."""
    orders = policy.act(None, {"snapshot": FakeSnapshot({"SPX": closes})})
    assert set(orders) == {"SPX"}
    return orders["SPX"].kind


@pytest.mark.parametrize(("policy", "expected"), [(BuyAndHold(), BUY), (Cash(), HOLD), (ShortAndHold(), SELL)])
def test_static_rules_give_one_order_per_asset_whatever_the_history(policy, expected):
    for closes in ([], [100.0], list(np.linspace(100, 50, 30)), list(np.linspace(50, 100, 30))):
        orders = policy.act(None, {"snapshot": FakeSnapshot({"SPX": closes, "NDX": closes})})
        assert orders == {"SPX": expected, "NDX": expected}


def test_a_closed_asset_gets_hold_from_every_rule():
    rising = [100.0 + day for day in range(35)]  # every rule trades on it: BUY, or SELL for mean reversion
    snapshot = FakeSnapshot({"SYS": rising, "SYC": rising}, closed={"SYS"})
    for policy in (BuyAndHold(), ShortAndHold(), SmaCrossover(), Momentum(), MeanReversion(window=30)):
        orders = policy.act(None, {"snapshot": snapshot})
        assert orders["SYS"] == HOLD
        assert orders["SYC"] != HOLD, policy.name


# --- sma_crossover(fast=5, slow=20) -------------------------------------------------------------

def test_sma_crossover_needs_slow_closes():
    rising = [float(p) for p in range(100, 119)]  # 19 closes: one short of slow = 20
    assert kind(SmaCrossover(), rising) == "HOLD"
    assert kind(SmaCrossover(), rising + [119.0]) == "BUY"


def test_sma_crossover_on_hand_computed_series():
    # 15 closes of 100 then 5 of 110: SMA5 = 110 > SMA20 = (1500 + 550) / 20 = 102.5 -> BUY
    assert kind(SmaCrossover(), [100.0] * 15 + [110.0] * 5) == "BUY"
    # 15 closes of 100 then 5 of 90: SMA5 = 90 < SMA20 = 97.5 -> SELL
    assert kind(SmaCrossover(), [100.0] * 15 + [90.0] * 5) == "SELL"
    # fast = 2, slow = 3 on [1, 5, 3]: SMA2 = 4 > SMA3 = 3 -> BUY; on [5, 1, 3]: SMA2 = 2 < 3 -> SELL
    assert kind(SmaCrossover(fast=2, slow=3), [1.0, 5.0, 3.0]) == "BUY"
    assert kind(SmaCrossover(fast=2, slow=3), [5.0, 1.0, 3.0]) == "SELL"
    # only the last `slow` closes count: a crash before them changes nothing
    assert kind(SmaCrossover(fast=2, slow=3), [1000.0, 1.0, 5.0, 3.0]) == "BUY"


def test_sma_crossover_tie_is_hold():
    assert kind(SmaCrossover(fast=2, slow=4), [6.0, 2.0, 4.0, 4.0]) == "HOLD"  # SMA2 = 4 = SMA4
    # a flat series: np.mean gives 2913.98 for 5 closes and 2913.9800000000005 for 20; still a tie
    assert kind(SmaCrossover(), [2913.98] * 60) == "HOLD"
    # the tie guard is relative float noise only: a one-cent gap decides
    assert kind(SmaCrossover(), [2913.98] * 59 + [2913.99]) == "BUY"
    assert kind(SmaCrossover(), [2913.98] * 59 + [2913.97]) == "SELL"


# --- momentum(lookback=10, threshold=0.0) -------------------------------------------------------

def test_momentum_needs_lookback_plus_one_closes():
    rising = [float(p) for p in range(100, 110)]  # 10 closes
    assert kind(Momentum(), rising) == "HOLD"
    assert kind(Momentum(), rising + [110.0]) == "BUY"  # 110 / 100 - 1 = 0.1 > 0


def test_momentum_on_hand_computed_series():
    # close_t / close_{t-10}: only those two closes matter
    assert kind(Momentum(), [100.0] + [50.0] * 9 + [101.0]) == "BUY"
    assert kind(Momentum(), [100.0] + [150.0] * 9 + [99.0]) == "SELL"
    assert kind(Momentum(), [100.0] + [150.0] * 9 + [100.0]) == "HOLD"  # m = 0: neither > 0 nor < -0
    assert kind(Momentum(), [7.0, 100.0] + [150.0] * 9 + [99.0]) == "SELL"  # t-10 is the 2nd close here
    # threshold 0.05: m = +0.04 and -0.04 -> HOLD; +0.06 -> BUY; -0.06 -> SELL; m = 0.05 exactly -> HOLD
    rule = Momentum(lookback=2, threshold=0.05)
    assert [kind(rule, [100.0, 1.0, c]) for c in (104.0, 96.0, 106.0, 94.0)] == ["HOLD", "HOLD", "BUY", "SELL"]
    assert kind(Momentum(lookback=1, threshold=0.5), [2.0, 3.0]) == "HOLD"  # 3/2 - 1 = 0.5, not > 0.5


# --- mean_reversion(window=20, k=1.0) -----------------------------------------------------------

def test_mean_reversion_needs_window_closes():
    series = [100.0] * 18 + [90.0]  # 19 closes
    assert kind(MeanReversion(), series) == "HOLD"
    assert kind(MeanReversion(), [100.0] + series) == "BUY"


def test_mean_reversion_on_hand_computed_series():
    # window 3 on [1, 2, 3]: mean 2, std (ddof 1) = 1, z = 1; k = 0.9 -> SELL, k = 1.0 -> HOLD (a tie)
    assert kind(MeanReversion(window=3, k=0.9), [1.0, 2.0, 3.0]) == "SELL"
    assert kind(MeanReversion(window=3, k=1.0), [1.0, 2.0, 3.0]) == "HOLD"
    assert kind(MeanReversion(window=3, k=0.9), [3.0, 2.0, 1.0]) == "BUY"
    # window 4 on [2, 6, 4, 4]: mean 4, z = 0 -> HOLD; [4, 4, 6, 2]: std = sqrt(8/3), z = -2/1.633 = -1.22 -> BUY
    assert kind(MeanReversion(window=4), [2.0, 6.0, 4.0, 4.0]) == "HOLD"
    assert kind(MeanReversion(window=4), [4.0, 4.0, 6.0, 2.0]) == "BUY"
    assert kind(MeanReversion(window=4, k=1.3), [4.0, 4.0, 6.0, 2.0]) == "HOLD"
    # ddof = 1, not 0: [0, 0, 0, 4] has z = 3/2 with ddof 1 (std 2), sqrt(3) = 1.73 with ddof 0
    assert kind(MeanReversion(window=4, k=1.6), [0.0, 0.0, 0.0, 4.0]) == "HOLD"
    assert kind(MeanReversion(window=4, k=1.4), [0.0, 0.0, 0.0, 4.0]) == "SELL"
    # only the last `window` closes count
    assert kind(MeanReversion(window=3, k=0.9), [500.0, 1.0, 2.0, 3.0]) == "SELL"


def test_mean_reversion_constant_window_is_hold():
    assert kind(MeanReversion(k=0.0), [2913.98] * 20) == "HOLD"
    assert kind(MeanReversion(k=0.0), [1.0] + [2913.98] * 20) == "HOLD"  # the 1.0 is outside the window


# --- random --------------------------------------------------------------------------------------

def play_random(seed: int | None, days: int = 200) -> list[tuple[str, str]]:
    policy = RandomTrader()
    policy.reset("trader_0", seed)
    snapshot = FakeSnapshot({"SPX": [100.0], "NDX": [100.0]})
    return [(o["SPX"].kind, o["NDX"].kind) for o in (policy.act(None, {"snapshot": snapshot}) for _ in range(days))]


def test_random_trader_is_a_function_of_its_seed():
    assert play_random(7) == play_random(7)
    assert play_random(7) != play_random(8)
    rng = np.random.Generator(np.random.PCG64(7))  # its own PCG64 stream, one draw per open asset
    expected = [("BUY", "SELL", "HOLD")[int(rng.integers(3))] for _ in range(400)]
    assert [k for pair in play_random(7) for k in pair] == expected


def test_random_trader_is_uniform_over_the_three_orders():
    kinds = [k for pair in play_random(3, days=3000) for k in pair]
    for name in ("BUY", "SELL", "HOLD"):
        assert abs(kinds.count(name) / len(kinds) - 1 / 3) < 0.02


def test_random_trader_draws_nothing_for_a_closed_asset():
    policy = RandomTrader()
    policy.reset("trader_0", 5)
    snapshot = FakeSnapshot({"SYS": [1.0], "SYC": [1.0]}, closed={"SYS"})
    orders = [policy.act(None, {"snapshot": snapshot}) for _ in range(100)]
    assert all(o["SYS"] == HOLD for o in orders)
    rng = np.random.Generator(np.random.PCG64(5))
    assert [o["SYC"].kind for o in orders] == [("BUY", "SELL", "HOLD")[int(rng.integers(3))] for _ in range(100)]


# --- construction --------------------------------------------------------------------------------

def test_policies_are_rule_policies_that_read_no_text():
    for cls in (BuyAndHold, Cash, ShortAndHold, SmaCrossover, Momentum, MeanReversion, RandomTrader):
        policy = cls()
        assert policy.backbone == "rule"
        assert policy.reads_text is False


def test_spec_string_arguments_reach_the_rules():
    rule = SmaCrossover(**parse_arguments("fast=3+slow=10", "sma_crossover:fast=3+slow=10"))
    assert (rule.fast, rule.slow) == (3, 10)
    momentum = Momentum(**parse_arguments("lookback=4+threshold=0.02", "momentum"))
    assert (momentum.lookback, momentum.threshold) == (4, 0.02)
    reversion = MeanReversion(**parse_arguments("window=10+k=2", "mean_reversion"))
    assert (reversion.window, reversion.k) == (10, 2.0)


@pytest.mark.parametrize(("cls", "kwargs", "message"), [
    (SmaCrossover, {"fast": 0}, "fast must be an integer >= 1, got 0"),
    (SmaCrossover, {"fast": 5.5}, "fast must be an integer >= 1, got 5.5"),
    (SmaCrossover, {"fast": 20, "slow": 20}, "slow must be greater than fast (20), got 20"),
    (Momentum, {"lookback": True}, "lookback must be an integer >= 1, got True"),
    (Momentum, {"threshold": -0.1}, "threshold must be a finite number >= 0, got -0.1"),
    (Momentum, {"threshold": "high"}, "threshold must be a finite number >= 0, got 'high'"),
    (MeanReversion, {"window": 1}, "window must be an integer >= 2, got 1"),
    (MeanReversion, {"k": float("nan")}, "k must be a finite number >= 0, got nan"),
])
def test_bad_arguments_get_one_clear_line(cls, kwargs, message):
    with pytest.raises(ValueError) as err:
        cls(**kwargs)
    assert str(err.value) == message


def test_the_entry_points_name_the_rules():
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text("utf-8"))
    table = pyproject["project"]["entry-points"]["arena_envs.policies"]
    trading = {key: load_object(value) for key, value in table.items() if key.startswith("trading_v0/")}
    assert trading == {"trading_v0/rule": SmaCrossover, "trading_v0/buy_and_hold": BuyAndHold,
                       "trading_v0/cash": Cash, "trading_v0/short_and_hold": ShortAndHold,
                       "trading_v0/sma_crossover": SmaCrossover, "trading_v0/momentum": Momentum,
                       "trading_v0/mean_reversion": MeanReversion, "trading_v0/random": RandomTrader}


# --- full episodes on real S&P 500 data (arch) ---------------------------------------------------

BASELINES = {"buy_and_hold": BuyAndHold, "cash": Cash, "short_and_hold": ShortAndHold,
             "sma_crossover": SmaCrossover, "momentum": Momentum, "mean_reversion": MeanReversion,
             "random": RandomTrader}


@pytest.fixture(scope="module")
def arch_episode() -> tuple[Any, dict[str, str], list[str]]:
    """Every baseline in one seat of a default ``trading_v0`` episode (S&P 500, 2018); the unwrapped
    env, seat -> baseline name, and every problem seen in an info after a decision."""
    env = trading_v0.env(n_agents=len(BASELINES))
    seats = dict(zip(env.possible_agents, BASELINES))
    policies = {agent: BASELINES[name]() for agent, name in seats.items()}
    env.reset(seed=0)
    for i, (agent, policy) in enumerate(policies.items()):
        policy.bind(env.unwrapped)
        policy.reset(agent, i)
    problems = []
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        env.step(None if term or trunc else policies[agent].act(obs, info))
        after = env.unwrapped.infos.get(agent, {})
        if not (term or trunc) and any(after.get(key) for key in ("parse_error", "parse_warnings", "invalid",
                                                                   "invalid_action", "fallback", "ignored_closed")):
            problems.append(f"{seats[agent]} on {after.get('date')}: {after}")
    return env.unwrapped, seats, problems


def test_every_baseline_plays_a_real_episode_without_an_invalid_decision(arch_episode):
    raw, seats, problems = arch_episode
    assert problems == []
    agents = raw.episode_metrics()["agents"]
    for agent, name in seats.items():
        stats = agents[agent]
        assert (stats["n_invalid"], stats["fallback_rate"], stats["parse_error_rate"]) == (0, 0.0, 0.0), name
        assert stats["n_buy"] + stats["n_sell"] + stats["n_hold"] == 105, name  # every cycle of 2018-05-01..09-27
    by_name = {name: agents[agent] for agent, name in seats.items()}
    for name in ("sma_crossover", "momentum", "mean_reversion", "random"):  # the technical rules do trade both ways
        assert by_name[name]["n_buy"] > 0 and by_name[name]["n_sell"] > 0, name


def _spx() -> Any:
    return ArchSource().load(["SPX"]).series("SPX")


def test_buy_and_hold_earns_the_index_and_cash_nothing(arch_episode):
    raw, seats, _ = arch_episode
    metrics = raw.episode_metrics()
    by_name = {name: metrics["agents"][agent] for agent, name in seats.items()}
    spx = _spx()
    first = int(np.searchsorted(spx.dates, np.datetime64("2018-08-01")))  # first day >= eval start
    last = int(np.searchsorted(spx.dates, np.datetime64("2018-09-28"), side="right")) - 1  # last day <= end
    expected = spx.close[last] / spx.close[first] - 1.0
    assert by_name["buy_and_hold"]["cr"] == pytest.approx(expected, abs=1e-9)
    assert metrics["game"]["buy_and_hold"]["SPX"]["cr"] == pytest.approx(by_name["buy_and_hold"]["cr"], abs=1e-9)
    assert by_name["cash"]["cr"] == 0.0
    assert by_name["cash"]["full"]["cr"] == 0.0
    # short all along: the product of (1 - R) over the window, not -CR(B&H)
    returns = spx.close[first + 1:last + 1] / spx.close[first:last] - 1.0
    assert by_name["short_and_hold"]["cr"] == pytest.approx(np.prod(1.0 - returns) - 1.0, abs=1e-9)


def test_the_rules_decide_from_the_last_sixty_closes(arch_episode):
    """Each day's recorded decision of the technical rules equals the rule applied to the arch
    closes up to that day (at most history_window = 60 of them), read independently of the env."""
    raw, seats, _ = arch_episode
    spx = _spx()
    rules = {"sma_crossover": SmaCrossover(), "momentum": Momentum(), "mean_reversion": MeanReversion()}
    days = [e for e in raw.episode_record()["events"] if e["type"] == "day"]
    history_start = int(np.searchsorted(spx.dates, np.datetime64("2018-01-02")))
    for day in days:
        today = int(np.searchsorted(spx.dates, np.datetime64(day["date"])))
        closes = spx.close[max(history_start, today - 59):today + 1]
        for agent, name in seats.items():
            if name in rules:
                assert day["decisions"][agent]["parsed"][0][0] == rules[name].signal(closes).kind, (name, day["date"])
