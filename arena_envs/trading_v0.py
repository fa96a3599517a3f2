"""Agent Market Arena trading (AMA, 2025): ``env()``, ``raw_env()`` and ``parallel_env()`` (one
``step`` per decision day).

Every agent (``trader_0`` ... ``trader_{n_agents-1}``) trades the same replayed daily market on its
own account; decisions of a day are simultaneous, filled at the close, and earn the next day's
close-to-close return. Keyword arguments of :class:`arena_envs.trading.env.TradingEnv` (defaults:
the paper's shape; its signature has them all, ``docs/envs/trading.md`` explains them):

* data: ``data`` ("arch" S&P 500 / NASDAQ daily bars, "crypto", "synthetic", a daily OHLCV CSV
  with ``news=`` a JSONL file, or a ``DataSource``), ``assets``, ``history_start``, ``trade_start``,
  ``eval_start``, ``end`` (default 2018-05-01 / 08-01 / 09-28: three months of warm-up, two of
  evaluation), ``random_window=L`` (a random L-day window per ``reset(seed)``);
* accounts: ``initial_capital``, ``position_rule``, ``allow_short``, ``max_exposure``,
  ``book_mode``, ``cost_bps``, ``price_impact`` and more; rewards: ``reward_type`` ("return",
  "log_return", "pnl", "excess_return"), ``periods_per_year``;
* actions: ``action_mode`` ("discrete": 0 HOLD, 1 BUY, 2 SELL per asset; "weights": target
  exposures), ``invalid_action``, ``max_retries``; text answers always work;
* text: ``text_price_window``, ``history_window``, ``max_news_items``, ``show_leaderboard``,
  ``max_obs_chars`` and more; ``n_agents``, ``max_cycles``, ``render_mode``.
"""
from arena_envs.core import entry_points, parallel_entry_point
from arena_envs.trading.env import TradingEnv

env, raw_env = entry_points(TradingEnv)
parallel_env = parallel_entry_point(TradingEnv)

__all__ = ["TradingEnv", "env", "parallel_env", "raw_env"]
