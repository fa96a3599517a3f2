"""What a tank reads: the observation text of every stage, in English or Chinese.

Each text follows the sections, slot formats and answer tokens of the BattleAgentBench paper's
prompt figure for the stage's template (``Stage.template``), in our own wording (:mod:`.words`),
with one departure: the fixed part (role, goal, instructions, options, notes, answer format) comes
first and the changing ``<game> ... </game>`` state block after it (in stages 1-2 the operation
options follow it, a blocked move's option being left out). Stages without cooperation (stage 4,
the ``no_coop`` variants) have no cooperation parts; the ``no_coop`` variants of stages 5 and 7 keep
the team's attack-target list. Messages and rejected answers pass through :func:`sanitize` (one
line, 200 characters, the language's :func:`charset`); another tank's message is also quoted
(:func:`arena_envs.core.quoting.quote`) so it can neither close the state block nor pose as the game.

The env keeps one :class:`TankMemory` per tank and one :class:`TankTexts` per episode. Per round:

1. after every agent decided and the targets were updated (:func:`~.parser.effective_target`),
   and before ``World.play_round``: ``start = round_start(world, player, target)`` per tank;
2. after it: ``memory.remember(op, target, round_feedback(op, start, world, player, lang, answer))``
   with ``op`` the applied operation, or ``None`` when the control part was invalid (the feedback
   then shows the answer).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from arena_envs.core.arguments import check_choice
from arena_envs.core.quoting import quote
from arena_envs.tank_battle.coop import CoopState
from arena_envs.tank_battle.parser import ATTACK_TEMPLATES, MAX_MESSAGE, NO_TARGET, TOKEN_OF
from arena_envs.tank_battle.records import DIRECTIONS, Tank
from arena_envs.tank_battle.stages import Stage
from arena_envs.tank_battle.words import LANGS, WORDS
from arena_envs.tank_battle.world import Operation

if TYPE_CHECKING:
    from arena_envs.tank_battle.world import World

#: how many characters of a message or of a rejected answer a text shows
SHOWN_MAX = MAX_MESSAGE
#: categories of ``World.touching`` that block a move (stages 1-2 drop that move's option line)
BLOCKING = frozenset({"border", "steel", "water", "brick"})
_FRONT = ("border", "steel", "water", "brick", "enemy_tank")
_THOUGHT = re.compile(r"#(?:Thought process|思考过程)[ \t]*[:：][^\n]*(?:\n(?!#)[^\n]*)*")


@cache
def charset(lang: str) -> frozenset[str]:
    """Every character a text in ``lang`` may hold: printable ASCII, the newline and (zh) the
    characters of the Chinese texts. Free text from agents is reduced to it (:func:`sanitize`)."""
    chars = {chr(c) for c in range(0x20, 0x7F)} | {"\n"}
    if lang == "zh":
        chars.update(*WORDS["zh"].values())
    return frozenset(chars)


def sanitize(text: str, lang: str, limit: int = SHOWN_MAX) -> str:
    """``text`` on one line, cut to ``limit`` characters, with characters outside the charset as ``?``."""
    allowed = charset(lang)
    text = text[:limit]
    if "\n" not in text and allowed.issuperset(text):  # the usual case: nothing to replace
        return text
    return "".join(ch if ch in allowed and ch != "\n" else "?" for ch in text)


def check_lang(lang: str) -> str:
    check_choice("lang", lang, LANGS)
    return lang


# ------------------------------------------------------------------ per-tank memory and feedback

@dataclass
class TankMemory:
    """What a tank's next texts recall of its earlier decisions."""

    previous_op: Operation | None = None  # the last validly parsed operation (stages 1-2)
    decided: bool = False  # a decision was made (round 0: no "last round operation" yet)
    last_op: Operation | None = None  # the last decision's operation; None: the answer was invalid
    last_target: int = NO_TARGET  # the effective target after the last decision
    feedback: str = ""  # what :func:`round_feedback` said about the last decision

    def remember(self, op: Operation | None, target: int, feedback: str) -> None:
        """Store one round's decision (``op`` None: invalid), its effective target and feedback."""
        self.decided = True
        self.last_op = op
        self.last_target = target
        self.feedback = feedback
        if op is not None:
            self.previous_op = op


@dataclass(frozen=True)
class RoundStart:
    """What the feedback compares, taken before a round: the tank's position and front, and its target."""

    x: int
    y: int
    front: str  # ``World.touching`` on the facing side
    target: int
    target_xy: tuple[int, int] | None  # None: the target is not on the map
    target_health: int | None  # None: the target is a base or absent


def _tank(world: World, tank_id: int) -> Tank | None:
    for tank in world.tanks:
        if tank.id == tank_id:
            return tank
    return None


def _target_state(world: World, player: int, target: int) -> tuple[tuple[int, int] | None, int | None]:
    tank = _tank(world, target)
    if tank is not None:
        return (tank.x, tank.y), tank.health
    base = next((b for b in world.enemy_bases(player) if b.id == target), None)
    return ((base.x, base.y) if base is not None else None), None


def round_start(world: World, player: int, target: int) -> RoundStart:
    """The state :func:`round_feedback` compares with; ``target`` is the effective target after the decision."""
    tank = _tank(world, player)
    if tank is None:
        return RoundStart(0, 0, "nothing", target, None, None)
    xy, health = _target_state(world, player, target)
    return RoundStart(tank.x, tank.y, world.touching(tank, tank.facing), target, xy, health)


def round_feedback(op: Operation | None, start: RoundStart, world: World, player: int, lang: str = "en",
                   answer: str = "") -> str:
    """The "operation feedback" for the round just played (``op`` None: the answer was
    invalid, shown without its thought section, on one line). A noop (native actions only) reads "Stopped"."""
    w = WORDS[lang]
    if op is None:
        return w["fb_invalid"].format(answer=sanitize(" ".join(_THOUGHT.sub("", answer).split()), lang))
    tank = _tank(world, player)
    if tank is None:
        return ""
    xy, health = _target_state(world, player, start.target)
    if op == "shoot":
        if start.target == NO_TARGET:
            return w["fb_no_target"]
        if start.target_health is not None and health is not None and health >= start.target_health:
            cleared = start.front != "nothing" and world.touching(tank, tank.facing) == "nothing"
            return w["fb_no_damage"] + (w["fb_cleared"] if cleared else "")
        if start.target_health is None and start.target_xy is not None and xy is not None:
            return w["fb_base_standing"]
        return w["fb_shot"]
    if op == "noop":
        return w["fb_stopped"]
    text = w["fb_moved"] if (tank.x, tank.y) != (start.x, start.y) else w["fb_stuck"]
    if start.target_xy is not None and xy is not None:
        before = abs(start.x - start.target_xy[0]) + abs(start.y - start.target_xy[1])
        after = abs(tank.x - xy[0]) + abs(tank.y - xy[1])
        if after < before:
            text += w["fb_closer"]
        elif after > before:
            text += w["fb_farther"]
    return text


# ------------------------------------------------------------------ the texts

def tank_line(tank: Tank, typed: bool, lang: str = "en") -> str:
    """``{id}, ({x}, {y}, {direction}, {health})``, or with type ``{id}, ({x}, {y}), {direction}, {health}, {type}``."""
    if typed:
        kind = WORDS[lang]["normal" if tank.is_npc else "advanced"]
        return f"{tank.id}, ({tank.x}, {tank.y}), {tank.facing}, {tank.health}, {kind}"
    return f"{tank.id}, ({tank.x}, {tank.y}, {tank.facing}, {tank.health})"


def _listing(lines: list[str]) -> str:
    return "\n".join(lines) if lines else "[]"


@cache
def fixed_part(stage: Stage, lang: str, player: int) -> str:
    """Everything before the state block: the same for every decision of ``player`` in ``stage``."""
    w = WORDS[check_lang(lang)]
    t = stage.template
    coop = stage.cooperative
    nav = stage.navigation
    goal = w["goal_nav"] + (w["goal_nav_npc"] if t == 2 else "") if nav else w["goal_fight"]
    if coop:
        goal += w["goal_coop_team" if stage.partners == "teammates" else
                  "goal_coop_both" if t == 7 else "goal_coop_any"]
    rules = [w["rules_title"]] + [w[k] for k in ("rule_map", "rule_axes", "rule_sizes", "rule_moves", "rule_range",
                                                 "rule_facing", "rule_border", "rule_wall")]
    if stage.typed:
        rules.append(w["rule_types"])
    parts = [w["role"].format(id=player), goal, "", *rules, "",
             w["state_intro"], w["control_intro"] + (w["coop_intro"] if coop else ""), ""]
    if not nav:
        parts += [w["options_title"], *_option_lines(w, ()), ""]
    if coop:
        request = w["coop_request_team" if stage.partners == "teammates" else "coop_request_any"]
        parts += [w["coop_title"], request, w["coop_keep"], w["coop_stop"], w["coop_none"], ""]
    notes = [] if nav else [w["note_block"], w["note_target"]]
    parts += [w["note_title"], *notes, w["note_two" if coop else "note_one"], "", w["format_title"], w["thought"]]
    if nav:
        parts += [w["plan_nav_npc" if t == 2 else "plan_nav"], w["line_op"]]
    else:
        parts += [w["plan_target"], w["plan_attack"]]
        if coop:
            parts.append(w["plan_coop_team" if stage.partners == "teammates" else "plan_coop_any"])
        parts.append(w["line_attack"] if t in ATTACK_TEMPLATES else w["line_op_target"])
        if coop:
            parts.append(w["line_coop"])
    return "\n".join(parts)


def _option_lines(w: Mapping[str, str], blocked: tuple[str, ...]) -> list[str]:
    return [w["opt_" + d] for d in DIRECTIONS if d not in blocked] + [w["opt_shoot"]]


class TankTexts:
    """The observation texts of one stage in one language; fixed parts are built once per tank."""

    def __init__(self, stage: Stage, lang: str = "en"):
        self.stage = stage
        self.lang = check_lang(lang)
        self.words = WORDS[lang]
        self._fixed: dict[int, str] = {}
        self._history_of: CoopState | None = None
        self._history_len = 0
        self._history_lines: dict[int, list[str]] = {}
        self._around_lines: dict[tuple[str, str, bool], str] = {}  # see _around

    def observation(self, world: World, player: int, round_index: int, memory: TankMemory,
                    targets: Mapping[int, int] | None = None, coop: CoopState | None = None,
                    note: str | None = None, lines: dict[int, str] | None = None) -> str:
        """The text of ``player``'s decision in round ``round_index`` (0-based). ``targets``: every
        player's current target (missing: -1); ``coop``: the cooperation state (cooperative stages);
        ``note``: why the previous answer was rejected (the env's retry), shown at the end; ``lines``:
        tank lines of this world state by tank id, filled as they are made (the env passes one dict
        per round, so the texts of a round format every tank once)."""
        w = self.words
        stage = self.stage
        t = stage.template
        typed = stage.typed
        tank = _tank(world, player)
        state = [w["round"], str(round_index), ""]
        if lines is None:
            lines = {}

        def line(shown: Tank) -> str:
            made = lines.get(shown.id)
            if made is None:
                made = lines[shown.id] = tank_line(shown, typed, self.lang)
            return made

        own = [line(tank)] if tank is not None else []
        state += [w["own_tank_typed" if typed else "own_tank"], _listing(own), ""]
        if t in (3, 7):
            mates = [line(m) for m in world.teammates(player)]
            state += [w["mates_typed" if typed else "mates"], _listing(mates), ""]
        bases = [f"{b.id}, ({b.x}, {b.y})" for b in world.enemy_bases(player)]
        if stage.navigation:
            state += [w["goal_base"], _listing(bases), ""]
        else:
            own_bases = [f"{b.id}, ({b.x}, {b.y})" for b in world.own_bases(player)]
            state += [w["our_base"], _listing(own_bases), "", w["enemy_base"], _listing(bases), ""]
        if t != 1:
            enemies = [line(e) for e in world.enemy_tanks(player)]
            state += [w["enemies_typed" if typed else "enemies"], _listing(enemies), ""]
        if t in (3, 6, 7):
            team = sorted([player] + [m.id for m in world.teammates(player)])
            known = targets or {}
            pairs = ", ".join(f"[{p}, {known.get(p, NO_TARGET)}]" for p in team)  # as json.dumps writes them
            state += [w["targets"], f"[{pairs}]", ""]
        if stage.cooperative:
            state += [w["history"], _listing(self._history(coop, player)), ""]
        blocked: tuple[str, ...] = ()
        if stage.navigation:
            front = world.touching(tank, tank.facing) if tank is not None else "nothing"
            if front in BLOCKING and tank is not None:
                blocked = (tank.facing,)
            previous = w["none"] if memory.previous_op is None else TOKEN_OF[memory.previous_op]
            state += [w["front"], w["front_" + (front if front in _FRONT else "nothing")], "",
                      w["previous"], previous]
        else:
            state += [w["around"], _listing(self._around(world, tank))]
        fixed = self._fixed.get(player)
        if fixed is None:  # fixed_part's cache hashes the whole Stage: keep the text by player here
            fixed = self._fixed[player] = fixed_part(stage, self.lang, player)
        parts = [fixed, "", "<game>", *state, "</game>", ""]
        if stage.navigation:
            parts += [w["options_after"], *_option_lines(w, blocked), ""]
        else:
            parts += [w["last_title"], w["last_op"].format(self._last_operation(memory)),
                      w["last_feedback"].format(memory.feedback if memory.decided else w["none"]), ""]
            pending = coop.pending(player) if coop is not None and stage.cooperative else ()
            if pending:
                parts += [w["inbox_title"], *(f"{r.source}: {self._quoted(r.message)}" for r in pending),
                          w["inbox_howto"], ""]
        parts.append(w["ask"])
        if note:
            parts.append(w["retry"].format(sanitize(note, self.lang)))
        return "\n".join(parts)

    def _last_operation(self, memory: TankMemory) -> str:
        if not memory.decided:
            return self.words["none"]
        if memory.last_op is None:
            return self.words["error"]
        return f"Target {memory.last_target}: {TOKEN_OF[memory.last_op]}"

    def _history(self, coop: CoopState | None, player: int) -> list[str]:
        if coop is None:
            return []
        if self._history_of is not coop or self._history_len != len(coop.records):
            # the history lines change only when a record is made: keep them until then
            self._history_of, self._history_len, self._history_lines = coop, len(coop.records), {}
        lines = self._history_lines.get(player)
        if lines is None:
            lines = self._history_lines[player] = self._history_made(coop, player)
        return lines

    def _history_made(self, coop: CoopState, player: int) -> list[str]:
        w = self.words
        lines = []
        for record in coop.history(player):
            message = w["stop_message"] if record.kind == "stop" else self._quoted(record.message)
            lines += [w["sent"].format(src=record.source, dst=record.partner, message=message),
                      w["agreed"].format(src=record.source, dst=record.partner)]
        return lines

    def _quoted(self, message: str) -> str:
        """Another tank's message as the texts show it: sanitized and quoted, ``<`` and ``>`` escaped,
        so that it cannot close the ``<game>`` block or start a line of its own."""
        return quote(sanitize(message, self.lang), escape="<>")

    def _around(self, world: World, tank: Tank | None) -> list[str]:
        if tank is None:
            return []
        lines = []
        for side in DIRECTIONS:
            key = (side, world.touching(tank, side), side == tank.facing)
            line = self._around_lines.get(key)
            if line is None:  # a few dozen lines in all: each is formatted once
                line = self._around_lines[key] = self._around_line(*key)
            lines.append(line)
        return lines

    def _around_line(self, side: str, category: str, front: bool) -> str:
        w = self.words
        if front:
            return w["around_front_line"].format(side=w["side_" + side], text=w["ahead_" + category])
        return w["around_line"].format(side=w["side_" + side], text=w["near_" + category])
