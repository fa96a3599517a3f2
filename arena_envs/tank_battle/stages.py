"""The seven stages of BattleAgentBench (its three levels) and their variants, as plain data.

A :class:`Stage` says everything the simulation and the text need about a stage: the map, the
number of tanks, the mode (who owns which base, who is an enemy), the team count, the round count,
the NPC total, whether tanks cooperate and with whom, and which prompt template the text uses.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from arena_envs.core.arguments import check_choice, check_int

Mode = Literal["navigation", "coop_vs_npc", "ffa", "teams"]
#: who a tank may ask for cooperation: nobody, its teammates, every other player, or both kinds
Partners = Literal["none", "teammates", "players"]
VARIANTS = ("default", "no_coop", "8p")
MODES: tuple[Mode, ...] = ("navigation", "coop_vs_npc", "ffa", "teams")


@dataclass(frozen=True)
class Stage:
    number: int  # 1-7 (0 for a custom map)
    name: str
    map_name: str  # an official map (``data/maps/<name>.txt``) or "custom"
    n_players: int
    mode: Mode
    team_count: int  # teams mode: team = id mod team_count; 1 otherwise
    rounds: int
    npc_total: int
    partners: Partners
    template: int  # the stage whose prompt template the text follows (3 for stage 5, as the paper)
    typed: bool  # tank lines carry the "advanced"/"normal" type (stages 6 and 7)
    primary: tuple[int, ...]  # the tanks whose figures make the paper's per-run numbers
    variant: str = "default"

    @property
    def cooperative(self) -> bool:
        return self.partners != "none"

    @property
    def navigation(self) -> bool:
        return self.mode == "navigation"


STAGES: dict[int, Stage] = {
    1: Stage(1, "Simple scenario navigation", "single1", 1, "navigation", 1, 60, 0, "none", 1, False, (0,)),
    2: Stage(2, "Complex scenario navigation", "single30", 1, "navigation", 1, 60, 10, "none", 2, False, (0,)),
    3: Stage(3, "Cooperative task execution", "double10", 2, "coop_vs_npc", 1, 80, 10, "teammates", 3, False,
             (0, 1)),
    4: Stage(4, "Competitive task execution", "multi30", 2, "ffa", 1, 80, 10, "none", 4, False, (0,)),
    5: Stage(5, "Static cooperation-competition", "multi30", 4, "teams", 2, 80, 10, "teammates", 3, False, (0, 2)),
    6: Stage(6, "Dynamic cooperation-competition", "multi20", 4, "ffa", 1, 80, 10, "players", 6, True, (0,)),
    7: Stage(7, "Hybrid cooperation-competition", "coop30", 6, "teams", 3, 80, 10, "players", 7, True, (0, 3)),
}


def stage_config(stage: int, variant: str = "default") -> Stage:
    """The :class:`Stage` of ``stage`` (1-7) in ``variant`` ("default"; "no_coop" for stages 5-7:
    no cooperation, the stage 3 template without its cooperation parts for 5 and 7, the stage 4
    template for 6; "8p" for stage 7: eight tanks in four teams on the four-base map)."""
    check_int("stage", stage, min(STAGES), max(STAGES))
    check_choice("variant", variant, VARIANTS)
    base = STAGES[stage]
    if variant == "no_coop":
        if stage < 5:
            raise ValueError(f"variant 'no_coop' exists for stages 5-7, got stage {stage}")
        return replace(base, partners="none", template=4 if stage == 6 else 3, typed=False, variant=variant)
    if variant == "8p":
        if stage != 7:
            raise ValueError(f"variant '8p' exists for stage 7 only, got stage {stage}")
        return replace(base, map_name="coop8", n_players=8, team_count=4, primary=(0, 4), variant=variant)
    return base


def custom_stage(n_players: int, mode: Mode, team_count: int = 1, rounds: int = 80, npc_total: int = 0) -> Stage:
    """A stage on a custom map (tests and extensions): the template of the closest official stage."""
    check_choice("custom_mode", mode, MODES)
    if mode == "teams":
        check_int("custom_team_count", team_count, 2, n_players)
    template = {"navigation": 2, "coop_vs_npc": 3, "ffa": 4, "teams": 3}[mode]
    partners: Partners = "teammates" if mode in ("coop_vs_npc", "teams") else "none"
    return Stage(0, "Custom map", "custom", n_players, mode, team_count if mode == "teams" else 1, rounds,
                 npc_total, partners, template, False, (0,))
