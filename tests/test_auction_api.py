"""auction_v0 against PettingZoo's own test utilities, registration and pickling."""
import copy
import pickle
import warnings

import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test

import arena_envs
from arena_envs import auction_v0


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
    assert arena_envs.make("auction_v0").unwrapped.item_order == "random"


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
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return json.dumps(env.unwrapped.episode_record(), sort_keys=True)

    assert run(4) == run(4)
    assert run(4) != run(5)


def test_render_modes():
    env = auction_v0.env(render_mode="ansi")
    env.reset(seed=0)
    assert "Personal Report" in env.render()
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
    assert env.unwrapped.rules.leader == 1 and env.unwrapped.tie_breaks_used == 1
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    for e in [env, *clones]:
        e.step("I'm out!")  # bidder_1 withdraws: Item 0 goes to bidder_2; Item 1 opens
        e.step("I bid $100!")
        e.step("I bid $100!")  # the second tie: the script's second entry leads
    for clone in clones:
        assert clone.unwrapped.rules.leader == env.unwrapped.rules.leader == 0
        assert clone.unwrapped.tie_breaks_used == 2
        assert clone.unwrapped.record.events == env.unwrapped.record.events
    with pytest.raises(ValueError, match=r"lists agents bidder_1\.\.bidder_2"):
        auction_v0.env(n_bidders=2, tie_break=["bidder_3"])
