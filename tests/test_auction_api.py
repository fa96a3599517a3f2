"""auction_v0 against PettingZoo's own test utilities, registration and pickling."""
import copy
import pickle
import warnings

import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test

import arena_envs
from arena_envs import auction_v0
from baselines.auction.rule import RandomValid, RuleBidder, TruthfulMinRaise
from tests.play_helpers import play


@pytest.mark.parametrize("order", ["random", "ascending", "descending", "given"])
def test_api_and_seed(order):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(auction_v0.env(item_order=order), num_cycles=1000)
        seed_test(lambda: auction_v0.env(item_order=order), num_cycles=500)


@pytest.mark.parametrize("kwargs", [{"action_mode": "amount", "budgets": 5000}, {"n_bidders": 5, "budgets": 10000},
                                    {"auto_withdraw_unaffordable": True, "enable_discount": True}])
def test_api_variants(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(auction_v0.env(**kwargs), num_cycles=300)


def test_registered_in_pettingzoo():
    env = pettingzoo.make("aec", "arena_envs/auction-v0", item_order="ascending")
    env.reset(seed=1)
    assert env.unwrapped.metadata["name"] == "auction_v0"
    assert arena_envs.make("auction_v0").unwrapped.settings.item_order == "random"


def test_pickles_before_and_after_reset():
    env = auction_v0.env()
    pickle.loads(pickle.dumps(env))
    env.reset(seed=3)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.observe("bidder_1")["text"] == env.observe("bidder_1")["text"]


def test_same_seed_same_record_byte_for_byte():
    import json

    import numpy as np

    def run(seed):
        env = auction_v0.env()
        env.reset(seed=seed)
        rng = np.random.default_rng(0)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return json.dumps(env.unwrapped.episode_record(), sort_keys=True)

    assert run(4) == run(4)
    assert run(4) != run(5)


def bidder_name(agent: str) -> str:
    return "Bidder " + agent.split("_")[1]


def test_ansi_render_is_the_papers_log_of_the_episode():
    env = auction_v0.env(render_mode="ansi")
    play(env, [RuleBidder(), TruthfulMinRaise(), RandomValid()], seed=2)
    text = env.render()
    record = env.unwrapped.episode_record()
    events = record["events"]
    assert text.count(" bid:\n") == sum(e["type"] == "round_end" for e in events)
    position = 0  # the items' blocks appear in auction order
    for opened in (e for e in events if e["type"] == "item_open"):
        header = f"{opened['item'] + 1}. {opened['name']}, starting at ${opened['start_price']}."
        (end,) = [e for e in events if e["type"] in ("hammer", "unsold") and e["item"] == opened["item"]]
        result = ("  None bid" if end["type"] == "unsold"
                  else f"  {bidder_name(end['winner'])}: ${end['price']} (${end['true_value']})")
        position = text.index(f"{header}\n", position)
        position = text.index(f"Hammer price (true value):\n{result}\n", position)
    report = text[text.index("Personal Report\n", position):]
    metrics = env.unwrapped.episode_metrics()["agents"]
    for agent, budget in zip(env.possible_agents, record["config"]["budgets"], strict=True):
        assert (f"  {bidder_name(agent)}: starting budget ${budget}, {metrics[agent]['items_won']} item(s) won, "
                f"total profit ${metrics[agent]['profit']}\n") in report + "\n"


def test_human_render_prints_the_ansi_text(capsys):
    ansi, human = auction_v0.env(render_mode="ansi"), auction_v0.env(render_mode="human")
    for env in (ansi, human):
        play(env, [RuleBidder(), TruthfulMinRaise(), RandomValid()], seed=4)
    capsys.readouterr()
    assert human.render() is None
    assert capsys.readouterr().out == ansi.render() + "\n"


def test_render_modes():
    quiet = auction_v0.env()
    quiet.reset(seed=0)
    assert quiet.render() is None
    with pytest.raises(ValueError):
        auction_v0.env(render_mode="rgb_array")


def test_scripted_tie_breaks_are_state_that_copies_carry():
    """A lambda tie_break cannot be pickled and a deep copy shares it (and the script it pops);
    a list of agents is data: each copy consumes its own position in it."""
    items = [{"name": f"Item {k}", "start_price": 100, "true_value": 300} for k in range(2)]
    env = auction_v0.env(items=items, item_order="given", n_bidders=2, tie_break=["bidder_2", "bidder_1"])
    env.reset(seed=0)
    env.step("I bid $100!")
    env.step("I bid $100!")  # a tie: the script's first entry leads
    assert env.unwrapped.game.leader == 1 and env.unwrapped.tie_breaks_used == 1
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    for e in [env, *clones]:
        e.step("I'm out!")  # bidder_1 withdraws: Item 0 goes to bidder_2; Item 1 opens
        e.step("I bid $100!")
        e.step("I bid $100!")  # the second tie: the script's second entry leads
    for clone in clones:
        assert clone.unwrapped.game.leader == env.unwrapped.game.leader == 0
        assert clone.unwrapped.tie_breaks_used == 2
        assert clone.unwrapped.record.events == env.unwrapped.record.events
    with pytest.raises(ValueError, match=r"lists agents bidder_1\.\.bidder_2"):
        auction_v0.env(n_bidders=2, tie_break=["bidder_3"])
