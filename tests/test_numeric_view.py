"""The numeric view of every game (``obs_mode="numeric"``) under the multi-agent RL libraries.

PettingZoo's ``api_test`` / ``parallel_api_test`` on ``env`` / ``parallel_env(obs_mode="numeric")``
of every game (and variants that change the spaces: offset ``Discrete``, ``Dict`` actions, a ``Box``
action, free text, seats that leave early), with the text builder made to fail so that a view that
builds text cannot pass; SuperSuit's vector environments of every game with a parallel form, seeded
SB3 PPO through them, a CleanRL-style masked PPO update, RLlib's PettingZoo wrappers; and, with
hypothesis, masked sampling that never gives an invalid action, in the numeric view and in the
games' own masks (the Pirate Game's included).
"""
from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, parallel_api_test

from arena_envs.core.numeric_view import FixedSeats, NumericView, blank_observation
from arena_envs.registration import ENVIRONMENTS, env_module

#: (label, name, kwargs) beyond the defaults: spaces the defaults do not show
EXTRA: list[tuple[str, str, dict[str, Any]]] = [
    ("amount", "auction_v0", {"action_mode": "amount"}),                       # Discrete(start=-1)
    ("stage5", "tank_battle_v0", {"stage": 5}),                               # Dict action, cooperation, 4 tanks
    ("stage7_discrete", "tank_battle_v0", {"stage": 7, "action_mode": "discrete"}),  # tanks destroyed early
    ("discrete", "who_is_spy_v0", {"action_mode": "discrete"}),
    ("small", "pirate_game_v0", ENVIRONMENTS["pirate_game_v0"].variants["small"]),
    ("weights", "trading_v0", ENVIRONMENTS["trading_v0"].variants["two_assets_weights"]),  # a Box action
]
CASES = [(name, {}) for name in ENVIRONMENTS] + [(name, kwargs) for _, name, kwargs in EXTRA]
IDS = list(ENVIRONMENTS) + [f"{name}-{label}" for label, name, _ in EXTRA]
PARALLEL = [case for case in CASES if ENVIRONMENTS[case[0]].parallel]
PARALLEL_IDS = [i for i, case in zip(IDS, CASES) if ENVIRONMENTS[case[0]].parallel]
#: the seats without a finite action set (no mask): Who is Spy's free text, trading weights
UNMASKED = ["who_is_spy_v0", "trading_v0-weights"]
MASKED = [case for i, case in zip(IDS, CASES) if i not in UNMASKED]
MASKED_IDS = [i for i in IDS if i not in UNMASKED]


def no_text(env: Any) -> None:
    """Make the game's text builder fail: the numeric view must never call it."""
    def refuse(agent: str, note: str | None) -> str:
        raise AssertionError(f"the numeric view built {agent}'s text")
    env.unwrapped._text = refuse


def numeric(name: str, kwargs: dict[str, Any]) -> Any:
    env = env_module(name).env(obs_mode="numeric", **kwargs)
    no_text(env)
    return env


def numeric_parallel(name: str, kwargs: dict[str, Any]) -> Any:
    env = env_module(name).parallel_env(obs_mode="numeric", **kwargs)
    no_text(env)
    return env


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=IDS)
def test_api_test_on_the_numeric_view(name: str, kwargs: dict[str, Any]) -> None:
    env = numeric(name, kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's style hints (unbounded boxes and the like)
        api_test(env, num_cycles=20)
    agent = env.possible_agents[0]
    space, actions = env.observation_space(agent), env.action_space(agent)
    if isinstance(space, spaces.Dict):  # PettingZoo's classic form: the mask is a Box of the action size
        assert set(space.spaces) == {"observation", "action_mask"}
        mask = space["action_mask"]
        assert isinstance(mask, spaces.Box) and mask.dtype == np.int8
        size = actions.n if isinstance(actions, spaces.Discrete) else int(np.sum(actions.nvec))
        assert mask.shape == (size,) and np.all(actions.start == 0)
    else:
        assert isinstance(space, spaces.Box) and not isinstance(actions, (spaces.Discrete, spaces.MultiDiscrete))
    assert isinstance(env.unwrapped, type(env_module(name).raw_env(**kwargs)))


@pytest.mark.parametrize(("name", "kwargs"), PARALLEL, ids=PARALLEL_IDS)
def test_parallel_api_test_on_the_numeric_view(name: str, kwargs: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(numeric_parallel(name, kwargs), num_cycles=100)


def test_raw_env_is_the_view_and_keeps_the_games_checks() -> None:
    from arena_envs import el_farol_v0, guess_two_thirds_v0, tank_battle_v0

    raw = el_farol_v0.raw_env(obs_mode="numeric", n_players=3)
    assert isinstance(raw, NumericView)
    with pytest.raises(AssertionError, match="reset"):
        raw.observe("player_0")
    with pytest.raises(AssertionError, match="reset"):
        raw.step(0)
    with pytest.raises(ValueError, match=r"obs_mode must be 'numeric'.*got 'grid'"):
        guess_two_thirds_v0.env(obs_mode="grid")
    for mode in ("both", "text", "grid"):  # the tank's own modes are unchanged
        env = tank_battle_v0.env(obs_mode=mode, stage=3)
        env.reset(seed=0)
        assert {"text", "observation", "action_mask"} <= set(env.observe("tank_0"))
        assert (env.observe("tank_0")["text"] == "") == (mode == "grid")
    tank = tank_battle_v0.raw_env(obs_mode="numeric", stage=3)
    assert tank.unwrapped.settings.obs_mode == "numeric" and tank.unwrapped.config()["obs_mode"] == "numeric"


def test_actions_convert_and_bad_ones_are_invalid_answers() -> None:
    from arena_envs import auction_v0, pirate_game_v0

    env = auction_v0.env(obs_mode="numeric", action_mode="amount")  # Discrete(n, start=-1) acts in Discrete(n)
    env.reset(seed=0)
    agent = env.agent_selection
    assert env.unwrapped.action_space(agent).start == -1 and env.action_space(agent).start == 0
    env.step(np.int64(0))  # 0 is the game's -1: withdraw
    assert env.unwrapped.infos[agent]["invalid_action"] is None
    pirate = pirate_game_v0.env(obs_mode="numeric")
    pirate.reset(seed=0)
    plan = np.array([0] * 96 + [2, 4, 6, 8] + [0])  # 100 coins by seat, then the vote
    for bad in ("a text", 1.5, np.zeros(3, dtype=np.int64), plan.astype(float), [10**400]):
        pirate.step(bad)
        assert pirate.infos["player_0"]["invalid_action"] is not None
    pirate.step(plan)
    assert pirate.unwrapped.game.proposal == [96, 0, 1, 0, 1, 0, 1, 0, 1, 0]
    copy = pickle.loads(pickle.dumps(pirate))
    assert copy.observe("player_1")["observation"].tolist() == pirate.observe("player_1")["observation"].tolist()


#: two tanks in one column, their bases beside them: tank_0 turns down and shoots tank_1 (5 hits) in round 6
DUEL = {"custom_map": ["1..A", "....", "....", "2..B"], "custom_mode": "ffa", "action_mode": "discrete",
        "npc_total": 0, "max_rounds": 12}
DOWN, SHOOT, NOOP = 1, 4, 5


def test_seats_out_of_the_game_stay_until_the_end() -> None:
    """A destroyed tank keeps its seat in the numeric parallel form: blank observation, reward 0, done
    with the others (parallel_api_test's rules hold), and SuperSuit's vector environment takes it."""
    import supersuit as ss

    from arena_envs import tank_battle_v0

    env = tank_battle_v0.parallel_env(obs_mode="numeric", **DUEL)
    assert isinstance(env, FixedSeats)
    observations, _ = env.reset(seed=0)
    rounds, out_since = 0, None
    while env.agents:
        assert list(observations) == env.agents == env.possible_agents
        observations, rewards, terminations, truncations, _ = env.step({"tank_0": DOWN if rounds == 0 else SHOOT,
                                                                         "tank_1": NOOP})
        rounds += 1
        if out_since is None and "tank_1" not in env.unwrapped.agents:
            out_since = rounds
        elif out_since is not None:
            blank = blank_observation(env.observation_space("tank_1"), env.action_space("tank_1"))
            assert not observations["tank_1"]["observation"].any() and rewards["tank_1"] == 0.0
            assert observations["tank_1"]["action_mask"].tolist() == blank["action_mask"].tolist() == [1, 0, 0, 0, 0, 0]
        if env.agents:
            assert not any(terminations.values()) and not any(truncations.values())
    assert out_since == 6 and rounds == 12
    assert terminations == {"tank_0": False, "tank_1": True} and truncations == {"tank_0": True, "tank_1": False}

    venv = ss.pettingzoo_env_to_vec_env_v1(tank_battle_v0.parallel_env(obs_mode="numeric", **DUEL))
    venv.reset(seed=0)
    for k in range(12):
        _, rewards, terminations, truncations, _ = venv.step(np.array([DOWN if k == 0 else SHOOT, NOOP]))
        assert (terminations | truncations).all() == (k == 11)  # then it starts the next episode by itself
    assert venv.par_env.agents == ["tank_0", "tank_1"]


def masked_action(space: spaces.Space[Any], observation: Any) -> Any:
    return space.sample(mask=observation["action_mask"])


def play_masked(env: Any, seed: int, decisions: int) -> int:
    """Masked random play of up to ``decisions`` decisions; returns how many were invalid."""
    env.reset(seed=seed)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)
    invalid = made = 0
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        if made == decisions:
            break
        env.step(masked_action(env.action_space(agent), observation))
        made += 1
        invalid += env.unwrapped.infos[agent]["invalid_action"] is not None
    return invalid


HYPOTHESIS = settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize(("name", "kwargs"), MASKED, ids=MASKED_IDS)
@pytest.mark.parametrize("view", ["numeric", "game"])
@HYPOTHESIS
@given(seed=st.integers(0, 2**31 - 1))
def test_masked_sampling_never_gives_an_invalid_action(name: str, kwargs: dict[str, Any], view: str,
                                                        seed: int) -> None:
    """``action_space(agent).sample(mask=observation["action_mask"])`` is always legal: in the numeric
    view (flat masks) and in the game's own observation (a ``Dict`` of masks for a ``Dict`` action)."""
    env = numeric(name, kwargs) if view == "numeric" else env_module(name).env(**kwargs)
    assert play_masked(env, seed, 60) == 0


def supersuit_vec(name: str, kwargs: dict[str, Any], copies: int, base_class: str = "gymnasium") -> Any:
    import supersuit as ss

    vec = ss.pettingzoo_env_to_vec_env_v1(env_module(name).parallel_env(obs_mode="numeric", **kwargs))
    return ss.concat_vec_envs_v1(vec, copies, num_cpus=0, base_class=base_class)


def vector_masked_actions(space: spaces.Space[Any], observations: Any, rng: np.random.Generator) -> np.ndarray:
    """One masked random action per sub-environment (rows of the batched observation)."""
    masks = observations["action_mask"] if isinstance(observations, dict) else None
    if masks is None:
        return np.stack([space.sample() for _ in range(len(observations))])
    space.seed(int(rng.integers(2**31)))
    return np.stack([space.sample(mask=row) for row in masks])


@pytest.mark.parametrize(("name", "kwargs"), PARALLEL, ids=PARALLEL_IDS)
def test_supersuit_vector_envs_of_every_parallel_game(name: str, kwargs: dict[str, Any]) -> None:
    venv = supersuit_vec(name, kwargs, copies=2)
    n_seats = len(env_module(name).raw_env(**kwargs).possible_agents)
    assert venv.num_envs == 2 * n_seats
    observations, infos = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    single = venv.action_space
    for _ in range(40):
        assert venv.observation_space.contains(
            {k: v[0] for k, v in observations.items()} if isinstance(observations, dict) else observations[0])
        observations, rewards, terminations, truncations, infos = venv.step(
            vector_masked_actions(single, observations, rng))
        assert rewards.shape == (venv.num_envs,) and len(infos) == venv.num_envs
        done = (terminations | truncations).reshape(2, n_seats)
        assert (done.all(axis=1) | ~done.any(axis=1)).all()  # every seat of a copy ends with the others
    venv.close()


def train_ppo(name: str, kwargs: dict[str, Any], steps: int, seed: int = 0) -> tuple[Any, list[Any]]:
    """PPO on every seat at once (one shared network), seeded as the docs say: SuperSuit's SB3 wrapper
    takes no seed, so the games are seeded once underneath and the trainer's resets continue them."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.utils import set_random_seed

    torch.set_num_threads(1)
    venv = supersuit_vec(name, kwargs, copies=1, base_class="stable_baselines3")
    venv.venv.reset(seed=seed)
    set_random_seed(seed)
    model = PPO("MultiInputPolicy", venv, n_steps=32, batch_size=32, n_epochs=2, device="cpu")
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=steps)
    venv.close()
    return model, before


def test_sb3_ppo_trains_every_seat_of_a_gamma_game_through_supersuit() -> None:
    kwargs = {"n_players": 3, "n_rounds": 5}
    model, before = train_ppo("public_goods_v0", kwargs, 192)
    assert model.num_timesteps >= 192
    after = list(model.policy.parameters())
    assert any(not np.allclose(b.numpy(), a.detach().numpy()) for b, a in zip(before, after))
    again, _ = train_ppo("public_goods_v0", kwargs, 192)  # seeded: the same training
    assert all(np.array_equal(a.detach().numpy(), b.detach().numpy())
               for a, b in zip(model.policy.parameters(), again.policy.parameters()))


def test_sb3_ppo_trains_every_tank_through_supersuit() -> None:
    model, before = train_ppo("tank_battle_v0", {"stage": 4, "action_mode": "discrete", "max_rounds": 20}, 128)
    assert model.num_timesteps >= 128
    assert any(not np.allclose(b.numpy(), a.detach().numpy()) for b, a in zip(before, model.policy.parameters()))


def test_a_cleanrl_style_masked_ppo_loop_takes_the_vector_env() -> None:
    """CleanRL's PettingZoo recipe (SuperSuit vector env, a torch agent with masked logits, GAE, one
    clipped update) on the numeric view as it is: only legal actions are drawn, the loss is finite."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    torch.set_num_threads(1)
    venv = supersuit_vec("el_farol_v0", {"n_players": 4, "n_rounds": 5}, copies=2)
    features = venv.single_observation_space["observation"].shape[0] if hasattr(venv, "single_observation_space") \
        else venv.observation_space["observation"].shape[0]
    n_actions = int(venv.action_space.n)
    actor, critic = nn.Linear(features, n_actions), nn.Linear(features, 1)
    optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=1e-2)
    observations, _ = venv.reset(seed=0)
    steps, batch = 16, []
    for _ in range(steps):
        x = torch.as_tensor(observations["observation"], dtype=torch.float32)
        mask = torch.as_tensor(observations["action_mask"], dtype=torch.bool)
        dist = torch.distributions.Categorical(logits=actor(x).masked_fill(~mask, -1e9))
        action = dist.sample()
        assert mask.gather(1, action[:, None]).all()
        observations, reward, terminated, truncated, _ = venv.step(action.numpy())
        batch.append((x, mask, action, dist.log_prob(action).detach(), critic(x).squeeze(1).detach(),
                      torch.as_tensor(reward), torch.as_tensor(terminated | truncated, dtype=torch.float32)))
    advantages, last = [], torch.zeros(venv.num_envs)
    for _, _, _, _, value, reward, done in reversed(batch):  # GAE with lambda = gamma = 1, bootstrap 0
        last = reward + (1 - done) * last
        advantages.insert(0, last - value)
    x, mask, action, old_logp, value = (torch.cat([b[k] for b in batch]) for k in range(5))
    advantage = torch.cat(advantages)
    logp = torch.distributions.Categorical(logits=actor(x).masked_fill(~mask, -1e9)).log_prob(action)
    ratio = (logp - old_logp).exp()
    loss = -torch.min(ratio * advantage, ratio.clamp(0.8, 1.2) * advantage).mean() \
        + ((critic(x).squeeze(1) - (advantage + value)) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss) and x.shape == (steps * venv.num_envs, features)
    venv.close()


def test_rllib_pettingzoo_wrappers_take_the_numeric_view() -> None:
    pytest.importorskip("ray.rllib")
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv, PettingZooEnv

    from arena_envs import pirate_game_v0, tank_battle_v0

    aec = PettingZooEnv(pirate_game_v0.env(obs_mode="numeric", n_players=4, golds=5))
    observations, _ = aec.reset(seed=0)
    aec.env.action_space("player_0").seed(0)  # one space object for all seats
    for _ in range(20):  # every step returns the seats it went through: the finished ones and the next to act
        assert all(aec.observation_space[a].contains(o) for a, o in observations.items())
        agent = aec.env.agent_selection
        action = aec.action_space[agent].sample(mask=observations[agent]["action_mask"])
        observations, _, terminated, _, _ = aec.step({agent: action})
        if terminated["__all__"]:
            break
    assert terminated["__all__"]
    parallel = ParallelPettingZooEnv(tank_battle_v0.parallel_env(obs_mode="numeric", stage=5))
    observations, _ = parallel.reset(seed=0)
    parallel.par_env.action_space("tank_0").seed(0)
    for _ in range(5):
        actions = {a: parallel.action_space[a].sample(mask=o["action_mask"]) for a, o in observations.items()}
        observations, *_ = parallel.step(actions)
        assert all(parallel.observation_space[a].contains(o) for a, o in observations.items())
