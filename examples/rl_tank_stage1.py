"""PPO for stage-1 navigation of the tank battle (tank_battle_v0): drive the tank to the goal.

The learner reads the ``(25, 64, 64)`` grid (``obs_mode="grid"``, a small CNN) and picks one of
six operations (``action_mode="discrete"``); its reward each round is the decrease of its path
distance to the goal. Through ``baselines.rl.train``, with checkpoints, TensorBoard events
(``OUT/tb``) and evaluations beside a random driver on the same layouts::

    python examples/rl_tank_stage1.py [--steps 16384] [--out runs/rl_tank_stage1] [--layout 1]
    arena run tank_battle_v0 --players sb3:runs/rl_tank_stage1 --env-arg stage=1 --env-arg layout_seed=1
"""
from __future__ import annotations

import argparse

import torch

from baselines.rl.train import TrainConfig, train


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=16_384, help="learner steps (default 16384: 32 rollouts)")
    parser.add_argument("--out", default="runs/rl_tank_stage1", help="training folder (default runs/rl_tank_stage1)")
    parser.add_argument("--layout", type=int, default=1, help="layout_seed: the paper's start layout (default 1)")
    parser.add_argument("--eval-episodes", type=int, default=10,
                        help="episodes of each evaluation (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)  # one thread: faster than several on a small shared CPU
    config = TrainConfig(env="tank_battle_v0", algo="ppo", opponents=(), steps=args.steps, seed=args.seed,
                         env_kwargs={"stage": 1, "layout_seed": args.layout}, eval_every=max(1, args.steps // 4),
                         eval_episodes=args.eval_episodes,
                         algo_kwargs={"n_steps": 512, "batch_size": 128, "n_epochs": 4})
    summary = train(config, args.out, progress=True)
    print(f"model: {summary.model} ({summary.steps} steps in {summary.seconds:.0f}s)")


if __name__ == "__main__":
    main()
