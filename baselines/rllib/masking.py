"""PPO's default torch module with illegal actions masked, for observations ``{"observations",
"action_mask"}`` (:class:`arena_envs.rl.NumericAEC`'s, for ``Discrete`` actions).

The network (encoder, policy and value heads, built by PPO's catalog) sees only the
``observations`` part; the mask sets the logits of illegal actions to RLlib's ``FLOAT_MIN`` in every
forward pass (sampling, inference and the training pass, so the PPO ratio compares masked
distributions), and the value function ignores it.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym

from arena_envs.core.extras import needs_extra

with needs_extra("ray", __name__):
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN

from arena_envs.rl.numeric_aec import ACTION_MASK, OBSERVATIONS


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """See the module docstring; ``observation_space`` must be ``Dict(observations=..., action_mask=Box)``."""

    def __init__(self, *, observation_space: gym.Space[Any] | None = None, **kwargs: Any) -> None:
        if not (isinstance(observation_space, gym.spaces.Dict)
                and set(observation_space.spaces) == {OBSERVATIONS, ACTION_MASK}):
            raise ValueError(f"MaskedPPOModule needs a Dict observation space with keys {OBSERVATIONS!r} and "
                             f"{ACTION_MASK!r}, got {observation_space}")
        self.masked_space = observation_space
        # the catalog builds the encoder for the features alone
        super().__init__(observation_space=observation_space[OBSERVATIONS], **kwargs)

    def setup(self) -> None:
        super().setup()
        # what get_ctor_args_and_kwargs saves: a restored module is rebuilt from the masked space
        self.observation_space = self.masked_space

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        features, mask = _split(batch)
        return _masked(super()._forward(features, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        features, mask = _split(batch)
        return _masked(super()._forward_train(features, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any | None = None) -> Any:
        if isinstance(batch[Columns.OBS], dict):
            batch, _ = _split(batch)
        return super().compute_values(batch, embeddings)


def _split(batch: dict[str, Any]) -> tuple[dict[str, Any], torch.Tensor]:
    """A shallow copy of ``batch`` whose observations are the features alone, and the mask."""
    observation = batch[Columns.OBS]
    return {**batch, Columns.OBS: observation[OBSERVATIONS]}, observation[ACTION_MASK]


def _masked(outputs: dict[str, Any], mask: torch.Tensor) -> dict[str, Any]:
    logits = outputs[Columns.ACTION_DIST_INPUTS]
    outputs[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(mask == 0, FLOAT_MIN)
    return outputs
