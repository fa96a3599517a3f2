"""Runs and results: the runner, the results folder, the leaderboard, policy specs and the CLI."""
from arena_envs.runner.leaderboard import compute as compute_leaderboard
from arena_envs.runner.leaderboard import leaderboard
from arena_envs.runner.policy_specs import make_policy, player_labels, split_players
from arena_envs.runner.results import ResultsFolder
from arena_envs.runner.runner import RunConfig, RunError, RunSummary, arun, run

__all__ = ["ResultsFolder", "RunConfig", "RunError", "RunSummary", "arun", "compute_leaderboard",
           "leaderboard", "make_policy", "player_labels", "run", "split_players"]
