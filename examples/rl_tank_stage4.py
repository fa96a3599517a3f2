"""PPO in stage 4 of the tank battle (tank_battle_v0) against the rule tank: hit it and the NPCs.

The learner (``tank_0``) reads the ``(25, 64, 64)`` grid (``obs_mode="grid"``, a small CNN) and
picks one of six operations (``action_mode="discrete"``); the rule tank (the greedy hunter of
``baselines.tank.rule``, native actions) plays the other seat. The reward is the paper's score
(hits, NPC kills, bases). Through ``baselines.rl.train``, with checkpoints, TensorBoard events
(``OUT/tb``) and evaluations against the rule tank beside a random learner::

    python examples/rl_tank_stage4.py [--steps 20000] [--out runs/rl_tank_stage4]
    arena run tank_battle_v0 --players sb3:runs/rl_tank_stage4,rule --env-arg stage=4
"""
from __future__ import annotations

import argparse

import torch

from baselines.rl.train import TrainConfig, train


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="learner steps (default 20000)")
    parser.add_argument("--out", default="runs/rl_tank_stage4", help="training folder (default runs/rl_tank_stage4)")
    parser.add_argument("--eval-episodes", type=int, default=10,
                        help="episodes of each evaluation (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)  # one thread: faster than several on a small shared CPU
    config = TrainConfig(env="tank_battle_v0", algo="ppo", opponents=("rule:native=true",), steps=args.steps,
                         seed=args.seed, env_kwargs={"stage": 4}, eval_every=max(1, args.steps // 4),
                         eval_episodes=args.eval_episodes,
                         algo_kwargs={"n_steps": 512, "batch_size": 128, "n_epochs": 4})
    summary = train(config, args.out, progress=True)
    print(f"model: {summary.model} ({summary.steps} steps in {summary.seconds:.0f}s)")


if __name__ == "__main__":
    main()
