"""One conformance suite for every registered environment and each of its documented variants.

It walks ``arena_envs.registration.ENVIRONMENTS``: an environment (and every variant its spec
declares) gets PettingZoo's ``api_test``, ``seed_test``, ``render_test`` for each declared render
mode, the state checks where it has a global ``state()``, ``parallel_api_test`` /
``parallel_seed_test`` / ``max_cycles_test`` where it is parallelizable, and this module's own
checks: ``max_cycles`` truncation, pickling and ``copy.deepcopy`` mid-episode (the copy continues
exactly as the original), random legal play under several seeds (masked sampling) with every
observation inside the declared space and every decision's ``answer_constraint`` declared, and
the constructor arguments captured for ``EzPickle``.
A new environment gets all of it from its spec in the registry.

The checks are plain functions so that the broken environments at the end can prove each of
them fails when it should.
"""
from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import warnings
from collections.abc import Callable
from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.test import api_test, max_cycles_test, parallel_api_test, render_test, seed_test
from pettingzoo.test.seed_test import parallel_seed_test
from pettingzoo.test.state_test import test_state as state_test
from pettingzoo.test.state_test import test_state_space as state_space_test
from pettingzoo.utils import wrappers

import arena_envs
from arena_envs.core import AnswerConstraint, Answered, InvalidAnswer, TextAECEnv
from arena_envs.core.spaces import UnicodeText
from arena_envs.registration import ENVIRONMENTS

SEEDS = (0, 1, 2)
#: agent_iter bound of one played episode (every registered game ends far sooner)
MAX_ITERATIONS = 20_000

#: (environment, constructor keyword arguments): the defaults and every declared variant
VARIANTS = [(name, label, kwargs) for name, spec in ENVIRONMENTS.items()
            for label, kwargs in {"default": {}, **spec.variants}.items()]
CASES = [pytest.param(name, kwargs, id=f"{name}-{label}") for name, label, kwargs in VARIANTS]
PARALLEL_CASES = [pytest.param(name, kwargs, id=f"{name}-{label}") for name, label, kwargs in VARIANTS
                  if ENVIRONMENTS[name].parallel]


def module(name: str) -> Any:
    return getattr(arena_envs, name)


# ------------------------------------------------------------------------------------- the checks

def space_problem(space: spaces.Space[Any], value: Any, path: str = "observation") -> str | None:
    """Where ``value`` leaves ``space`` (the deepest failing part), or ``None`` if it is inside."""
    if isinstance(space, spaces.Dict) and isinstance(value, dict):
        if set(value) != set(space.spaces):
            return f"{path}: keys {sorted(value)} != declared {sorted(space.spaces)}"
        for key, sub in space.spaces.items():
            problem = space_problem(sub, value[key], f"{path}[{key!r}]")
            if problem:
                return problem
        return None
    if isinstance(space, spaces.Tuple) and isinstance(value, tuple) and len(value) == len(space.spaces):
        for k, (sub, part) in enumerate(zip(space.spaces, value)):
            problem = space_problem(sub, part, f"{path}[{k}]")
            if problem:
                return problem
        return None
    if space.contains(value):
        return None
    shown = f"a str of {len(value)} characters" if isinstance(value, str) else repr(value)[:200]
    return f"{path}: {shown} is not in {space}"


def seed_spaces(env: Any, seed: int) -> None:
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)


def legal_action(env: Any, agent: str, observation: Any) -> Any:
    """A random action of ``agent``'s space, drawn under the observation's mask where it has one."""
    mask = observation.get("action_mask") if isinstance(observation, dict) else None
    return env.action_space(agent).sample(mask)


def check_step(env: Any, agent: str, observation: Any, info: Any) -> None:
    """What must hold at every step: the observation inside its declared space, a dict info and,
    for an agent to act, a declared answer constraint."""
    problem = space_problem(env.observation_space(agent), observation)
    assert problem is None, f"{agent}: {problem}"
    assert isinstance(info, dict), f"{agent}: info is {type(info).__name__}, not a dict"
    raw = env.unwrapped
    if not (env.terminations[agent] or env.truncations[agent]) and hasattr(raw, "answer_constraint"):
        constraint = raw.answer_constraint(agent)
        assert constraint is None or isinstance(constraint, AnswerConstraint), constraint


def play(env: Any, iterations: int = MAX_ITERATIONS) -> list[tuple[Any, ...]]:
    """Play random legal actions for up to ``iterations`` agent_iter steps, checking every step;
    the trace of what each step showed."""
    trace = []
    for agent in env.agent_iter(iterations):
        observation, reward, termination, truncation, info = env.last()
        check_step(env, agent, observation, info)
        trace.append((agent, observation, reward, termination, truncation, info))
        env.step(None if termination or truncation else legal_action(env, agent, observation))
    return trace


def check_random_play(env_fn: Callable[..., Any], seed: int) -> None:
    """A whole episode of random legal play ends, with every step checked."""
    env = env_fn()
    env.reset(seed=seed)
    seed_spaces(env, seed)
    trace = play(env)
    assert not env.agents, f"the episode did not end within {MAX_ITERATIONS} steps ({len(trace)} played)"
    metrics = env.unwrapped.episode_metrics()
    assert set(metrics["agents"]) == set(env.possible_agents)


def check_copies_continue(env_fn: Callable[..., Any], seed: int, warmup: int) -> None:
    """Pickled and deep-copied mid-episode, each copy goes on exactly as the original does."""
    env = env_fn()
    env.reset(seed=seed)
    seed_spaces(env, seed)
    play(env, warmup)
    copies = {"pickle": pickle.loads(pickle.dumps(env)), "deepcopy": copy.deepcopy(env)}
    expected = play(env)
    record = env.unwrapped.episode_record()
    for how, clone in copies.items():
        trace = play(clone)
        assert len(trace) == len(expected), f"{how}: {len(trace)} steps after the copy, original {len(expected)}"
        for k, (got, want) in enumerate(zip(trace, expected)):
            assert data_equivalence(got, want), f"{how}: step {k} after the copy differs: {got[0]} vs {want[0]}"
        assert clone.unwrapped.episode_record() == record, f"{how}: the episode records differ"


def check_max_cycles(env_fn: Callable[..., Any], max_cycles: int, seed: int = 0) -> None:
    """With ``max_cycles`` the episode ends after that many cycles: no agent moves more often."""
    env = env_fn(max_cycles=max_cycles)
    env.reset(seed=seed)
    seed_spaces(env, seed)
    raw = env.unwrapped
    moves = dict.fromkeys(env.possible_agents, 0)
    for agent in env.agent_iter(MAX_ITERATIONS):
        observation, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else legal_action(env, agent, observation))
        if not (termination or truncation) and raw.last_move is not None:
            moves[agent] += 1
    assert not env.agents
    assert raw.num_cycles <= max_cycles and max(moves.values()) <= max_cycles, (raw.num_cycles, moves)


# ----------------------------------------------------------------------- every environment, variant

def test_every_environment_is_an_attribute_and_listed():
    for name, spec in ENVIRONMENTS.items():
        assert getattr(arena_envs, name).__name__ == spec.module
        assert name in dir(arena_envs)
    with pytest.raises(AttributeError, match="no attribute 'tetris_v0'"):
        arena_envs.tetris_v0  # noqa: B018


def test_import_is_light():
    """``import arena_envs`` and building every environment import no ML, plotting or window library,
    nor the runner or the policies."""
    code = ("import sys, arena_envs\n"
            "heavy = ('torch', 'matplotlib', 'pygame', 'arena_envs.runner', 'baselines', 'llm_policies')\n"
            "def loaded(): return sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy)\n"
            "assert not loaded(), loaded()\n"
            "assert not [m for m in sys.modules if m.startswith('arena_envs.gamma')]\n"
            "[getattr(arena_envs, n).env().reset(seed=0) for n in arena_envs.ENVIRONMENTS]\n"
            "assert not loaded(), loaded()\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name, kwargs", CASES)
def test_pettingzoo_api_seed_and_render(name, kwargs):
    env_fn = partial(module(name).env, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's advice on text observations and masks
        api_test(env_fn(), num_cycles=40)
        seed_test(env_fn, num_cycles=40)
        render_test(env_fn)
        env = env_fn()
        if hasattr(env.unwrapped, "state_space"):  # a global state(): PettingZoo's state checks
            env.reset(seed=0)
            state_space_test(env)
            state_test(env, num_cycles=40)


@pytest.mark.parametrize("name, kwargs", PARALLEL_CASES)
def test_pettingzoo_parallel_tests(name, kwargs):
    mod = module(name)
    parallel_fn = partial(mod.parallel_env, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(parallel_fn(), num_cycles=40)
        parallel_seed_test(parallel_fn, num_cycles=40)
        # max_cycles_test counts agent_iter visits and samples unmasked actions: with re-asks on, an
        # illegal sample is asked again (a visit that is not a move), so it runs as parallel_env does
        max_cycles_test(SimpleNamespace(env=partial(mod.env, max_retries=0, **kwargs), parallel_env=parallel_fn))


@pytest.mark.parametrize("name, kwargs", CASES)
def test_random_legal_play_stays_in_the_declared_spaces(name, kwargs):
    for seed in SEEDS:
        check_random_play(partial(module(name).env, **kwargs), seed)


@pytest.mark.parametrize("name, kwargs", CASES)
def test_pickle_and_deepcopy_mid_episode_continue_identically(name, kwargs):
    check_copies_continue(partial(module(name).env, **kwargs), seed=5, warmup=7)


@pytest.mark.parametrize("name, kwargs", CASES)
def test_max_cycles_truncates(name, kwargs):
    check_max_cycles(partial(module(name).env, **kwargs), max_cycles=2)


@pytest.mark.parametrize("name, kwargs", CASES)
def test_spaces_are_dicts_and_constructor_arguments_are_kept(name, kwargs):
    env = module(name).env(**kwargs)
    raw = env.unwrapped
    assert set(raw.observation_spaces) == set(raw.action_spaces) == set(raw.possible_agents)
    for agent in raw.possible_agents:
        assert env.observation_space(agent) is raw.observation_spaces[agent]
        assert env.action_space(agent) is raw.action_spaces[agent]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's wrappers call the dicts deprecated, and forward them
        assert env.observation_spaces == raw.observation_spaces and env.action_spaces == raw.action_spaces
    rebuilt = type(raw)(*raw._ezpickle_args, **raw._ezpickle_kwargs)
    assert rebuilt.config() == raw.config()
    other = module(name).env(**kwargs).unwrapped  # spaces are never shared between environments
    assert all(other.action_spaces[a] is not raw.action_spaces[a] for a in raw.possible_agents)


def test_long_el_farol_text_stays_inside_its_declared_space():
    """~915 rounds once made the full-history text outgrow a fixed UnicodeText(200_000)."""
    env = arena_envs.el_farol_v0.env(n_players=2, n_rounds=1200, history_window=None)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else 1)
    text = env.observe("player_0")["text"]
    assert len(text) > 200_000
    assert space_problem(env.observation_space("player_0"), env.observe("player_0")) is None


# --------------------------------------------------------------- broken environments are caught

class TwoRounds(TextAECEnv):
    """Two players name 0 or 1 for two rounds; ``flaw`` breaks one rule of the contract."""

    metadata = {"name": "two_rounds_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, flaw: str | None = None, eliminate: bool = False, **kwargs: Any):
        agents = ["player_0", "player_1"]
        kwargs.setdefault("feature_low", 0)
        kwargs.setdefault("feature_high", 2)
        super().__init__(agents=agents, action_spaces={a: spaces.Discrete(2) for a in agents},
                         feature_names=("round",), max_text_length=40 if flaw == "long_text" else None, **kwargs)
        self.flaw = flaw
        self.eliminate = eliminate  # player_0's first move eliminates player_1

    def _start_game(self, options: dict[str, Any]) -> None:
        self.round = 0
        self.moves: list[int] = []
        self.log: list[str] = []
        if self.flaw == "unpicklable":
            self.scorer = lambda move: float(move)  # a lambda in the state cannot be pickled
        # a stateful function kept by reference: pickle and deepcopy hand the copy the same one
        self.counter = shared_counter if self.flaw == "shared_state" else None

    def _parse_text(self, agent: str, text: str) -> int:
        if text.strip() not in ("0", "1"):
            raise InvalidAnswer("unparseable", "answer 0 or 1")
        return int(text)

    def _from_native(self, agent: str, action: Any) -> int:
        return int(action)

    def _apply(self, answered: Answered) -> None:
        agent, move = answered.agent, answered.move
        self.moves.append(move)
        self.log.append(f"{agent}:{move}")
        self.rewards[agent] = float(move) + (self.counter() if self.counter else 0)
        if self.eliminate and agent == "player_0" and self.round == 0:
            self.terminations["player_1"] = True
        if len(self.moves) == len(self._live()):
            self.round, self.moves = self.round + 1, []
            if self.round == 2:
                self.terminations = dict.fromkeys(self.agents, True)

    def _live(self) -> list[str]:
        return [a for a in self.possible_agents if not self.terminations[a]]

    def _fallback(self, agent: str) -> int:
        return 0

    def _next_agent(self) -> str | None:
        return None if self.round == 2 else self._live()[len(self.moves)]

    def _text(self, agent: str, note: str | None) -> str:
        return f"Round {self.round}. " + " ".join(self.log) + (" Name a number, 0 or 1, please." * 3)

    def _features(self, agent: str) -> np.ndarray:
        value = 7 if self.flaw == "space_mismatch" else self.round  # 7 > feature_high
        box = self.observation_spaces[agent]["observation"]  # type: ignore[index]
        return np.full(box.shape, value, dtype=box.dtype)

    def _agent_info(self, agent: str) -> dict[str, Any]:
        return {"round": self.round}

    def _action_mask(self, agent: str) -> np.ndarray:
        return np.ones(2, dtype=np.int8)

    def _render_text(self) -> str:
        return " ".join(self.log)

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint | None:
        if self.flaw == "undeclared_constraint":
            return super().answer_constraint(agent)
        return AnswerConstraint("choice", "0 or 1", choices=("0", "1"))


_CALLS = [0]


def shared_counter() -> int:
    _CALLS[0] += 1
    return _CALLS[0]


def two_rounds(flaw: str | None = None, **kwargs: Any) -> Any:
    return wrappers.OrderEnforcingWrapper(TwoRounds(flaw, **kwargs))


def test_a_game_declares_its_own_numeric_observation_shape():
    grid = TwoRounds(feature_shape=(2, 3, 3), feature_dtype=np.uint8, feature_low=0, feature_high=255)
    box = grid.observation_space("player_0")["observation"]
    assert (box.shape, box.dtype, int(box.high.max())) == ((2, 3, 3), np.uint8, 255)
    assert TwoRounds().observation_space("player_0")["observation"].shape == (1,)  # the others keep theirs
    check_random_play(partial(wrappers.OrderEnforcingWrapper, grid), 0)


def test_an_eliminated_player_gets_its_info_refreshed():
    env = two_rounds(eliminate=True)
    env.reset(seed=0)
    env.step(1)  # player_0's move eliminates player_1 and ends the round; player_0 moves next
    assert env.terminations["player_1"] and env.unwrapped.round == 1
    assert env.agent_selection == "player_1"  # its dead step comes first
    assert env.last()[4]["round"] == 1  # refreshed when it was eliminated, not left at round 0


def test_the_checks_pass_on_the_sound_test_environment():
    env_fn = partial(two_rounds, None)
    check_random_play(env_fn, 0)
    check_copies_continue(env_fn, seed=0, warmup=1)
    check_max_cycles(env_fn, max_cycles=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env_fn(), num_cycles=10)


def test_a_space_mismatch_is_caught():
    with pytest.raises(AssertionError, match=r"observation\['observation'\]: .*7"):
        check_random_play(partial(two_rounds, "space_mismatch"), 0)


def test_a_text_longer_than_declared_is_caught():
    with pytest.raises(AssertionError, match=r"observation\['text'\]: a str of \d+ characters"):
        check_random_play(partial(two_rounds, "long_text"), 0)


def test_unpicklable_state_is_caught():
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        check_copies_continue(partial(two_rounds, "unpicklable"), seed=0, warmup=1)


def test_a_copy_that_shares_state_with_the_original_is_caught():
    with pytest.raises(AssertionError, match=r"after the copy differs|records differ"):
        check_copies_continue(partial(two_rounds, "shared_state"), seed=0, warmup=1)


def test_an_undeclared_answer_constraint_is_caught_and_never_read_as_none():
    with pytest.raises(NotImplementedError, match="return None to declare"):
        check_random_play(partial(two_rounds, "undeclared_constraint"), 0)
    from llm_policies.base import LLMPolicyBase

    policy = LLMPolicyBase(backend=None)
    env = two_rounds("undeclared_constraint")
    env.reset(seed=0)
    policy.bind(env.unwrapped)
    policy.reset("player_0", seed=0)
    with pytest.raises(NotImplementedError):
        policy.constraint()


def test_unbounded_text_space_declares_no_bound():
    space = UnicodeText(None)
    assert space.contains("x" * 10**6) and not space.contains(b"bytes")
    assert not UnicodeText(3).contains("four")
