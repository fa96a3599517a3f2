"""Vectorised learner environments (baselines.rl.vec_env): ConcurrentVecEnv against SB3's DummyVecEnv,
auto-reset, concurrent async opponents, and MaskablePPO training on it."""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

from arena_envs.auction_v0 import env as auction_env
from arena_envs.el_farol_v0 import env as el_farol_env
from arena_envs.rl import LearnerEnv, random_action
from baselines.auction.rule import RuleBidder
from baselines.random_policy import RandomPolicy
from baselines.rl.vec_env import ConcurrentVecEnv, make_vec_env


class InFlight:
    """Counts the opponents' calls awaiting at once (now and at most)."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0


class YieldingRandom(RandomPolicy):
    """A real async policy: its ``aact`` yields to the event loop once before answering (as an LLM
    policy awaits its server), counting the calls in flight."""

    def __init__(self, counter: InFlight):
        super().__init__()
        self.counter = counter

    async def aact(self, observation: Any, info: dict[str, Any]) -> Any:
        self.counter.now += 1
        self.counter.most = max(self.counter.most, self.counter.now)
        await asyncio.sleep(0)
        self.counter.now -= 1
        return self.act(observation, info)


def auction_copy() -> LearnerEnv:
    return LearnerEnv(auction_env, [RuleBidder(), RuleBidder()])


def el_farol_copy(counter: InFlight | None = None) -> Callable[[], LearnerEnv]:
    def build() -> LearnerEnv:
        def opponent() -> RandomPolicy:
            return RandomPolicy() if counter is None else YieldingRandom(counter)
        return LearnerEnv(lambda: el_farol_env(n_players=4), [opponent() for _ in range(3)])
    return build


def random_actions(venv: VecEnv, rng: np.random.Generator) -> np.ndarray:
    """One random legal action per copy (the copies' current masks)."""
    masks = get_action_masks(venv)
    return np.array([random_action(venv.action_space, mask, rng) for mask in masks])


def rollout(venv: VecEnv, steps: int, seed: int) -> list[tuple[Any, ...]]:
    """Observations, rewards, dones and terminal observations of ``steps`` random legal steps."""
    rng = np.random.default_rng(seed)
    venv.seed(seed)
    trace: list[tuple[Any, ...]] = [(venv.reset(), [dict(info) for info in venv.reset_infos])]
    for _ in range(steps):
        obs, rewards, dones, infos = venv.step(random_actions(venv, rng))
        terminal = [info.get("terminal_observation") for info in infos]
        trace.append((obs, rewards, dones, terminal, [info["TimeLimit.truncated"] for info in infos]))
    venv.close()
    return trace


def assert_same(left: Any, right: Any) -> None:
    if isinstance(left, (list, tuple)):
        assert len(left) == len(right)
        for a, b in zip(left, right):
            assert_same(a, b)
    elif isinstance(left, dict):
        assert left.keys() == right.keys()
        for key in left:
            assert_same(left[key], right[key])
    elif isinstance(left, np.ndarray) or left is None:
        np.testing.assert_array_equal(left, right)
    else:
        assert left == right


@pytest.mark.parametrize("copy", [auction_copy, el_farol_copy()], ids=["auction_rule", "el_farol_random"])
def test_concurrent_equals_dummy(copy: Callable[[], LearnerEnv]) -> None:
    """Same seeds, same actions: the same observations, rewards, dones and resets as DummyVecEnv."""
    concurrent = rollout(ConcurrentVecEnv([copy] * 3), 300, seed=11)
    dummy = rollout(DummyVecEnv([copy] * 3), 300, seed=11)
    assert_same(concurrent, dummy)
    assert sum(int(step[2].sum()) for step in concurrent[1:]) >= 3, "the rollout must cross episode ends"


def test_auto_reset_matches_one_copy_played_by_hand() -> None:
    """A finished episode: its last observation in terminal_observation, the next episode's first in obs,
    its reset info in reset_infos, exactly as one LearnerEnv reset by hand after the end."""
    venv = ConcurrentVecEnv([auction_copy])
    venv.seed(5)
    by_hand = auction_copy()
    obs, _ = by_hand.reset(seed=5)
    np.testing.assert_array_equal(np.asarray(venv.reset())[0], obs)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(200):
        action = random_actions(venv, rng)
        vobs, vrew, vdone, vinfo = venv.step(action)
        vobs = np.asarray(vobs)
        obs, reward, terminated, truncated, _ = by_hand.step(action[0])
        assert vrew[0] == pytest.approx(reward) and vdone[0] == (terminated or truncated)
        if vdone[0]:
            ends += 1
            np.testing.assert_array_equal(vinfo[0]["terminal_observation"], obs)
            obs, info = by_hand.reset()
            assert venv.reset_infos[0] == info
        np.testing.assert_array_equal(vobs[0], obs)
    assert ends >= 2
    venv.close()


def test_async_opponents_of_all_copies_are_in_flight_together() -> None:
    """Four copies with async opponents: four calls await at once; DummyVecEnv (each copy's own loop)
    never has more than one."""
    concurrent, dummy = InFlight(), InFlight()
    rollout(ConcurrentVecEnv([el_farol_copy(concurrent)] * 4), 20, seed=3)
    rollout(DummyVecEnv([el_farol_copy(dummy)] * 4), 20, seed=3)
    assert concurrent.most == 4
    assert dummy.most == 1


def test_async_opponents_play_as_sync_ones() -> None:
    """An opponent's async path (aact) gives the same games as its sync one (act)."""
    assert_same(rollout(ConcurrentVecEnv([el_farol_copy(InFlight())] * 2), 100, seed=4),
                rollout(ConcurrentVecEnv([el_farol_copy()] * 2), 100, seed=4))


def test_env_method_attrs_and_wrappers() -> None:
    venv = ConcurrentVecEnv([auction_copy, auction_copy])
    venv.reset()
    assert venv.get_attr("learner") == ["bidder_1", "bidder_1"]
    venv.set_attr("marker", 7, indices=[1])
    assert venv.get_attr("marker", indices=1) == [7]
    masks = venv.env_method("action_masks")
    np.testing.assert_array_equal(get_action_masks(venv), np.stack(masks))
    assert venv.env_is_wrapped(Monitor) == [False, False]
    venv.close()


def test_make_vec_env_kinds() -> None:
    rule = make_vec_env([auction_copy] * 2)
    assert type(rule) is DummyVecEnv
    llm_like = make_vec_env([el_farol_copy(InFlight())] * 2)
    assert type(llm_like) is ConcurrentVecEnv
    assert type(make_vec_env([auction_copy], kind="concurrent")) is ConcurrentVecEnv
    subproc = make_vec_env([auction_copy] * 2, kind="subproc")
    assert type(subproc) is SubprocVecEnv and np.asarray(subproc.reset()).shape[0] == 2
    for venv in (rule, llm_like, subproc):
        venv.close()


def test_bad_input_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"^vectorisation kind 'threads' is not known; accepted: auto, dummy, "
                                         r"subproc, concurrent$"):
        make_vec_env([auction_copy], kind="threads")
    with pytest.raises(TypeError, match=r"^ConcurrentVecEnv copy 0 is a Monitor; accepted: a LearnerEnv"):
        ConcurrentVecEnv([lambda: Monitor(auction_copy())])


def test_maskable_ppo_trains_on_concurrent_copies() -> None:
    """MaskablePPO learns 512 steps on four copies with async opponents; its rollouts keep to the masks."""
    counter = InFlight()
    venv = VecMonitor(ConcurrentVecEnv([el_farol_copy(counter)] * 4))
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(512)
    assert model.num_timesteps == 512
    assert counter.most == 4
    assert model.ep_info_buffer  # VecMonitor saw episodes end through the auto-reset
    venv.close()
