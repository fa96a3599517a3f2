"""The observation text each decision of a logged episode answered, recovered by playing it again.

The step log holds each decision's answer, not the prompt the seat saw (it would repeat the rules in
every line). An episode is deterministic from its seed and its logged actions, so the prompts are
re-made by building the run's environment, resetting it with the episode's seed and stepping it with
the logged actions, reading ``observation["text"]`` before each decision.

Contract: only a registered environment (``arena list``) is built (a folder is data: a name read
from it is never imported); :func:`recover` returns one text (or None where the observation has no
text) per decision line, or raises :class:`NotRecovered` with one line saying why (an unregistered
environment, a log the environment disagrees with, more than ``seconds`` of work).
"""
from __future__ import annotations

import time
from typing import Any

from arena_envs.registration import ENVIRONMENTS
from arena_envs.runner.replay import ReplayError, restep
from arena_envs.runner.runner import env_factory

SECONDS = 10.0


class NotRecovered(ValueError):
    """The observations of an episode cannot be re-made (the line says why)."""


def recover(env: str, env_kwargs: dict[str, Any], seed: Any, steps: list[dict[str, Any]],
            seconds: float = SECONDS) -> list[str | None]:
    """The text observation of each decision line of ``steps`` (finish lines and corrupt lines are
    skipped), from a replay of registered environment ``env`` with ``env_kwargs`` from ``seed``."""
    if env not in ENVIRONMENTS:
        raise NotRecovered(f"environment {env!r} is not registered: a folder is data, so the viewer does not "
                           "build it to re-make the prompts")
    if type(seed) is not int:
        raise NotRecovered(f"the episode's seed {seed!r} is not an integer")
    decisions = [line for line in steps if "agent" in line and not line.get("finish")]
    deadline = time.monotonic() + seconds
    kwargs = {key: value for key, value in env_kwargs.items() if key not in ("render_mode", "obs_mode")}
    try:
        made = env_factory(env, kwargs)()
    except Exception as err:  # bad env_kwargs in run.json: the folder's problem, shown as text
        raise NotRecovered(f"the environment cannot be built from run.json: {type(err).__name__}: {err}") from None
    texts: list[str | None] = []

    def read(agent: str) -> None:
        observation = made.observe(agent)
        text = observation.get("text") if isinstance(observation, dict) else None
        texts.append(text if isinstance(text, str) else None)
        if time.monotonic() > deadline:
            raise NotRecovered(f"re-making the prompts took more than {seconds:g} s")

    try:
        for _ in restep(made, seed, decisions, 0, before=read):
            pass
    except NotRecovered:
        raise
    except ReplayError as err:  # the log does not fit the game
        raise NotRecovered(str(err).removeprefix("episode 0: ").removeprefix("episode 0, ")) from None
    except Exception as err:  # the game refuses a logged action
        raise NotRecovered(f"the replay stopped at decision {len(texts)}: {type(err).__name__}: {err}") from None
    finally:
        made.close()
    return texts
