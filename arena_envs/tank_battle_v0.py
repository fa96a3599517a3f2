"""BattleAgentBench's tank battle: ``env()``, ``raw_env()`` and ``parallel_env()`` (one ``step`` per round).

``env(stage=4, render_mode="human")`` opens a pygame window; keyword arguments are those of
:class:`arena_envs.tank_battle.env.TankBattleEnv`: ``stage=1..7``, ``variant`` ("default",
"no_coop" for stages 5-7, "8p" for stage 7), ``action_mode`` ("dict", "discrete"), ``obs_mode``
("both", "text", "grid", "numeric": the numeric view), ``lang`` ("en", "zh"), ``parser``
("reference", "strict"), ``macc`` ("reference", "all_moves"), ``layout_seed`` (0: the map as drawn;
1-5: the paper's layouts), the NPC, score and reward options, ``custom_map`` with ``custom_mode``
and ``custom_team_count``.
"""
from arena_envs.core import entry_points, parallel_entry_point
from arena_envs.tank_battle.env import TankBattleEnv

env, raw_env = entry_points(TankBattleEnv)
parallel_env = parallel_entry_point(TankBattleEnv)

__all__ = ["TankBattleEnv", "env", "parallel_env", "raw_env"]
