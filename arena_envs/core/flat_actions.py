"""A learner's action space in the form RL libraries take, and the way back to the game's action.

``Discrete``, a 1-D ``MultiDiscrete`` and ``Box`` spaces pass through unchanged. A ``Dict`` of
``Discrete`` and 1-D ``MultiDiscrete`` parts (the tank battle's ``dict`` mode, the Pirate Game's
coins and vote) becomes one ``MultiDiscrete`` over its parts in key order, and its mask one
flat boolean vector, the layout sb3-contrib's ``MaskablePPO`` reads for a ``MultiDiscrete``.

A part whose mask allows nothing (a part that does not apply to this decision, e.g. the
cooperation partner when no cooperation is asked) gets its first value allowed, so a masked
sampler always has a choice; the game ignores that part.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


class FlatActions:
    """The RL form of ``space`` (:attr:`space`), its masks (:meth:`mask`) and the way back (:meth:`native`)."""

    def __init__(self, space: spaces.Space[Any]):
        self.keys: tuple[str, ...] = ()
        self._single: tuple[bool, ...] = ()  # per Dict part: a Discrete (one value) or a MultiDiscrete
        if isinstance(space, spaces.Dict):
            sizes: list[np.ndarray] = []
            starts: list[np.ndarray] = []
            for key, part in space.spaces.items():
                nvec, start = _discrete_parts(part, f"part {key!r} of the Dict action space")
                sizes.append(nvec)
                starts.append(start)
            self.keys = tuple(space.spaces)
            self._single = tuple(isinstance(part, spaces.Discrete) for part in space.spaces.values())
            self._widths = [len(n) for n in sizes]
            self._starts = np.concatenate(starts)
            self.space: spaces.Space[Any] = spaces.MultiDiscrete(np.concatenate(sizes))
        elif isinstance(space, (spaces.Discrete, spaces.Box)) or (
                isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim == 1):
            self.space = space
        else:
            raise ValueError(f"action space {space} is not one an RL learner can use; accepted: Discrete, "
                             "1-D MultiDiscrete, Box, or a Dict of Discrete and 1-D MultiDiscrete parts")

    def mask(self, mask: Any) -> np.ndarray | None:
        """The game's mask (as :func:`arena_envs.core.text_env.mask_space` shapes it) as one flat
        boolean vector; ``None`` for a ``Box`` space or a game without masks."""
        if mask is None or isinstance(self.space, spaces.Box):
            return None
        if self.keys:
            return np.concatenate([_flat_mask(mask[key]) for key in self.keys])
        return _flat_mask(mask)

    def native(self, action: Any) -> Any:
        """The game's action for the RL action ``action``."""
        if not self.keys:
            return action
        values = np.asarray(action, dtype=np.int64).reshape(-1) + self._starts
        out: dict[str, Any] = {}
        at = 0
        for key, width, single in zip(self.keys, self._widths, self._single):
            if single:
                out[key] = int(values[at])
            else:
                out[key] = values[at:at + width].copy()
            at += width
        return out


def _discrete_parts(space: spaces.Space[Any], what: str) -> tuple[np.ndarray, np.ndarray]:
    """The sizes and start values of a ``Discrete`` (one entry) or 1-D ``MultiDiscrete`` space."""
    if isinstance(space, spaces.Discrete):
        return np.array([space.n], dtype=np.int64), np.array([space.start], dtype=np.int64)
    if isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim == 1:
        return space.nvec.astype(np.int64), space.start.astype(np.int64)
    raise ValueError(f"{what} is {space}; accepted parts: Discrete, 1-D MultiDiscrete")


def _flat_mask(mask: Any) -> np.ndarray:
    """One Box mask, or a tuple of them (``MultiDiscrete``), as booleans; an empty part allows its first value."""
    parts = mask if isinstance(mask, tuple) else (mask,)
    out = []
    for part in parts:
        allowed = np.asarray(part, dtype=bool)
        if not allowed.any():
            allowed = allowed.copy()
            allowed[0] = True
        out.append(allowed)
    return out[0] if len(out) == 1 else np.concatenate(out)
