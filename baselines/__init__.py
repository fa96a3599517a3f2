"""Non-LLM policies: random, human, the games' rule baselines, RL (named for specs in
:mod:`arena_envs.runner.policy_registry`)."""
