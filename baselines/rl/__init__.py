"""Reinforcement-learning baselines: stable-baselines3 agents trained in one seat of a suite game.

* :mod:`baselines.rl.train`: :func:`train` / ``arena train`` (checkpoints, TensorBoard,
  evaluation tables, resume);
* :mod:`baselines.rl.evaluation`: a model's mean return against each opponent type beside random play;
* :mod:`baselines.rl.sb3_policy`: the policy spec ``sb3:PATH`` (a trained model as a player);
* :mod:`baselines.rl.envs`, :mod:`baselines.rl.models`, :mod:`baselines.rl.callbacks`: the pieces.

Needs the ``rl`` extra (``pip install -e '.[rl]'``).
"""
from baselines.rl.evaluation import EvalRow, evaluate
from baselines.rl.sb3_policy import Sb3Policy, policy_from_spec
from baselines.rl.train import TrainConfig, TrainSummary, train

__all__ = ["EvalRow", "Sb3Policy", "TrainConfig", "TrainSummary", "evaluate", "policy_from_spec", "train"]
