"""The tank battle's answer grammar (spec §4.4), its format validity, the cooperation protocol
(§4.5) and the guided-decoding constraint; spec §8 facts 30-33."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_envs.core.answers import InvalidAnswer
from arena_envs.tank_battle.coop import STOP_MESSAGE, CoopState, legal_partners
from arena_envs.tank_battle.parser import (
    NO_OPERATION,
    OUT_OF_RANGE_TARGET,
    Decision,
    answer_constraint,
    control_valid,
    effective_target,
    format_ok,
    format_problem,
    parse_answer,
    parse_decision,
    target_valid,
)
from arena_envs.tank_battle.stages import STAGES, stage_config
from tests.tank_talk_helpers import SidesWorld, real_world, tanks

S1, S2, S3, S4, S5, S6, S7 = (stage_config(k) for k in range(1, 8))
S5_NO_COOP = stage_config(5, "no_coop")


# stage 3: tanks 0 and 1 one team, NPC 10, base 100 theirs, 101 the NPC faction's
STAGE3_WORLD = SidesWorld(tanks(0, 1, 10), {0: 0, 1: 0}, {100: 0, 101: -1})
# stage 7: six players in three teams (id mod 3), two NPCs
STAGE7_WORLD = SidesWorld(tanks(0, 1, 2, 3, 4, 5, 10, 11), {i: i % 3 for i in range(6)}, {100: 0, 101: 1, 102: 2})


# ------------------------------------------------------------------ stages 1-2 (fact 30)

def test_navigation_reads_the_operation_token():
    assert parse_answer("#Operation: #Move_left#", S1) == Decision(op="left", op_found=True)
    assert parse_answer("#Operation: Move_down", S2).op == "down"
    assert parse_answer("#Operation: #Shoot#", S1).op == "shoot"


def test_navigation_priority_quirk_of_the_reference():
    decision = parse_answer("I could Move_up ... #Operation: #Shoot#", S1)
    assert decision.op == "up" and decision.op_found
    # the list order decides, not the position in the answer
    assert parse_answer("Shoot first, then Move_right, later Move_left", S1).op == "left"


def test_navigation_without_token_is_invalid():
    decision = parse_answer("#Operation: fire", S1)
    assert decision.op == "noop" and not decision.op_found
    assert not format_ok(STAGE3_WORLD, 0, S1, decision)
    assert parse_answer("#Operation: move_up", S1).op_found is False  # case-sensitive


def test_strict_navigation_takes_the_last_token_after_the_last_header():
    text = "I could Move_up ... #Operation: #Shoot#"
    assert parse_answer(text, S1, strict=True).op == "shoot"
    assert parse_answer("#Operation: Move_up\n#Operation: Move_left then Move_down", S1, strict=True).op == "down"
    assert parse_answer("Move_right and then Shoot", S1, strict=True).op == "shoot"  # no header: whole answer
    assert parse_answer("#操作： #Move_right#", S1, strict=True).op == "right"  # the Chinese header counts


# ------------------------------------------------------------------ stages 3-7 (fact 31)

def test_target_clause_with_shoot_on_enemy_base():
    decision = parse_answer("#Attack operation: Target 101: #Shoot#\n#Cooperation operation: #No_coop#", S3)
    assert (decision.op, decision.target, decision.coop) == ("shoot", 101, "none")
    assert control_valid(STAGE3_WORLD, 0, S3, decision) and format_ok(STAGE3_WORLD, 0, S3, decision)


def test_target_in_braces_is_valid_when_the_npc_is_listed():
    decision = parse_answer("Target {10}: Move_up", S4)
    assert (decision.op, decision.target) == ("up", 10)
    assert target_valid(STAGE3_WORLD, 0, 10)
    assert not target_valid(SidesWorld(tanks(0, 1), {0: 0, 1: 0}, {100: 0, 101: -1}), 0, 10)  # not listed


def test_teammate_and_own_base_targets_are_invalid():
    decision = parse_answer("Target 1: #Shoot#\n#No_coop#", S3)
    assert decision.op_found and decision.target == 1
    assert not control_valid(STAGE3_WORLD, 0, S3, decision)
    assert not format_ok(STAGE3_WORLD, 0, S3, decision)
    assert not target_valid(STAGE3_WORLD, 0, 100)
    assert not target_valid(STAGE3_WORLD, 0, 0)  # itself
    assert target_valid(STAGE3_WORLD, 0, -1) and target_valid(STAGE3_WORLD, 0, 200)
    assert not target_valid(STAGE3_WORLD, 0, None)


def test_target_without_colon_is_invalid():
    decision = parse_answer("Target 5 #Shoot#", S4)
    assert not decision.op_found and decision.op == "noop"
    assert not control_valid(STAGE3_WORLD, 0, S4, decision)


def test_wall_target_keeps_the_previous_target():
    decision = parse_answer("Target 200: #Shoot#", S4)
    assert decision.target == 200 and control_valid(STAGE3_WORLD, 0, S4, decision)
    assert effective_target(101, decision.target) == 101
    assert effective_target(101, 10) == 10 and effective_target(-1, -1) == -1


def test_last_target_clause_counts():
    decision = parse_answer("Target 10: Move_up ... no, Target 101: #Move_left#", S4)
    assert (decision.op, decision.target) == ("left", 101)
    assert parse_answer("Target -1: Shoot", S4).target == -1
    assert parse_answer("Target\t{  7}: Shoot", S4).op_found is False  # spaces inside braces are not allowed


def test_strict_target_clause_only_after_the_header():
    text = "#Attack operation: Target 101: Shoot\nlater I may say Target 10: Move_up"
    assert parse_answer(text, S3).target == 10
    assert parse_answer(text, S3, strict=True).target == 10  # still after the last header
    text = "plan: Target 10: Move_up\n#Attack operation: nothing"
    assert parse_answer(text, S3).op_found
    assert not parse_answer(text, S3, strict=True).op_found


def test_huge_target_ids_parse_to_an_invalid_id():
    decision = parse_answer("Target " + "9" * 5000 + ": Shoot", S4)
    assert decision.target == OUT_OF_RANGE_TARGET
    assert not target_valid(STAGE3_WORLD, 0, decision.target)


# ------------------------------------------------------------------ cooperation (fact 32)

def test_request_with_message():
    decision = parse_answer("#Attack operation: Target 101: Shoot\n#Cooperation operation: #Request_coop# 1: cover me",
                            S3)
    assert (decision.coop, decision.partner, decision.message) == ("request", 1, "cover me")
    assert parse_answer("Request_coop {3}: go left\nRequest_coop 0: go right", S7).partner == 0  # last one


def test_cooperation_priority():
    assert parse_answer("#Keep_coop# or #No_coop#", S3).coop == "keep"
    assert parse_answer("No_coop, Stop_coop", S3).coop == "stop"
    assert parse_answer("Keep_coop; #Request_coop# 1: hi", S3).coop == "request"
    assert parse_answer("Request_coop 1 hi; No_coop", S3).coop == "none"  # a request without colon does not count


def test_missing_cooperation_fails_the_format_in_cooperative_stages_only():
    decision = parse_answer("#Attack operation: Target 101: #Shoot#", S3)
    assert control_valid(STAGE3_WORLD, 0, S3, decision)
    assert decision.coop is None and not format_ok(STAGE3_WORLD, 0, S3, decision)
    text = "#Operation: Target 101: #Shoot#"
    assert format_ok(STAGE3_WORLD, 0, S4, parse_answer(text, S4))
    no_coop = parse_answer(text + "\n#Request_coop# 1: hi\nReply_message 1: Agree", S5_NO_COOP)
    assert no_coop.coop is None and no_coop.replies == {} and format_ok(STAGE3_WORLD, 0, S5_NO_COOP, no_coop)


def test_strict_cooperation_only_after_its_header():
    text = "Keep_coop was my plan\n#Cooperation operation: #No_coop#"
    assert parse_answer(text, S3).coop == "keep"
    assert parse_answer(text, S3, strict=True).coop == "none"
    assert parse_answer("#协作操作: #Stop_coop#", S3, strict=True).coop == "stop"


@pytest.mark.parametrize(("line", "agree"), [
    ("Reply_message 0: Agree", True), ("Reply_message {0}: {Agree}", True), ("#Reply_message# 0: agree.", True),
    ("Reply_message 0: 'AGREE'!", True), ("Reply_message 0: Disagree", False), ("Reply_message 0: I agree", False),
    ("Reply_message 0:", False),
])
def test_reply_with_source(line, agree):
    decision = parse_answer(line, S3)
    assert decision.replies == {0: agree} and decision.reply_all is None
    assert decision.reply_to(0) is agree and decision.reply_to(1) is None


def test_reply_without_source_applies_to_all_pending():
    decision = parse_answer("Reply_message {Agree}\nReply_message 2: Disagree", S7)
    assert decision.reply_all is True and decision.replies == {2: False}
    assert decision.reply_to(5) is True and decision.reply_to(2) is False
    two = parse_answer("Reply_message 1: Agree Reply_message 4: Agree", S7)
    assert two.replies == {1: True, 4: True}


# ------------------------------------------------------------------ never raises

@settings(max_examples=2000, deadline=None)
@given(st.text(), st.sampled_from(sorted(STAGES)), st.booleans())
def test_parse_answer_never_raises(text, stage, strict):
    decision = parse_answer(text, stage_config(stage), strict=strict)
    assert decision.op in ("up", "down", "left", "right", "shoot", "noop")
    assert decision.op_found == (decision.op != "noop")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["Target", " ", "{", "}", ":", "#", "-", "1", "0", "Shoot", "Move_up", "\n",
                                 "Request_coop", "Reply_message", "Agree", "Keep_coop", "#Operation:", "语"]),
                max_size=40).map("".join), st.booleans())
def test_parse_answer_never_raises_on_grammar_fragments(text, strict):
    for stage in (S1, S3, S4, S7):
        parse_answer(text, stage, strict=strict)


def test_non_string_answers_read_as_empty():
    assert parse_answer(None, S3) == Decision()  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.text(), st.sampled_from(sorted(STAGES)), st.booleans(), st.sampled_from(sorted(NO_OPERATION)))
def test_parse_decision_is_parse_answer_with_an_operation_or_invalid(text, stage, strict, lang):
    read = parse_answer(text, stage_config(stage), strict=strict)
    if read.op_found:
        assert parse_decision(text, stage_config(stage), strict, lang) == read
    else:
        with pytest.raises(InvalidAnswer) as invalid:
            parse_decision(text, stage_config(stage), strict, lang)
        assert (invalid.value.kind, invalid.value.reason) == ("unparseable", NO_OPERATION[lang])


# ------------------------------------------------------------------ cooperation protocol (fact 33, §4.5)

def request(partner: int, message: str = "help", coop: str = "request") -> Decision:
    return Decision(op="up", op_found=True, target=-1, coop=coop, partner=partner, message=message)  # type: ignore[arg-type]


NO_COOP = Decision(op="up", op_found=True, target=-1, coop="none")


def reply(source: int, agree: bool) -> Decision:
    return Decision(op="up", op_found=True, target=-1, coop="none", replies={source: agree})


def test_legal_partners_per_stage():
    assert legal_partners(STAGE3_WORLD, S3, 0) == [1]
    assert legal_partners(STAGE7_WORLD, S7, 0) == [1, 2, 3, 4, 5]
    ffa = SidesWorld(tanks(0, 1, 2, 3, 10), {i: i for i in range(4)})
    assert legal_partners(ffa, S6, 2) == [0, 1, 3]
    teams = SidesWorld(tanks(0, 1, 2, 3, 10), {i: i % 2 for i in range(4)})
    assert legal_partners(teams, S5, 1) == [3]
    assert legal_partners(STAGE3_WORLD, S4, 0) == [] and legal_partners(teams, S5_NO_COOP, 1) == []


def test_request_reply_timeline():
    coop = CoopState(S3)
    coop.end_round({0: request(1, "cover me"), 1: NO_COOP}, STAGE3_WORLD)  # round t = 0
    assert [(r.source, r.message) for r in coop.pending(1)] == [(0, "cover me")]
    assert coop.pending(0) == () and coop.history(0) == () and coop.messages[0].round == 0
    done = coop.end_round({0: NO_COOP, 1: reply(0, True)}, STAGE3_WORLD)  # round t + 1
    assert [(r.source, r.partner, r.message, r.kind) for r in done.records] == [(0, 1, "cover me", "agree")]
    assert coop.history(0) == coop.history(1) == done.records
    assert coop.partner(0) == 1 and coop.partner(1) is None
    assert coop.pending(1) == ()


def test_unanswered_or_refused_requests_expire():
    coop = CoopState(S7)
    coop.end_round({0: request(3), 1: request(3), 2: request(4)}, STAGE7_WORLD)
    assert [r.source for r in coop.pending(3)] == [0, 1]
    done = coop.end_round({3: Decision(replies={1: True}, reply_all=False), 4: NO_COOP}, STAGE7_WORLD)
    assert [(r.source, r.partner) for r in done.records] == [(1, 3)]
    assert sorted((r.source, r.partner) for r in done.expired) == [(0, 3), (2, 4)]
    assert coop.pending(3) == coop.pending(4) == () and coop.partner(0) is None


def test_reply_without_source_agrees_to_every_pending_request():
    coop = CoopState(S7)
    coop.end_round({0: request(3), 1: request(3)}, STAGE7_WORLD)
    done = coop.end_round({3: Decision(reply_all=True)}, STAGE7_WORLD)
    assert [(r.source, r.partner) for r in done.records] == [(0, 3), (1, 3)]


def test_npc_and_illegal_partners_are_never_delivered_player_0_is():
    coop = CoopState(S3)
    done = coop.end_round({0: request(10), 1: request(0, "to zero")}, STAGE3_WORLD)
    assert [(r.source, r.partner) for r in done.delivered] == [(1, 0)]
    assert coop.pending(10) == () and [r.message for r in coop.pending(0)] == ["to zero"]
    teams = SidesWorld(tanks(0, 1, 2, 3), {i: i % 2 for i in range(4)})
    coop5 = CoopState(S5)
    coop5.end_round({0: request(1), 1: request(3), 2: request(2)}, teams)  # enemy, teammate, itself
    assert [(m.source, m.partner) for m in coop5.messages] == [(1, 3)]


def test_stop_coop_records_and_clears_the_partner():
    coop = CoopState(S3)
    coop.end_round({0: request(1)}, STAGE3_WORLD)
    coop.end_round({1: reply(0, True)}, STAGE3_WORLD)
    assert coop.partner(0) == 1
    done = coop.end_round({0: Decision(coop="stop"), 1: Decision(coop="stop")}, STAGE3_WORLD)  # 1 has no partner
    assert [(r.source, r.partner, r.message, r.kind) for r in done.records] == [(0, 1, STOP_MESSAGE, "stop")]
    assert coop.partner(0) is None and len(coop.history(1)) == 2
    keep = coop.end_round({0: Decision(coop="keep")}, STAGE3_WORLD)
    assert keep.records == () and coop.partner(0) is None


def test_history_keeps_the_last_five_records_of_a_player():
    coop = CoopState(S7)
    for k in range(7):
        coop.end_round({0: request(3, f"m{k}")}, STAGE7_WORLD)
        coop.end_round({3: reply(0, True)}, STAGE7_WORLD)
    assert [r.message for r in coop.history(0)] == [f"m{k}" for k in range(2, 7)]
    assert len(coop.records) == 7 and coop.history(1) == ()


def test_no_cooperation_in_non_cooperative_stages():
    coop = CoopState(S4)
    assert coop.end_round({0: request(1), 1: reply(0, True)}, STAGE3_WORLD).delivered == ()
    assert coop.pending(1) == () and coop.messages == []


# ------------------------------------------------------------------ guided decoding

def accepts_and_parses(stage, world, player, answer, pending=()):
    constraint = answer_constraint(stage, world, player, pending)
    assert constraint.kind == "regex" and constraint.accepts(answer), (constraint.pattern, answer)
    decision = parse_answer(answer, stage)
    assert format_ok(world, player, stage, decision)
    assert parse_answer(answer, stage, strict=True) == decision
    return decision


def test_constraint_navigation():
    answer = "#Thought process: the base is up and to the right\n#Operation: #Move_up#"
    assert accepts_and_parses(S1, STAGE3_WORLD, 0, answer).op == "up"
    constraint = answer_constraint(S1, STAGE3_WORLD, 0)
    assert not constraint.accepts("#Thought process: x\n#Operation: #Noop#")
    assert not constraint.accepts("#Thought process: Move_left\n#Operation: #Shoot#")  # no token in the thought
    assert answer_constraint(S1, STAGE3_WORLD, 0, lang="zh").accepts("#思考过程: 向上走\n#操作: #Shoot#")


def test_constraint_stage_3_targets_partners_and_replies():
    answer = ("#Thought process: attack the base\n#Attack operation: Target 101: #Shoot#\n"
              "#Cooperation operation: #Request_coop# 1: cover the left flank please\nReply_message 1: Agree")
    decision = accepts_and_parses(S3, STAGE3_WORLD, 0, answer, pending=[1])
    assert (decision.target, decision.partner, decision.replies) == (101, 1, {1: True})
    constraint = answer_constraint(S3, STAGE3_WORLD, 0, [1])
    assert not constraint.accepts(answer.replace("Target 101", "Target 1"))  # a teammate
    assert not constraint.accepts(answer.replace("Target 101", "Target 100"))  # our base
    assert not constraint.accepts(answer.replace("Request_coop# 1", "Request_coop# 10"))  # an NPC
    assert not constraint.accepts(answer.replace("please", "Target 10: Move_up"))  # no clause in the message
    assert not constraint.accepts(answer.rsplit("\n", 1)[0])  # the reply line is required
    for target in (-1, 10, 101, 200):
        assert constraint.accepts(answer.replace("Target 101", f"Target {target}"))


def test_constraint_stage_4_and_no_coop():
    answer = "#Thought process: go\n#Operation: Target 10: #Move_left#"
    assert accepts_and_parses(S4, STAGE3_WORLD, 0, answer).target == 10
    no_coop = answer_constraint(S5_NO_COOP, STAGE3_WORLD, 0, [1])
    assert no_coop.accepts("#Thought process: go\n#Attack operation: Target 10: #Move_left#")
    assert "Cooperation" not in no_coop.pattern and "Reply_message" not in no_coop.pattern


def test_constraint_stage_7_lists_every_legal_partner():
    constraint = answer_constraint(S7, STAGE7_WORLD, 0, [4, 2])
    answer = ("#Thought process: hold\n#Attack operation: Target 11: #Shoot#\n#Cooperation operation: #Keep_coop#\n"
              "Reply_message 2: Disagree\nReply_message 4: Agree")
    decision = accepts_and_parses(S7, STAGE7_WORLD, 0, answer, pending=[4, 2])
    assert decision.replies == {2: False, 4: True}
    for partner in (1, 2, 3, 4, 5):
        assert constraint.accepts(answer.replace("#Keep_coop#", f"#Request_coop# {partner}: with me"))
    assert not constraint.accepts(answer.replace("#Keep_coop#", "#Request_coop# 0: with me"))
    assert not constraint.accepts(answer.replace("Target 11", "Target 3"))  # a teammate
    assert constraint.accepts(answer.replace("Target 11", "Target 4"))  # an enemy player


# ------------------------------------------------------------------ against the real world (fact 31)

def test_fact_31_target_validity_in_the_real_world():
    world = real_world(3, seed=1)
    assert format_ok(world, 0, S3, parse_answer("#Attack operation: Target 101: #Shoot#\n#No_coop#", S3))
    assert not control_valid(world, 0, S3, parse_answer("Target 1: #Shoot#", S3))  # the teammate
    assert not control_valid(world, 0, S3, parse_answer("Target 100: #Shoot#", S3))  # our base
    npc10 = parse_answer("Target {10}: Move_up", S3)
    assert not control_valid(world, 0, S3, npc10)  # no NPC yet
    while world.npc_spawned == 0:
        world.play_round({0: "noop", 1: "noop"})
    assert [t.id for t in world.enemy_tanks(0)] == [10]
    assert control_valid(world, 0, S3, npc10) and not target_valid(world, 0, 11)


def test_guided_answers_parse_valid_in_every_stage():
    for number in range(1, 8):
        world = real_world(number, npc_total=0)
        stage = world.stage
        player = stage.n_players - 1
        target = "" if stage.navigation else f" Target {world.enemy_bases(player)[0].id}:"
        header = "#Operation:" if stage.template in (1, 2, 4) else "#Attack operation:"
        answer = f"#Thought process: onward{chr(10)}{header}{target} #Move_left#"
        if stage.cooperative:
            partner = legal_partners(world, stage, player)[0]
            answer += f"\n#Cooperation operation: #Request_coop# {partner}: together now\nReply_message 0: Agree"
        decision = accepts_and_parses(stage, world, player, answer, pending=[0] if stage.cooperative else [])
        assert decision.op == "left"


@pytest.mark.parametrize("number", [1, 3, 4, 7])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_answer_the_constraint_allows_is_valid(number, data):
    world = real_world(number, npc_total=0)
    stage = world.stage
    pending = [1] if stage.cooperative else []
    constraint = answer_constraint(stage, world, 0, pending)
    answer = data.draw(st.from_regex(constraint.pattern, fullmatch=True))
    decision = parse_answer(answer, stage)
    assert format_ok(world, 0, stage, decision)
    assert parse_answer(answer, stage, strict=True) == decision
    if stage.cooperative:
        assert set(decision.replies) == {1} and decision.reply_all is None
        assert decision.coop != "request" or decision.partner in legal_partners(world, stage, 0)


def test_cooperation_state_pickles_mid_game():
    import pickle

    coop = CoopState(S7)
    coop.end_round({0: request(3, "go")}, STAGE7_WORLD)
    coop.end_round({3: reply(0, True), 1: request(4)}, STAGE7_WORLD)
    copy = pickle.loads(pickle.dumps(coop))
    assert copy.history(0) == coop.history(0) and copy.pending(4) == coop.pending(4) and copy.partner(0) == 3
    copy.end_round({4: reply(1, True)}, STAGE7_WORLD)
    assert copy.partner(1) == 4 and coop.partner(1) is None


def test_format_problem_says_what_is_wrong_exactly_when_the_format_fails():
    cases = [(S1, "#Operation: fire", "no operation found"), (S4, "Target 5 #Shoot#", "no target clause found"),
             (S3, "Target 1: #Shoot#\n#No_coop#", "target 1 is not an enemy tank or enemy base on the map; "
                                                "valid targets: -1, 10, 101, 200"),
             (S3, "Target 101: #Shoot#", "no cooperation operation found"),
             (S3, "Target 101: #Shoot#\n#Keep_coop#", None), (S1, "#Move_up#", None)]
    for stage, answer, problem in cases:
        decision = parse_answer(answer, stage)
        found = format_problem(STAGE3_WORLD, 0, stage, decision)
        assert (found is None) == format_ok(STAGE3_WORLD, 0, stage, decision)
        assert found == problem if problem is None else found.startswith(problem)
