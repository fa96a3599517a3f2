"""Vectorised learner environments: many :class:`~arena_envs.rl.LearnerEnv` copies for one SB3 learner.

:class:`ConcurrentVecEnv` steps its copies in one asyncio event loop: each copy's step awaits its
opponents' ``aact`` (``LearnerEnv.astep``), and the copies' steps are gathered, so the LLM
opponents of every copy have their requests in flight together and an LLM server (vLLM) batches
them. Copies with only sync opponents (rule, random) step one after the other as in
``DummyVecEnv``, with the same results.

:func:`make_vec_env` picks the kind: ``concurrent`` when a copy has async opponents, else
``dummy``. ``subproc`` (SB3's ``SubprocVecEnv``, one process per copy) is there on request; it is
not picked by ``auto`` because it did not pay for the suite's games on the 2-core CI machine (see
``docs/rl.md``: the learner's own forward and backward passes use the cores, and the games' steps
are cheaper than the pipe round-trip).
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from arena_envs.core.extras import needs_extra

with needs_extra("rl", __name__):
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv
    from stable_baselines3.common.vec_env.base_vec_env import VecEnvObs, VecEnvStepReturn

from arena_envs.rl import LearnerEnv

#: What ``make_vec_env`` accepts as ``kind``.
VEC_KINDS = ("auto", "dummy", "subproc", "concurrent")


class ConcurrentVecEnv(DummyVecEnv):
    """``env_fns`` (functions building :class:`LearnerEnv` copies, not wrapped) stepped in one event loop.

    SB3 ``VecEnv`` semantics as ``DummyVecEnv``'s: a copy whose episode ends is reset at once, its
    last observation in ``info["terminal_observation"]`` and its reset info in ``reset_infos``;
    ``seed()`` / ``set_options()`` apply at the next ``reset()``; ``env_method``, ``get_attr``,
    ``set_attr`` and ``env_is_wrapped`` reach the copies (so sb3-contrib's ``get_action_masks``
    reads each copy's ``action_masks()``). Episode statistics for the logger come from wrapping
    the vector in ``VecMonitor`` (a per-copy ``Monitor`` wrapper would hide ``astep``).
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env[Any, Any]]]):
        super().__init__(list(env_fns))
        for index, env in enumerate(self.envs):
            if not isinstance(env, LearnerEnv):
                raise TypeError(f"ConcurrentVecEnv copy {index} is a {type(env).__name__}; accepted: a LearnerEnv "
                                "itself (wrap the vector in VecMonitor rather than each copy in Monitor)")
        self._loop = asyncio.new_event_loop()

    def step_wait(self) -> VecEnvStepReturn:
        results = self._gather([self._astep(index, action) for index, action in enumerate(self.actions)])
        for index, (observation, reward, done, info) in enumerate(results):
            self.buf_rews[index] = reward
            self.buf_dones[index] = done
            self.buf_infos[index] = info
            self._save_obs(index, observation)
        return self._obs_from_buf(), np.copy(self.buf_rews), np.copy(self.buf_dones), list(self.buf_infos)

    def reset(self) -> VecEnvObs:
        calls = []
        for index, env in enumerate(self.envs):
            options = {"options": self._options[index]} if self._options[index] else {}
            calls.append(env.areset(seed=self._seeds[index], **options))  # type: ignore[attr-defined]
        for index, (observation, info) in enumerate(self._gather(calls)):
            self.reset_infos[index] = info
            self._save_obs(index, observation)
        self._reset_seeds()
        self._reset_options()
        return self._obs_from_buf()

    def close(self) -> None:
        super().close()
        if not self._loop.is_closed():
            self._loop.close()

    async def _astep(self, index: int, action: Any) -> tuple[Any, float, bool, dict[str, Any]]:
        """One copy's step, and its reset when the episode ended (as ``DummyVecEnv.step_wait``)."""
        env: Any = self.envs[index]
        observation, reward, terminated, truncated, info = await env.astep(action)
        done = terminated or truncated
        info["TimeLimit.truncated"] = truncated and not terminated
        if done:
            info["terminal_observation"] = observation
            observation, self.reset_infos[index] = await env.areset()
        return observation, reward, done, info

    def _gather(self, calls: list[Any]) -> list[Any]:
        """Run ``calls`` together on the vector's loop; every one finishes before the first error is raised."""
        async def together() -> list[Any]:
            return await asyncio.gather(*calls, return_exceptions=True)

        results = self._loop.run_until_complete(together())
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results


def make_vec_env(env_fns: Sequence[Callable[[], gym.Env[Any, Any]]], kind: str = "auto") -> VecEnv:
    """The copies built by ``env_fns`` as one SB3 vector of kind ``kind`` (see :data:`VEC_KINDS`).

    ``auto``: ``concurrent`` when a copy's opponents are async (LLM policies), else ``dummy``.
    """
    if kind not in VEC_KINDS:
        raise ValueError(f"vectorisation kind {kind!r} is not known; accepted: {', '.join(VEC_KINDS)}")
    if not env_fns:
        raise ValueError("make_vec_env needs at least one environment function, got none")
    if kind == "subproc":
        return SubprocVecEnv(list(env_fns))
    envs = [fn() for fn in env_fns]
    if kind == "auto":
        kind = "concurrent" if any(has_async_opponents(env) for env in envs) else "dummy"
    built = [_given(env) for env in envs]
    return ConcurrentVecEnv(built) if kind == "concurrent" else DummyVecEnv(built)


def has_async_opponents(env: gym.Env[Any, Any]) -> bool:
    """Whether ``env`` is a :class:`LearnerEnv` with an opponent that has its own ``aact`` (an LLM policy)."""
    return isinstance(env, LearnerEnv) and env.async_opponents


def _given(env: gym.Env[Any, Any]) -> Callable[[], gym.Env[Any, Any]]:
    return lambda: env
