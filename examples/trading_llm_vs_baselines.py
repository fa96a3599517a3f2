"""An LLM trading agent against the rule baselines on a year of real S&P 500 data, with plots.

Every seat trades the same replayed market on its own account (`trading_v0`: the S&P 500 daily bars
of the ``arch`` package, 2018-01-02 .. 2018-12-31, 250 decisions, an evaluation over the whole
year); the leaderboard ranks the seats by cumulative return beside the paper's other metrics, and the
results folder gets ``figures/equity_ep0000.png`` and ``figures/drawdown_ep0000.png``.

The LLM is any model served by vLLM's OpenAI-compatible server (``vllm serve MODEL``, or with the
project's local stack ``arena serve ~/.cache/arena_envs/smollm2-135m-instruct --port 8000
--detach``), played by one of the paper's four agent designs (``--agent``: investor, tradeagent,
hedgefund, deepfund; their LLM calls per day: at most 2, 12, 13 and 4)::

    python examples/trading_llm_vs_baselines.py --model smollm2-135m-instruct --agent investor
    python examples/trading_llm_vs_baselines.py --players buy_and_hold,cash,momentum   # no server
    python examples/trading_llm_vs_baselines.py --model M --days 40     # a shorter window first

The market and the rules do not depend on the run seed; only the LLM's sampling and the ``random``
baseline do.
"""
from __future__ import annotations

import argparse

from arena_envs.runner.leaderboard import leaderboard_text
from arena_envs.runner.policy_specs import split_players
from arena_envs.runner.runner import RunConfig, run

BASELINES = "buy_and_hold,cash,sma_crossover,momentum,mean_reversion"
AGENTS = ("investor", "tradeagent", "hedgefund", "deepfund")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="the served model name")
    parser.add_argument("--model-url", default="http://127.0.0.1:8000/v1", help="the vLLM server's OpenAI URL")
    parser.add_argument("--agent", default="investor", choices=AGENTS, help="the paper's agent design to play")
    parser.add_argument("--baselines", default=BASELINES, help=f"the other seats (default {BASELINES})")
    parser.add_argument("--players", default=None,
                        help="every seat's spec instead (e.g. 'buy_and_hold,cash': no server)")
    parser.add_argument("--days", type=int, default=None, help="stop after this many decision days (default: the year)")
    parser.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    parser.add_argument("--out", default="runs/trading_sp500_2018", help="results folder (resumed if it exists)")
    args = parser.parse_args()
    players = split_players(args.players or f"vllm:{args.model}@{args.model_url}?agent={args.agent},{args.baselines}")
    env_kwargs = {"data": "arch", "assets": ["SPX"], "n_agents": len(players), "history_start": "2017-09-01",
                  "trade_start": "2018-01-02", "eval_start": "2018-01-02", "end": "2018-12-31"}
    if args.days is not None:
        env_kwargs["max_cycles"] = args.days
    config = RunConfig("trading_v0", tuple(players), episodes=1, seed=args.seed, env_kwargs=env_kwargs, rotate=False)
    summary = run(config, args.out, progress=True)
    print(leaderboard_text(summary.out))
    for path in summary.figures:
        print(f"figure: {path}")


if __name__ == "__main__":
    main()
