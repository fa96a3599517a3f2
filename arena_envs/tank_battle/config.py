"""The tank battle's options: :class:`TankConfig` holds every argument of
:class:`~arena_envs.tank_battle.env.TankBattleEnv` but the core's ``render_mode`` and ``max_cycles``,
with its default, checks them once when it is built (one-line ValueErrors of
:mod:`arena_envs.core.arguments`), and gives the record of them the env's ``config()`` returns."""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, cast

from arena_envs.core.arguments import MAX_RETRIES, check_bool, check_choice, check_int, check_real
from arena_envs.tank_battle.maps import GameMap, load_map, parse_map
from arena_envs.tank_battle.stages import MODES, Mode, Stage, custom_stage, stage_config

#: The most rounds of an episode (the stages play 60 or 80) and the most NPC tanks (their target ids).
MAX_ROUNDS = 10_000
MAX_NPCS = 10
ACTION_MODES = ("dict", "discrete")
OBS_MODES = ("both", "text", "grid", "numeric")
LANGS = ("en", "zh")
PARSERS = ("reference", "strict")
#: how MAcc counts moves: "reference" only those of format-valid answers (as BattleAgentBench's
#: metric script), "all_moves" every applied move
MACC_MODES = ("reference", "all_moves")


@dataclass(frozen=True)
class TankConfig:
    """The env's arguments (see ``docs/envs/tank_battle.md``). Once checked, each field holds the
    value played: ``stage`` and ``variant`` those of :attr:`played` (0 and "default" on a custom
    map, which ignores them), ``max_rounds`` and ``npc_total`` the stage's when None, the numbers
    as ints and floats, ``custom_map`` the 16 rows read, ``custom_mode`` and ``custom_team_count``
    None without a custom map. :attr:`played` is the stage played, :attr:`game_map` its map
    before any layout."""

    stage: int = 1
    variant: str = "default"
    action_mode: str = "dict"
    obs_mode: str = "both"
    lang: str = "en"
    parser: str = "reference"
    macc: str = "reference"
    layout_seed: int = 0
    max_rounds: int | None = None
    npc_total: int | None = None
    npc_max_alive: int = 5
    npc_spawn_base_prob: float = 0.6
    npc_act_prob: float = 0.4
    base_score: float = 5
    tank_hit_score: float = 1
    npc_kill_score: float = 1
    team_reward: bool = False
    hit_penalty: float = 0
    success_bonus: float = 0
    full_last_round: bool = False
    removal_skip: bool = False
    render_every_tick: bool = False
    custom_map: str | list[str] | tuple[str, ...] | None = None
    custom_mode: str | None = "navigation"
    custom_team_count: int | None = 2
    max_retries: int = 0
    played: Stage = field(init=False, repr=False, compare=False)
    game_map: GameMap = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        put = self._put
        put("action_mode", check_choice("action_mode", self.action_mode, ACTION_MODES))
        put("obs_mode", check_choice("obs_mode", self.obs_mode, OBS_MODES))
        put("lang", check_choice("lang", self.lang, LANGS))
        put("parser", check_choice("parser", self.parser, PARSERS))
        put("macc", check_choice("macc", self.macc, MACC_MODES))
        if self.custom_map is None:
            stage = stage_config(self.stage, self.variant)
            game_map = load_map(stage.map_name)
            put("custom_mode", None)
            put("custom_team_count", None)
        else:
            game_map = parse_map(self.custom_map)
            if not game_map.players:
                raise ValueError("custom_map must hold at least one player spawn (a digit 1-8)")
            mode = cast(Mode, check_choice("custom_mode", self.custom_mode, MODES))
            stage = custom_stage(len(game_map.players), mode, cast(int, self.custom_team_count))
            put("custom_map", game_map.rows)
        put("layout_seed", check_int("layout_seed", self.layout_seed, 0))
        rounds = check_int("max_rounds", stage.rounds if self.max_rounds is None else self.max_rounds, 1, MAX_ROUNDS)
        npcs = check_int("npc_total", stage.npc_total if self.npc_total is None else self.npc_total, 0, MAX_NPCS)
        if stage.rounds != rounds or stage.npc_total != npcs:
            stage = replace(stage, rounds=rounds, npc_total=npcs)
        put("played", stage)
        put("game_map", game_map)
        put("stage", stage.number)
        put("variant", stage.variant)
        put("max_rounds", rounds)
        put("npc_total", npcs)
        for name in ("npc_spawn_base_prob", "npc_act_prob"):
            put(name, check_real(name, getattr(self, name), 0, 1))
        put("npc_max_alive", check_int("npc_max_alive", self.npc_max_alive, 0, MAX_NPCS))
        for name in ("tank_hit_score", "npc_kill_score", "base_score", "hit_penalty", "success_bonus"):
            put(name, check_real(name, getattr(self, name)))
        for name in ("team_reward", "full_last_round", "render_every_tick", "removal_skip"):
            put(name, check_bool(name, getattr(self, name)))
        put("max_retries", check_int("max_retries", self.max_retries, 0, MAX_RETRIES))

    def _put(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    def record(self) -> dict[str, Any]:
        """The arguments as a run records them (the env's ``config()``, JSON-safe): every field but
        ``render_every_tick`` (how the window animates, not the game) and the derived ones."""
        record = {f.name: getattr(self, f.name) for f in fields(self) if f.init and f.name != "render_every_tick"}
        if self.custom_map is not None:
            record["custom_map"] = list(self.custom_map)
        return record
