"""Generic baselines (random, human) and the policy spec strings that name policies."""
from __future__ import annotations

import io
import os

import pytest
from gymnasium import spaces

from arena_envs.core.extras import MissingExtra
from arena_envs.runner import policy_registry as registry
from arena_envs.runner.policy_specs import SpecError, make_policy, parse_arguments, player_labels, split_players
from baselines.human import HumanInputClosed, HumanPolicy
from baselines.random_policy import RandomPolicy
from tests._tiny_game import env as tiny_game_env


def play_random(seed: int, env_seed: int = 0) -> list[int]:
    env = tiny_game_env()
    env.reset(seed=env_seed)
    policies = {}
    for i, agent in enumerate(env.possible_agents):
        policies[agent] = RandomPolicy()
        policies[agent].bind(env.unwrapped)
        policies[agent].reset(agent, seed + i)
    actions = []
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = policies[agent].act(obs, info)
        assert obs["action_mask"][action] == 1
        actions.append(action)
        env.step(action)
        assert env.unwrapped.infos[agent]["invalid_action"] is None
    return actions


def test_random_policy_respects_the_mask_and_its_seed():
    assert play_random(1) == play_random(1)
    assert play_random(1) != play_random(2)
    assert len(set(play_random(3))) > 1


def test_random_policy_leaves_the_environment_generators_alone():
    env = tiny_game_env()
    env.reset(seed=0)
    space = env.action_space("player_0")
    space.seed(123)
    state = space.np_random.bit_generator.state
    policy = RandomPolicy()
    policy.bind(env.unwrapped)
    policy.reset("player_0", 5)
    policy.act(env.observe("player_0"), {})
    assert space.np_random.bit_generator.state == state


def play_out(env, policies: dict) -> int:
    """Play one episode with bound and reset policies; returns the number of invalid answers."""
    invalid = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(policies[agent].act(obs, info))
        invalid += env.unwrapped.infos[agent]["invalid_action"] is not None
    return invalid


def test_random_policy_handles_offset_discrete_spaces():
    """The auction's amount mode is Discrete(start=-1) with a mask: samples stay valid."""
    import arena_envs.auction_v0 as auction
    env = auction.env(action_mode="amount")
    env.reset(seed=3)
    assert env.action_space("bidder_1").start == -1
    policies = {agent: RandomPolicy() for agent in env.possible_agents}
    for i, (agent, policy) in enumerate(policies.items()):
        policy.bind(env.unwrapped)
        policy.reset(agent, i)
    assert play_out(env, policies) == 0


def test_random_policy_samples_non_discrete_spaces():
    """The pirate game's action space is a Dict (MultiDiscrete coins + Discrete vote), sampled under its mask."""
    pirate = pytest.importorskip("arena_envs.pirate_game_v0")
    env = pirate.env()
    space = env.action_space(env.possible_agents[0])
    assert not isinstance(space, spaces.Discrete)
    env.reset(seed=0)
    policy = RandomPolicy()
    policy.bind(env.unwrapped)
    policy.reset(env.possible_agents[0], 7)
    first = policy.act(env.observe(env.possible_agents[0]), {})
    policy.reset(env.possible_agents[0], 7)
    second = policy.act(env.observe(env.possible_agents[0]), {})
    assert space.contains(first) and repr(first) == repr(second)


def test_random_policy_needs_bind():
    with pytest.raises(RuntimeError, match="bind"):
        RandomPolicy().reset("player_0", 1)


def test_human_policy_reads_a_real_pipe_and_reports_eof():
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "r") as reader, os.fdopen(write_fd, "w") as writer:
        out = io.StringIO()
        human = HumanPolicy(reader, out)
        human.reset("bidder_1", 0)
        writer.write("I bid $1200!\nI'm out!\n")
        writer.flush()
        assert human.act({"text": "Item 1: bid or withdraw?"}, {}) == "I bid $1200!"
        assert human.trace() == {"text": "I bid $1200!"}
        assert human.act({"text": "Again?"}, {}) == "I'm out!"
        writer.close()
        with pytest.raises(HumanInputClosed, match=r"EOF.*bidder_1"):
            human.act({"text": "Last?"}, {})
        shown = out.getvalue()
        assert "Item 1: bid or withdraw?" in shown and "bidder_1" in shown and shown.endswith("Last?\n> ")


def test_split_players_handles_brackets_quotes_and_repeats():
    assert split_players("rule,random") == ["rule", "random"]
    assert split_players("rule:K=5, rule*2 ,random") == ["rule:K=5", "rule", "rule", "random"]
    assert split_players('x:w=[1,2]+s="a,b",vllm:Qwen/Qwen2.5@http://127.0.0.1:8000/v1') == [
        'x:w=[1,2]+s="a,b"', "vllm:Qwen/Qwen2.5@http://127.0.0.1:8000/v1"]
    for bad in ("rule,,random", "rule:w=[1,2", "rule*0"):
        with pytest.raises(SpecError):
            split_players(bad)


def test_labels_number_repeated_specs_by_position():
    assert player_labels(["rule", "rule", "random"]) == ["rule#1", "rule#2", "random"]
    assert player_labels(["random", "rule", "random", "rule:K=2"]) == ["random#1", "rule", "random#2", "rule:K=2"]


def test_arguments_parse_as_json_values():
    assert parse_arguments("K=5+margin=0.25+mode=fast+w=[1,2]", "s") == {
        "K": 5, "margin": 0.25, "mode": "fast", "w": [1, 2]}
    for bad in ("K", "K=1+K=2", "1x=3"):
        with pytest.raises(SpecError):
            parse_arguments(bad, "s")


def test_make_policy_resolves_the_registry():
    from baselines.auction.rule import RuleBidder
    rule = make_policy("rule:K=5", "auction_v0")
    assert isinstance(rule, RuleBidder) and rule.K == 5
    assert isinstance(make_policy("random", "any_env_v0"), RandomPolicy)
    assert isinstance(make_policy("human", "auction_v0"), HumanPolicy)
    with pytest.raises(SpecError,
                       match=r"unknown policy 'rule' for tiny_v0; available: human, random, agent:\.\.\., hf:\.\.\."):
        make_policy("rule", "tiny_v0")
    with pytest.raises(SpecError, match="unknown argument Q=1; accepted: K=4"):
        make_policy("rule:Q=1", "auction_v0")


def test_prefix_whose_package_is_missing_names_the_extra(monkeypatch):
    monkeypatch.setitem(registry.PREFIXES, "demo", "arena_no_such_package.specs:policy_from_spec")
    monkeypatch.setitem(registry.PREFIX_NEEDS, "demo", registry.Needs("llm", ("arena_no_such_package",)))
    with pytest.raises(MissingExtra, match=r"^the demo: player needs the llm extra \(arena_no_such_package is not "
                       r"installed\): pip install 'arena-envs\[llm\]'$"):
        make_policy("demo:model@http://127.0.0.1:1", "auction_v0")
    monkeypatch.delitem(registry.PREFIX_NEEDS, "demo")  # a prefix of no extra of this project: a SpecError
    with pytest.raises(SpecError, match=r"needs arena_no_such_package.specs:policy_from_spec, which cannot be"):
        make_policy("demo:model@http://127.0.0.1:1", "auction_v0")


def test_llm_prefixes_reach_llm_policies():
    specs = pytest.importorskip("llm_policies.specs")
    policy = make_policy("vllm:Qwen/Qwen2.5-0.5B-Instruct@http://127.0.0.1:9/v1?temperature=0.5", "auction_v0")
    assert policy is not None and hasattr(policy, "aact")
    assert registry.PREFIXES["vllm"] == f"{specs.__name__}:policy_from_spec"
    with pytest.raises(SpecError, match="unknown option"):
        make_policy("vllm:model?bogus=1", "auction_v0")
