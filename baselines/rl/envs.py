"""Learner environments from names and policy spec strings (what ``arena train`` and the evaluation build).

Opponent specs are the runner's (:func:`arena_envs.runner.policy_specs.make_policy`; ``rule*2``
is two ``rule`` seats); the spec ``self`` is :data:`arena_envs.rl.SELF`, a frozen snapshot of the
learner. Every environment copy gets its own opponent instances (policies keep per-episode state).

The tank battle defaults: when the user sets neither, ``action_mode="discrete"`` (one ``Discrete``
action: every algorithm, DQN included, takes it) and ``obs_mode="grid"`` (the numeric grid
only: the text of the learner's seat is never built). Who is Spy: ``action_mode="discrete"`` (its
default is free text, which no network emits): votes, abstain and the rule describer's ranked clues.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from arena_envs.rl import SELF, LearnerEnv
from arena_envs.runner.policy_specs import make_policy, split_players
from arena_envs.runner.runner import env_factory

#: Environment keyword arguments a learner gets unless the user sets them.
LEARNER_DEFAULTS: dict[str, dict[str, Any]] = {"tank_battle_v0": {"action_mode": "discrete", "obs_mode": "grid"},
                                               "who_is_spy_v0": {"action_mode": "discrete"}}


#: Settings that choose only what a game computes for its observations (``obs_mode``: the tank battle's
#: ``"grid"`` spares a learner the text it does not read); a trained model does not carry them into a
#: run, whose other players may read the text.
VIEW_SETTINGS = ("obs_mode",)


def learner_env_kwargs(env: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` with the learner defaults of ``env`` filled in."""
    return {**LEARNER_DEFAULTS.get(env, {}), **kwargs}


def carried_settings(trained_with: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a model trained with ``trained_with`` (the resolved keyword arguments its
    ``model.json`` records) needs in a run: all of them but the :data:`VIEW_SETTINGS`."""
    return {key: value for key, value in trained_with.items() if key not in VIEW_SETTINGS}


def expand_specs(specs: Sequence[str]) -> list[str]:
    """The opponent specs one per seat (``rule*2`` expanded; an entry may also be a comma-separated list)."""
    return [spec for entry in specs for spec in split_players(entry)]


def seat_names(env: str, env_kwargs: Mapping[str, Any]) -> list[str]:
    """The seats of ``env`` built with ``env_kwargs``."""
    game = env_factory(env, env_kwargs)()
    try:
        return list(game.unwrapped.possible_agents)
    finally:
        game.close()


def check_opponents(env: str, seats: Sequence[str], specs: Sequence[str]) -> None:
    """One opponent spec per seat but the learner's; otherwise a one-line error."""
    if len(specs) != len(seats) - 1:
        raise ValueError(f"{env} has {len(seats)} seats ({', '.join(seats)}): the learner and {len(seats) - 1} "
                         f"opponents expected, --opponents gives {len(specs)} ({','.join(specs) or 'none'})")


def opponent(spec: str, env: str) -> Any:
    """The opponent entry of a spec for :class:`LearnerEnv`: a policy, or :data:`SELF`."""
    return SELF if spec.strip() == SELF else make_policy(spec, env)


def learner_env_fn(env: str, env_kwargs: Mapping[str, Any], specs: Sequence[str],
                   seat: str | None) -> Callable[[], LearnerEnv]:
    """A builder of learner environments (each call: a new game and new opponents); checks the
    specs and the seat by building one."""
    factory = env_factory(env, env_kwargs)
    specs = list(specs)

    def build() -> LearnerEnv:
        return LearnerEnv(factory, [opponent(spec, env) for spec in specs], seat=seat)

    build().close()
    return build
