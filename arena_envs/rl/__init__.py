"""Reinforcement learning on the suite's games: one seat as a Gymnasium environment.

:class:`LearnerEnv` turns any suite environment into a single-agent Gymnasium environment for one
learner seat, every other seat played by given policies (see :mod:`arena_envs.rl.learner_env`).
:class:`NumericAEC` is the multi-agent counterpart: several learner seats as a PettingZoo AEC
environment of numeric observations (RLlib's PettingZoo wrapper takes it; ``baselines.rllib``).
Neither needs an RL library: stable-baselines3 training, the ``sb3:PATH`` policy and ``arena train``
live in ``baselines.rl`` (the ``rl`` extra).
"""
from arena_envs.core.flat_actions import FlatActions
from arena_envs.rl.learner_env import LearnerEnv
from arena_envs.rl.numeric_aec import NumericAEC
from arena_envs.rl.opponents import SELF, FunctionPolicy, SnapshotPolicy, SnapshotPool, as_policy, random_action

__all__ = ["SELF", "FlatActions", "FunctionPolicy", "LearnerEnv", "NumericAEC", "SnapshotPolicy", "SnapshotPool",
           "as_policy", "random_action"]
