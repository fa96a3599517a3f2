"""``arena eval``: a model's report card, every game in its paper's default setting.

:mod:`~arena_envs.evaluation.settings` holds the twelve paper settings (lineups, episode counts,
headline metrics), :mod:`~arena_envs.evaluation.evaluate` plays them as ordinary runner runs into
one resumable folder, :mod:`~arena_envs.evaluation.cli` is the command line. The package sits
above the runner and below the CLI; nothing is imported here, so ``import arena_envs`` stays light.
"""
