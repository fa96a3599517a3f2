"""The options of the trained-model spec kinds (``sb3:``, ``rllib:``) and their defaults, as text:
declared here once, in a module that imports nothing, so that ``arena policies`` lists them (through
the ``arena_envs.policy_options`` entry points) without torch or Ray; the factories of
:mod:`baselines.rl.sb3_policy` and :mod:`baselines.rllib.policy` accept exactly these.
"""
from __future__ import annotations

SPEC_OPTIONS: dict[str, dict[str, str]] = {"sb3": {"deterministic": "true"}, "rllib": {"deterministic": "0"}}
