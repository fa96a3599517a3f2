"""What the tank battle baselines share: one decision (:class:`TankMove`), written either as the
answer text of the stage's output format (what an LLM is asked to write) or as the native action
of the environment's ``action_mode``, and the base class that does the writing (:class:`TankPolicy`).

The policies read the game from the bound raw environment (``env.world``, ``env.stage``,
``env.settings.action_mode``, and the rule tank ``env.nearest_target`` and ``env.pending_requests``),
never from the observation text, so a decision costs no parsing.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena_envs.core import Policy
from arena_envs.core.answers import excerpt
from arena_envs.tank_battle.env import MAX_PLAYERS, OPS, TARGET_IDS
from arena_envs.tank_battle.stages import Stage
from arena_envs.tank_battle.world import Operation, World

#: operation -> its token in answers (``noop`` has none: no answer text says "do nothing")
OP_TOKENS: dict[Operation, str] = {"up": "Move_up", "down": "Move_down", "left": "Move_left",
                                   "right": "Move_right", "shoot": "Shoot"}
NO_TARGET = -1
#: ``reply[j]`` values of a ``dict`` action (0: no reply)
AGREE, DISAGREE = 1, 2


@dataclass(frozen=True)
class TankMove:
    """One decision: the operation, the declared attack target (-1: none) and the answers to
    pending cooperation requests (requesting player -> agree). Cooperation itself is always
    ``No_coop`` for the baselines."""

    op: Operation
    target: int = NO_TARGET
    replies: Mapping[int, bool] = field(default_factory=dict)


def answer_text(stage: Stage, move: TankMove) -> str:
    """``move`` in the output format of ``stage``'s prompt: ``#Operation: #Move_up#`` (stages 1-2),
    ``#Operation: Target 101: #Move_up#`` (the stage 4 template), ``#Attack operation: Target 101:
    #Move_up#`` (the others), plus ``#Cooperation operation: #No_coop#`` and one
    ``Reply_message {src}: Agree``/``Disagree`` line per reply where the stage cooperates."""
    if move.op not in OP_TOKENS:
        raise ValueError(f"operation {excerpt(move.op)} has no answer text; accepted: {', '.join(OP_TOKENS)}")
    token = f"#{OP_TOKENS[move.op]}#"
    if stage.template in (1, 2):
        return f"#Operation: {token}"
    header = "#Operation:" if stage.template == 4 else "#Attack operation:"
    lines = [f"{header} Target {move.target}: {token}"]
    if stage.cooperative:
        lines.append("#Cooperation operation: #No_coop#")
        lines += [f"Reply_message {src}: {'Agree' if agree else 'Disagree'}"
                  for src, agree in sorted(move.replies.items())]
    return "\n".join(lines)


def native_action(action_mode: str, move: TankMove) -> Any:
    """``move`` as an action of the environment's ``action_mode``: ``"discrete"`` -> the operation's
    index (0 up, 1 down, 2 left, 3 right, 4 shoot, 5 noop); ``"dict"`` -> the ``Dict`` action
    with ``coop`` 0 (``No_coop``) and the replies."""
    op = OPS.index(move.op)
    if action_mode == "discrete":
        return op
    if action_mode != "dict":
        raise ValueError(f"action_mode must be 'dict' or 'discrete', got {excerpt(action_mode)}")
    if move.target not in TARGET_IDS:
        raise ValueError(f"target {move.target} has no index in a dict action; accepted: {TARGET_IDS}")
    reply = np.zeros(MAX_PLAYERS, dtype=np.int64)
    for src, agree in move.replies.items():
        reply[src] = AGREE if agree else DISAGREE
    return {"op": op, "target": TARGET_IDS.index(move.target), "coop": 0, "coop_partner": 0, "reply": reply}


def player_of(agent: str) -> int:
    """``tank_3`` -> 3."""
    prefix, _, number = agent.rpartition("_")
    if prefix != "tank" or not number.isdigit():
        raise ValueError(f"a tank battle seat is named tank_<id>, got {excerpt(agent)}")
    return int(number)


class TankPolicy(Policy):
    """A tank baseline: subclasses decide a :class:`TankMove` from the world; this class answers
    with the stage's answer text (default) or, with ``native=True``, the native action of the
    environment's ``action_mode``. Needs ``bind(env)`` (the raw tank battle env) before ``reset``."""

    reads_text = False  # decides from the info, mask and features
    follows_game = True  # reads env.world

    def __init__(self, native: bool = False):
        if not isinstance(native, bool):
            raise ValueError(f"native must be true or false, got {excerpt(native)}")
        self.native = native
        self._env: Any = None
        self.player = -1

    def bind(self, env: Any) -> None:
        self._env = env

    def reset(self, agent: str, seed: int | None = None) -> None:
        if self._env is None:
            raise RuntimeError(f"{type(self).__name__} needs bind(env) before reset(agent, seed): it reads env.world")
        self.player = player_of(agent)

    def decide(self, world: World, stage: Stage) -> TankMove:
        raise NotImplementedError

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        if self.player < 0:
            raise RuntimeError(f"{type(self).__name__}.act before reset(agent, seed)")
        env = self._env
        move = self.decide(env.world, env.stage)
        if self.native:
            return native_action(env.settings.action_mode, move)
        return answer_text(env.stage, move)
