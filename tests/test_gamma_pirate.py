"""Pirate Game (γ-Bench game 8): rules, equilibrium, AEC adapter, scoring (spec §10)."""
from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from arena_envs import make, pirate_game_v0
from arena_envs.core.answers import InvalidAnswer
from arena_envs.gamma.history import missing_keys
from arena_envs.gamma.pirate_game import parse_answer, random_composition
from arena_envs.gamma.pirate_rules import (
    PirateGame,
    accepts_needed,
    ne_proposal,
    optimal_vote,
    passes,
    proposal_problem,
)
from baselines.gamma.sequential import GreedyPirate, NashPirate, RandomPirate
from tests.play_helpers import play

# ---------------------------------------------------------------------------------------- rules


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (10, [96, 0, 1, 0, 1, 0, 1, 0, 1, 0]),
        (9, [96, 0, 1, 0, 1, 0, 1, 0, 1]),
        (8, [97, 0, 1, 0, 1, 0, 1, 0]),
        (7, [97, 0, 1, 0, 1, 0, 1]),
        (5, [98, 0, 1, 0, 1]),
        (3, [99, 0, 1]),
        (2, [100, 0]),
        (1, [100]),
    ],
)
def test_ne_proposal_g100(n, expected):
    assert ne_proposal(n, 100) == expected


@pytest.mark.parametrize(
    ("golds", "expected"),
    [
        (4, [0, 0, 1, 0, 1, 0, 1, 0, 1, 0]),
        (5, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0]),
        (400, [396, 0, 1, 0, 1, 0, 1, 0, 1, 0]),
    ],
)
def test_ne_proposal_other_golds(golds, expected):
    assert ne_proposal(10, golds) == expected


@pytest.mark.parametrize("n", range(1, 16))
@pytest.mark.parametrize("golds", [7, 10, 100])
def test_ne_proposal_sums_to_golds_and_passes_with_ne_votes(n, golds):
    if golds < (n - 1) // 2:
        pytest.skip("below the spec's range")
    shares = ne_proposal(n, golds)
    assert sum(shares) == golds and min(shares) >= 0
    accepts = 1 + sum(optimal_vote(k, shares[k]) for k in range(1, n))
    assert accepts == accepts_needed(n)  # the proposer buys exactly the votes it needs
    assert passes(accepts, n)


def test_ne_proposal_rejects_too_few_golds():
    with pytest.raises(ValueError, match="golds"):
        ne_proposal(10, 3)
    with pytest.raises(ValueError, match="golds"):
        ne_proposal(2, 0)  # the score normalises by 2G
    with pytest.raises(ValueError, match="n_players"):
        ne_proposal(0, 100)


def test_optimal_vote_rule():
    assert optimal_vote(1, 2) and optimal_vote(3, 50)
    assert not optimal_vote(2, 0) and not optimal_vote(1, 0)
    assert optimal_vote(2, 1) and optimal_vote(4, 1)
    assert not optimal_vote(1, 1) and not optimal_vote(3, 1)
    with pytest.raises(ValueError, match="position"):
        optimal_vote(0, 5)


@pytest.mark.parametrize(("n", "needed"), [(10, 5), (9, 5), (8, 4), (2, 1), (1, 1), (3, 2)])
def test_pass_thresholds(n, needed):
    assert accepts_needed(n) == needed
    assert passes(needed, n) and not passes(needed - 1, n)


@pytest.mark.parametrize(
    ("shares", "fragment"),
    [
        ([95, 0, 1, 0, 1, 0, 1, 0, 1, 0], "sum to 100"),  # sums to 99
        ([97, 0, 1, 0, 1, 0, 1, 0, 1, -1], "non-negative"),
        ([96, 0, 1, 0, 1, 0, 1, 0, 1], "exactly 10"),
        ([96.0, 0, 1, 0, 1, 0, 1, 0, 1, 0], "integer"),
    ],
)
def test_invalid_proposals(shares, fragment):
    assert fragment in proposal_problem(shares, 10, 100)


def test_valid_proposal_has_no_problem():
    assert proposal_problem(ne_proposal(10, 100), 10, 100) is None


def test_paper_table2_game_rounds():
    """Spec §10f.5: the game of the paper's Table 2, resolved by the rules."""
    game = PirateGame(10, 100)
    game.propose([100] + [0] * 9)
    for p in game.voters():
        game.vote(p, False)
    r1 = game.resolve()
    assert r1["n_accepts"] == 1 and not r1["accepted"] and game.proposer == 1
    game.propose([99, 0, 1, 0, 0, 0, 0, 0, 0])
    for p, v in zip(game.voters(), [0, 1, 1, 0, 0, 0, 0, 1]):
        game.vote(p, bool(v))
    r2 = game.resolve()
    assert r2["n_accepts"] == 4 and not r2["accepted"]
    assert r2["proposal"] == [None, 99, 0, 1, 0, 0, 0, 0, 0, 0]
    assert r2["votes"][0] is None and r2["votes"][1] is True
    game.propose([50, 1, 1, 1, 1, 1, 1, 44])
    for p in game.voters():
        game.vote(p, True)
    r3 = game.resolve()
    assert r3["accepted"] and game.over
    assert game.final_shares == [0, 0, 50, 1, 1, 1, 1, 1, 1, 44]


def test_two_pirates_always_pass():
    game = PirateGame(2, 100)
    game.propose([100, 0])
    game.vote(1, False)
    assert game.resolve()["accepted"]


def test_lone_pirate_is_resolved_with_all_golds():
    game = PirateGame(1, 100)
    record = game.resolve_last_pirate()
    assert record["proposal"] == [100] and record["accepted"] and game.final_shares == [100]


def test_random_composition_is_legal_and_covers_the_simplex():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(300):
        shares = random_composition(rng, 3, 3)
        assert sum(shares) == 3 and min(shares) >= 0 and len(shares) == 3
        seen.add(tuple(shares))
    assert len(seen) == 10  # all C(5, 2) splits of 3 coins into 3 shares
    assert random_composition(rng, 100, 1) == [100]


# ---------------------------------------------------------------------------------- environment


def proposal_text(shares, first_rank):
    return json.dumps({"proposal": {str(first_rank + k): s for k, s in enumerate(shares)}})


def vote_text(accept):
    return json.dumps({"decision": "accept" if accept else "reject"})


def test_pettingzoo_api_and_seed():
    api_test(pirate_game_v0.env(), num_cycles=200)
    seed_test(pirate_game_v0.env, num_cycles=50)
    api_test(pirate_game_v0.env(n_players=3, golds=4), num_cycles=200)


def test_registered_defaults_and_spaces():
    env = make("pirate_game_v0")
    env.reset(seed=0)
    raw = env.unwrapped
    assert raw.params() == {"n_players": 10, "golds": 100} and raw.death_reward == -1.0
    space = env.action_space("player_0")
    assert space["coins"].nvec.tolist() == [10] * 100 and space["vote"].n == 2
    obs = env.observe("player_0")
    assert set(obs) == {"text", "observation", "action_mask"}
    mask = obs["action_mask"]  # player_0 proposes first: every coin may go to any of the ten
    assert [m.tolist() for m in mask["coins"]] == [[1] * 10] * 100 and mask["vote"].tolist() == [1, 0]
    assert env.observation_space("player_0")["action_mask"].contains(mask)
    assert env.observe("player_1")["action_mask"]["coins"][0].tolist() == [1] + [0] * 9  # not to act
    assert obs["observation"].shape == (8 + 10,)
    assert env.agent_selection == "player_0" and env.infos["player_0"]["phase"] == "propose"


@pytest.mark.parametrize(("kwargs", "name"), [({"golds": 3}, "golds"), ({"n_players": 0}, "n_players"),
                                              ({"golds": -1}, "golds"), ({"score_variant": "x"}, "score_variant")])
def test_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        pirate_game_v0.env(**kwargs)


def test_paper_table2_game_scores_80_6():
    """Spec §10f.5, played through the environment with text answers."""
    env = pirate_game_v0.env()
    env.reset(seed=0)
    rounds = [([100] + [0] * 9, [0] * 9), ([99, 0, 1, 0, 0, 0, 0, 0, 0], [0, 1, 1, 0, 0, 0, 0, 1]),
              ([50, 1, 1, 1, 1, 1, 1, 44], [1] * 7)]
    for j, (shares, votes) in enumerate(rounds, start=1):
        assert env.agent_selection == f"player_{j - 1}"
        env.step(proposal_text(shares, j))
        for v in votes:
            env.step(vote_text(v))
        while env.agents and (env.terminations[env.agent_selection] and not env.unwrapped.game.over):
            env.step(None)
    raw = env.unwrapped
    assert [r["accepted"] for r in raw.history] == [False, False, True]
    assert [r["n_accepts"] for r in raw.history] == [1, 4, 8]
    per_round = raw.episode_metrics()["game"]["per_round"]
    assert [(r["l1"], r["correct_votes"], r["votes"]) for r in per_round] == [(8, 9, 9), (6, 6, 8), (94, 4, 7)]
    s8p, s8v = raw.compute_raw_score()
    assert s8p == 36 and s8v == pytest.approx(19 / 24)
    assert raw.compute_score() == pytest.approx(80.6, abs=0.05)
    assert missing_keys("pirate_game_v0", raw.params(), raw.history) == []
    assert "player_0" not in env.agents and raw.returns[0] == -1.0 and raw.returns[1] == -1.0
    assert raw.returns[2:] == [50, 1, 1, 1, 1, 1, 1, 44]


@pytest.mark.parametrize(("n", "golds"), [(10, 100), (10, 4), (10, 5), (10, 400), (9, 100), (8, 7), (3, 1),
                                          (2, 1), (1, 1)])
def test_nash_players_score_100(n, golds):
    raw = play(pirate_game_v0.env(n_players=n, golds=golds), [NashPirate() for _ in range(n)])
    assert len(raw.history) == 1 and raw.history[0]["accepted"]
    assert raw.history[0]["n_accepts"] == accepts_needed(n)
    assert raw.returns == ne_proposal(n, golds)
    assert raw.compute_score() == 100.0


def test_mixed_population_greedy_first_then_nash():
    """9 nash + 1 greedy proposer: round 1 fails unanimously (L1 = 8), round 2 is the NE."""
    raw = play(pirate_game_v0.env(), [GreedyPirate()] + [NashPirate() for _ in range(9)])
    assert [r["accepted"] for r in raw.history] == [False, True]
    assert raw.compute_raw_score() == (4.0, 1.0)
    assert raw.compute_score() == pytest.approx(99.0)
    assert raw.returns == [-1.0, *ne_proposal(9, 100)]


@pytest.mark.parametrize("seed", range(4))
def test_random_pirates_stay_legal(seed):
    raw = play(pirate_game_v0.env(), [RandomPirate() for _ in range(10)], seed)
    assert raw.game.over and 0 <= raw.compute_score() <= 100
    assert sum(c["illegal"] + c["fallback"] for c in raw.invalid_counts.values()) == 0


def _to_vote_phase(env, shares):
    env.reset(seed=0)
    env.step({"proposal": np.array(shares + [0] * (10 - len(shares))), "vote": 0})


def test_tie_passes_and_one_short_fails():
    env = pirate_game_v0.env()
    _to_vote_phase(env, ne_proposal(10, 100))
    for k in range(1, 10):
        env.step(int(k in (1, 2, 3, 4)))  # proposer + 4 = 5 of 10
    assert env.unwrapped.history[0]["accepted"] and all(env.terminations.values())
    assert env.rewards["player_0"] == 96.0 and env.rewards["player_2"] == 1.0
    _to_vote_phase(env, ne_proposal(10, 100))
    for k in range(1, 10):
        env.step(int(k in (1, 2, 3)))  # 4 of 10
    assert not env.unwrapped.history[0]["accepted"]
    assert env.terminations == {**{a: False for a in env.agents}, "player_0": True}
    assert env.rewards["player_0"] == -1.0 and env.agent_selection == "player_0"
    env.step(None)
    assert "player_0" not in env.agents and env.agent_selection == "player_1"
    assert env.infos["player_1"]["phase"] == "propose" and env.infos["player_1"]["n_survivors"] == 9


def test_votes_stay_hidden_until_resolution():
    env = pirate_game_v0.env()
    _to_vote_phase(env, ne_proposal(10, 100))
    before = env.observe("player_5")["text"]
    env.step(vote_text(True))  # player_1
    env.step(vote_text(False))  # player_2
    assert env.observe("player_5")["text"] == before
    assert env.infos["player_3"]["offered"] == 0 and env.infos["player_3"]["position"] == 3


def test_parse_answer_reads_a_proposal_or_a_vote():
    assert parse_answer('{"proposal": {"3": 5, "2": 1}}', 6, [2, 3]) == ("propose", [1, 5])
    assert parse_answer('I think... {"decision": "Accept"}', 6) == ("vote", True)
    with pytest.raises(InvalidAnswer, match='"decision" must be accept or reject'):
        parse_answer('{"decision": "maybe"}', 6)


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [(proposal_text([95, 0, 1, 0, 1, 0, 1, 0, 1, 0], 1), "sum to 100"),
     (proposal_text([97, 0, 1, 0, 1, 0, 1, 0, 1, -1], 1), "between 0 and 100"),
     (proposal_text([96, 0, 1, 0, 1, 0, 1, 0, 2], 1), "exactly 10"),
     ('{"proposal": {"1": 96.5, "2": 3.5}}', "whole number"),
     ({"proposal": [95, 0, 1, 0, 1, 0, 1, 0, 1, 0], "vote": 0}, "sum to 100"),
     ({"proposal": [97, 0, 1, 0, 1, 0, 1, 0, 1, -1], "vote": 0}, "non-negative"),
     ("I keep everything", "no JSON object")],
)
def test_invalid_proposals_are_reasked(answer, fragment):
    env = pirate_game_v0.env()
    env.reset(seed=0)
    env.step(answer)
    info = env.infos["player_0"]
    assert env.agent_selection == "player_0" and fragment in info["invalid_action"]["reason"]
    assert env.unwrapped.game.phase == "propose" and fragment in env.observe("player_0")["text"]


def test_native_proposal_must_zero_the_tail():
    env = pirate_game_v0.env()
    _to_vote_phase(env, [100] + [0] * 9)
    for _ in range(9):
        env.step(0)
    env.step(None)  # player_0 overboard
    env.step({"proposal": np.array([95, 0, 1, 0, 1, 0, 1, 0, 1, 1]), "vote": 0})  # 9 survivors: entry 10 is unused
    assert "only the first 9" in env.infos["player_1"]["invalid_action"]["reason"]
    env.step({"proposal": np.array([96, 0, 1, 0, 1, 0, 1, 0, 1, 0]), "vote": 0})
    assert env.unwrapped.game.phase == "vote" and env.unwrapped.game.proposal == ne_proposal(9, 100)


def test_coins_give_each_coin_to_a_pirate_on_board():
    """A ``coins`` action names the seat of every coin: the mask allows exactly the pirates on board."""
    env = pirate_game_v0.env()
    _to_vote_phase(env, [100] + [0] * 9)
    for _ in range(9):
        env.step(0)
    env.step(None)  # player_0 overboard: player_1 proposes to seats 1..9
    assert env.observe("player_1")["action_mask"]["coins"][0].tolist() == [0] + [1] * 9
    env.step({"coins": np.array([0] + [1] * 99), "vote": 0})
    assert "seats 1..9; got seat 0" in env.infos["player_1"]["invalid_action"]["reason"]
    env.step({"coins": [1] * 99, "vote": 0})
    assert env.infos["player_1"]["invalid_action"]["kind"] == "unparseable"
    env.step({"coins": np.array([1] * 96 + [3, 5, 7, 9]), "vote": 0})
    assert env.unwrapped.game.phase == "vote" and env.unwrapped.game.proposal == ne_proposal(9, 100)


@pytest.mark.parametrize(
    "answer",
    ['{"proposal": {"1-th": 96, "2-th": 0, "3-th": 1, "4-th": 0, "5-th": 1, "6-th": 0, "7-th": 1, "8-th": 0, '
     '"9-th": 1, "10-th": 0}}',
     '{"proposal": {"10": 0, "9": 1, "8": 0, "7": 1, "6": 0, "5": 1, "4": 0, "3": 1, "2": 0, "1": 96}}',
     '{"proposal": {"a": 96, "b": 0, "c": 1, "d": 0, "e": 1, "f": 0, "g": 1, "h": 0, "i": 1, "j": 0}}',
     '{"proposal": [96, 0, 1, 0, 1, 0, 1, 0, 1, 0]}',
     '```json\n{"explanation": "keep most", "proposal": {"1": "96", "2": "0", "3": "1", "4": "0", "5": "1", '
     '"6": "0", "7": "1", "8": "0", "9": "1", "10": "0"}}\n```'],
)
def test_proposal_text_forms(answer):
    env = pirate_game_v0.env()
    env.reset(seed=0)
    env.step(answer)
    assert env.infos["player_0"]["invalid_action"] is None
    assert env.unwrapped.game.proposal == ne_proposal(10, 100)


@pytest.mark.parametrize(("answer", "accept"), [
    ('{"decision": "Accept"}', True), ('{"decision": "I reject it"}', False),
    ('{"decision": "accept, not reject"}', True), (1, True), (0, False),
    ({"proposal": np.zeros(10), "vote": np.int64(1)}, True)])
def test_vote_forms(answer, accept):
    env = pirate_game_v0.env()
    _to_vote_phase(env, ne_proposal(10, 100))
    env.step(answer)
    assert env.infos["player_1"]["invalid_action"] is None and env.unwrapped.game.votes[1] is accept


def test_unclear_vote_is_reasked():
    env = pirate_game_v0.env()
    _to_vote_phase(env, ne_proposal(10, 100))
    env.step('{"decision": "maybe"}')
    assert env.infos["player_1"]["invalid_action"]["kind"] == "illegal" and env.agent_selection == "player_1"


def test_fallback_proposal_is_a_legal_random_split():
    env = pirate_game_v0.env(max_retries=5)
    env.reset(seed=3)
    for _ in range(6):
        env.step("no idea")
    raw = env.unwrapped
    assert raw.game.phase == "vote" and sum(raw.game.proposal) == 100 and len(raw.game.proposal) == 10
    assert env.infos["player_0"]["fallback"] and raw.invalid_counts["player_0"]["fallback"] == 1


def test_lone_pirate_takes_everything():
    env = pirate_game_v0.env(n_players=1, golds=7)
    env.reset(seed=0)
    raw = env.unwrapped
    assert raw.history == [{"round": 1, "proposer": 0, "proposal": [7], "votes": [True], "n_accepts": 1,
                            "accepted": True}]
    assert env.terminations["player_0"] and env.last()[1] == 7.0
    env.step(None)
    assert env.agents == [] and raw.compute_score() == 100.0


def test_text_blocks():
    env = pirate_game_v0.env()
    env.reset(seed=0)
    proposer = env.observe("player_0")["text"]
    assert "You are player_0, the 1st most senior pirate (rank 1)." in proposer
    assert "at least half" in proposer and "(1) stay alive" in proposer and '"proposal": {"1":' in proposer
    assert "starts ===" not in env.observe("player_4")["text"]
    env.step(proposal_text(ne_proposal(10, 100), 1))
    voter = env.observe("player_2")["text"]
    assert "starts ===" not in voter  # not its turn yet
    request = env.observe("player_1")["text"].split("=== Round 1 starts ===")[1]
    assert "The rank-1 pirate proposes" in request and "you would get 0 coins" in request
    assert '"decision"' in request
    for k in range(1, 10):
        env.step(vote_text(k % 2 == 0))
    proposer_report = env.observe("player_0")["text"]
    assert "5 of 10 pirates accepted" in proposer_report and "you receive 96 coins" in proposer_report
    assert '"proposal": {"1": 96' in proposer_report.split("Your answer:")[1]
    voter_report = env.observe("player_2")["text"]
    assert 'Your answer: {"decision": "accept"}' in voter_report and "you receive 1 coin." in voter_report


def test_features_and_constraint():
    env = pirate_game_v0.env()
    _to_vote_phase(env, ne_proposal(10, 100))
    feats = dict(zip(env.unwrapped.feature_names, env.observe("player_2")["observation"].tolist()))
    assert feats["round_index"] == 0 and feats["max_rounds"] == 10 and feats["golds"] == 100
    assert feats["own_rank"] == 3 and feats["proposer_rank"] == 1 and feats["n_remaining"] == 10
    assert feats["phase"] == 1 and feats["offered_coins"] == 1 and feats["proposal_0"] == 96
    constraint = env.unwrapped.answer_constraint()
    assert constraint.accepts('{"decision": "accept"}') and not constraint.accepts('{"vote": 1}')
    env.reset(seed=0)
    constraint = env.unwrapped.answer_constraint()
    assert constraint.accepts(proposal_text(ne_proposal(10, 100), 1))
    assert constraint.schema["properties"]["proposal"]["required"] == [str(r) for r in range(1, 11)]


def test_determinism_pickle_and_render():
    runs = []
    for _ in range(2):
        raw = play(pirate_game_v0.env(), [RandomPirate() for _ in range(10)], seed=9)
        runs.append((raw.history, raw.record.to_dict()))
    assert runs[0] == runs[1]
    env = pirate_game_v0.env(render_mode="ansi")
    _to_vote_phase(env, ne_proposal(10, 100))
    clone = pickle.loads(pickle.dumps(env))
    for e in (env, clone):
        for k in range(1, 10):
            e.step(int(k % 2 == 0))
    assert clone.unwrapped.history == env.unwrapped.history
    assert env.render() == "Round 1: player_0 proposes [96, 0, 1, 0, 1, 0, 1, 0, 1, 0]; 5/10 accept; accepted."
