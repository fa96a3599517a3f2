"""arena_envs.rl.LearnerEnv: one seat of every suite game as a Gymnasium environment."""
from __future__ import annotations

import asyncio
import gc
import pickle
import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env as gymnasium_check_env

import arena_envs
from arena_envs.core import Policy
from arena_envs.rl import SELF, FlatActions, LearnerEnv, SnapshotPool, random_action
from arena_envs.runner.runner import RunConfig, run
from baselines.auction.rule import RuleBidder
from baselines.random_policy import RandomPolicy

sb3_env_checker = pytest.importorskip("stable_baselines3.common.env_checker")


def rl_kwargs(name: str) -> dict[str, Any]:
    """The RL form of the games whose default is not: the tank battle's one discrete operation per
    decision on the grid only, Who is Spy's discrete votes and ranked clues (its default is free text)."""
    return {"tank_battle_v0": {"stage": 4, "action_mode": "discrete", "obs_mode": "grid"},
            "who_is_spy_v0": {"action_mode": "discrete"}}.get(name, {})


def view(name: str, opponents: Any = None, **options: Any) -> LearnerEnv:
    module = getattr(arena_envs, name)
    kwargs = rl_kwargs(name)
    if opponents is None:
        opponents = [RandomPolicy() for _ in module.env(**kwargs).possible_agents[1:]]
    return LearnerEnv(lambda: module.env(**kwargs), opponents, **options)


def masked_sample(env: LearnerEnv, rng: np.random.Generator) -> Any:
    return random_action(env.action_space, env.action_masks(), rng)


@pytest.mark.parametrize("name", arena_envs.ENVIRONMENTS)
def test_every_environment_passes_gymnasium_and_sb3_checks(name):
    env = view(name)
    gc.collect()  # what earlier tests left (an unclosed event loop's ResourceWarning) is not the checkers' remark
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gymnasium_check_env(env, skip_render_check=True)
        sb3_env_checker.check_env(env)
    # the unbounded feature boxes are the only remark either checker makes
    assert [str(w.message) for w in caught if "infinity" not in str(w.message)] == []
    assert env.observation_space == env.raw.observation_space(env.learner)["observation"]


@pytest.mark.parametrize("name", ["auction_v0", "el_farol_v0", "battle_royale_v0", "pirate_game_v0",
                                  "tank_battle_v0"])
def test_masked_random_play_is_always_legal_and_finishes_episodes(name):
    env = view(name)
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    episodes = 0
    for _ in range(600):
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any()
        _, _, terminated, truncated, info = env.step(masked_sample(env, rng))
        assert info["invalid_action"] is None
        if terminated or truncated:
            episodes += 1
            env.reset()
    assert episodes >= 1


class Mirror(Policy):
    """Plays a seat through the view's learner: the action a given function picks from the numbers."""

    reads_text = False

    def __init__(self, choose: Any):
        self.choose = choose

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        return self.choose(observation["observation"], info)


def test_an_episode_is_the_runners_episode_with_the_same_seed(tmp_path):
    """Episode k of reset(seed=S) is episode k of `arena run --seed S`: game seed, opponent seeds, rewards."""
    def choose(features: np.ndarray, info: dict[str, Any]) -> int:  # a deterministic learner
        return 1 if info["remaining_budget"] >= 2 * info["min_valid_bid"] else 0

    summary = run(RunConfig("auction_v0", ("learner", "rule:K=3", "rule:K=5"), episodes=1, seed=7), tmp_path / "r",
                  policy_factory=lambda spec, env: Mirror(choose) if spec == "learner" else _rule(spec))
    expected = summary.episodes[0]["metrics"]

    env = LearnerEnv(arena_envs.auction_v0.env, [RuleBidder(K=3), RuleBidder(K=5)])
    _, info = env.reset(seed=7)
    total, done = 0.0, False
    while not done:
        _, reward, terminated, truncated, info = env.step(choose(np.zeros(0), info))
        total += reward
        done = terminated or truncated
    assert env.raw.episode_metrics() == expected
    assert total == pytest.approx(expected["agents"][env.learner]["score"])


def _rule(spec: str) -> RuleBidder:
    return RuleBidder(K=int(spec.split("=")[1]))


def test_reset_with_a_seed_replays_and_later_resets_go_on():
    env = view("el_farol_v0")
    rng = np.random.default_rng(0)

    def episode() -> list[float]:
        rewards, done = [], False
        while not done:
            _, reward, terminated, truncated, _ = env.step(int(rng.integers(2)))
            rewards.append(reward)
            done = terminated or truncated
        return rewards

    first_obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    first = episode()
    env.reset()
    second = episode()
    again_obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    assert np.array_equal(first_obs, again_obs) and episode() == first
    assert second != first  # the next episode of the sequence is another game


def test_neither_the_learner_nor_a_numeric_opponent_pays_for_the_text(monkeypatch):
    env = view("public_goods_v0")
    built: list[str] = []
    original = type(env.raw)._text

    def counting_text(self: Any, agent: str, note: str | None) -> str:
        built.append(agent)
        return original(self, agent, note)

    monkeypatch.setattr(type(env.raw), "_text", counting_text)
    env.reset(seed=0)
    for _ in range(30):
        if any(env.step(0)[2:4]):
            env.reset()
    assert built == []  # RandomPolicy reads only the mask

    class Reader(Policy):
        def act(self, observation: Any, info: dict[str, Any]) -> Any:
            assert observation["text"]
            return 0

    env = view("public_goods_v0", [Reader()] + [RandomPolicy() for _ in range(8)])
    env.reset(seed=0)
    env.step(0)
    assert set(built) == {"player_1"}  # only the seat whose policy reads the text


def test_an_illegal_action_is_asked_again_with_the_penalty():
    env = LearnerEnv(lambda: arena_envs.auction_v0.env(invalid_action_penalty=-1.0, budgets=[1000, 20000, 20000]),
                     [RuleBidder(), RuleBidder()])  # the learner cannot afford a bid
    env.reset(seed=0)
    mask = env.action_masks()
    illegal = int(np.flatnonzero(~mask)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-1.0, False, False)
    assert info["invalid_action"]["kind"] == "illegal" and env.raw.agent_selection == env.learner


def test_dict_actions_are_flattened_with_their_masks():
    flat = FlatActions(arena_envs.tank_battle_v0.env(stage=4).action_space("tank_0"))
    assert isinstance(flat.space, spaces.MultiDiscrete)
    assert flat.space.nvec.tolist() == [4, 8, 6, 3, 3, 3, 3, 3, 3, 3, 3, 23]  # coop, partner, op, replies, target
    env = view("tank_battle_v0")
    raw = arena_envs.tank_battle_v0.env(stage=4)
    raw.reset(seed=0)
    mask = flat.mask(raw.last()[0]["action_mask"])
    assert mask.shape == (int(flat.space.nvec.sum()),)
    assert mask[4]  # the partner part allows nothing when no cooperation is asked: its first value stands in
    native = flat.native(np.array([0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1]))
    assert native["op"] == 2 and native["target"] == 1 and native["reply"].tolist() == [0] * 8
    assert env.action_space == spaces.Discrete(6)


def test_tank_battle_in_dict_mode_plays_legal_flat_actions():
    env = LearnerEnv(lambda: arena_envs.tank_battle_v0.env(stage=7), [RandomPolicy() for _ in range(5)])
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for _ in range(100):
        _, _, terminated, truncated, info = env.step(masked_sample(env, rng))
        assert info["invalid_action"] is None
        if terminated or truncated:
            env.reset()


def test_self_play_seats_play_random_until_a_snapshot_then_the_snapshot():
    seen: list[tuple[tuple[int, ...], int]] = []

    def snapshot(features: np.ndarray, mask: np.ndarray | None) -> int:
        assert mask is not None
        seen.append((features.shape, int(mask.sum())))
        return int(np.flatnonzero(mask)[-1])

    env = view("diners_dilemma_v0", [SELF] * 9)
    env.reset(seed=0)
    env.step(0)
    assert seen == []  # an empty pool: random legal play
    env.add_snapshot(snapshot)
    env.reset()
    env.step(0)
    assert len(seen) == 9 and seen[0] == ((9,), 2)
    pool = SnapshotPool(2)
    for k in range(3):
        pool.add(lambda features, mask, k=k: k)
    assert sorted(pool.draw(np.random.default_rng(s))(None, None) for s in range(20))[0] == 1  # the oldest is gone


class Waiting(RandomPolicy):
    """A real async policy: it yields to the event loop before answering, as an LLM client does."""

    async def aact(self, observation: Any, info: dict[str, Any]) -> Any:
        await asyncio.sleep(0)
        return self.act(observation, info)


def test_async_opponents_play_the_same_game_sync_or_awaited():
    def episode(env: LearnerEnv, step: Any, reset: Any) -> list[Any]:
        out = [reset(seed=5)[0].tolist()]
        done = False
        while not done:
            obs, reward, terminated, truncated, _ = step(1)
            out.append((obs.tolist(), reward))
            done = terminated or truncated
        return out

    sync = view("el_farol_v0", [RandomPolicy() for _ in range(9)])
    awaited = view("el_farol_v0", [Waiting() for _ in range(9)])
    expected = episode(sync, sync.step, sync.reset)
    assert episode(awaited, awaited.step, awaited.reset) == expected  # sync API on a private loop

    async def both() -> list[Any]:
        fresh = view("el_farol_v0", [Waiting() for _ in range(9)])
        return [await fresh.areset(seed=5)]

    assert asyncio.run(both())[0][0].tolist() == expected[0]


def test_seats_fixed_mapped_or_drawn():
    opponents = {"player_1": RandomPolicy(), "player_2": RandomPolicy()}
    env = LearnerEnv(lambda: arena_envs.el_farol_v0.env(n_players=3), opponents, seat="player_0")
    env.reset(seed=0)
    assert env.learner == "player_0"
    drawn = LearnerEnv(lambda: arena_envs.el_farol_v0.env(n_players=3), [RandomPolicy(), RandomPolicy()],
                       seat="random")
    seats = set()
    drawn.reset(seed=0)
    for _ in range(12):
        seats.add(drawn.learner)
        drawn.reset()
    assert seats == {"player_0", "player_1", "player_2"}


def test_a_view_pickles_mid_episode():
    env = view("auction_v0", [RuleBidder(), RuleBidder()])
    env.reset(seed=0)
    env.step(1)
    copy = pickle.loads(pickle.dumps(env))
    assert [np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
            for a, b in zip(env.step(0)[:4], copy.step(0)[:4])] == [True] * 4


@pytest.mark.parametrize(("build", "message"), [
    (lambda: view("el_farol_v0", seat="player_99"), "learner seat 'player_99' is not a seat"),
    (lambda: view("auction_v0", [RuleBidder()]), "has 3 seats: the learner and 2 opponents expected, got 1"),
    (lambda: view("auction_v0", {"bidder_2": RuleBidder()}), "needs exactly ['bidder_2', 'bidder_3']"),
    (lambda: view("auction_v0", [RuleBidder(), 42]), "opponent 42 is neither a Policy"),
    (lambda: view("auction_v0", "rule"), "opponents must be a list or a mapping"),
    (lambda: FlatActions(spaces.Text(5)), "is not one an RL learner can use; accepted: Discrete"),
])
def test_bad_input_is_one_clear_line(build, message):
    with pytest.raises((ValueError, TypeError)) as caught:
        build()
    assert message in str(caught.value) and "\n" not in str(caught.value)
