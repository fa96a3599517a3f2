"""Every environment of the suite under RLlib's PettingZoo wrapper, through :class:`NumericAEC`.

Each game (default settings, the learner defaults of ``arena train``) and each documented
variant: PettingZoo's own ``api_test`` on :class:`NumericAEC`, then RLlib's ``PettingZooEnv`` over
it plays one random masked episode (capped) with half the seats learners and the others random
players, one of which reads its text: the learners' observations lie in their spaces, illegal
actions are never chosen, and the text builder runs for the text reader but never for a learner.

Special handling: the Pirate Game's ``Dict`` action (coins and vote) becomes one unmasked
``MultiDiscrete``, and the trading game's ``weights`` mode acts in a ``Box``: bare features, no
mask (PPO's default module would train them); the tank battle's observation is its
``(25, 64, 64)`` grid (masked ``Discrete`` actions): both run under the wrapper, neither is
trained in the suite's tests (the grid needs a convolutional encoder).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test

from arena_envs.registration import ENVIRONMENTS
from arena_envs.rl import NumericAEC
from arena_envs.rl.numeric_aec import ACTION_MASK, OBSERVATIONS
from arena_envs.runner.runner import env_factory
from baselines.rl.envs import learner_env_kwargs, seat_names

pytestmark = pytest.mark.ray

#: Learner decisions per episode before the random episode is cut (the long games: trading, tank).
STEP_CAP = 150

CASES: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in ENVIRONMENTS] + [
    (name, kwargs) for name, entry in ENVIRONMENTS.items() for kwargs in entry.variants.values()]
IDS = [name for name in ENVIRONMENTS] + [
    f"{name}-{label}" for name, entry in ENVIRONMENTS.items() for label in entry.variants]


def _env_config(name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Odd seats random players, even seats learners."""
    seats = seat_names(name, learner_env_kwargs(name, kwargs))
    return {"env": name, "env_kwargs": kwargs, "others": {seat: "random" for seat in seats[1::2]}}


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=IDS)
def test_pettingzoo_api(name: str, kwargs: dict[str, Any]) -> None:
    from baselines.rllib.env import numeric_env

    env = numeric_env(_env_config(name, kwargs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's style hints (all-zero observations and the like)
        api_test(env, num_cycles=20)
    env.close()


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=IDS)
def test_random_episode_under_rllib_wrapper(name: str, kwargs: dict[str, Any]) -> None:
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from baselines.rllib.env import make_env

    wrapper = make_env(_env_config(name, kwargs))
    assert isinstance(wrapper, PettingZooEnv)
    aec: NumericAEC = wrapper.env
    learners = set(aec.possible_agents)
    assert set(wrapper.observation_space.spaces) == learners
    reader = next(iter(aec.policies), None)
    if reader is not None:
        aec.policies[reader].reads_text = True  # a random player that gets its text: the spy must see it
    texts: list[str] = []
    build_text = aec.raw._text

    def spy(agent: str, note: str | None) -> str:
        texts.append(agent)
        return build_text(agent, note)

    aec.raw._text = spy
    rng = np.random.default_rng(0)
    observations, _ = wrapper.reset(seed=3)
    decisions = 0
    done = False
    while not done and decisions < STEP_CAP:
        for seat, seen in observations.items():  # the seat to act, after any learner that just finished
            assert seat in learners and wrapper.observation_spaces[seat].contains(seen), (seat, seen)
        agent = aec.agent_selection
        observation, space = observations[agent], wrapper.observation_spaces[agent]
        action_space = wrapper.action_spaces[agent]
        action_space.seed(int(rng.integers(2**31)))
        if not isinstance(aec.raw.action_space(agent), spaces.Discrete):  # bare features, no mask
            assert not isinstance(space, spaces.Dict)
            action = action_space.sample()
        else:
            assert set(space.spaces) == {OBSERVATIONS, ACTION_MASK}
            action = action_space.sample(mask=observation[ACTION_MASK])
            assert observation[ACTION_MASK][action] == 1
        observations, rewards, terminated, truncated, _ = wrapper.step({agent: action})
        assert all(isinstance(value, float) for value in rewards.values())
        decisions += 1
        done = terminated["__all__"] or truncated["__all__"] or not aec.agents
    assert decisions > 0
    assert not learners.intersection(texts), f"text built for learner seats {sorted(learners.intersection(texts))}"
    assert reader is None or reader in texts, "the spy did not see the text reader's text"
    wrapper.close()


def test_seeded_episodes_repeat_and_follow_each_other() -> None:
    """reset(seed=S) starts the same sequence of episodes; the next reset plays the next episode."""
    def features(env: NumericAEC, episodes: int) -> list[list[float]]:
        out = []
        env.reset(seed=11)
        for _ in range(episodes):
            seen = []
            for _ in env.agent_iter(200):
                observation, _, terminated, truncated, _ = env.last()
                seen.extend(observation[OBSERVATIONS].tolist())
                env.step(None if terminated or truncated else int(np.flatnonzero(observation[ACTION_MASK])[-1]))
            out.append(seen)
            env.reset()
        return out

    build = env_factory("guess_two_thirds_v0", {"n_players": 3})
    first = features(NumericAEC(build, others={"player_1": "random", "player_2": "level_k"}), 2)
    again = features(NumericAEC(build, others={"player_1": "random", "player_2": "level_k"}), 2)
    assert first == again
    assert first[0] != first[1]


def test_discrete_start_offset_and_bad_seats() -> None:
    """The auction's amount mode acts in Discrete(n, start=-1): the learner acts in Discrete(n) and
    the start is added back; seat errors are one line naming the seat."""
    build = env_factory("auction_v0", ENVIRONMENTS["auction_v0"].variants["amount"])
    env = NumericAEC(build, others={"bidder_2": "rule", "bidder_3": "rule"})
    game_space = env.raw.action_space("bidder_1")
    assert game_space.start == -1
    assert env.action_space("bidder_1") == spaces.Discrete(int(game_space.n))
    assert env.seat_spaces["bidder_1"].native(0) == -1 and env.seat_spaces["bidder_1"].native(5) == 4
    with pytest.raises(ValueError, match="'nobody' is not a seat"):
        NumericAEC(build, others={"nobody": "rule"})
    with pytest.raises(ValueError, match="no learner seat"):
        NumericAEC(build, others={seat: "rule" for seat in env.seats})
    with pytest.raises(ValueError, match="make the seat a learner"):
        NumericAEC(build, others={"bidder_2": "self"})


def test_masked_module_never_picks_an_illegal_action() -> None:
    import torch
    from ray.rllib.core.columns import Columns

    from baselines.rllib.masking import MaskedPPOModule

    view = NumericAEC(env_factory("guess_two_thirds_v0", {"n_players": 3}),
                      others={"player_1": "level_k", "player_2": "random"}).seat_spaces["player_0"]
    assert isinstance(view.action_space, spaces.Discrete) and isinstance(view.observation_space, spaces.Dict)
    features, n = view.observation_space[OBSERVATIONS], int(view.action_space.n)
    module = MaskedPPOModule(observation_space=view.observation_space, action_space=view.action_space,
                             model_config={})
    mask = torch.zeros((64, n), dtype=torch.int8)
    mask.scatter_(1, torch.randint(0, n, (64, 3)), 1)  # up to three legal actions per row
    batch = {Columns.OBS: {OBSERVATIONS: torch.randn(64, *(features.shape or ())),
                           ACTION_MASK: mask}}
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
    picked = torch.distributions.Categorical(logits=logits).sample()
    assert bool(mask.gather(1, picked[:, None]).all())
    values = module.compute_values(batch)
    assert values.shape == (64,)
    with pytest.raises(ValueError, match="needs a Dict observation space"):
        MaskedPPOModule(observation_space=features, action_space=view.action_space,
                        model_config={})


def test_async_players_run_each_episode_in_its_own_scope() -> None:
    """An async player (as the LLM policies are) is awaited inside one episode scope per episode,
    so a server pool keeps an episode's requests on one server; the scope ends with the episode."""
    from arena_envs.core import Policy
    from arena_envs.core.episode_context import current_episode, on_episode_end

    class AsyncFirstLegal(Policy):
        reads_text = False
        keys: list[object] = []

        async def aact(self, observation: Any, info: dict[str, Any]) -> Any:
            self.keys.append(current_episode())
            return int(np.flatnonzero(observation["action_mask"])[0])

    ended: list[object] = []
    remove = on_episode_end(ended.append)
    try:
        env = NumericAEC(env_factory("el_farol_v0", {"n_players": 3}),
                         others={"player_1": AsyncFirstLegal(), "player_2": "contrarian"})
        env.reset(seed=2)
        for episode in range(2):
            for _ in env.agent_iter():
                _, _, terminated, truncated, _ = env.last()
                env.step(None if terminated or truncated else 0)
            assert len(ended) == episode + 1  # the scope ended when the learners' episode did
            if episode == 0:
                env.reset()
        env.close()
    finally:
        remove()
    keys = AsyncFirstLegal.keys
    assert None not in keys and len(set(keys)) == 2 and ended == list(dict.fromkeys(keys))
    assert current_episode() is None


def test_learner_seats_with_equal_spaces_share_a_module() -> None:
    from arena_envs.rl.numeric_aec import LearnerSpaces
    from baselines.rllib.train import module_seats

    small = LearnerSpaces(spaces.Box(0, 1, (3,)), spaces.Discrete(4))
    big = LearnerSpaces(spaces.Box(0, 1, (5,)), spaces.Discrete(4))
    assert module_seats({"a": small, "b": small}) == {"learner": ["a", "b"]}
    assert module_seats({"a": small, "c": big, "b": small}) == {"learner_a": ["a", "b"], "learner_c": ["c"]}


@pytest.mark.parametrize(("args", "message"), [
    (["el_farol_v0", "--others", "random*10"], "no learner seat: others play every seat"),
    (["el_farol_v0", "--others", "random*11"], "10 seats (player_0, "),
    (["el_farol_v0", "--others", "random*9", "--batch", "0"], "batch must be an integer >= 1, got 0"),
    (["el_farol_v0", "--others", "random*9", "--algo-arg", "no_such=1"], "unknown PPO setting 'no_such'"),
    (["nowhere_v0"], "unknown environment 'nowhere_v0'"),
])
def test_train_command_refuses_bad_input_in_one_line(args: list[str], message: str, tmp_path: Any,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from baselines.rllib.train import main

    assert main([*args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
