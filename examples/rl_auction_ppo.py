"""PPO in the auction (auction_v0) against two of the paper's rule bidders, through ``baselines.rl.train``.

The learner bids in the first seat; its reward is its profit. Checkpoints, TensorBoard events
(``OUT/tb``) and an evaluation against the rule bidders, beside a random bidder on the same deals,
every fifth of the training and at the end (``OUT/evaluation.jsonl``)::

    python examples/rl_auction_ppo.py [--steps 60000] [--out runs/rl_auction_ppo] [--seed 0]
    tensorboard --logdir runs/rl_auction_ppo/tb
    arena run auction_v0 --players sb3:runs/rl_auction_ppo,rule,rule --episodes 20
"""
from __future__ import annotations

import argparse

import torch

from baselines.rl.train import TrainConfig, train


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=60_000, help="learner steps (default 60000)")
    parser.add_argument("--out", default="runs/rl_auction_ppo", help="training folder (default runs/rl_auction_ppo)")
    parser.add_argument("--eval-episodes", type=int, default=200,
                        help="episodes of each evaluation (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)  # one thread: faster than several on a small shared CPU
    # The returns are dollars (thousands): unscaled, the value loss (squared dollars) would dominate the
    # gradient that PPO clips as a whole (max_grad_norm), leaving the policy's part next to nothing.
    config = TrainConfig(env="auction_v0", algo="ppo", opponents=("rule", "rule"), steps=args.steps, seed=args.seed,
                         eval_every=max(1, args.steps // 5), eval_episodes=args.eval_episodes,
                         algo_kwargs={"vf_coef": 1e-6, "ent_coef": 0.01})
    summary = train(config, args.out, progress=True)
    print(f"model: {summary.model} ({summary.steps} steps in {summary.seconds:.0f}s)")


if __name__ == "__main__":
    main()
