"""A trained stable-baselines3 model as a player on the common policy interface: the spec ``sb3:PATH``.

    sb3:PATH                       PATH: a model.zip (or a checkpoint) or a training folder of ``arena train``
    sb3:PATH+deterministic=false   sample the actions (seeded by the episode's policy seed) rather than
                                   take the most likely one

The policy reads only the numeric observation and the action mask (``reads_text`` is False), as
the learner did in training, and answers with the game's native action. It carries the environment
settings of its training (``env_settings``: the ``env_kwargs`` of ``model.json`` beside the model,
or in the training folder above a checkpoint, such as the tank battle's ``action_mode="discrete"``;
not ``obs_mode``, which only spares a learner the text: :func:`baselines.rl.envs.carried_settings`),
which ``arena run`` applies. A model trained for another
environment is refused with one line; one whose spaces differ from the seat's (other environment
arguments) raises :class:`~arena_envs.core.PolicyFault` when it takes the seat.
"""
from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pettingzoo import AECEnv

from arena_envs.core.extras import needs_extra

with needs_extra("rl", __name__):
    import torch
    from stable_baselines3.common.base_class import BaseAlgorithm

from arena_envs.core import Policy, PolicyFault
from arena_envs.core.answers import EXCERPT_CHARS, excerpt
from arena_envs.rl import FlatActions
from arena_envs.runner.policy_specs import parse_arguments
from baselines.rl.envs import carried_settings
from baselines.rl.models import is_maskable, load_model, predict, training_metadata
from baselines.spec_options import SPEC_OPTIONS

_SPEC = re.compile(r"^sb3:(?P<path>.+?)(?:\+(?P<args>[A-Za-z_]\w*=.*))?$")


class Sb3Policy(Policy):
    """Plays ``model`` (trained with ``metadata``: the ``model.json`` of its training, or None)."""

    reads_text = False

    def __init__(self, model: BaseAlgorithm, *, deterministic: bool = True, metadata: dict[str, Any] | None = None,
                 name: str = "sb3"):
        self.model = model
        self.deterministic = deterministic
        self.metadata = metadata or {}
        self.env_settings = MappingProxyType(carried_settings(self.metadata.get("env_kwargs") or {}))
        self.name = name
        self.maskable = is_maskable(model.policy)
        self.actions: FlatActions | None = None
        self.env: AECEnv | None = None
        self.rng_state = torch.random.get_rng_state()

    def bind(self, env: AECEnv) -> None:
        self.env = env

    def reset(self, agent: str, seed: int | None = None) -> None:
        if self.env is None:
            raise RuntimeError("Sb3Policy.bind(env) must come before reset()")
        self.actions = FlatActions(self.env.action_space(agent))
        _check_spaces(self, self.env, agent)
        generator = torch.Generator()
        if seed is not None:
            generator.manual_seed(seed)
        self.rng_state = generator.get_state()

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        assert self.actions is not None, "reset() first"
        mask = self.actions.mask(observation.get("action_mask"))
        if self.deterministic:
            action = predict(self.model.policy, observation["observation"], mask, True, self.maskable)
        else:
            with torch.random.fork_rng(devices=[]):  # this seat's own seeded stream
                torch.random.set_rng_state(self.rng_state)
                action = predict(self.model.policy, observation["observation"], mask, False, self.maskable)
                self.rng_state = torch.random.get_rng_state()
        return self.actions.native(action)


def policy_from_spec(spec: str, env: str) -> Sb3Policy:
    """The policy of ``sb3:PATH[+deterministic=BOOL]`` for environment ``env`` (a one-line ``ValueError`` otherwise)."""
    match = _SPEC.match(spec.strip())
    if not match:
        raise ValueError("expected sb3:PATH (a model.zip or a training folder), optionally +deterministic=false")
    arguments = parse_arguments(match["args"] or "", spec)
    unknown = set(arguments) - set(SPEC_OPTIONS["sb3"])
    if unknown:
        raise ValueError(f"unknown argument {sorted(unknown)[0]!r}; accepted: {', '.join(SPEC_OPTIONS['sb3'])}")
    deterministic = arguments.get("deterministic", True)
    if not isinstance(deterministic, bool):
        raise ValueError(f"deterministic must be true or false, got {deterministic!r}")
    path = _model_file(Path(match["path"]))
    metadata = training_metadata(path)
    trained_for = metadata.get("env")
    if trained_for is not None and trained_for != env:
        raise ValueError(f"model {path} was trained for {trained_for}, not {env}")
    model = load_model(path, metadata.get("algo"))
    return Sb3Policy(model, deterministic=deterministic, metadata=metadata, name=spec)


def _shown(path: Path) -> str:
    """``path`` as a message shows it: as it is, or quoted in part when long."""
    text = str(path)
    return text if len(text) <= EXCERPT_CHARS else excerpt(text)


def _model_file(path: Path) -> Path:
    try:
        folder = path.is_dir()
        found = (path / "model.zip").exists() if folder else path.exists()
    except OSError as err:  # a name too long for the file system, a folder that may not be read
        raise ValueError(f"model path {_shown(path)} cannot be read: {err.strerror}") from None
    if folder and not found:
        raise ValueError(f"{_shown(path / 'model.zip')} does not exist (a training folder holds its model.zip "
                         "once it has finished)")
    if not found:
        raise ValueError(f"model file {_shown(path)} does not exist")
    return path / "model.zip" if folder else path


def _check_spaces(policy: Sb3Policy, env: AECEnv, agent: str) -> None:
    """The seat's numeric observation and (flattened) action spaces must be the model's (else :class:`PolicyFault`)."""
    assert policy.actions is not None
    observation = env.observation_space(agent)["observation"]
    model = policy.model
    trained = policy.metadata.get("env", "another game")
    kwargs = policy.metadata.get("env_kwargs")
    how = f" (trained for {trained} with {kwargs})" if kwargs is not None else ""
    if observation != model.observation_space:
        raise PolicyFault(f"model {policy.name} sees observations {model.observation_space}, seat {agent} gives "
                         f"{observation}{how}")
    if policy.actions.space != model.action_space:
        raise PolicyFault(f"model {policy.name} acts in {model.action_space}, seat {agent} takes "
                         f"{policy.actions.space}{how}")
