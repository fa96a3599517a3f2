"""MaskablePPO in a γ-Bench game against LLM players on the local vLLM server, through ``baselines.rl.train``.

Default: the Public Goods Game (``public_goods_v0``, 3 players, 5 rounds, 20 tokens a round, pot
× 2 shared by all) with the learner in the first seat and SmolLM2 (``vllm:smollm2-135m-instruct@URL``, the
generic LLM policy, guided answers) in the other two. Contributing is a loss for the contributor
(each token gives back 2/3), so the learner's return rises as it learns to keep its tokens. Four
copies of the game are stepped together (``ConcurrentVecEnv``, picked by ``vec="auto"`` for LLM
opponents), so the server batches the copies' requests.

The server: ``--url`` of a running one serving SmolLM2 as ``smollm2`` (``arena serve
~/.cache/arena_envs/smollm2-135m-instruct --name smollm2 -- --enforce-eager``), or, without it,
one started here for the run (``scripts/setup_llm.sh`` installs it). On a 2-core CPU the default
256 steps take about four minutes::

    python examples/rl_gamma_llm.py [--url http://127.0.0.1:8000/v1] [--steps 256] [--eval-episodes 2] \\
        [--out runs/rl_gamma_llm]
    tensorboard --logdir runs/rl_gamma_llm/tb
"""
from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator

import torch

from baselines.rl.train import TrainConfig, train


@contextlib.contextmanager
def server_url(url: str | None) -> Iterator[str]:
    """``url``, or the URL of a SmolLM2 server started for the run."""
    if url:
        yield url
        return
    from llm_policies.serve import smollm2_server

    print("starting the local vLLM server (SmolLM2)...", flush=True)
    with smollm2_server().start(timeout=900) as server:
        yield server.url


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("ARENA_VLLM_URL"),
                        help="a running vLLM server serving SmolLM2 as 'smollm2-135m-instruct' "
                             "(default: $ARENA_VLLM_URL, else start one)")
    parser.add_argument("--game", default="public_goods_v0", help="a γ-Bench game (default public_goods_v0)")
    parser.add_argument("--players", type=int, default=3, help="n_players (default 3)")
    parser.add_argument("--rounds", type=int, default=5, help="n_rounds (default 5)")
    parser.add_argument("--steps", type=int, default=256, help="learner steps (default 256)")
    parser.add_argument("--n-envs", type=int, default=4, help="game copies stepped together (default 4)")
    parser.add_argument("--eval-episodes", type=int, default=2,
                        help="episodes of each evaluation, per opponent type (default 2)")
    parser.add_argument("--out", default="runs/rl_gamma_llm", help="training folder (default runs/rl_gamma_llm)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)  # the server needs the cores more than the small network
    with server_url(args.url) as url:
        game = {"n_players": args.players, "n_rounds": args.rounds}
        llm = f"vllm:smollm2-135m-instruct@{url}"
        config = TrainConfig(env=args.game, algo="maskable_ppo", opponents=(llm,) * (args.players - 1),
                             steps=args.steps, seed=args.seed, env_kwargs=game, n_envs=args.n_envs,
                             eval_every=max(1, args.steps // 2), eval_episodes=args.eval_episodes,
                             # small rollouts and a short window for the logged mean return: few, slow episodes
                             algo_kwargs={"n_steps": 8, "batch_size": 32, "n_epochs": 4, "learning_rate": 1e-3,
                                          "stats_window_size": 8})
        summary = train(config, args.out, progress=True)
    print(f"model: {summary.model} ({summary.steps} steps in {summary.seconds:.0f}s)")


if __name__ == "__main__":
    main()
