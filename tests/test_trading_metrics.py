"""The Agent Market Arena paper's five metrics (CR, AR, AV, SR, MDD), their edge cases, the
warm-up and evaluation windows, the behavioural statistics, worked examples, and a second,
independent computation (plain Python and ``statistics``) that must agree to 1e-9."""
from __future__ import annotations

import datetime as dt
import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_envs.trading.data import ArchSource
from arena_envs.trading.metrics import (
    Decision,
    annualised_return,
    annualised_volatility,
    behaviour_stats,
    cumulative_return,
    drawdown_curve,
    finite_or_none,
    five_metrics,
    max_drawdown,
    nan_as_none,
    periods_per_year,
    sharpe_ratio,
    wealth_curve,
    window_bounds,
    window_returns,
)

R4 = [0.01, -0.01, 0.02, 0.0]
METRICS = ("cr", "ar", "av", "sr", "mdd")  # the five metrics, in the paper's order


# ---------------------------------------------------------------------------------------------- worked examples


def test_cumulative_return():
    assert cumulative_return([0.1, -0.1]) == pytest.approx(-0.01, abs=1e-9)


def test_known_series():
    m = five_metrics(R4)
    assert m.cr == pytest.approx(0.019898, abs=1e-9)
    assert m.av == pytest.approx(0.20493901531919198, abs=1e-9)
    assert m.sr == pytest.approx(6.148170459575759, abs=1e-9)
    assert m.ar == pytest.approx(2.4599882898874683, rel=1e-9)
    assert m.n_returns == 4
    assert annualised_volatility(R4, ddof=0) == pytest.approx(0.1774823934929885, abs=1e-9)
    assert sharpe_ratio(R4, ddof=0) == pytest.approx(7.0992957397195395, abs=1e-9)


def test_annualised_return_two_years():
    r = [1.21 ** (1 / 504) - 1] * 504
    assert cumulative_return(r) == pytest.approx(0.21, abs=1e-9)
    assert annualised_return(r, 252) == pytest.approx(0.1, rel=1e-9)


def test_constant_series():
    r = [0.01] * 10
    assert 0 < float(np.std(r, ddof=1)) < 1e-12  # the floating-point std is not 0 ...
    assert annualised_volatility(r) == 0.0  # ... the eps rule makes AV 0
    assert math.isnan(sharpe_ratio(r))  # and SR NaN, not inf


def test_max_drawdown():
    assert max_drawdown([0.1, -0.2, 0.05, 0.3, -0.1]) == pytest.approx(0.2, abs=1e-9)
    assert max_drawdown([-0.5]) == pytest.approx(0.5, abs=1e-9)  # needs W_0 = 1
    assert max_drawdown([0.1, 0.1, 0.1]) == 0.0


def test_too_few_returns():
    m = five_metrics([])
    assert all(math.isnan(getattr(m, k)) for k in ("cr", "ar", "av", "sr", "mdd")) and m.n_returns == 0
    one = five_metrics([0.02])
    assert math.isnan(one.av) and math.isnan(one.sr)
    assert one.cr == pytest.approx(0.02) and one.ar == pytest.approx(1.02 ** 252 - 1) and one.mdd == 0.0


def test_ruin_gives_annualised_return_minus_one():
    assert annualised_return([0.5, -1.0, 0.0]) == -1.0
    assert max_drawdown([0.5, -1.0]) == 1.0


def test_risk_free_rate_is_annual():
    plain = sharpe_ratio(R4)
    av = annualised_volatility(R4)
    assert sharpe_ratio(R4, risk_free_rate=0.05) == pytest.approx(plain - 0.05 / av, rel=1e-12)


def test_fields_are_the_episode_metrics_form():
    m = five_metrics(R4)
    assert m.fields() == {"cr": m.cr, "ar": m.ar, "av": m.av, "sr": m.sr, "mdd": m.mdd, "n_returns": 4}
    undefined = five_metrics([0.1]).fields()  # one return: no volatility, no Sharpe ratio
    assert undefined["av"] is None and undefined["sr"] is None and undefined["cr"] == pytest.approx(0.1)
    assert finite_or_none(math.inf) is None and finite_or_none(None) is None and finite_or_none(2) == 2.0


@pytest.mark.parametrize(("bad", "message"), [
    ([0.1, float("nan")], "finite"), ([0.1, float("inf")], "finite"), ([-1.5], "below -1"),
    ([[0.1, 0.2]], "1-D"),
])
def test_bad_returns_give_one_clear_line(bad, message):
    for metric in (cumulative_return, max_drawdown, five_metrics):
        with pytest.raises(ValueError, match=message) as info:
            metric(bad)
        assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------- curves


def test_wealth_and_drawdown_curves():
    r = [0.1, -0.2, 0.05, 0.3, -0.1]
    w = wealth_curve(r)
    assert w.tolist() == pytest.approx([1.0, 1.1, 0.88, 0.924, 1.2012, 1.08108])
    dd = drawdown_curve(r)
    assert dd.tolist() == pytest.approx([0.0, 0.0, 0.2, 0.16, 0.0, 0.1])
    assert dd.max() == pytest.approx(max_drawdown(r))
    assert wealth_curve([]).tolist() == [1.0] and drawdown_curve([]).tolist() == [0.0]


# ---------------------------------------------------------------------------------------------- second path


def independent_metrics(returns, a=252, ddof=1, eps=1e-12):
    """The five formulas (module docstring of arena_envs.trading.metrics) written again with loops
    and the standard library only."""
    t = len(returns)
    if t == 0:
        return dict.fromkeys(METRICS, math.nan)
    wealth, peak, worst = 1.0, 1.0, 0.0
    for r in returns:
        wealth *= 1.0 + r
        peak = max(peak, wealth)
        worst = max(worst, (peak - wealth) / peak)
    cr = wealth - 1.0
    ar = wealth ** (a / t) - 1.0 if wealth > 0 else -1.0
    if t <= ddof:
        av = sr = math.nan
    else:
        std = statistics.stdev(returns) if ddof == 1 else statistics.pstdev(returns)
        av = 0.0 if std < eps else math.sqrt(a) * std
        sr = a * statistics.fmean(returns) / av if av > 0 else math.nan
    return {"cr": cr, "ar": ar, "av": av, "sr": sr, "mdd": worst}


def assert_agree(returns, a=252, ddof=1):
    ours = five_metrics(returns, a, ddof)
    theirs = independent_metrics(list(returns), a, ddof)
    for name in METRICS:
        x, y = getattr(ours, name), theirs[name]
        assert (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9), (name, x, y)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-5000, 5000), max_size=80), st.sampled_from([252, 365, 12]), st.sampled_from([0, 1]))
def test_second_path_agrees_on_random_series(basis_points, a, ddof):
    # returns on a basis-point grid: a series is either exactly constant or its std is far above
    # rounding noise (a std of 1e-15 would be ill-conditioned for any two summation orders)
    assert_agree([b / 10_000 for b in basis_points], a, ddof)


@pytest.mark.parametrize("seed", range(20))
def test_second_path_agrees_on_seeded_daily_like_series(seed):
    rng = np.random.default_rng(seed)
    r = rng.normal(0.0004, 0.015, int(rng.integers(2, 400)))
    assert_agree(r.tolist())


def test_second_path_agrees_on_the_real_sp500():
    data = pytest.importorskip("arch.data.sp500").load()
    closes = data["Close"].to_numpy(dtype=float)
    r = (closes[1:] / closes[:-1] - 1).tolist()
    assert_agree(r)
    pd = pytest.importorskip("pandas")
    series = pd.Series(r)
    m = five_metrics(r)
    # and a third path, pandas, for the ones it names
    assert m.av == pytest.approx(math.sqrt(252) * series.std(), rel=1e-9)
    assert m.sr == pytest.approx(math.sqrt(252) * series.mean() / series.std(), rel=1e-9)
    wealth = (1 + series).cumprod()
    assert m.cr == pytest.approx(wealth.iloc[-1] - 1, rel=1e-9)
    assert m.mdd == pytest.approx(max(0.0, float((1 - wealth / wealth.cummax().clip(lower=1.0)).max())), rel=1e-9)


# ---------------------------------------------------------------------------------------------- windows


def nyse_2025(start, end):
    holidays = {dt.date(2025, m, d) for m, d in [(1, 1), (1, 9), (1, 20), (2, 17), (4, 18), (5, 26), (6, 19),
                                                 (7, 4), (9, 1), (11, 27), (12, 25)]}
    day, days = start, []
    while day <= end:
        if day.weekday() < 5 and day not in holidays:
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def every_day(start, end):
    return [start + dt.timedelta(days=i) for i in range((end - start).days + 1)]


@pytest.mark.parametrize(("calendar", "n_eval", "first_eval_day"), [
    (nyse_2025, 41, dt.date(2025, 8, 4)), (every_day, 60, dt.date(2025, 8, 2)),
])
def test_eval_window_sizes(calendar, n_eval, first_eval_day):
    days = calendar(dt.date(2025, 5, 1), dt.date(2025, 9, 30))
    returns = np.arange(1, len(days), dtype=float)  # returns[k] is realised on days[k + 1]: label it k + 1
    window = window_returns(days, returns, dt.date(2025, 8, 1), dt.date(2025, 9, 30))
    assert len(window) == n_eval
    assert days[int(window[0])] == first_eval_day
    first, last = window_bounds(days, dt.date(2025, 8, 1), dt.date(2025, 9, 30))
    assert days[first] == dt.date(2025, 8, 1) and days[last] == dt.date(2025, 9, 30)


def test_windows_compose_and_hold_the_returns_realised_after_start():
    days = nyse_2025(dt.date(2025, 5, 1), dt.date(2025, 9, 30))
    rng = np.random.default_rng(1)
    r = rng.normal(0, 0.01, len(days) - 1)
    warm = window_returns(days, r, dt.date(2025, 5, 1), dt.date(2025, 8, 1))
    ev = window_returns(days, r, dt.date(2025, 8, 1), dt.date(2025, 9, 30))
    assert np.array_equal(np.concatenate([warm, ev]), r)
    # a start on a Saturday begins with the return realised on Monday (decided on Friday); an end
    # on a Sunday stops at Friday's close
    sat = window_returns(days, r, dt.date(2025, 8, 2), dt.date(2025, 8, 10))
    fri = days.index(dt.date(2025, 8, 1))
    assert np.array_equal(sat, r[fri:fri + 5])
    assert np.array_equal(window_returns(days, r, dt.date(2025, 4, 1), dt.date(2025, 5, 2)), r[:1])
    assert len(window_returns(days, r, dt.date(2025, 10, 1), dt.date(2025, 12, 1))) == 0
    assert len(window_returns(days, r, dt.date(2025, 8, 8), dt.date(2025, 8, 8))) == 0
    iso = [d.isoformat() for d in days]  # ISO strings order as dates do
    assert np.array_equal(window_returns(iso, r, "2025-08-01", "2025-09-30"), ev)
    with pytest.raises(ValueError, match="one more day than returns"):
        window_returns(days, r[:-1], days[0], days[-1])


@pytest.fixture(scope="module")
def spx_2018() -> tuple[list[dt.date], np.ndarray]:
    """The real S&P 500 closes shipped with arena_envs, 2018-05-01 .. 2018-09-28 (the default episode)."""
    spx = ArchSource().load(["SPX"], "2018-05-01", "2018-09-28").series("SPX")
    return [d.item() for d in spx.dates], spx.close


# 2018-07-30 .. 08-05 is every weekday, Saturday and Sunday; 07-04 a holiday on a weekday
@pytest.mark.parametrize("eval_start", [dt.date(2018, 7, 30) + dt.timedelta(days=k) for k in range(7)]
                         + [dt.date(2018, 7, 4)], ids=lambda d: f"{d:%a}-{d}")
def test_warmup_and_eval_compose_on_the_real_sp500(spx_2018, eval_start):
    """Every return of the full window lies in exactly one of warm-up and evaluation, whatever day
    ``eval_start`` is, so (1 + CR warm-up)(1 + CR eval) = 1 + CR full."""
    days, closes = spx_2018
    r = closes[1:] / closes[:-1] - 1  # a book fully long; any series splits by the same positions
    trade_start, end = dt.date(2018, 5, 1), dt.date(2018, 9, 28)
    warm = window_returns(days, r, trade_start, eval_start)
    ev = window_returns(days, r, eval_start, end)
    assert np.array_equal(np.concatenate([warm, ev]), r)
    growth = (1 + cumulative_return(warm)) * (1 + cumulative_return(ev))
    assert growth == pytest.approx(1 + cumulative_return(r), rel=1e-12)
    base = max(k for k, d in enumerate(days) if d <= eval_start)  # the close standing on eval_start
    assert 1 + cumulative_return(ev) == pytest.approx(closes[-1] / closes[base], rel=1e-12)


# ---------------------------------------------------------------------------------------------- annualisation


def test_periods_per_year():
    assert periods_per_year() == 252
    assert periods_per_year(252, ["crypto"]) == 252  # the paper's 252 for every asset by default
    assert periods_per_year("calendar", ["stock"]) == 252
    assert periods_per_year("calendar", ["crypto"]) == 365
    assert periods_per_year("calendar", ["stock", "crypto"]) == 365  # a mixed shared book
    for bad in (0, -5, "yearly", 252.0, True):
        with pytest.raises(ValueError, match="periods_per_year"):
            periods_per_year(bad)
    with pytest.raises(ValueError, match="asset class"):
        periods_per_year("calendar", ["bond"])


# ---------------------------------------------------------------------------------------------- behaviour


def test_behaviour_stats():
    decisions = [
        Decision("BUY", 0.0, 1.0),
        Decision("HOLD", 1.0, 1.0),
        Decision("BUY", 1.0, 1.0, noop=True),
        Decision("SELL", 1.0, -1.0),
        Decision("HOLD", -1.0, -1.0, invalid=True, fallback=True),
        Decision("TARGET", -1.0, 0.0),
        Decision("SELL", 0.0, 0.0, noop=True),
        Decision("HOLD", 0.0, 0.0),
    ]
    returns = [0.01, -0.02, 0.03, 0.01, -0.01, 0.05, -0.04, 0.0]
    s = behaviour_stats(decisions, returns)
    assert (s["n_buy"], s["n_sell"], s["n_hold"], s["n_target"], s["n_invalid"], s["n_noop"]) == (2, 2, 2, 1, 1, 2)
    assert s["n_decisions"] == 8 and s["first_action"] == "BUY"
    assert (s["long_share"], s["short_share"], s["flat_share"]) == (3 / 8, 2 / 8, 3 / 8)
    assert s["turnover"] == 4.0 and s["n_changes"] == 3
    assert s["parse_error_rate"] == 1 / 8 and s["fallback_rate"] == 1 / 8
    assert s["win_rate"] == pytest.approx(3 / 5)  # held days: +0.01, -0.02, +0.03, +0.01, -0.01


def test_behaviour_stats_edge_cases():
    flat = behaviour_stats([Decision("HOLD", 0.0, 0.0)] * 3, [0.1, 0.2, 0.3])
    assert math.isnan(flat["win_rate"]) and flat["flat_share"] == 1.0
    empty = behaviour_stats([])
    assert empty["n_decisions"] == 0 and empty["first_action"] is None and math.isnan(empty["long_share"])
    assert nan_as_none(empty)["long_share"] is None and nan_as_none(empty)["n_decisions"] == 0
    assert behaviour_stats([Decision("BUY", 0, 1, invalid=True)])["first_action"] == "INVALID"
    with pytest.raises(ValueError, match="one return per decision"):
        behaviour_stats([Decision("BUY", 0, 1)], [0.1, 0.2])
    with pytest.raises(ValueError, match="decision kind"):
        behaviour_stats([Decision("CLOSE", 0, 0)])
