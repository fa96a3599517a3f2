"""BattleAgentBench's tank battle as a PettingZoo AEC environment (arguments: :class:`TankBattleEnv`).

* **Turns**: every living tank decides once per round, in id order, from the state at the start of
  the round; the last answer runs the round's ticks (:meth:`World.play_round`). The parallel API's
  ``step`` is one round.
* **Actions**: an LLM's answer text (``parser`` ``"reference"`` or ``"strict"``, :mod:`.parser`) or
  a native action of ``action_mode``: ``"dict"`` (default) ``Dict(op: Discrete(6), target:
  Discrete(23), coop: Discrete(4), coop_partner: Discrete(8), reply: MultiDiscrete([3] * 8))``
  (``target`` indexes :data:`TARGET_IDS`; ``coop`` 0 none, 1 keep, 2 stop, 3 request; ``reply[j]``
  0 none, 1 agree, 2 disagree), masked part by part; ``"discrete"`` ``Discrete(6)`` (up, down,
  left, right, shoot, noop at the nearest enemy). An invalid answer is a ``noop`` (the paper's
  handling) after ``max_retries`` re-asks (default 0), and the next text says why.
* **Observations**: ``text`` (:mod:`.text`), ``observation`` the ``(25, 64, 64)`` uint8 grid
  (:mod:`.grid`), ``action_mask``; ``obs_mode`` ``"both"``, ``"text"`` (zero grid), ``"grid"`` (empty
  text) or ``"numeric"`` (:mod:`arena_envs.core.numeric_view`).
* **Rewards**, once a round: stages 1-2 the decrease of the path distance to the base; stages 3-7
  the stage's hit, NPC-kill and base scores. ``episode_metrics()``: the paper's per-tank figures.
* **Rendering**: ``"human"`` (a pygame window, once a round), ``"rgb_array"``, ``"ansi"`` (:mod:`.render`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, NamedTuple

import numpy as np
from gymnasium import spaces

from arena_envs.core import AnswerConstraint, Answered, InvalidAnswer, SimultaneousPhase, TextAECEnv
from arena_envs.core.answers import excerpt, native_index
from arena_envs.core.arguments import check_int
from arena_envs.tank_battle import grid, metrics, parser
from arena_envs.tank_battle.config import TankConfig
from arena_envs.tank_battle.coop import CoopState, legal_partners
from arena_envs.tank_battle.decision import Decision
from arena_envs.tank_battle.maps import apply_layout
from arena_envs.tank_battle.records import FIRST_NPC_ID, ROUND_TICKS
from arena_envs.tank_battle.render import FrameInfo, ansi_map, draw_frame
from arena_envs.tank_battle.text import TankMemory, TankTexts, round_feedback, round_start
from arena_envs.tank_battle.world import Operation, World

#: The target ids a ``dict`` action's ``target`` indexes: none (-1), the tanks, the NPCs, the bases.
TARGET_IDS = (-1, *range(8), *range(FIRST_NPC_ID, FIRST_NPC_ID + 10), 100, 101, 102, 103)
#: ``discrete`` action -> operation
OPS: tuple[Operation, ...] = ("up", "down", "left", "right", "shoot", "noop")
COOP_OPS = ("none", "keep", "stop", "request")
MAX_PLAYERS = 8
WALL = parser.WALL_TARGET
NO_TARGET = parser.NO_TARGET


#: why an answer was not taken (the reason the next text shows) and a dict action's request message
_SAY = {
    "en": {"target": "target {} is not -1, 200, a listed enemy tank or an enemy base",
           "request": "Please attack tank {} together with me"},
    "zh": {"target": "目标{}不是-1、200、列出的敌方坦克或敌方基地",
           "request": "请和我一起攻击坦克{}"},
}


class Move(NamedTuple):
    """A decision as the round applies it, and whether its answer was format-valid (FAcc)."""

    decision: Decision
    format_ok: bool


class TankBattleEnv(TextAECEnv):
    """``stage`` 1-7 of BattleAgentBench (:mod:`.stages`) and its options, checked and kept as a
    :class:`~.config.TankConfig` (``settings``); see the module docstring and ``docs/envs/tank_battle.md``."""

    metadata: ClassVar[dict[str, Any]] = {"name": "tank_battle_v0", "render_modes": ["human", "rgb_array", "ansi"],
                                          "render_fps": 4, "is_parallelizable": True}
    #: the number of the picture: 0 after reset, one more a round (and a tick when animated)
    frame_id: int = 0

    def __init__(self, stage: int = 1, *, variant: str = "default", action_mode: str = "dict",
                 obs_mode: str = "both", lang: str = "en", parser: str = "reference", macc: str = "reference",
                 layout_seed: int = 0,
                 max_rounds: int | None = None, npc_total: int | None = None, npc_max_alive: int = 5,
                 npc_spawn_base_prob: float = 0.6, npc_act_prob: float = 0.4, base_score: float = 5,
                 tank_hit_score: float = 1, npc_kill_score: float = 1, team_reward: bool = False,
                 hit_penalty: float = 0, success_bonus: float = 0, full_last_round: bool = False,
                 removal_skip: bool = False, render_every_tick: bool = False,
                 custom_map: str | list[str] | None = None, custom_mode: str = "navigation",
                 custom_team_count: int = 2, max_retries: int = 0,
                 render_mode: str | None = None, max_cycles: int | None = None):
        settings = self.settings = TankConfig(
            stage, variant=variant, action_mode=action_mode, obs_mode=obs_mode, lang=lang, parser=parser, macc=macc,
            layout_seed=layout_seed, max_rounds=max_rounds, npc_total=npc_total, npc_max_alive=npc_max_alive,
            npc_spawn_base_prob=npc_spawn_base_prob, npc_act_prob=npc_act_prob, base_score=base_score,
            tank_hit_score=tank_hit_score, npc_kill_score=npc_kill_score, team_reward=team_reward,
            hit_penalty=hit_penalty, success_bonus=success_bonus, full_last_round=full_last_round,
            removal_skip=removal_skip, render_every_tick=render_every_tick, custom_map=custom_map,
            custom_mode=custom_mode, custom_team_count=custom_team_count, max_retries=max_retries)
        self.stage = settings.played
        self.weights = metrics.ScoreWeights(settings.tank_hit_score, settings.npc_kill_score, settings.base_score)
        n = self.stage.n_players
        agents = [f"tank_{i}" for i in range(n)]
        space = self._action_space()
        super().__init__(agents=agents, action_spaces={a: space for a in agents}, feature_names=grid.CHANNEL_NAMES,
                         feature_shape=grid.GRID_SHAPE, feature_dtype=np.uint8, feature_low=0, feature_high=255,
                         max_retries=settings.max_retries, render_mode=render_mode, max_text_length=None,
                         max_cycles=max_cycles)
        self._index = {a: i for i, a in enumerate(agents)}
        self._zero_grid = grid.blank() if settings.obs_mode == "text" else None
        self._texts_of = TankTexts(self.stage, settings.lang)

    def _action_space(self) -> spaces.Space[Any]:
        if self.settings.action_mode == "discrete":
            return spaces.Discrete(len(OPS))
        return spaces.Dict({"op": spaces.Discrete(len(OPS)), "target": spaces.Discrete(len(TARGET_IDS)),
                            "coop": spaces.Discrete(len(COOP_OPS)), "coop_partner": spaces.Discrete(MAX_PLAYERS),
                            "reply": spaces.MultiDiscrete([3] * MAX_PLAYERS)})

    def config(self) -> dict[str, Any]:
        return self.settings.record()

    @property
    def layout_seed(self) -> int:
        """The start layout of the next resets (a reset's ``options["layout_seed"]`` overrides it for
        that episode); setting it between episodes, as :mod:`arena_envs.evaluation.tank_layouts`
        does, changes the settings and so ``config()``."""
        return self.settings.layout_seed

    @layout_seed.setter
    def layout_seed(self, value: int) -> None:
        self.settings = replace(self.settings, layout_seed=value)

    # ---------------------------------------------------------------- the game
    def _start_game(self, options: dict[str, Any]) -> None:
        layout = options.get("layout_seed", self.layout_seed)
        layout = check_int("options['layout_seed']", layout, 0)
        settings = self.settings
        game_map = apply_layout(settings.game_map, self.stage.number, layout, self.stage.n_players, self.np_random)
        self.world = World(game_map, self.stage, self.np_random, npc_total=self.stage.npc_total,
                           npc_max_alive=settings.npc_max_alive, npc_spawn_base_prob=settings.npc_spawn_base_prob,
                           npc_act_prob=settings.npc_act_prob, full_last_round=settings.full_last_round,
                           removal_skip=settings.removal_skip)
        n = self.stage.n_players
        self.targets = dict.fromkeys(range(n), NO_TARGET)
        self.counts = [metrics.DecisionCounts() for _ in range(n)]
        self.returns = [0.0] * n
        self._phase: SimultaneousPhase[int, Any] = SimultaneousPhase(range(n))
        self._static = grid.static_planes(self.world)
        self._team_size = max(sum(1 for j in range(n) if self.world.team_of(j) == self.world.team_of(i))
                              for i in range(n))
        self._goal = self.stage.navigation and len(self.world.bases) == 1
        if self._goal:
            (base,) = self.world.bases.values()
            self._distances = metrics.tile_distances(self.world.steel, self.world.water, (base.x, base.y))
            start = self.world.players[0]
            self.d0 = metrics.distance_at(self._distances, start.x, start.y)
            self._d_now = self.d0
        self._cooperation = CoopState(self.stage)
        self._memory = [TankMemory() for _ in range(n)]
        self._answers: dict[int, str] = {}
        self._move_correct: dict[int, bool | None] = {}
        self._last_moves: dict[int, Move] = {}
        self._mask_memo: dict[tuple[Any, ...], Any] = {}  # see _mask
        self.frame_id = 0
        self._cache_round()

    def _cache_round(self) -> None:
        """Forget what was computed for the previous round's state (texts, grids, masks, infos)."""
        self._texts: dict[int, str] = {}
        self._lines: dict[int, str] = {}  # the tank lines of the texts (TankTexts.observation)
        self._grids: dict[int, np.ndarray] = {}
        self._common: np.ndarray | None = None
        self._masks: dict[int, Any] = {}
        self._infos: dict[int, dict[str, Any]] = {}

    # ---------------------------------------------------------------- answers
    def _player(self, agent: str) -> int:
        return self._index[agent]

    def nearest_target(self, player: int) -> int:
        """The target a ``discrete`` action attacks: the nearest enemy tank or enemy base (L1 between
        top-left corners, ties to the lower id; navigation: the goal), -1 when there is none."""
        me = self.world.players[player]
        spots = [(t.id, t.x, t.y) for t in self.world.enemy_tanks(player)]
        spots += [(b.id, b.x, b.y) for b in self.world.enemy_bases(player)]
        best: tuple[int, int] | None = None
        for target, x, y in spots:
            key = (abs(me.x - x) + abs(me.y - y), target)
            if best is None or key < best:
                best = key
        return NO_TARGET if best is None else best[1]

    def _parse_text(self, agent: str, text: str) -> Move:
        player = self._player(agent)
        decision = parser.parse_decision(text, self.stage, self.settings.parser == "strict", self.settings.lang)
        if not parser.control_valid(self.world, player, self.stage, decision):
            raise InvalidAnswer("illegal", _SAY[self.settings.lang]["target"].format(decision.target))
        return Move(decision, parser.format_ok(self.world, player, self.stage, decision))

    def _from_native(self, agent: str, action: Any) -> Move:
        player = self._player(agent)
        if self.settings.action_mode == "discrete":
            op = OPS[native_index(action, len(OPS), what="action")]
            return Move(Decision(op=op, op_found=True, target=self.nearest_target(player), coop="none"), True)
        if not isinstance(action, dict) or set(action) != {"op", "target", "coop", "coop_partner", "reply"}:
            raise InvalidAnswer("unparseable", "expected a dict with keys op, target, coop, coop_partner, reply, "
                                               f"or an answer text; got {excerpt(action)}")
        reply = action["reply"]
        replies = reply.tolist() if isinstance(reply, np.ndarray) else reply
        if not isinstance(replies, (list, tuple)) or len(replies) != MAX_PLAYERS or any(
                isinstance(v, bool) or v not in (0, 1, 2) for v in replies):
            raise InvalidAnswer("unparseable", f"reply must be {MAX_PLAYERS} values in 0-2, got {excerpt(reply)}")
        target_index = native_index(action["target"], len(TARGET_IDS), what="target")
        target = TARGET_IDS[target_index]
        coop = COOP_OPS[native_index(action["coop"], len(COOP_OPS), what="coop")] if self.stage.cooperative else "none"
        partner = native_index(action["coop_partner"], MAX_PLAYERS, what="coop_partner")
        decision = Decision(op=OPS[native_index(action["op"], len(OPS), what="op")], op_found=True,
                            target=None if self.stage.navigation else target, coop=coop,  # type: ignore[arg-type]
                            partner=partner if coop == "request" else None,
                            message=_SAY[self.settings.lang]["request"].format(target) if coop == "request" else "",
                            replies={j: v == 1 for j, v in enumerate(replies) if v})
        # the mask's legal targets are parser.control_valid's, less 200 (which no dict action names)
        if not self.stage.navigation and not self._action_mask(agent)["target"][target_index]:
            raise InvalidAnswer("illegal", _SAY[self.settings.lang]["target"].format(target))
        return Move(decision, True)

    def _validate(self, agent: str, move: Move) -> None:
        """Answers are judged as they are read (:meth:`_parse_text`, :meth:`_from_native`)."""

    def _fallback(self, agent: str) -> Move:
        """An invalid answer: the tank does nothing this round (``noop``), its target unchanged."""
        return Move(Decision(op="noop", op_found=False), False)

    def _apply(self, answered: Answered) -> None:
        player = self._player(answered.agent)
        if answered.text is not None:
            self._answers[player] = answered.text
        if self._phase.submit(player, answered.move):
            self._resolve_round()

    def _next_agent(self) -> str | None:
        player = self._phase.current
        return None if player is None else self.possible_agents[player]

    # ---------------------------------------------------------------- a round
    def _resolve_round(self) -> None:
        world = self.world
        moves: dict[int, Move] = dict(self._phase.moves)
        living = list(moves)
        starts = {}
        for player, move in moves.items():
            self._count_decision(player, move)
            if self.stage.navigation:
                self.targets[player] = next(iter(world.bases), NO_TARGET)
            elif move.decision.op_found:
                self.targets[player] = parser.effective_target(self.targets[player], move.decision.target)
            starts[player] = round_start(world, player, self.targets[player])
        coop_round = self._cooperation.end_round({p: m.decision for p, m in moves.items()}, world)
        report = world.play_round({p: m.decision.op for p, m in moves.items()}, self._on_tick())
        self.frame_id += 1
        for player, move in moves.items():
            op = move.decision.op if move.decision.op_found else None
            answer = self._answers.get(player) or ""
            self._memory[player].remember(op, self.targets[player],
                                          round_feedback(op, starts[player], world, player, self.settings.lang, answer))
        assert self.record is not None
        self.record.add("round", round=world.rounds_played - 1,
                        ops={p: m.decision.op for p, m in moves.items()},
                        targets={p: self.targets[p] for p in living},
                        format_ok={p: m.format_ok for p, m in moves.items()},
                        requests=[[r.source, r.partner, r.message] for r in coop_round.delivered],
                        agreed=[[r.source, r.partner, r.kind] for r in coop_round.records],
                        events={p: vars(e) for p, e in report.events.items()},
                        eliminated=report.eliminated, bases_destroyed=report.bases_destroyed, ticks=report.ticks)
        self._reward(living, report)
        self._end_players()
        self._phase.start(p for p in range(self.stage.n_players) if not self._ended(self.possible_agents[p]))
        self._answers.clear()
        self._last_moves = moves
        self._cache_round()

    def _count_decision(self, player: int, move: Move) -> None:
        """FAcc and MAcc of a decision, from the state it was made in. Every decision counts for FAcc.
        A move counts for MAcc when it was applied, its answer was format-valid (``macc="all_moves"``:
        any applied move) and its target (200: the previous one; navigation: the goal) is a living enemy
        tank or base."""
        counts = self.counts[player]
        counts.decisions += 1
        counts.format_ok += move.format_ok
        op = move.decision.op
        self._move_correct[player] = None
        scored = move.decision.op_found and (move.format_ok or self.settings.macc == "all_moves")
        if op in ("up", "down", "left", "right") and scored:
            target = self._target_object(player, move.decision.target)
            if target is not None:
                me = self.world.players[player]
                correct = op in metrics.correct_directions(me.x, me.y, target[0], target[1])
                counts.moves += 1
                counts.correct_moves += correct
                self._move_correct[player] = correct

    def _target_object(self, player: int, declared: int | None) -> tuple[int, int] | None:
        """Top-left of the effective target of a decision (navigation: the goal base), if it exists."""
        world = self.world
        if self.stage.navigation:
            base = next(iter(world.bases.values()), None)
            return None if base is None else (base.x, base.y)
        target = self.targets[player] if declared is None or declared == WALL else declared
        if target in world.bases:
            base = world.bases[target]
            return base.x, base.y
        for tank in world.enemy_tanks(player):
            if tank.id == target:
                return tank.x, tank.y
        return None

    def _reward(self, living: list[int], report: Any) -> None:
        world, settings = self.world, self.settings
        rewards = dict.fromkeys(living, 0.0)
        if self._goal:
            for player in living:
                me = world.players[player]
                now = 0 if not world.bases else metrics.distance_at(self._distances, me.x, me.y) if me.alive \
                    else self._d_now
                rewards[player] = float(self._d_now - now)
                self._d_now = now
                if world.ended_by == "touch":
                    rewards[player] += settings.success_bonus
        else:
            for player, events in report.events.items():
                if player in rewards:
                    received = events.hit_by_npc + events.hit_by_agent
                    rewards[player] = self.weights.score(events) - settings.hit_penalty * received
            if settings.team_reward:
                teams: dict[int, float] = {}
                for player, value in rewards.items():
                    teams[world.team_of(player)] = teams.get(world.team_of(player), 0.0) + value
                rewards = {p: teams[world.team_of(p)] for p in rewards}
        for player, value in rewards.items():
            self.rewards[self.possible_agents[player]] = value
            self.returns[player] += value

    def _end_players(self) -> None:
        """Terminate eliminated tanks; at the end of the game terminate (or, at time-out, truncate) the rest."""
        world = self.world
        for player in range(self.stage.n_players):
            agent = self.possible_agents[player]
            if self._ended(agent) or agent not in self.terminations:
                continue
            if not world.players[player].alive:
                self.terminations[agent] = True
            elif world.over:
                if world.ended_by == "timeout":
                    self.truncations[agent] = True
                else:
                    self.terminations[agent] = True

    def _ended(self, agent: str) -> bool:
        return self.terminations.get(agent, True) or self.truncations.get(agent, True)

    def _on_tick(self) -> Any:
        """The per-tick callback of the round: a redrawn window when animating (``render_every_tick``)."""
        if not (self.settings.render_every_tick and self.render_mode == "human"):
            return None

        def redraw(world: World) -> None:
            self.frame_id += 1
            self.render()

        return redraw

    # ---------------------------------------------------------------- observations
    def _text(self, agent: str, note: str | None) -> str:
        if self.settings.obs_mode in ("grid", "numeric"):
            return ""
        player = self._player(agent)
        if note is None:
            cached = self._texts.get(player)
            if cached is None:
                cached = self._texts[player] = self._texts_of.observation(
                    self.world, player, self.world.rounds_played, self._memory[player], self.targets,
                    self._cooperation, lines=self._lines)
            return cached
        return self._texts_of.observation(self.world, player, self.world.rounds_played, self._memory[player],
                                          self.targets, self._cooperation, note, self._lines)

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint:
        player = self._player(self.agent_selection if agent is None else agent)
        return parser.answer_constraint(self.stage, self.world, player, self.pending_requests(player),
                                        lang=self.settings.lang)

    def _features(self, agent: str) -> np.ndarray:
        if self._zero_grid is not None:
            return self._zero_grid
        player = self._player(agent)
        cached = self._grids.get(player)
        if cached is None:
            if self._common is None:
                self._common = grid.common_planes(self.world, self._static)
            cached = self._grids[player] = grid.grid_observation(self.world, player, self._common, self._team_size)
        return cached

    def _action_mask(self, agent: str) -> Any:
        player = self._player(agent)
        cached = self._masks.get(player)
        if cached is None:
            cached = self._masks[player] = self._mask(player)
        return cached

    def _mask(self, player: int) -> Any:
        """The mask of ``player``'s decision now. It depends only on the legal targets, the legal
        partners and the pending requests, which seldom change, so each distinct mask is built once
        per episode and shared, read-only."""
        if self.settings.action_mode == "discrete":
            key: tuple[Any, ...] = ()
        else:
            world = self.world
            legal = frozenset((NO_TARGET,) if self.stage.navigation else
                              (NO_TARGET, *(t.id for t in world.enemy_tanks(player)),
                               *(b.id for b in world.enemy_bases(player))))
            partners = tuple(legal_partners(world, self.stage, player)) if self.stage.cooperative else None
            key = (legal, partners, tuple(request.source for request in self._cooperation.pending(player)))
        mask = self._mask_memo.get(key)
        if mask is None:
            mask = self._mask_memo[key] = self._build_mask(*key)
        return mask

    @staticmethod
    def _build_mask(legal: frozenset[int] | None = None, partners: tuple[int, ...] | None = None,
                    sources: tuple[int, ...] = ()) -> Any:
        """A read-only mask: ``op`` alone (no ``legal``: a ``discrete`` action), else the ``dict``
        action's parts for these legal targets, partners (None: the stage does not cooperate) and
        sources of pending requests."""
        ops = np.ones(len(OPS), dtype=np.int8)
        ops.setflags(write=False)
        if legal is None:
            return ops
        target = np.array([target_id in legal for target_id in TARGET_IDS], dtype=np.int8)
        if partners is not None:
            coop = np.array([1, 1, 1, bool(partners)], dtype=np.int8)
            allowed = np.array([j in partners for j in range(MAX_PLAYERS)], dtype=np.int8)
        else:
            coop = np.array([1, 0, 0, 0], dtype=np.int8)
            allowed = np.zeros(MAX_PLAYERS, dtype=np.int8)
        replies = np.zeros((MAX_PLAYERS, 3), dtype=np.int8)
        replies[:, 0] = 1
        replies[list(sources), 1:] = 1
        for array in (target, coop, allowed, replies):
            array.setflags(write=False)
        return {"op": ops, "target": target, "coop": coop, "coop_partner": allowed, "reply": tuple(replies)}

    def pending_requests(self, player: int) -> list[int]:
        """Ids of the players whose cooperation requests wait for ``player``'s reply this round."""
        return [request.source for request in self._cooperation.pending(player)]

    # ---------------------------------------------------------------- info and metrics
    def _agent_info(self, agent: str) -> dict[str, Any]:
        """A fresh copy of the round's info of ``agent`` (the core adds the answer's keys to it); it
        changes only when a round resolves, so it is built once per round."""
        player = self._player(agent)
        cached = self._infos.get(player)
        if cached is None:
            cached = self._infos[player] = self._round_info(agent, player)
        return dict(cached)

    def _round_info(self, agent: str, player: int) -> dict[str, Any]:
        world = self.world
        me = world.players[player]
        events = world.events[player]
        last = self._last_moves.get(player)
        info: dict[str, Any] = {
            "round": world.rounds_played, "health": me.health, "frozen": me.frozen, "position": (me.x, me.y),
            "facing": me.facing, "target": self.targets[player], "partner": self._cooperation.partner(player),
            "format_ok": None if last is None else last.format_ok,
            "parsed_op": None if last is None else last.decision.op,
            "parsed_coop": None if last is None else last.decision.coop,
            "move_correct": self._move_correct.get(player), "events": vars(events).copy(),
            "score": self.weights.score(events), "event_count_score": metrics.event_count_score(events),
            "internal_points": world.points[player], "win_state": world.win_state.get(player),
            "action_mask": self._action_mask(agent),
        }
        if self._goal:
            info["fdis"] = self.d0 - self._d_now
            info["d0"] = self.d0
        return info

    def _metrics(self) -> dict[str, Any]:
        world = self.world
        agents: dict[str, Any] = {}
        for player, agent in enumerate(self.possible_agents):
            events = world.events[player]
            counts = self.counts[player]
            entry: dict[str, Any] = {
                "score": float(self.d0 - self._d_now) if self._goal else self.weights.score(events),
                "facc": counts.facc, "macc": counts.macc, "decisions": counts.decisions,
                **vars(events), "event_count_score": metrics.event_count_score(events),
                "internal_points": world.points[player], "win_state": world.win_state.get(player),
            }
            if self._goal:
                entry.update(fdis=entry["score"], d0=self.d0, paper_score=self.weights.score(events))
            agents[agent] = entry
        primary = [p for p in self.stage.primary if p < self.stage.n_players]
        game: dict[str, Any] = {
            "stage": self.stage.number, "rounds": world.rounds_played, "ended_by": world.ended_by,
            "facc": float(np.mean([self.counts[p].facc for p in primary])),
            "macc": float(np.mean([self.counts[p].macc for p in primary])),
        }
        if self._goal:
            game.update(fdis=float(self.d0 - self._d_now), d0=self.d0,
                        goal_completion=(self.d0 - self._d_now) / self.d0 if self.d0 else 0.0)
        else:
            game["score"] = sum(self.weights.score(world.events[p]) for p in primary)
        game["success"] = all(world.win_state.get(p) == 1 for p in primary)
        return {"agents": agents, "game": game}

    # ---------------------------------------------------------------- rendering and state
    def _frame_info(self) -> FrameInfo:
        messages = [(r.source, r.partner, r.message) for r in self._cooperation.messages[-6:]]
        blink = self.render_mode != "human" or self.frame_id % 2 == 0
        return FrameInfo(scores={p: self.weights.score(e) for p, e in self.world.events.items()},
                         targets=dict(self.targets), messages=messages, blink_on=blink)

    def _render_text(self) -> str:
        return ansi_map(self.world, self._frame_info())

    def _draw_frame(self) -> Any:
        return draw_frame(self.world, self.stage, self._frame_info())

    def _frame_rate(self) -> float:
        """``render_fps`` rounds a second; animated (``render_every_tick``), as many rounds' worth of
        frames (a frame per tick and the round's own)."""
        fps = float(self.metadata["render_fps"])
        return fps * (ROUND_TICKS + 1) if self.settings.render_every_tick else fps

    def _frame_title(self) -> str:
        return f"Tank Battle – Stage {self.stage.number}"

    def state(self) -> dict[str, Any]:
        """The whole world as a JSON-safe dict, with the targets and the cooperation logs."""
        state = self.world.state()
        state["targets"] = {str(p): t for p, t in self.targets.items()}
        state["cooperation"] = {"messages": [[r.round, r.source, r.partner, r.message]
                                             for r in self._cooperation.messages],
                                "records": [[r.round, r.source, r.partner, r.message, r.kind]
                                            for r in self._cooperation.records]}
        return state
