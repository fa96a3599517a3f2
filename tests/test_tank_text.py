"""The tank battle's observation texts (spec §4.3): sections and slots of every stage's template in
English and Chinese, front and around info, the option line of a blocked side, the last-round
operation and its feedback, cooperation history and messages, the stable prefix, length bounds."""
from __future__ import annotations

import json
import re

import pytest

from arena_envs.tank_battle.coop import CoopState, legal_partners
from arena_envs.tank_battle.parser import Decision, parse_answer
from arena_envs.tank_battle.records import Tank
from arena_envs.tank_battle.stages import custom_stage, stage_config
from arena_envs.tank_battle.text import (
    TankMemory,
    TankTexts,
    charset,
    fixed_part,
    round_feedback,
    round_start,
    sanitize,
)
from arena_envs.tank_battle.words import WORDS
from tests.tank_talk_helpers import SidesWorld, real_world, tanks

LANGS = ("en", "zh")
#: (stage, variant) of every official template use
STAGE_VARIANTS = [(1, "default"), (2, "default"), (3, "default"), (4, "default"), (5, "default"), (6, "default"),
                  (7, "default"), (5, "no_coop"), (6, "no_coop"), (7, "no_coop"), (7, "8p")]
TANK_LINE = re.compile(r"^\d+, \(\d+, \d+, (up|down|left|right), \d+\)$")
TYPED_LINE = re.compile(r"^\d+, \(\d+, \d+\), (up|down|left|right), \d+, \S+$")
BASE_LINE = re.compile(r"^1\d\d, \(\d+, \d+\)$")

#: The title above the cooperation messages a tank received.
INBOX = "#Cooperation messages received (each quoted as its sender wrote it):"


def world_for(stage) -> SidesWorld:
    """Every player of ``stage`` plus two NPCs; bases as the stage's mode owns them."""
    n = stage.n_players
    if stage.mode == "navigation":
        return SidesWorld(tanks(0, 10, 11), {0: 0}, {100: None}, {100: (224, 0)})
    if stage.mode == "coop_vs_npc":
        return SidesWorld(tanks(*range(n), 10, 11), dict.fromkeys(range(n), 0), {100: 0, 101: -1},
                          {100: (256, 480), 101: (224, 0)})
    team = {i: (i if stage.mode == "ffa" else i % stage.team_count) for i in range(n)}
    n_bases = n if stage.mode == "ffa" else stage.team_count
    return SidesWorld(tanks(*range(n), 10, 11), team, {100 + k: k for k in range(n_bases)},
                      {100 + k: (32 * k, 0) for k in range(n_bases)})


def section(text: str, label: str) -> list[str]:
    """The lines after ``label`` up to the next empty line or the end of the state block."""
    lines = text.split("\n")
    start = lines.index(label) + 1
    end = start
    while end < len(lines) and lines[end] not in ("", "</game>"):
        end += 1
    return lines[start:end]


def labels(stage, lang: str) -> list[str]:
    """The state block's section labels of ``stage``'s template, in order."""
    w = WORDS[lang]
    t, typed = stage.template, stage.typed
    out = [w["round"], w["own_tank_typed" if typed else "own_tank"]]
    if t in (3, 7):
        out.append(w["mates_typed" if typed else "mates"])
    out += [w["goal_base"]] if stage.navigation else [w["our_base"], w["enemy_base"]]
    if t != 1:
        out.append(w["enemies_typed" if typed else "enemies"])
    if t in (3, 6, 7):
        out.append(w["targets"])
    if stage.cooperative:
        out.append(w["history"])
    out += [w["front"], w["previous"]] if stage.navigation else [w["around"]]
    return out


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("number", "variant"), STAGE_VARIANTS)
def test_every_stage_holds_its_sections_in_order(number, variant, lang):
    stage = stage_config(number, variant)
    world = world_for(stage)
    text = TankTexts(stage, lang).observation(world, 0, 0, TankMemory(), {}, CoopState(stage))
    w = WORDS[lang]
    assert text.startswith(w["role"].format(id=0))
    fixed = fixed_part(stage, lang, 0)
    assert text.startswith(fixed) and "\n<game>\n" not in fixed  # the fixed part first, then the state
    game = text[text.index("\n<game>\n"):text.index("\n</game>\n")]
    positions = [game.index("\n" + label + "\n") for label in labels(stage, lang)]
    assert positions == sorted(positions)
    assert section(text, w["round"]) == ["0"]
    own = section(text, w["own_tank_typed" if stage.typed else "own_tank"])
    assert len(own) == 1 and (TYPED_LINE if stage.typed else TANK_LINE).match(own[0])
    coop_words = [w["coop_title"], w["coop_keep"], w["line_coop"], w["history"], w["note_two"]]
    assert all((word in text) == stage.cooperative for word in coop_words)
    assert (w["rule_types"] in text) == stage.typed
    if stage.navigation:
        assert w["last_title"] not in text and w["options_after"] in text
    else:
        assert section(text, w["last_title"]) == [w["last_op"].format(w["none"]), w["last_feedback"].format(w["none"])]
        assert w["options_title"] in fixed and w["options_after"] not in text
    control = w["line_attack"] if stage.template in (3, 6, 7) else w["line_op_target"]
    assert (w["line_op"] if stage.navigation else control) in fixed


@pytest.mark.parametrize("lang", LANGS)
def test_slots_of_stage_7(lang):
    stage = stage_config(7)
    world = world_for(stage)
    w = WORDS[lang]
    text = TankTexts(stage, lang).observation(world, 3, 12, TankMemory(), {0: 101, 3: 11, 1: 100}, CoopState(stage))
    assert section(text, w["round"]) == ["12"]
    assert section(text, w["own_tank_typed"]) == [f"3, (96, 0), up, 5, {w['advanced']}"]
    assert section(text, w["mates_typed"]) == [f"0, (0, 0), up, 5, {w['advanced']}"]
    assert section(text, w["our_base"]) == ["100, (0, 0)"]
    assert section(text, w["enemy_base"]) == ["101, (32, 0)", "102, (64, 0)"]
    enemies = section(text, w["enemies_typed"])  # NPCs first, then enemy players by id
    assert [int(line.split(",")[0]) for line in enemies] == [10, 11, 1, 2, 4, 5]
    assert enemies[0] == f"10, (0, 32), down, 1, {w['normal']}"
    assert all(TYPED_LINE.match(line) for line in enemies)
    assert json.loads(section(text, w["targets"])[0]) == [[0, 101], [3, 11]]
    assert section(text, w["targets"])[0] == "[[0, 101], [3, 11]]"
    assert section(text, w["history"]) == ["[]"]


def test_empty_lists_read_brackets_and_bases_their_lines():
    stage = stage_config(3)
    world = SidesWorld(tanks(0), {0: 0}, {100: 0}, {100: (256, 480)})  # no teammate, enemy base or enemy
    text = TankTexts(stage).observation(world, 0, 5, TankMemory())
    w = WORDS["en"]
    for label in ("mates", "enemy_base", "enemies"):
        assert section(text, w[label]) == ["[]"]
    assert section(text, w["our_base"]) == ["100, (256, 480)"] and BASE_LINE.match("100, (256, 480)")
    assert section(text, w["targets"]) == ["[[0, -1]]"]


def test_navigation_lists_the_goal_under_base():
    text = TankTexts(stage_config(2)).observation(world_for(stage_config(2)), 0, 0, TankMemory())
    assert section(text, WORDS["en"]["goal_base"]) == ["100, (224, 0)"]
    assert section(text, WORDS["en"]["enemies"]) == ["10, (0, 32, down, 1)", "11, (32, 32, down, 1)"]
    assert WORDS["en"]["enemies"] not in TankTexts(stage_config(1)).observation(world_for(stage_config(1)), 0, 0,
                                                                                TankMemory())


# ------------------------------------------------------------------ front info and options (stages 1-2)

@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("category", "blocked"), [("border", True), ("steel", True), ("water", True),
                                                   ("brick", True), ("enemy_tank", False), ("nothing", False)])
def test_front_info_and_the_option_of_a_blocked_side(category, blocked, lang):
    stage = stage_config(1)
    world = world_for(stage)
    world.tanks[0].facing = "left"
    world.touch = {(0, "left"): category, (0, "up"): "brick"}  # only the facing side counts
    text = TankTexts(stage, lang).observation(world, 0, 3, TankMemory())
    w = WORDS[lang]
    assert section(text, w["front"]) == [w["front_" + category]]
    options = section(text, w["options_after"])
    assert ("- #Move_left#" in "\n".join(options)) is not blocked
    assert sum("#Move_" in line for line in options) == (3 if blocked else 4) and options[-1] == w["opt_shoot"]


def test_front_texts_are_the_specs():
    en = WORDS["en"]
    assert en["front_brick"] == "Wall ahead: cannot move forward, shoot it or change direction"
    assert en["front_nothing"] == "No obstacle ahead"
    assert WORDS["zh"]["front_nothing"] == "前方无障碍物"
    assert WORDS["zh"]["front_brick"] == "前方有wall阻挡，无法继续向前移动，需要射击或调整坦克方向"


def test_previous_operation_of_navigation():
    stage = stage_config(1)
    memory = TankMemory()
    texts = TankTexts(stage)
    world = world_for(stage)
    assert section(texts.observation(world, 0, 0, memory), "Operation of the previous round:") == ["None"]
    memory.remember("up", -1, "")
    memory.remember(None, -1, "x")  # an invalid answer keeps the last valid operation
    assert section(texts.observation(world, 0, 2, memory), "Operation of the previous round:") == ["Move_up"]
    assert section(TankTexts(stage, "zh").observation(world, 0, 0, TankMemory()), WORDS["zh"]["previous"]) == ["无"]


# ------------------------------------------------------------------ around info (stages 3-7)

@pytest.mark.parametrize("category", ["border", "steel", "water", "brick", "enemy_tank", "own_base", "enemy_base",
                                      "nothing"])
def test_around_info_lines(category):
    stage = stage_config(4)
    world = world_for(stage)
    world.touch = {(0, side): category for side in ("up", "down", "left", "right")}
    for lang, (up, down) in {"en": ("Up (front): ", "Down: "), "zh": ("上方（前方）：", "下方：")}.items():
        w = WORDS[lang]
        lines = section(TankTexts(stage, lang).observation(world, 0, 0, TankMemory()), w["around"])
        assert lines[0] == up + w["ahead_" + category]
        assert lines[1] == down + w["near_" + category]
        assert len(lines) == 4


def test_around_info_marks_the_facing_side():
    stage = stage_config(3)
    world = world_for(stage)
    world.tanks[0].facing = "right"
    world.touch = {(0, "down"): "border", (0, "right"): "brick"}
    lines = section(TankTexts(stage).observation(world, 0, 0, TankMemory()), "Map around the tank:")
    assert lines == ["Up: no obstacle", "Down: map boundary", "Left: no obstacle",
                     "Right (front): wall blocking (ID 200); cannot move forward, shoot it or change direction"]


# ------------------------------------------------------------------ last round operation and feedback

def test_last_round_operation_lines():
    stage = stage_config(4)
    world = world_for(stage)
    texts = TankTexts(stage)
    memory = TankMemory()
    memory.remember("shoot", 101, "Shot at target succeeded")
    assert section(texts.observation(world, 0, 1, memory), "#Last round operation:") == [
        "- Operation: Target 101: Shoot", "- Operation feedback: Shot at target succeeded"]
    memory.remember(None, 101, "Invalid operation format: fire!")
    assert section(texts.observation(world, 0, 2, memory), "#Last round operation:") == [
        "- Operation: ERROR", "- Operation feedback: Invalid operation format: fire!"]


def moved(world: SidesWorld, tank_id: int, **changes) -> SidesWorld:
    """A copy of ``world`` where tank ``tank_id`` has ``changes`` (``alive=False``: removed)."""
    out = []
    for t in world.tanks:
        if t.id == tank_id:
            if changes.get("alive") is False:
                continue
            t = Tank(**{**t.__dict__, **changes})
        out.append(Tank(**t.__dict__))
    return SidesWorld(out, world.team, dict(world.owner), dict(world.base_xy), dict(world.touch))


def test_feedback_of_shots():
    before = world_for(stage_config(4))  # tank 0 at (0, 0); NPC 10 at (0, 32); enemy base 101
    start = round_start(before, 0, 10)
    assert round_feedback("shoot", start, moved(before, 10, health=0, alive=False), 0) == "Shot at target succeeded"
    assert round_feedback("shoot", start, before, 0) == (
        "Target health did not decrease; the target may be out of range")
    before.touch = {(0, "up"): "brick"}
    start = round_start(before, 0, 10)
    after = moved(before, 0)
    after.touch = {}
    assert round_feedback("shoot", start, after, 0) == (
        "Target health did not decrease; the target may be out of range; the obstacle in front was removed")
    base_start = round_start(before, 0, 101)
    assert round_feedback("shoot", base_start, before, 0) == "Target base not destroyed; it may be out of range"
    gone = moved(before, 0)
    del gone.owner[101]
    assert round_feedback("shoot", base_start, gone, 0) == "Shot at target succeeded"
    assert round_feedback("shoot", round_start(before, 0, -1), before, 0) == "No target specified"
    assert round_feedback("shoot", round_start(before, 0, -1), before, 0, "zh") == "没有指定目标"


def test_feedback_of_moves():
    before = world_for(stage_config(4))  # tank 0 at (0, 0); NPC 11 at (32, 32)
    start = round_start(before, 0, 11)
    assert round_feedback("right", start, moved(before, 0, x=17), 0) == "Move succeeded; distance to target decreased"
    assert round_feedback("down", start, before, 0) == "Move failed"
    assert round_feedback("left", start, moved(before, 11, x=49), 0) == "Move failed; distance to target increased"
    assert round_feedback("up", round_start(before, 0, -1), moved(before, 0, y=17), 0) == "Move succeeded"
    assert round_feedback("right", start, moved(before, 0, x=17), 0, "zh") == "移动成功；与目标的距离缩短了"


def test_feedback_of_an_invalid_answer_drops_the_thought_section():
    world = world_for(stage_config(4))
    answer = "#Thought process:\n- Attack target: the base\n- Attack plan: go\n#Operation: fire at will"
    feedback = round_feedback(None, round_start(world, 0, -1), world, 0, answer=answer)
    assert feedback == "Invalid operation format: #Operation: fire at will"
    two_lines = round_feedback(None, round_start(world, 0, -1), world, 0, answer="go up\n  then   fire")
    assert two_lines == "Invalid operation format: go up then fire"
    long = round_feedback(None, round_start(world, 0, -1), world, 0, answer="x\n" * 1000)
    assert len(long) < 300 and "\n" not in long


# ------------------------------------------------------------------ cooperation sections

def test_history_and_received_messages():
    stage = stage_config(3)
    world = world_for(stage)
    coop = CoopState(stage)
    ask = Decision(op="up", op_found=True, target=-1, coop="request", partner=1, message="cover me")
    coop.end_round({0: ask, 1: Decision(coop="none")}, world)
    texts = TankTexts(stage)
    text = texts.observation(world, 1, 1, TankMemory(), coop=coop)
    assert section(text, INBOX) == [
        '0: "cover me"', "To answer, add one line per message: Reply_message {src_id}: Agree   (or Disagree)"]
    assert INBOX not in texts.observation(world, 0, 1, TankMemory(), coop=coop)
    coop.end_round({0: Decision(coop="none"), 1: Decision(coop="none", replies={0: True})}, world)
    for player in (0, 1):
        text = texts.observation(world, player, 2, TankMemory(), coop=coop)
        assert section(text, "Cooperation history:") == ['0 sent to 1: "cover me"', "1 replied to 0: agreed"]
        assert INBOX not in text
    coop.end_round({0: Decision(coop="stop")}, world)
    zh = TankTexts(stage, "zh").observation(world, 0, 3, TankMemory(), coop=coop)
    assert section(zh, WORDS["zh"]["history"]) == ['0向1发送: "cover me"', "1回复0: 同意",
                                                   "0向1发送: 结束协作", "1回复0: 同意"]


def test_messages_are_sanitized_and_cut():
    assert sanitize("héllo\nwörld", "en") == "h?llo?w?rld"
    assert sanitize("x" * 500, "en") == "x" * 200
    assert sanitize("前方", "zh") == "前方" and sanitize("前方", "en") == "??"


# ------------------------------------------------------------------ whole texts

@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("number", "variant"), STAGE_VARIANTS)
def test_texts_stay_within_charset_and_length(number, variant, lang):
    """The longest text a stage can show: every tank alive, full history, pending requests from every
    player, long messages and a long rejected answer, a retry note."""
    stage = stage_config(number, variant)
    world = world_for(stage)
    world.tanks += tanks(12, 13, 14)
    coop = CoopState(stage)
    others = [p for p in range(stage.n_players) if p != 0]
    for k in range(6):
        asks = {p: Decision(coop="request", partner=0, message="é" * 300 + str(k)) for p in others}
        coop.end_round({**asks, 0: Decision(replies=dict.fromkeys(others, True))}, world)
    memory = TankMemory()
    memory.remember(None, -1, round_feedback(None, round_start(world, 0, -1), world, 0, lang, "Ω" * 5000))
    text = TankTexts(stage, lang).observation(world, 0, 79, memory, dict.fromkeys(range(8), 101), coop,
                                              note="bad " * 200)
    assert len(text) < 16384
    assert set(text) <= charset(lang)
    if lang == "en":
        assert text.isascii()


def test_the_prefix_is_stable_across_decisions():
    stage = stage_config(5)
    texts = TankTexts(stage)
    first = texts.observation(world_for(stage), 2, 0, TankMemory())
    later_world = moved(world_for(stage), 2, x=300, facing="left")
    memory = TankMemory()
    memory.remember("left", 10, "Move succeeded")
    later = texts.observation(later_world, 2, 40, memory, {2: 10})
    cut = first.index("\n<game>\n")
    assert later[:cut] == first[:cut] == fixed_part(stage, "en", 2) + "\n"
    assert fixed_part(stage, "en", 2) is fixed_part(stage, "en", 2)  # built once


def test_custom_stages_use_their_templates():
    for mode, team_count in (("navigation", 1), ("coop_vs_npc", 1), ("ffa", 1), ("teams", 2)):
        stage = custom_stage(2, mode, team_count)  # type: ignore[arg-type]
        text = TankTexts(stage).observation(world_for(stage), 0, 0, TankMemory(), coop=CoopState(stage))
        assert "<game>" in text and "</game>" in text


def test_our_own_wording():
    """The paper's prompt sentences are the authors' wording: none appears verbatim."""
    paper = ["You are an assistant for a tank battle game", "Your ultimate goal is",
             "The current game state is given above", "For attack effectiveness", "你是一个坦克对战游戏的助手",
             "你的最终目标是"]
    for number, variant in STAGE_VARIANTS:
        stage = stage_config(number, variant)
        for lang in LANGS:
            fixed = fixed_part(stage, lang, 0)
            assert not any(sentence in fixed for sentence in paper)


def test_a_dead_tank_still_gets_a_text():
    stage = stage_config(4)
    world = moved(world_for(stage), 0, alive=False)
    text = TankTexts(stage).observation(world, 0, 9, TankMemory())
    assert section(text, WORDS["en"]["own_tank"]) == ["[]"] and section(text, WORDS["en"]["around"]) == ["[]"]


def test_unknown_language_is_rejected():
    with pytest.raises(ValueError, match="lang must be one of en, zh, got 'fr'"):
        TankTexts(stage_config(1), "fr")


# ------------------------------------------------------------------ against the real world (spec §8 facts 5, 27-29, 33)

def test_fact_27_stage_1_round_0():
    world = real_world(1)
    text = TankTexts(world.stage).observation(world, 0, world.rounds_played, TankMemory())
    lines = text.split("\n")
    for line in ("0", "0, (32, 480, up, 5)", "100, (224, 0)", "No obstacle ahead", "None"):
        assert line in lines
    w = WORDS["en"]
    assert section(text, w["round"]) == ["0"] and section(text, w["front"]) == ["No obstacle ahead"]
    assert section(text, w["previous"]) == ["None"]
    assert "- #Move_up#: move up" in section(text, w["options_after"])


@pytest.mark.parametrize("lang", LANGS)
def test_facts_5_and_28_brick_ahead_removes_move_up(lang):
    world = real_world(1)
    texts = TankTexts(world.stage, lang)
    memory = TankMemory()
    w = WORDS[lang]
    for expected_y in (463, 448, 448):
        world.play_round({0: "up"})
        memory.remember("up", -1, "")
        assert (world.players[0].x, world.players[0].y) == (32, expected_y)
    text = texts.observation(world, 0, world.rounds_played, memory)
    assert section(text, w["front"]) == [w["front_brick"]]
    options = section(text, w["options_after"])
    assert "#Move_up#" not in "\n".join(options) and len(options) == 4
    assert section(text, w["previous"]) == ["Move_up"]
    assert section(text, w["round"]) == ["3"]


def test_fact_29_stage_3_round_0():
    world = real_world(3)
    stage = world.stage
    text = TankTexts(stage).observation(world, 0, 0, TankMemory(), {0: -1, 1: -1}, CoopState(stage))
    assert section(text, "Map around the tank:") == [
        "Up (front): no obstacle", "Down: map boundary", "Left: no obstacle", "Right: no obstacle"]
    assert section(text, WORDS["en"]["targets"]) == ["[[0, -1], [1, -1]]"]
    assert section(text, WORDS["en"]["history"]) == ["[]"]
    assert section(text, WORDS["en"]["our_base"]) == ["100, (256, 480)"]
    assert section(text, WORDS["en"]["enemy_base"]) == ["101, (224, 0)"]
    assert section(text, WORDS["en"]["mates"]) == ["1, (448, 480, up, 5)"]
    zh = TankTexts(stage, "zh").observation(world, 0, 0, TankMemory(), {}, CoopState(stage))
    assert section(zh, WORDS["zh"]["around"]) == ["上方（前方）：无障碍物", "下方：为地图边界",
                                                  "左方：无障碍物", "右方：无障碍物"]


def test_fact_33_cooperation_timeline_in_the_texts():
    world = real_world(3, npc_total=0)
    stage = world.stage
    coop = CoopState(stage)
    texts = TankTexts(stage)
    parse = {0: "#Attack operation: Target 101: #Move_up#\n#Cooperation operation: #Request_coop# 1: cover me",
             1: "#Attack operation: Target 101: #Move_up#\n#Cooperation operation: #No_coop#"}
    coop.end_round({p: parse_answer(a, stage) for p, a in parse.items()}, world)  # round 0
    world.play_round({0: "up", 1: "up"})
    round1 = texts.observation(world, 1, 1, TankMemory(), coop=coop)
    assert section(round1, INBOX)[0] == '0: "cover me"'
    assert INBOX not in texts.observation(world, 0, 1, TankMemory(), coop=coop)
    answers = {0: parse[1], 1: parse[1] + "\nReply_message 0: Agree"}
    coop.end_round({p: parse_answer(a, stage) for p, a in answers.items()}, world)  # round 1
    world.play_round({0: "up", 1: "up"})
    for player in (0, 1):
        text = texts.observation(world, player, 2, TankMemory(), coop=coop)
        assert section(text, "Cooperation history:") == ['0 sent to 1: "cover me"', "1 replied to 0: agreed"]


def test_fact_33_no_delivery_to_npcs_or_enemies():
    world = real_world(5, npc_total=0)
    coop = CoopState(world.stage)
    asks = {0: "#Request_coop# 1: x\n#No_coop#", 1: "#Request_coop# 10: x", 2: "#Request_coop# 0: to my mate",
            3: "#Request_coop# 2: y"}
    coop.end_round({p: parse_answer(a, world.stage) for p, a in asks.items()}, world)
    assert [(m.source, m.partner) for m in coop.messages] == [(2, 0)]


def test_feedback_against_the_real_world():
    world = real_world(4, npc_total=0)  # tank_0 at (0, 0) next to its own base 100 at (32, 0)
    start = round_start(world, 0, 101)
    world.play_round({0: "down"})
    assert round_feedback("down", start, world, 0) == "Move succeeded; distance to target decreased"
    start = round_start(world, 0, 101)
    world.play_round({0: "shoot"})
    assert round_feedback("shoot", start, world, 0) == "Target base not destroyed; it may be out of range"
    start = round_start(world, 0, 1)  # the enemy player, far away
    world.play_round({0: "shoot"})
    assert round_feedback("shoot", start, world, 0) == "Target health did not decrease; the target may be out of range"


@pytest.mark.parametrize(("number", "lang"), [(2, "en"), (3, "zh"), (6, "en"), (7, "en")])
def test_rounds_played_the_way_the_env_plays_them(number, lang):
    """Parse, judge, cooperate, play, give feedback and write the next texts for 30 rounds of
    random answers: every text stays within its charset and length, feedback follows each decision."""
    import numpy as np

    from arena_envs.tank_battle.parser import control_valid, effective_target, format_ok

    rng = np.random.default_rng(number)
    world = real_world(number, seed=number)
    stage = world.stage
    texts = TankTexts(stage, lang)
    coop = CoopState(stage)
    memory = {p: TankMemory() for p in world.players}
    targets = dict.fromkeys(world.players, -1)
    ops = ["#Move_up#", "#Move_down#", "#Move_left#", "#Move_right#", "#Shoot#", "fire"]
    for round_index in range(30):
        if world.over:
            break
        alive = [t.id for t in world.tanks if not t.is_npc]
        decisions, answers = {}, {}
        for p in alive:
            text = texts.observation(world, p, round_index, memory[p], targets, coop)
            assert len(text) < 16384 and set(text) <= charset(lang)
            ids = [-1, 200, 1, *(t.id for t in world.enemy_tanks(p))]
            target = "" if stage.navigation else f"Target {rng.choice(ids)}: "
            answer = f"#Thought process:\n- plan\n#Operation: {target}{rng.choice(ops)}"
            if stage.cooperative:
                partner = rng.choice([*legal_partners(world, stage, p), 10])
                answer += "\n" + str(rng.choice(["#No_coop#", "#Keep_coop#", "#Stop_coop#", "",
                                                 f"#Request_coop# {partner}: attack {rng.integers(9)}"]))
                answer += "".join(f"\nReply_message {r.source}: {rng.choice(['Agree', 'Disagree'])}"
                                  for r in coop.pending(p))
            answers[p] = answer
            decisions[p] = parse_answer(answer, stage)
            format_ok(world, p, stage, decisions[p])
        applied = {}
        for p, d in decisions.items():
            valid = control_valid(world, p, stage, d)
            applied[p] = d.op if valid else None
            if valid:
                targets[p] = effective_target(targets[p], d.target)
        coop.end_round(decisions, world)
        starts = {p: round_start(world, p, targets[p]) for p in decisions}
        world.play_round({p: op or "noop" for p, op in applied.items()})
        for p in decisions:
            feedback = round_feedback(applied[p], starts[p], world, p, lang, answers[p])
            memory[p].remember(applied[p], targets[p], feedback)
            if applied[p] is None:
                assert feedback.startswith(WORDS[lang]["fb_invalid"].split("{")[0])
    assert world.rounds_played > 0
    assert bool(coop.records) == stage.cooperative  # requests were delivered and some agreed
