"""The stable-baselines3 side of a learner: algorithms, network choice, loading, and acting.

Network by observation: a 1-D ``Box`` (every game's feature vector) gets sb3's ``MlpPolicy``;
the tank battle's ``(25, 64, 64)`` uint8 grid gets ``CnnPolicy`` with :class:`GridCNN`, a small
channels-first network (three strided convolutions) that a CPU trains at a useful speed.
Scaling of the grid: the grid marks a cell with 255 (and its feature planes hold value x 255), so
sb3's image preprocessing, which divides a uint8 ``Box`` with bounds 0..255 by 255, feeds the
network values in [0, 1]; :class:`GridCNN` does not scale again.
"""
from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_envs.core.answers import excerpt
from arena_envs.core.extras import needs_extra

with needs_extra("rl", __name__):
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import DQN, PPO
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.policies import BasePolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from torch import nn

from baselines.rl.envs import learner_env_kwargs

#: ``--algo`` name -> sb3 class.
ALGORITHMS: dict[str, type[BaseAlgorithm]] = {"ppo": PPO, "maskable_ppo": MaskablePPO, "dqn": DQN}

#: Learner function: (numeric observation, flat boolean mask or None) -> action of the RL action space.
ActFn = Callable[[np.ndarray, "np.ndarray | None"], Any]


class GridCNN(BaseFeaturesExtractor):
    """Features of a channels-first image-like grid (the tank battle's ``(25, 64, 64)``), already in [0, 1]."""

    def __init__(self, observation_space: spaces.Box, features_dim: int = 256):
        super().__init__(observation_space, features_dim)
        channels = observation_space.shape[0]
        self.convs = nn.Sequential(
            nn.Conv2d(channels, 32, kernel_size=4, stride=2), nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, kernel_size=3, stride=2), nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            flat = self.convs(torch.zeros((1, *observation_space.shape))).shape[1]
        self.head = nn.Sequential(nn.Linear(flat, features_dim), nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.head(self.convs(observations))


def network_for(observation_space: spaces.Space[Any]) -> tuple[str, dict[str, Any]]:
    """The sb3 policy name and policy_kwargs for a learner's observation space (see the module docstring)."""
    if isinstance(observation_space, spaces.Box) and len(observation_space.shape) == 1:
        return "MlpPolicy", {}
    if isinstance(observation_space, spaces.Box) and len(observation_space.shape) == 3:
        return "CnnPolicy", {"features_extractor_class": GridCNN}
    raise ValueError(f"observation space {observation_space} has no network here; accepted: a 1-D Box (features) "
                     "or a channels-first 3-D Box (the tank battle's grid)")


def check_action_space(algo: str, action_space: spaces.Space[Any]) -> None:
    """DQN takes a ``Discrete`` action space only; anything else is a one-line error."""
    if algo == "dqn" and not isinstance(action_space, spaces.Discrete):
        raise ValueError(f"dqn needs a Discrete action space, this seat's is {excerpt(action_space, 80)}; use ppo or "
                         "maskable_ppo (they take Discrete, MultiDiscrete and Box)")


def algo_of_zip(path: Path) -> str:
    """The ``--algo`` name of a saved model, read from the policy class recorded in its zip."""
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path} is not a stable-baselines3 model file: {err}") from err
    module = str(data.get("policy_class", {}).get("__module__", ""))
    if module.startswith("sb3_contrib.common.maskable"):
        return "maskable_ppo"
    if ".dqn." in module:
        return "dqn"
    return "ppo"


def training_metadata(path: Path) -> dict[str, Any]:
    """The ``model.json`` of the training that saved ``path`` (beside it, or above ``checkpoints/``); for a
    checkpoint of a training that has not finished, its environment, resolved keyword arguments and
    algorithm from the folder's ``config.json``; {} if none."""
    for folder in (path.parent, path.parent.parent):
        meta = folder / "model.json"
        if meta.exists():
            data: dict[str, Any] = json.loads(meta.read_text(encoding="utf-8"))
            return data
    config = path.parent.parent / "config.json"
    if path.parent.name == "checkpoints" and config.exists():
        trained = json.loads(config.read_text(encoding="utf-8"))
        return {"env": trained["env"], "env_kwargs": learner_env_kwargs(trained["env"], trained["env_kwargs"]),
                "algo": trained["algo"]}
    return {}


def load_model(path: Path, algo: str | None = None, **kwargs: Any) -> BaseAlgorithm:
    """The model saved at ``path`` (its algorithm read from the zip when ``algo`` is None), on the CPU."""
    name = algo or algo_of_zip(path)
    return ALGORITHMS[name].load(path, device="cpu", **kwargs)


def act_fn(policy: BasePolicy, deterministic: bool) -> ActFn:
    """A learner function of an sb3 policy network (masks passed on to a maskable one)."""
    maskable = is_maskable(policy)
    return lambda observation, mask: predict(policy, observation, mask, deterministic, maskable)


def is_maskable(policy: BasePolicy) -> bool:
    """Whether the network takes action masks (sb3-contrib's maskable policies)."""
    code = policy.predict.__code__
    return "action_masks" in code.co_varnames[:code.co_argcount]


def predict(policy: BasePolicy, observation: np.ndarray, mask: np.ndarray | None, deterministic: bool,
            maskable: bool) -> Any:
    """One action of ``policy`` for one observation (an ``int`` for a ``Discrete`` space)."""
    if maskable:
        action, _ = policy.predict(observation, deterministic=deterministic, action_masks=mask)  # type: ignore[call-arg]
    else:
        action, _ = policy.predict(observation, deterministic=deterministic)
    return int(action) if isinstance(policy.action_space, spaces.Discrete) else action


class Snapshot:
    """A frozen copy of a learner's network that samples its actions (a self-play opponent).

    It pickles (a :class:`~stable_baselines3.common.vec_env.SubprocVecEnv` sends it to its workers).
    """

    def __init__(self, model: BaseAlgorithm):
        # a new network with the learner's weights (a deepcopy would also copy the last forward
        # pass's distribution, whose tensors do not copy)
        live = model.policy
        self.policy = type(live)(**live._get_constructor_parameters())
        self.policy.load_state_dict(live.state_dict())
        self.policy.set_training_mode(False)
        self.maskable = is_maskable(self.policy)

    def __call__(self, observation: np.ndarray, mask: np.ndarray | None) -> Any:
        return predict(self.policy, observation, mask, False, self.maskable)
