"""Non-LLM policies (named for specs in :mod:`arena_envs.runner.policy_registry`): random and
human here for every game; each game family's rule baselines in its package (``auction``,
``gamma``, ``tank``, ``trading``, ``wis``); RL agents in ``rl`` (stable-baselines3) and ``rllib``."""
