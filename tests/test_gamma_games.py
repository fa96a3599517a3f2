"""γ-Bench simultaneous games 1-6: PettingZoo API, shared env behaviour, and the spec's facts.

Spec: ../shared/specs/gamma_games.md §1-§8, §12, §13. Game-specific facts are grouped per game
below; the shared machinery (hidden rounds, invalid-answer loop, text blocks) is tested on all
six environments.
"""
from __future__ import annotations

import importlib
import json
import pickle
import random
from collections.abc import Callable, Sequence
from fractions import Fraction
from math import comb
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import arena_envs
from arena_envs.gamma import history as schema
from arena_envs.gamma import scoring
from arena_envs.gamma.base import DEFAULT_MAX_RETRIES
from arena_envs.gamma.transcript import COT_TRIGGER
from baselines.gamma.equilibrium import (
    BayesNash,
    DinersNash,
    DivideFair,
    ElFarolMixed,
    GuessNash,
    PublicGoodsNash,
    SealedBidEquilibrium,
    Truthful,
)
from baselines.gamma.fixed import AlwaysCheap, AlwaysCostly, AlwaysGo, AlwaysStay, FixedAnswer, FreeRider
from tests.play_helpers import play as play_policies

GAMES = ("guess_two_thirds_v0", "el_farol_v0", "divide_dollar_v0", "public_goods_v0", "diners_dilemma_v0",
         "sealed_bid_auction_v0")
KEYS = {"guess_two_thirds_v0": "chosen_number", "el_farol_v0": "decision", "divide_dollar_v0": "bid_amount",
        "public_goods_v0": "tokens_contributed", "diners_dilemma_v0": "chosen_dish", "sealed_bid_auction_v0": "bid"}


def module(name: str):
    return importlib.import_module(f"arena_envs.{name}")


def play(env, answers: Callable[[Any, str, dict], Any], seed: int = 0):
    """Play a whole episode; ``answers(unwrapped, agent, info)`` gives each answer. Returns the unwrapped env."""
    env.reset(seed=seed)
    raw = env.unwrapped
    for agent in env.agent_iter():
        _, _, term, trunc, info = env.last()
        env.step(None if term or trunc else answers(raw, agent, info))
    return raw


def by_round(table: Sequence[Sequence[Any]]) -> Callable[[Any, str, dict], Any]:
    """Answers from a per-round list of per-player values (the last row repeats)."""
    def answer(raw, agent, info):
        row = table[min(raw.round, len(table) - 1)]
        return raw.action_of(row[int(agent.split("_")[1])])
    return answer


def constant(values: Sequence[Any]) -> Callable[[Any, str, dict], Any]:
    return by_round([values])


def play_round(raw, values: Sequence[Any]) -> dict[str, Any]:
    """Step one round of native answers on an unwrapped env; returns the new round record."""
    for v in values:
        raw.step(raw.action_of(v))
    return raw.history[-1]


def policies_play(name: str, policies: Sequence[Any], seed: int = 0, **kwargs: Any):
    return play_policies(module(name).env(**kwargs), policies, seed)


# ------------------------------------------------------------------------------ PettingZoo API

@pytest.mark.parametrize("name", GAMES)
def test_api_seed_and_parallel(name):
    mod = module(name)
    api_test(mod.env(), num_cycles=300)
    seed_test(mod.env, num_cycles=300)
    parallel_api_test(mod.parallel_env(), num_cycles=300)
    parallel_seed_test(mod.parallel_env, num_cycles=300)


@pytest.mark.parametrize("name", GAMES)
def test_registered_and_made_by_name(name):
    entry = arena_envs.ENVIRONMENTS[name]
    assert (entry.module, entry.parallel) == (f"arena_envs.{name}", True)
    env = arena_envs.make(name)
    assert env.unwrapped.metadata["name"] == name and env.unwrapped.metadata["is_parallelizable"]


@pytest.mark.parametrize("name", GAMES)
def test_defaults_are_the_papers(name):
    raw = module(name).raw_env()
    assert raw.possible_agents == [f"player_{i}" for i in range(10)]
    assert raw.n_rounds == 20 and raw.max_retries == DEFAULT_MAX_RETRIES == 5
    raw.reset(seed=0)
    assert raw.history == [] and raw.agent_selection == "player_0"


@pytest.mark.parametrize("name", GAMES)
def test_pickles_mid_game_and_continues_identically(name):
    env = module(name).env()
    env.reset(seed=3)
    for k in range(25):
        env.step(k % 2)
    copy = pickle.loads(pickle.dumps(env))
    for e in (env, copy):
        for _ in range(30):
            e.step(0)
    assert env.unwrapped.history == copy.unwrapped.history
    assert env.observe("player_4")["text"] == copy.observe("player_4")["text"]


@pytest.mark.parametrize("name", GAMES)
def test_parallel_env_has_no_reask(name):
    with pytest.raises(ValueError, match="max_retries"):
        module(name).parallel_env(max_retries=2)
    par = module(name).parallel_env()
    obs, infos = par.reset(seed=1)
    assert set(obs) == set(par.possible_agents)
    answers = {a: "not an answer" for a in par.agents}
    _, rewards, terms, _, infos = par.step(answers)
    raw = par.unwrapped
    assert len(raw.history) == 1  # every agent fell back at once; the round resolved
    assert all(c["fallback"] == 1 and c["unparseable"] == 1 for c in raw.invalid_counts.values())
    assert set(rewards) == set(par.possible_agents)
    assert not any(terms.values()) and all(info["round"] == 2 for info in infos.values())  # on to round 2


# ------------------------------------------------------------------------------ shared behaviour

@pytest.mark.parametrize("name", GAMES)
def test_round_actions_are_hidden_until_the_round_resolves(name):
    """Player_5's observation mid-round is the same whatever players 0-4 answered this round."""
    seen = []
    for offset in (0, 1):
        raw = module(name).raw_env()
        raw.reset(seed=7)
        for _ in range(10):  # one identical round
            raw.step(0)
        for i in range(5):
            n = raw.action_space(f"player_{i}").n
            raw.step((i + offset * (1 + i)) % n)
        assert raw.agent_selection == "player_5"
        obs = raw.observe("player_5")
        seen.append((obs["text"], obs["observation"].tolist(), obs["action_mask"].tolist(),
                     raw.infos["player_5"]["round"]))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("name", GAMES)
def test_rewards_only_at_resolution_and_termination_after_the_last_round(name):
    raw = module(name).raw_env(n_rounds=2)
    raw.reset(seed=0)
    for _ in range(9):
        raw.step(0)
        assert all(r == 0 for r in raw.rewards.values())
    raw.step(0)
    rewards = [raw.rewards[a] for a in raw.possible_agents]  # set for every agent at once
    assert rewards == raw.totals
    assert [raw._cumulative_rewards[a] for a in raw.possible_agents[:-1]] == rewards[:-1]
    assert not any(raw.terminations.values())
    for _ in range(10):
        raw.step(0)
    assert all(raw.terminations.values()) and not any(raw.truncations.values())
    assert len(raw.history) == 2 and raw.infos["player_0"]["phase"] == "done"


@pytest.mark.parametrize("name", GAMES)
def test_text_blocks_prefix_reports_echo_and_request(name):
    raw = module(name).raw_env()
    raw.reset(seed=0)
    first = raw.observe("player_0")["text"]
    prefix = raw._prefixes[0]
    assert first.startswith(prefix) and "=== Round 1 starts ===" in first
    assert "player_0" not in prefix  # reveal_own_id=False by default
    assert f'"{KEYS[name]}"' in first.splitlines()[-1]  # the JSON format line comes last
    raw.step(0)
    assert "starts ===" not in raw.observe("player_0")["text"]  # answered: no request block
    for _ in range(9):
        raw.step(0)
    text = raw.observe("player_0")["text"]
    assert text.startswith(prefix)  # stable prefix across rounds
    assert "=== Round 1 results ===" in text and "=== Round 2 starts ===" in text
    echo = raw._field(0).echo(raw._values[0])
    assert f"Your answer: {echo}" in text
    assert json.loads(echo) == {KEYS[name]: str(raw._values[0])}


@pytest.mark.parametrize("name", GAMES)
def test_reveal_own_id_persona_cot_and_history_window(name):
    raw = module(name).raw_env(reveal_own_id=True, persona="You are a selfish player.", cot=True, history_window=1)
    raw.reset(seed=0)
    text = raw.observe("player_3")["text"]
    assert text.startswith("You are a selfish player.") and "You are player_3." in text
    assert COT_TRIGGER in text and '"explanation"' in text
    assert raw.answer_constraint("player_3").schema["required"][0] == "explanation"
    for _ in range(30):
        raw.step(0)
    text = raw.observe("player_3")["text"]
    assert "Round 3 results" in text and "Round 2 results" not in text
    with pytest.raises(ValueError, match="history_window"):
        module(name).raw_env(history_window=-1)


@pytest.mark.parametrize("name", GAMES)
def test_invalid_answers_reask_then_fall_back_to_a_random_legal_action(name):
    raw = module(name).raw_env()
    raw.reset(seed=11)
    for attempt in range(1, DEFAULT_MAX_RETRIES + 1):
        raw.step("I would rather not say.")
        assert raw.agent_selection == "player_0"
        info = raw.infos["player_0"]
        assert info["invalid_action"]["kind"] == "unparseable" and info["retries"] == attempt
        assert "Your previous answer could not be used" in raw.observe("player_0")["text"]
    raw.step("still nothing")
    assert raw.agent_selection == "player_1" and raw.infos["player_0"]["fallback"] is True
    assert raw.invalid_counts["player_0"] == {"unparseable": 6, "illegal": 0, "fallback": 1}
    fallback = raw.record.of_type("fallback")[0]["action"]
    assert raw.infos["player_0"]["action_mask"][fallback] == 1
    assert "could not be used" not in raw.observe("player_1")["text"]
    with pytest.raises(ValueError, match="fallback_action"):
        module(name).raw_env(fallback_action="skip")


@pytest.mark.parametrize("name", GAMES)
def test_fallback_raise_option(name):
    raw = module(name).raw_env(max_retries=0, fallback_action="raise")
    raw.reset(seed=0)
    with pytest.raises(RuntimeError, match="invalid answers"):
        raw.step("nope")


@pytest.mark.parametrize("name", GAMES)
def test_native_out_of_range_and_wrong_type_are_invalid(name):
    raw = module(name).raw_env()
    raw.reset(seed=0)
    raw.step(raw.action_space("player_0").n)
    assert raw.infos["player_0"]["invalid_action"]["kind"] == "illegal"
    raw.step([1, 2])
    assert raw.infos["player_0"]["invalid_action"]["kind"] == "unparseable"
    raw.step(np.int64(0))
    assert raw.agent_selection == "player_1"


@pytest.mark.parametrize("name", GAMES)
def test_answer_constraint_is_a_json_schema_that_accepts_the_echo(name):
    raw = module(name).raw_env()
    raw.reset(seed=0)
    c = raw.answer_constraint()
    assert c.kind == "json" and c.schema["required"] == [KEYS[name]]
    assert c.structured_outputs() == {"json": c.schema}
    assert c.accepts(raw._field(0).echo(raw._values[0]))
    prop = c.schema["properties"][KEYS[name]]
    if name in ("el_farol_v0", "diners_dilemma_v0"):
        assert sorted(prop["enum"]) == sorted(raw._values)
    else:
        assert prop == {"type": "integer", "minimum": raw._values[0], "maximum": raw._values[-1]}


@pytest.mark.parametrize("name", GAMES)
def test_features_match_their_names_and_spec_layout(name):
    raw = module(name).raw_env()
    raw.reset(seed=0)
    obs = raw.observe("player_0")
    assert obs["observation"].dtype == np.float32
    assert len(obs["observation"]) == len(raw.feature_names)
    assert raw.feature_names[:2] == ("round_index", "n_rounds")
    assert obs["observation"][:2].tolist() == [0, 20]
    assert obs["observation"][-1] == -1  # no history yet
    for _ in range(10):
        raw.step(0)
    assert raw.observe("player_0")["observation"][0] == 1


@pytest.mark.parametrize("name", GAMES)
def test_history_follows_the_schema_and_metrics_use_the_scoring(name):
    raw = play(module(name).env(), lambda r, a, i: int(r.np_random.integers(2)), seed=5)
    params = raw.params()
    assert schema.missing_keys(name, params, raw.history) == []
    assert [r["round"] for r in raw.history] == list(range(1, 21))
    json.dumps(raw.episode_record())
    metrics = raw.episode_metrics()
    assert metrics["game"]["score"] == pytest.approx(scoring.score(name, params, raw.history))
    assert metrics["game"]["raw_score"] == pytest.approx(scoring.raw_score(name, params, raw.history))
    assert set(metrics["agents"]) == set(raw.possible_agents)
    assert raw.render() is None  # no render mode: render() draws nothing


#: What line ``Round k:`` of ``render()`` must show of round ``k``'s history record.
RENDERED_FACTS: dict[str, Callable[[dict[str, Any], int], list[str]]] = {
    "guess_two_thirds_v0": lambda r, n: [str(r["choices"]), f"{r['target']:.2f}",
                                         *(f"'player_{w}'" for w in r["winners"])],
    "el_farol_v0": lambda r, n: [f"{r['attendance']}/{n}", "crowded" if r["crowded"] else "fun"],
    "divide_dollar_v0": lambda r, n: [str(r["bids"]), str(r["total"])],
    "public_goods_v0": lambda r, n: [str(r["contributions"]), str(r["pot"])],
    "diners_dilemma_v0": lambda r, n: [f"{r['n_costly']} costly", f"{n - r['n_costly']} cheap"],
    "sealed_bid_auction_v0": lambda r, n: [str(r["valuations"]), str(r["bids"]), f"player_{r['winner']}",
                                           str(r["price"])],
}


def random_answers(seed: int) -> Callable[[Any, str, dict], Any]:
    rng = np.random.default_rng(seed)
    return lambda raw, agent, info: int(rng.integers(raw.action_space(agent).n))


def play_rounds(env, rounds: int, seed: int) -> Any:
    """Reset ``env`` and play ``rounds`` rounds of seeded random answers; returns the unwrapped env."""
    env.reset(seed=seed)
    raw, answer = env.unwrapped, random_answers(seed)
    while len(raw.history) < rounds:
        env.step(answer(raw, env.agent_selection, {}))
    return raw


@pytest.mark.parametrize("name", GAMES)
def test_ansi_render_shows_every_round_of_the_history(name):
    env = module(name).env(render_mode="ansi", n_rounds=6)
    env.reset(seed=3)
    assert env.render() == ""  # nothing resolved yet
    for rounds in (2, 6):
        raw = play_rounds(env, rounds, seed=3)
        lines = env.render().splitlines()
        assert len(lines) == rounds == len(raw.history)
        for line, record in zip(lines, raw.history, strict=True):
            assert line.startswith(f"Round {record['round']}: ")
            for fact in RENDERED_FACTS[name](record, raw.n_players):
                assert fact in line, (fact, line)
    assert len({line.partition(": ")[2] for line in lines}) > 1  # the rounds differ, so must their lines


@pytest.mark.parametrize("name", GAMES)
def test_human_render_prints_the_ansi_text(name, capsys):
    ansi = module(name).env(render_mode="ansi", n_rounds=4)
    human = module(name).env(render_mode="human", n_rounds=4)
    play_rounds(ansi, 3, seed=8)
    play_rounds(human, 3, seed=8)
    expected = ansi.render()
    capsys.readouterr()
    assert human.render() is None
    assert capsys.readouterr().out == expected + "\n"
    assert len(expected.splitlines()) == 3


@pytest.mark.parametrize("name", GAMES)
def test_bad_arguments_name_the_argument(name):
    with pytest.raises(ValueError, match="n_players"):
        module(name).raw_env(n_players=1)
    with pytest.raises(ValueError, match="n_rounds"):
        module(name).raw_env(n_rounds=0)
    with pytest.raises(ValueError, match="score_variant"):
        module(name).raw_env(score_variant="nope")


# ------------------------------------------------------------------------------ Game 1: Guess

def guess_raw(**kw):
    raw = module("guess_two_thirds_v0").raw_env(**kw)
    raw.reset(seed=0)
    return raw


def test_guess_round_facts():
    raw = guess_raw()
    rec = play_round(raw, [0, 10, 20, 30, 40, 50, 60, 70, 80, 90])
    assert rec["average"] == 45 and rec["target"] == pytest.approx(30.0)
    assert rec["winners"] == [3] and rec["winning_numbers"] == [30]
    assert [raw.rewards[f"player_{i}"] for i in range(10)] == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    assert "the target (2/3 of the average) is 30.00" in raw.observe("player_0")["text"]
    rec = play_round(raw, [50] * 10)
    assert rec["target"] == pytest.approx(33.333, abs=1e-3) and rec["winners"] == list(range(10))
    assert rec["winning_numbers"] == [50]


def test_guess_ties_between_distinct_numbers():
    # mean 30, target 20: 10 and 30 are equally close
    choices = [10, 30, 50, 30, 10, 30, 30, 30, 50, 30]
    assert sum(choices) == 300
    rec = play_round(guess_raw(), choices)
    assert rec["winning_numbers"] == [10, 30] and rec["winners"] == [0, 1, 3, 4, 5, 6, 7, 9]
    rec = play_round(guess_raw(tie_rule="first_in_index_order"), choices)
    assert rec["winning_numbers"] == [10] and rec["winners"] == [0, 4]
    with pytest.raises(ValueError, match="tie_rule"):
        guess_raw(tie_rule="median")


@pytest.mark.parametrize("value, score", [(0, 100.0), (50, 50.0), (100, 0.0)])
def test_guess_scores_of_constant_play(value, score):
    raw = play(module("guess_two_thirds_v0").env(), constant([value] * 10))
    assert raw.compute_score() == pytest.approx(score)


@pytest.mark.parametrize("kwargs, value, score", [
    ({"ratio": Fraction(4, 3)}, 100, 100.0), ({"ratio": 1}, 0, 100.0), ({"ratio": 1}, 100, 100.0),
    ({"ratio": 1}, 50, 0.0), ({"min_value": 100, "max_value": 200}, 100, 100.0)])
def test_guess_score_edge_cases(kwargs, value, score):
    raw = play(module("guess_two_thirds_v0").env(**kwargs), constant([value] * 10))
    assert raw.compute_score() == pytest.approx(score)


def test_guess_validation_and_ratio_forms():
    raw = guess_raw()
    for bad in ('{"chosen_number": "101"}', '{"chosen_number": "abc"}', "abc", '{"chosen_number": 33.5}'):
        raw.step(bad)
        assert raw.agent_selection == "player_0" and raw.infos["player_0"]["invalid_action"] is not None
    raw.step('{"chosen_number": "33"}')
    assert raw.agent_selection == "player_1"
    assert guess_raw(ratio="2/3").settings.ratio == Fraction(2, 3)
    assert guess_raw(ratio="50%").settings.ratio == Fraction(1, 2)
    assert "7/6 times that average" in guess_raw(ratio=Fraction(7, 6)).observe("player_0")["text"]
    assert guess_raw(ratio=2).params()["ratio"] == 2.0
    with pytest.raises(ValueError, match="ratio"):
        guess_raw(ratio="two thirds")
    with pytest.raises(ValueError, match="min_value"):
        guess_raw(min_value=5, max_value=5)
    ranged = guess_raw(min_value=100, max_value=200)
    ranged.step('{"chosen_number": "99"}')
    assert ranged.infos["player_0"]["invalid_action"]["kind"] == "illegal"
    ranged.step(0)
    assert ranged._phase.moves == {0: 0} and ranged._values[0] == 100  # native 0 means MIN


def test_guess_reveals_no_individual_choices():
    raw = guess_raw()
    play_round(raw, [7, 11, 13, 17, 19, 23, 29, 31, 37, 41])
    report = raw.observe("player_0")["text"].split("=== Round 1 results ===")[1]
    assert "41" not in report and "37" not in report


# ------------------------------------------------------------------------------ Game 2: El Farol

def farol_raw(**kw):
    raw = module("el_farol_v0").raw_env(**kw)
    raw.reset(seed=0)
    return raw


def test_el_farol_payoffs_at_and_above_capacity():
    raw = farol_raw()
    rec = play_round(raw, ["go"] * 6 + ["stay"] * 4)
    assert rec["utilities"] == [10.0] * 6 + [5.0] * 4 and not rec["crowded"]
    rec = play_round(raw, ["go"] * 7 + ["stay"] * 3)
    assert rec["utilities"] == [0.0] * 7 + [5.0] * 3 and rec["crowded"]


def test_el_farol_pure_equilibria_have_exactly_capacity_goers():
    rules = farol_raw().settings
    equilibria = 0
    for goers in range(11):
        go = ["go"] * goers + ["stay"] * (10 - goers)
        _, u = rules.resolve(1, go)
        stable = True
        for i in range(10):
            flipped = list(go)
            flipped[i] = "stay" if go[i] == "go" else "go"
            if rules.resolve(1, flipped)[1][i] > u[i]:
                stable = False
        if stable:
            equilibria += comb(10, goers)
            assert goers == 6
    assert equilibria == 210


def test_el_farol_symmetric_mixed_equilibrium_is_about_0607():
    """The go-probability q at which going and staying pay the same against nine others who go
    with probability q, from the environment's own payoffs: about 0.607."""
    from scipy.optimize import brentq
    from scipy.stats import binom
    rules = farol_raw().settings

    def go_minus_stay(q: float) -> float:
        gain = 0.0
        for others in range(10):
            decisions = ["go"] * (others + 1) + ["stay"] * (9 - others)
            gain += binom.pmf(others, 9, q) * (rules.resolve(1, decisions)[1][0] - rules.home_utility)
        return gain

    assert brentq(go_minus_stay, 0.01, 0.99) == pytest.approx(0.607, abs=5e-4)


@pytest.mark.parametrize("rounds, score", [([["go"] * 6 + ["stay"] * 4], 100.0), ([["go"] * 10], 100 / 3),
                                           ([["stay"] * 10], 0.0), ([["go"] * 10, ["stay"] * 10] * 10, 50 / 3)])
def test_el_farol_scores(rounds, score):
    raw = play(module("el_farol_v0").env(), by_round(rounds))
    assert raw.compute_score() == pytest.approx(score)


def test_el_farol_zero_capacity():
    raw = farol_raw(capacity_ratio=0.0)
    rec = play_round(raw, ["go"] + ["stay"] * 9)
    assert rec["crowded"] and rec["utilities"][0] == 0.0
    raw = play(module("el_farol_v0").env(capacity_ratio=0.0), constant(["go"] * 3 + ["stay"] * 7))
    assert raw.compute_score() == pytest.approx(70.0)


def test_el_farol_implicit_hides_attendance_from_stayers_explicit_shows_it():
    for mode, stayer_sees in (("implicit", False), ("explicit", True)):
        raw = farol_raw(mode=mode)
        play_round(raw, ["go"] * 4 + ["stay"] * 6)
        goer, stayer = raw.observe("player_0")["text"], raw.observe("player_9")["text"]
        assert "4 players went to the bar" in goer
        assert ("4 players went to the bar" in stayer) == stayer_sees
        assert ("attendance" in raw.infos["player_9"]["last_round_record"]) == stayer_sees
        assert (raw.observe("player_9")["observation"][-1] == -1) != stayer_sees


def test_el_farol_parser_synonyms_and_validation():
    raw = farol_raw()
    for text, value in (('{"decision": "Go to the bar"}', "go"), ('{"decision": "stay home"}', "stay"),
                        ('{"decision": "HOME"}', "stay"), ('{"decision": " GO "}', "go")):
        assert raw._field(0).parse(text) == value
    raw.step('{"decision": "maybe"}')
    assert raw.infos["player_0"]["invalid_action"]["kind"] == "illegal"
    assert "at most 60%" in raw.observe("player_0")["text"]
    with pytest.raises(ValueError, match="capacity_ratio"):
        farol_raw(capacity_ratio=1.5)
    with pytest.raises(ValueError, match="home_utility"):
        farol_raw(home_utility=20)
    with pytest.raises(ValueError, match="mode"):
        farol_raw(mode="loud")


# ------------------------------------------------------------------------------ Game 3: Divide the Dollar

def test_divide_dollar_payoffs():
    raw = module("divide_dollar_v0").raw_env()
    raw.reset(seed=0)
    rec = play_round(raw, [91] + [1] * 9)
    assert rec["total"] == 100 and rec["payoffs"] == [91] + [1] * 9 and not rec["exceeded"]
    rec = play_round(raw, [11] * 10)
    assert rec["total"] == 110 and rec["exceeded"] and rec["payoffs"] == [0] * 10
    assert "The bids add up to 110" in raw.observe("player_0")["text"]
    for bad in ('{"bid_amount": "101"}', '{"bid_amount": "-1"}'):
        raw.step(bad)
        assert raw.infos["player_0"]["invalid_action"]["kind"] == "illegal"


@pytest.mark.parametrize("bid, score", [(10, 100.0), (11, 90.0), (0, 0.0), (30, 0.0)])
def test_divide_dollar_scores(bid, score):
    raw = play(module("divide_dollar_v0").env(), constant([bid] * 10))
    assert raw.compute_score() == pytest.approx(score)
    if bid == 30:
        assert scoring.score("divide_dollar_v0", raw.params(), raw.history, "unclipped") == pytest.approx(-100.0)


def test_divide_dollar_generalization_golds():
    raw = play(module("divide_dollar_v0").env(golds=800), constant([80] * 10))
    assert raw.action_space("player_0").n == 801 and raw.compute_score() == pytest.approx(100.0)
    with pytest.raises(ValueError, match="golds"):
        module("divide_dollar_v0").raw_env(golds=0)


# ------------------------------------------------------------------------------ Game 4: Public Goods

def test_public_goods_payoffs():
    raw = module("public_goods_v0").raw_env()
    raw.reset(seed=0)
    rec = play_round(raw, [20] + [0] * 9)
    assert rec["pot"] == 20 and rec["share"] == 4.0
    assert rec["payoffs"] == [4.0] + [24.0] * 9
    text = raw.observe("player_0")["text"]
    assert "Your gain this round is -16" in text and "You currently have 20 tokens" in text
    assert raw.infos["player_1"]["tokens"] == 20.0  # reset: every round starts from T
    rec = play_round(raw, [20] * 10)
    assert rec["pot"] == 200 and rec["share"] == 40.0 and rec["payoffs"] == [40.0] * 10


@pytest.mark.parametrize("rounds, score", [([[0] * 10], 100.0), ([[20] * 10], 0.0), ([[20] + [0] * 9], 90.0),
                                           ([[10] * 10], 50.0)])
def test_public_goods_scores(rounds, score):
    raw = play(module("public_goods_v0").env(), by_round(rounds))
    assert raw.compute_score() == pytest.approx(score)


def test_public_goods_carry_over_mode():
    raw = module("public_goods_v0").raw_env(reset=False)
    raw.reset(seed=0)
    assert raw.action_space("player_0").n == 201
    assert raw.observe("player_0")["action_mask"].sum() == 21
    play_round(raw, [20] + [0] * 9)
    assert raw.infos["player_0"]["tokens"] == 4.0 and raw.infos["player_1"]["tokens"] == 24.0
    assert raw.observe("player_0")["action_mask"].sum() == 5
    raw.step('{"tokens_contributed": "5"}')
    assert raw.infos["player_0"]["invalid_action"]["kind"] == "illegal"
    raw.step(5)
    assert raw.infos["player_0"]["invalid_action"]["kind"] == "illegal"
    raw.step(4)
    for _ in range(9):
        raw.step(0)
    assert raw.history[-1]["tokens"][0] == 4.0
    assert raw.episode_metrics()["agents"]["player_0"]["score"] == pytest.approx(raw.history[-1]["payoffs"][0])


def test_public_goods_random_token_init():
    raw = module("public_goods_v0").raw_env(token_init="random")
    raw.reset(seed=4)
    held = [raw.infos[a]["tokens"] for a in raw.possible_agents]
    assert sorted(held) == list(range(11, 21))
    with pytest.raises(ValueError, match="rand_min"):
        module("public_goods_v0").raw_env(token_init="random", rand_min=15)


# ------------------------------------------------------------------------------ Game 5: Diner's Dilemma

def test_diners_payoffs():
    raw = module("diners_dilemma_v0").raw_env()
    raw.reset(seed=0)
    rec = play_round(raw, ["cheap"] * 10)
    assert rec["total_cost"] == 100 and rec["bill_share"] == 10.0 and rec["utilities"] == [5.0] * 10
    rec = play_round(raw, ["costly"] * 10)
    assert rec["total_cost"] == 200 and rec["utilities"] == [0.0] * 10
    rec = play_round(raw, ["costly"] + ["cheap"] * 9)
    assert rec["total_cost"] == 110 and rec["bill_share"] == 11.0 and rec["utilities"] == [9.0] + [4.0] * 9
    text = raw.observe("player_1")["text"]
    assert "1×20 + 9×10 = 110" in text and "110/10 = 11" in text and "15 − 110/10 = 4.00" in text
    rec = play_round(raw, ["cheap"] + ["costly"] * 9)
    assert rec["total_cost"] == 190 and rec["utilities"] == [-4.0] + [1.0] * 9


@pytest.mark.parametrize("rounds, score", [([["cheap"] * 10], 0.0), ([["costly"] * 10], 100.0),
                                           ([["costly"] + ["cheap"] * 9], 10.0)])
def test_diners_scores(rounds, score):
    raw = play(module("diners_dilemma_v0").env(), by_round(rounds))
    assert raw.compute_score() == pytest.approx(score)


def test_diners_costly_is_dominant_and_synonyms_parse():
    rules = module("diners_dilemma_v0").raw_env().settings
    for others in range(10):
        base = ["costly"] * others + ["cheap"] * (9 - others)
        assert rules.resolve(1, ["costly"] + base)[1][0] > rules.resolve(1, ["cheap"] + base)[1][0]
    raw = module("diners_dilemma_v0").raw_env()
    for word, dish in (("expensive", "costly"), ("Pricey", "costly"), ("high-priced", "costly"),
                       ("inexpensive", "cheap"), ("affordable", "cheap"), ("low-priced", "cheap")):
        assert raw._field(0).parse(json.dumps({"chosen_dish": word})) == dish
    raw.reset(seed=0)
    raw.step('{"chosen_dish": "salad"}')
    assert raw.infos["player_0"]["invalid_action"]["kind"] == "illegal"


@pytest.mark.parametrize("p_l, u_l, p_h, u_h", [(10, 15, 20, 20), (11, 5, 20, 7), (4, 19, 9, 20), (1, 8, 19, 12),
                                                (4, 5, 17, 7), (2, 11, 8, 13)])
def test_diners_generalization_grid_is_valid(p_l, u_l, p_h, u_h):
    raw = module("diners_dilemma_v0").raw_env(cheap_price=p_l, cheap_utility=u_l, costly_price=p_h, costly_utility=u_h)
    assert raw.params()["costly_utility"] == u_h


def test_diners_invalid_parameters():
    with pytest.raises(ValueError, match="alone, cheap is better"):
        module("diners_dilemma_v0").raw_env(costly_utility=40)
    with pytest.raises(ValueError, match="costly_price > cheap_price"):
        module("diners_dilemma_v0").raw_env(costly_price=5)


# ------------------------------------------------------------------------------ Game 6: Sealed-Bid Auction

ROUND1 = [200, 30, 0, 80, 70, 160, 20, 110, 10, 100]


def sba_raw(**kw):
    raw = module("sealed_bid_auction_v0").raw_env(**kw)
    raw.reset(seed=0)
    return raw


def test_sba_paper_valuations():
    raw = sba_raw()
    assert raw.valuations == ROUND1 and raw.infos["player_5"]["valuation"] == 160
    rules = raw.settings
    assert rules.paper_valuations(2) == [10, 90, 40, 140, 110, 30, 70, 190, 170, 130]
    assert rules.paper_valuations(3) == [130, 160, 170, 30, 50, 120, 180, 40, 0, 140]
    assert rules.paper_valuations(20) == [150, 50, 170, 60, 100, 90, 190, 120, 110, 0]
    every = [v for j in range(1, 21) for v in rules.paper_valuations(j)]
    assert sum(every) / 200 == pytest.approx(96.65) and max(every) == 200 and every.count(0) == 11
    assert all(len(set(rules.paper_valuations(j))) == 10 for j in range(1, 21))
    assert "Your valuation for this round is 200" in raw.observe("player_0")["text"]
    # the same valuations whatever the env seed; env mode draws from the env RNG
    assert sba_raw(valuation_rng="env").valuations != ROUND1
    env_mode = module("sealed_bid_auction_v0").raw_env(valuation_rng="env")
    env_mode.reset(seed=1)
    again = module("sealed_bid_auction_v0").raw_env(valuation_rng="env")
    again.reset(seed=1)
    assert env_mode.valuations == again.valuations and len(set(env_mode.valuations)) == 10
    assert all(v % 10 == 0 and 0 <= v <= 200 for v in env_mode.valuations)


def test_sba_first_price_tie_is_broken_at_random():
    winners = set()
    for seed in range(20):
        raw = module("sealed_bid_auction_v0").raw_env()
        raw.reset(seed=seed)
        rec = play_round(raw, [150, 25, 0, 75, 60, 150, 18, 100, 8, 80])
        assert rec["winning_bid"] == 150 and rec["price"] == 150 and rec["winner"] in (0, 5)
        assert rec["utilities"][rec["winner"]] == {0: 50.0, 5: 10.0}[rec["winner"]]
        assert sum(rec["utilities"]) == rec["utilities"][rec["winner"]]
        winners.add(rec["winner"])
    assert winners == {0, 5}


def test_sba_repo_tie_break_follows_the_repo_generator():
    """``tie_break="repo"``: Python's random seeded 42 + j - 1 draws round j's valuations, then
    ``randint(0, k - 1)`` picks among the k leaders in player order, whatever the env seed."""
    repo = random.Random(42)
    repo.sample(range(0, 210, 10), 10)
    expected = [0, 5][repo.randint(0, 1)]
    for seed in range(5):
        raw = module("sealed_bid_auction_v0").raw_env(tie_break="repo")
        raw.reset(seed=seed)
        rec = play_round(raw, [150, 25, 0, 75, 60, 150, 18, 100, 8, 80])
        assert rec["winner"] == expected and rec["utilities"][expected] == raw.history[0]["valuations"][expected] - 150
        assert raw.params()["tie_break"] == "repo"


@pytest.mark.parametrize(("kwargs", "match"), [({"tie_break": "first"}, "tie_break must be one of"),
                                               ({"tie_break": "repo", "valuation_rng": "env"}, "needs valuation_rng")])
def test_sba_bad_tie_break_is_refused_in_one_line(kwargs, match):
    with pytest.raises(ValueError, match=match) as caught:
        module("sealed_bid_auction_v0").raw_env(**kwargs)
    assert "\n" not in str(caught.value)


def test_sba_second_price_payment():
    raw = sba_raw(mode="second")
    rec = play_round(raw, [180, 25, 0, 70, 50, 140, 15, 100, 8, 80])
    assert rec["winner"] == 0 and rec["price"] == 140 and rec["utilities"] == [60.0] + [0.0] * 9
    assert "winner paid 140" in raw.observe("player_3")["text"]
    v = raw.valuations
    rec = play_round(raw, [120, 120, 50] + [0] * 7)
    assert rec["price"] == 120 and rec["utilities"][rec["winner"]] == v[rec["winner"]] - 120


def test_sba_report_hides_winner_and_other_bids():
    raw = sba_raw()
    play_round(raw, [150, 25, 0, 75, 60, 149, 18, 100, 8, 80])
    report = raw.observe("player_3")["text"].split("=== Round 1 results ===")[1]
    assert "player_0" not in report and "149" not in report and "160" not in report
    assert "The winning bid was 150" in report and "Your valuation was 80 and you bid 75" in report


def test_sba_overbid_rules():
    raw = sba_raw()
    assert raw.observe("player_1")["action_mask"].sum() == 201  # allow_overbid=True (paper parity)
    raw.step('{"bid": "201"}')
    assert raw.infos["player_0"]["invalid_action"]["kind"] == "illegal"
    strict = sba_raw(allow_overbid=False)
    strict.step(0)
    assert strict.observe("player_1")["action_mask"].sum() == 31  # valuation 30
    strict.step('{"bid": "31"}')
    assert strict.infos["player_1"]["invalid_action"]["kind"] == "illegal"
    strict.step(31)
    assert strict.infos["player_1"]["invalid_action"]["kind"] == "illegal"
    strict.step('{"bid": "30"}')
    assert strict.agent_selection == "player_2"


def test_sba_scores():
    def score(bid, variant=None):
        raw = play(module("sealed_bid_auction_v0").env(), lambda r, a, i: r.action_of(bid(i["valuation"])))
        return scoring.score("sealed_bid_auction_v0", raw.params(), raw.history, variant)
    assert score(lambda v: v) == pytest.approx(0.0)
    assert score(lambda v: v, "repo_v2") == pytest.approx(0.0)
    assert score(lambda v: 0) == pytest.approx(48.325)
    assert score(lambda v: int(0.9 * v)) == pytest.approx(4.83, abs=0.01)
    assert score(lambda v: int(0.9 * v), "repo_v2") == pytest.approx(9.45, abs=0.01)
    truthful = lambda r, a, i: r.action_of(i["valuation"])  # noqa: E731
    second = play(module("sealed_bid_auction_v0").env(mode="second"), truthful)
    assert second.episode_metrics()["game"]["score"] is None  # γ-Bench scores first price only
    diag = module("sealed_bid_auction_v0").env(mode="second", score_variant="second_price_diagnostic")
    assert play(diag, truthful).episode_metrics()["game"]["score"] == pytest.approx(100.0)


@pytest.mark.parametrize("vmax", [100, 200, 400, 800])
def test_sba_generalization_ranges(vmax):
    raw = sba_raw(valuation_max=vmax)
    assert raw.action_space("player_0").n == vmax + 1
    assert all(0 <= v <= vmax and v % 10 == 0 for v in raw.valuations)


def test_sba_invalid_parameters():
    with pytest.raises(ValueError, match="mode"):
        sba_raw(mode="third")
    with pytest.raises(ValueError, match="valuation grid"):
        sba_raw(valuation_max=50)
    with pytest.raises(ValueError, match="multiple of interval"):
        sba_raw(valuation_max=205)
    with pytest.raises(ValueError, match="valuation_rng"):
        sba_raw(valuation_rng="numpy")


# ------------------------------------------------------------------------------ baselines

@pytest.mark.parametrize("name, policy, score", [
    ("guess_two_thirds_v0", GuessNash, 100.0), ("divide_dollar_v0", DivideFair, 100.0),
    ("public_goods_v0", PublicGoodsNash, 100.0), ("diners_dilemma_v0", DinersNash, 100.0),
    ("el_farol_v0", lambda: AlwaysGo(), 100 / 3), ("el_farol_v0", lambda: AlwaysStay(), 0.0),
    ("diners_dilemma_v0", lambda: AlwaysCheap(), 0.0), ("public_goods_v0", lambda: FixedAnswer(value=20), 0.0),
    ("divide_dollar_v0", lambda: FixedAnswer(value=100), 0.0), ("sealed_bid_auction_v0", Truthful, 0.0),
    ("sealed_bid_auction_v0", lambda: FixedAnswer(value=0), 48.325)])
def test_baselines_score_what_the_spec_says(name, policy, score):
    raw = policies_play(name, [policy() for _ in range(10)])
    assert raw.compute_score() == pytest.approx(score)


def test_guess_nash_for_every_ratio_regime():
    for ratio, score in ((Fraction(2, 3), 100.0), (Fraction(4, 3), 100.0), (1, 100.0), (0, 100.0)):
        raw = policies_play("guess_two_thirds_v0", [GuessNash() for _ in range(10)], ratio=ratio)
        assert raw.compute_score() == pytest.approx(score)


def test_guess_random_players_score_about_50():
    """Spec §12.1: uniform choices on [0, 100] score about 50 (the mean choice is about 50)."""
    from baselines.random_policy import RandomPolicy
    raw = policies_play("guess_two_thirds_v0", [RandomPolicy() for _ in range(10)], n_rounds=400, seed=3)
    assert raw.compute_score() == pytest.approx(50.0, abs=1.5)


def test_sba_equilibrium_players():
    raw = policies_play("sealed_bid_auction_v0", [BayesNash() for _ in range(10)])
    assert raw.compute_score() == pytest.approx(4.83, abs=0.01)  # floor(0.9 v) at N=10
    assert scoring.score("sealed_bid_auction_v0", raw.params(), raw.history, "repo_v2") == pytest.approx(9.45, abs=0.01)
    raw = policies_play("sealed_bid_auction_v0", [SealedBidEquilibrium() for _ in range(10)], mode="second")
    assert all(b == v for r in raw.history for b, v in zip(r["bids"], r["valuations"]))
    raw = policies_play("sealed_bid_auction_v0", [SealedBidEquilibrium() for _ in range(10)])
    assert raw.compute_score() == pytest.approx(4.83, abs=0.01)


def test_el_farol_mixed_equilibrium_scores_about_79_9():
    raw = policies_play("el_farol_v0", [ElFarolMixed() for _ in range(10)], n_rounds=3000, seed=2)
    assert raw.compute_score() == pytest.approx(79.93, abs=1.0)


def test_fixed_players_cycle_by_round_and_mixed_populations_score():
    cyc = [FixedAnswer(values=[91, 1])] + [DivideFair() for _ in range(9)]
    raw = policies_play("divide_dollar_v0", cyc, n_rounds=4)
    assert [r["bids"][0] for r in raw.history] == [91, 1, 91, 1]
    assert [r["total"] for r in raw.history] == [181, 91, 181, 91]
    assert raw.compute_score() == pytest.approx(100 - (81 + 9) / 2)
    raw = policies_play("public_goods_v0", [FreeRider()] + [FixedAnswer(value=20) for _ in range(9)])
    assert raw.compute_score() == pytest.approx(10.0)
    raw = policies_play("diners_dilemma_v0", [AlwaysCostly()] + [AlwaysCheap() for _ in range(9)])
    assert raw.compute_score() == pytest.approx(10.0)
    with pytest.raises(ValueError, match="value"):
        FixedAnswer()
    with pytest.raises(ValueError, match="not an answer"):
        FixedAnswer(value="maybe").bind(module("el_farol_v0").raw_env())


def test_baselines_are_registered():
    from arena_envs.runner.policy_registry import lookup
    for name in GAMES:
        assert lookup(name, "fixed") == "baselines.gamma.fixed:FixedAnswer"
        assert lookup(name, "equilibrium").startswith("baselines.gamma.equilibrium:")
    assert lookup("sealed_bid_auction_v0", "truthful") == "baselines.gamma.equilibrium:Truthful"


def test_baselines_decide_from_infos_only_and_deterministically():
    a = policies_play("el_farol_v0", [ElFarolMixed() for _ in range(10)], seed=9)
    b = policies_play("el_farol_v0", [ElFarolMixed() for _ in range(10)], seed=9)
    assert a.history == b.history


def test_paper_valuations_leave_the_global_random_state_alone():
    random.seed(5)
    expected = random.random()
    random.seed(5)
    play(module("sealed_bid_auction_v0").env(), lambda r, a, i: 0)
    assert random.random() == expected


# ------------------------------------------------------------------------------ prompt variants (spec §11.1)

ALL_EIGHT = (*GAMES, "battle_royale_v0", "pirate_game_v0")


def _terse_variant(name: str = "terse"):
    from arena_envs.gamma.prompt_variants import TemplateVariant
    return TemplateVariant(name, {game: ("A game of {n_players} players.", ["Rule one of " + game + "."])
                                  for game in ALL_EIGHT})


@pytest.mark.parametrize("name", ALL_EIGHT)
def test_prompt_variant_rewrites_only_the_description(name):
    """Same seed and actions under V1 and another template set: the same episode, record and
    answer format; only the rules block differs."""
    from baselines.random_policy import RandomPolicy
    v1 = play_policies(module(name).env(), [RandomPolicy() for _ in range(10)], seed=4)
    other = play_policies(module(name).env(prompt_variant=_terse_variant()), [RandomPolicy() for _ in range(10)],
                          seed=4)
    assert other.history == v1.history
    assert other.config() == {**v1.config(), "prompt_variant": "terse"} and v1.config()["prompt_variant"] == "v1"
    fresh = module(name).env(prompt_variant=_terse_variant())
    fresh.reset(seed=0)
    text = fresh.observe(fresh.agent_selection)["text"]
    assert text.startswith("A game of 10 players.\n\nRules:\n1. Rule one of " + name + ".")
    reference = module(name).env()
    reference.reset(seed=0)
    v1_text = reference.observe(reference.agent_selection)["text"]
    assert text.split("===", 1)[1] == v1_text.split("===", 1)[1]  # the request and answer format are V1's


def test_prompt_variant_registry_and_errors():
    from arena_envs.gamma.prompt_variants import PROMPT_VARIANTS, TemplateVariant, register_prompt_variant
    register_prompt_variant(_terse_variant("test-terse"))
    try:
        env = module("el_farol_v0").env(prompt_variant="test-terse")
        assert env.unwrapped.config()["prompt_variant"] == "test-terse"
    finally:
        del PROMPT_VARIANTS["test-terse"]
    with pytest.raises(ValueError, match="unknown prompt_variant 'v9'; registered: v1"):
        module("guess_two_thirds_v0").env(prompt_variant="v9")
    with pytest.raises(ValueError, match="has no text for pirate_game_v0"):
        module("pirate_game_v0").env(prompt_variant=TemplateVariant("g", {"guess_two_thirds_v0": ("x", [])}))
    with pytest.raises(ValueError, match="uses 'budget' which is not among"):
        variant = TemplateVariant("b", {"guess_two_thirds_v0": ("{budget}", [])})
        module("guess_two_thirds_v0").env(prompt_variant=variant)
    with pytest.raises(TypeError):
        register_prompt_variant("v2")
