"""Reinforcement-learning baselines: stable-baselines3 agents trained in one seat of a suite game.

* :mod:`baselines.rl.train`: :func:`train` / ``arena train`` (checkpoints, TensorBoard,
  evaluation tables, resume);
* :mod:`baselines.rl.evaluation`: a model's mean return against each opponent type beside random play;
* :mod:`baselines.rl.sb3_policy`: the policy spec ``sb3:PATH`` (a trained model as a player);
* :mod:`baselines.rl.vec_env`: environment copies for one learner (LLM opponents' requests concurrent);
* :mod:`baselines.rl.envs`, :mod:`baselines.rl.models`, :mod:`baselines.rl.callbacks`: the pieces.

Needs the ``rl`` extra (``pip install -e '.[rl]'``). The package itself imports nothing (its
modules are imported by name: ``from baselines.rl.train import TrainConfig, train``), so that
``baselines.rl.train`` stays the module.
"""
