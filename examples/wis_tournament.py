"""A Who is Spy tournament: an LLM against the rule players, ranked by the WiS rating.

The LLM is any model served by vLLM's OpenAI-compatible server (``vllm serve MODEL`` or, with the
project's local stack, ``arena serve ~/.cache/arena_envs/smollm2-135m-instruct --port 8000
--detach``); it reads each turn's text prompt and answers a clue or a vote. The other seats are
the rule players of ``baselines.wis.agents`` (``rule`` = LexiconAgent). Seats rotate every
episode, so with a multiple of six episodes every player sits in every seat equally often.

    python examples/wis_tournament.py --model smollm2-135m-instruct --model-url http://127.0.0.1:8000/v1
    python examples/wis_tournament.py --players 'rule*4,consensus,random'      # dry run, no server
    python examples/wis_tournament.py --model M --model-url URL --opponents 'rule*4,attack'
    python examples/wis_tournament.py --model M --model-url URL --opponents 'rule*4,reasoning' \\
        --env-arg allow_public_analysis=true

An ``attack`` (or ``defense``) player injects in every clue whatever its role; the env draws the
spy, so it is the spy in about one game of six (in the paper's experiments the hacker is always the
spy: force it with ``reset(options={"spy_seat": ...})`` in your own loop, as the tests do).

The leaderboard is the WiS platform's: rating = 100 + Σ score − games (WiS paper, section 3.5), with the win
rates by role, vote accuracy, foul rate and survival rounds; the results folder keeps every prompt,
answer and game record.
"""
from __future__ import annotations

import argparse
import sys

from arena_envs.runner.cli_errors import USER_ERRORS, report_user_error
from arena_envs.runner.leaderboard import leaderboard_text
from arena_envs.runner.policy_specs import parse_value, split_players
from arena_envs.runner.runner import RunConfig, run


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="the served model name")
    parser.add_argument("--model-url", default="http://127.0.0.1:8000/v1", help="the vLLM server's OpenAI URL")
    parser.add_argument("--opponents", default="rule*5", help="the other seats' specs (default rule*5)")
    parser.add_argument("--players", default=None,
                        help="every seat's spec, instead of the LLM and --opponents (e.g. 'rule*6': no server)")
    parser.add_argument("--episodes", type=int, default=12, help="games (default 12)")
    parser.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    parser.add_argument("--language", default="en", choices=("en", "zh"), help="game language")
    parser.add_argument("--env-arg", action="append", default=[], metavar="KEY=VALUE",
                        help="an environment argument (repeatable), e.g. allow_public_analysis=true")
    parser.add_argument("--concurrency", type=int, default=6, help="games played at once (LLM requests batch)")
    parser.add_argument("--out", default="runs/wis_tournament", help="results folder (resumed if it exists)")
    args = parser.parse_args()
    players = args.players or f"vllm:{args.model}@{args.model_url},{args.opponents}"
    env_kwargs = {"language": args.language}
    for item in args.env_arg:
        key, eq, value = item.partition("=")
        if not eq:
            parser.error(f"--env-arg must be KEY=VALUE, got {item!r}")
        env_kwargs[key.strip()] = parse_value(value.strip())
    config = RunConfig("who_is_spy_v0", tuple(split_players(players)), episodes=args.episodes, seed=args.seed,
                       env_kwargs=env_kwargs)
    try:
        summary = run(config, args.out, concurrency=args.concurrency, progress=True)
    except USER_ERRORS as err:  # a bad spec, or --out holding another run: one line, as the CLI says it
        return report_user_error(err)
    print(f"{summary.finished} games in {summary.out}")
    print(leaderboard_text(summary.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
