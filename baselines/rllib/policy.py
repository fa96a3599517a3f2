"""A module trained by :func:`baselines.rllib.train.train` as a player: the spec ``rllib:PATH``.

    rllib:PATH                    PATH: a training folder (its ``model.json`` and ``modules/``);
                                  actions sampled from the module's distribution, seeded by the
                                  episode's policy seed
    rllib:PATH?deterministic=1    the most likely legal action

A seat that was a learner in training is played by its module; another seat by the module whose
spaces are the seat's (seats rotate in ``arena run``). The policy reads only the numeric
observation and the mask (``reads_text`` is False), as the learners did. It carries the environment
settings of its training (``env_settings``: the ``env_kwargs`` of ``model.json`` but ``obs_mode``,
:func:`baselines.rl.envs.carried_settings`), which ``arena run`` applies. A folder trained for
another game is refused with one line; one whose spaces fit no seat (other environment arguments)
raises :class:`~arena_envs.core.PolicyFault` when it takes the seat. Playing needs no Ray cluster.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from pettingzoo import AECEnv

from arena_envs.core.extras import needs_extra

with needs_extra("ray", __name__):
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule

from arena_envs.core import Policy, PolicyFault
from arena_envs.rl.numeric_aec import LearnerSpaces
from baselines.rl.envs import carried_settings
from baselines.spec_options import SPEC_OPTIONS

_SPEC = re.compile(r"^rllib:(?P<path>[^?]+)(?:\?(?P<query>.*))?$")
_FLAGS = {"1": True, "true": True, "0": False, "false": False}


class RllibPolicy(Policy):
    """Plays the modules of a training folder (``metadata``: its ``model.json``)."""

    reads_text = False

    def __init__(self, modules: dict[str, RLModule], metadata: dict[str, Any], *, deterministic: bool = False,
                 name: str = "rllib"):
        self.modules = modules
        self.metadata = metadata
        self.env_settings = MappingProxyType(carried_settings(metadata.get("env_kwargs") or {}))
        self.deterministic = deterministic
        self.name = name
        self.env: AECEnv | None = None
        self.module: RLModule | None = None
        self.view: LearnerSpaces | None = None
        self.generator = torch.Generator()

    def bind(self, env: AECEnv) -> None:
        self.env = env

    def reset(self, agent: str, seed: int | None = None) -> None:
        if self.env is None:
            raise RuntimeError("RllibPolicy.bind(env) must come before reset()")
        self.view = LearnerSpaces.of(self.env.unwrapped, agent)
        self.module = self.modules[self._module_for(agent, self.view)]
        self.generator = torch.Generator()
        if seed is not None:
            self.generator.manual_seed(seed)

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        assert self.module is not None and self.view is not None, "reset() first"
        seen = self.view.observation(observation["observation"], observation.get("action_mask"))
        batch = {Columns.OBS: _batch_of_one(seen)}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
            distribution = self.module.get_inference_action_dist_cls().from_logits(logits)
            if self.deterministic:
                action = distribution.to_deterministic().sample()
            else:
                with torch.random.fork_rng(devices=[]):  # this seat's own seeded stream
                    torch.random.set_rng_state(self.generator.get_state())
                    action = distribution.sample()
                    self.generator.set_state(torch.random.get_rng_state())
        return self.view.native(action[0].numpy())

    def _module_for(self, agent: str, view: LearnerSpaces) -> str:
        """The module that played ``agent`` in training, else the first whose spaces are the seat's."""
        described = self.metadata["modules"]
        for module, about in described.items():
            if agent in about["seats"] and _fits(about, view):
                return module
        for module, about in described.items():
            if _fits(about, view):
                return module
        raise PolicyFault(f"no module of {self.name} fits seat {agent} (observations {view.observation_space}, "
                         f"actions {view.action_space}); trained for {self.metadata['env']} with "
                         f"{self.metadata['env_kwargs']}")


def policy_from_spec(spec: str, env: str) -> RllibPolicy:
    """The policy of ``rllib:PATH[?deterministic=1]`` for environment ``env`` (a one-line ``ValueError`` otherwise)."""
    match = _SPEC.match(spec.strip())
    if not match:
        raise ValueError("expected rllib:PATH (a training folder of baselines.rllib.train), optionally "
                         "?deterministic=1")
    deterministic = False
    for part in filter(None, (match["query"] or "").split("&")):
        key, _, value = part.partition("=")
        if key not in SPEC_OPTIONS["rllib"]:
            raise ValueError(f"unknown option {key!r}; accepted: {', '.join(SPEC_OPTIONS['rllib'])}")
        if value.lower() not in _FLAGS:
            raise ValueError(f"deterministic must be 1 or 0, got {value!r}")
        deterministic = _FLAGS[value.lower()]
    folder = Path(match["path"])
    meta_file = folder / "model.json"
    if not meta_file.exists():
        raise ValueError(f"{meta_file} does not exist (a training folder holds it once its training has finished)")
    metadata = json.loads(meta_file.read_text(encoding="utf-8"))
    if metadata.get("env") != env:
        raise ValueError(f"model {folder} was trained for {metadata.get('env')}, not {env}")
    modules = {module: RLModule.from_checkpoint(str((folder / "modules" / module).resolve()))
               for module in metadata["modules"]}
    for module in modules.values():
        module.eval()
    return RllibPolicy(modules, metadata, deterministic=deterministic, name=spec)


def _fits(about: dict[str, Any], view: LearnerSpaces) -> bool:
    return about["observation_space"] == repr(view.observation_space) and about["action_space"] == repr(
        view.action_space)


def _batch_of_one(observation: Any) -> Any:
    """``observation`` as tensors with a leading batch dimension of one."""
    if isinstance(observation, dict):
        return {key: _batch_of_one(value) for key, value in observation.items()}
    return torch.from_numpy(np.asarray(observation)[None])
