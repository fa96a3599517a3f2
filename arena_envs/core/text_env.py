"""Base class for the suite's text AEC games: the PettingZoo side that every game shares.

A game subclass keeps its rules in a pure module and implements a handful of hooks; this class does
the rest the same way for every game:

* observations are ``Dict(text, observation, action_mask)`` (``action_mask`` only for discrete
  action spaces), with cached spaces;
* ``step()`` accepts a native action or a ``str`` (raw LLM text, parsed by the game);
* the invalid-answer loop: an :class:`~arena_envs.core.answers.InvalidAnswer` is recorded in the
  episode record and in ``infos[agent]["invalid_action"]``, its reason is appended to the agent's
  next text, and the same agent is asked again up to ``max_retries`` times; then the game's
  documented fallback action is applied (``infos[agent]["fallback"] = True``);
* one seeded ``numpy.random.Generator`` (``self.np_random``) created in ``reset``;
* the JSON episode record, the metrics hook and ``render_mode="ansi"``.

Hooks a subclass implements: ``_start_game``, ``_parse_text``, ``_from_native``, ``_validate``,
``_apply``, ``_fallback``, ``_next_agent``, ``_text``, ``_features``, ``_action_mask``,
``_agent_info``, ``_metrics``, ``_render_text``, ``answer_constraint``.
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from arena_envs.core.answers import AnswerConstraint, InvalidAnswer
from arena_envs.core.frame_render import FRAME_MODES, FrameWindow, frame_array
from arena_envs.core.records import EpisodeRecord
from arena_envs.core.spaces import UnicodeText

#: Default maximum length of a text observation (characters).
MAX_TEXT_LENGTH = 200_000


class TextAECEnv(AECEnv):
    """Common machinery of the text games; see the module docstring for the contract."""

    metadata: ClassVar[dict[str, Any]] = {"name": "text_env", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": False}

    def __init__(
        self,
        *,
        agents: list[str],
        action_spaces: dict[str, spaces.Space],
        feature_names: tuple[str, ...],
        feature_low: float | np.ndarray = -np.inf,
        feature_high: float | np.ndarray = np.inf,
        max_retries: int = 3,
        invalid_action_penalty: float = 0.0,
        render_mode: str | None = None,
        max_text_length: int = MAX_TEXT_LENGTH,
    ):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if invalid_action_penalty > 0:
            raise ValueError(f"invalid_action_penalty must be <= 0, got {invalid_action_penalty}")
        self.render_mode = render_mode
        self.max_retries = max_retries
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.possible_agents = list(agents)
        self.feature_names = tuple(feature_names)
        self._action_spaces = dict(action_spaces)
        self._observation_spaces = {
            agent: self._make_observation_space(space, max_text_length, feature_low, feature_high)
            for agent, space in self._action_spaces.items()
        }
        self.np_random = np.random.default_rng()
        self.record: EpisodeRecord | None = None

    def _make_observation_space(self, action_space: spaces.Space, max_text_length: int, low: Any, high: Any) -> spaces.Dict:
        parts: dict[str, spaces.Space] = {
            "text": UnicodeText(max_text_length),
            "observation": spaces.Box(low, high, shape=(len(self.feature_names),), dtype=np.float32),
        }
        if isinstance(action_space, spaces.Discrete):
            parts["action_mask"] = spaces.Box(0, 1, shape=(int(action_space.n),), dtype=np.int8)
        return spaces.Dict(parts)

    # ------------------------------------------------------------------ PettingZoo API

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.np_random = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._retries = {a: 0 for a in self.agents}
        self._notes: dict[str, str | None] = {a: None for a in self.agents}
        self.invalid_counts = {a: {"unparseable": 0, "illegal": 0, "fallback": 0} for a in self.agents}
        self.num_steps = 0
        #: the move the last step applied, as the game's rules take it (parsed text, native action or
        #: fallback); None when the answer was invalid and the agent is asked again
        self.last_move: Any = None
        self.record = EpisodeRecord(self.metadata["name"], seed, self.config())
        self._start_game(options or {})
        self.agent_selection = self._next_agent() or self.agents[0]
        for agent in self.agents:
            self._refresh_info(agent, None)

    def observe(self, agent: str) -> dict[str, Any]:
        obs: dict[str, Any] = {
            "text": self._text(agent, self._notes.get(agent)),
            "observation": self._features(agent),
        }
        if "action_mask" in self._observation_spaces[agent].spaces:
            obs["action_mask"] = self._action_mask(agent)
        return obs

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._clear_rewards()
        self._cumulative_rewards[agent] = 0.0
        self.num_steps += 1
        self._answer = action  # the answer as given; games may log raw text with the decision
        self.last_move = None
        invalid: InvalidAnswer | None = None
        try:
            move = self._parse_text(agent, action) if isinstance(action, str) else self._from_native(agent, action)
            self._validate(agent, move)
        except InvalidAnswer as err:
            invalid = err
            self.invalid_counts[agent][err.kind] += 1
            self._retries[agent] += 1
            self.record.add("invalid", agent=agent, kind=err.kind, reason=err.reason,
                            answer=action if isinstance(action, str) else _jsonable(action),
                            attempt=self._retries[agent])
            if self._retries[agent] <= self.max_retries:
                self._notes[agent] = err.reason
                self.rewards[agent] = self.invalid_action_penalty
                self._refresh_info(agent, err)
                self._accumulate_rewards()
                return
            move = self._fallback(agent)
            self.invalid_counts[agent]["fallback"] += 1
            self.record.add("fallback", agent=agent, action=_jsonable(move))
            self.rewards[agent] = self.invalid_action_penalty
        fell_back = invalid is not None
        self._retries[agent] = 0
        self._notes[agent] = None
        self._apply(agent, move, fell_back)
        self.last_move = move
        nxt = self._next_agent()
        if nxt is None and not any(self.terminations.values()) and not any(self.truncations.values()):
            raise RuntimeError(f"{type(self).__name__}: no agent to act but the game did not end")
        self._refresh_info(agent, invalid, fell_back)
        self.agent_selection = nxt if nxt is not None else agent
        if nxt is not None and nxt != agent:
            self._refresh_info(nxt, None)
        self._accumulate_rewards()
        self._deads_step_first()

    #: The pygame window of a game that draws frames (opened by the first ``human`` frame).
    _frame_window: FrameWindow | None = None

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the game's text; ``human``: that text printed, or, in a game that lists
        ``rgb_array`` among its render modes, the frame shown in a window; ``rgb_array``: the frame."""
        if self.render_mode is None:
            return None
        if self.render_mode in FRAME_MODES and "rgb_array" in self.metadata["render_modes"]:
            frame = self._draw_frame()
            if self.render_mode == "rgb_array":
                return frame_array(frame)
            if self._frame_window is None:
                self._frame_window = FrameWindow(self._frame_title(), self.metadata.get("render_fps", 0))
            self._frame_window.show(frame)
            return None
        text = self._render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Release the frame window, if one was opened."""
        if self._frame_window is not None:
            self._frame_window.close()
            self._frame_window = None

    def _draw_frame(self) -> Any:
        """The current frame as a ``pygame.Surface`` or an RGB ``(H, W, 3)`` uint8 array (games that draw)."""
        raise NotImplementedError(f"{type(self).__name__} lists rgb_array but does not implement _draw_frame")

    def _frame_title(self) -> str:
        """The caption of the ``human`` frame window."""
        return str(self.metadata["name"])

    # ------------------------------------------------------------------ helpers for games and runners

    def _refresh_info(self, agent: str, invalid: InvalidAnswer | None, fell_back: bool = False) -> None:
        info = self._agent_info(agent)
        info["invalid_action"] = None if invalid is None else {"kind": invalid.kind, "reason": invalid.reason}
        info["retries"] = self._retries[agent]
        info["fallback"] = fell_back
        self.infos[agent] = info

    def episode_record(self) -> dict[str, Any]:
        """The JSON-safe record of the episode so far, with its metrics."""
        record = self.record.to_dict()
        record["metrics"] = self.episode_metrics()
        return record

    def episode_metrics(self) -> dict[str, Any]:
        """The paper's metrics for the episode: ``{"agents": {agent: {...}}, "game": {...}}``.

        Every agent entry has a ``score`` (what the paper ranks players by) and the counts of
        invalid answers (``unparseable``, ``illegal``, ``fallback``).
        """
        metrics = self._metrics()
        for agent, counts in self.invalid_counts.items():
            metrics["agents"].setdefault(agent, {}).update(counts)
        return metrics

    def config(self) -> dict[str, Any]:
        """The constructor arguments that define the game (JSON-safe); stored in every record."""
        return {}

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint:
        """Valid answers of ``agent``'s current decision, for guided decoding."""
        raise NotImplementedError

    # ------------------------------------------------------------------ hooks

    def _start_game(self, options: dict[str, Any]) -> None:
        raise NotImplementedError

    def _parse_text(self, agent: str, text: str) -> Any:
        raise NotImplementedError

    def _from_native(self, agent: str, action: Any) -> Any:
        raise NotImplementedError

    def _validate(self, agent: str, move: Any) -> None:
        """Raise :class:`InvalidAnswer` if ``move`` breaks the rules; default: accept."""

    def _apply(self, agent: str, move: Any, fell_back: bool) -> None:
        raise NotImplementedError

    def _fallback(self, agent: str) -> Any:
        raise NotImplementedError

    def _next_agent(self) -> str | None:
        raise NotImplementedError

    def _text(self, agent: str, note: str | None) -> str:
        raise NotImplementedError

    def _features(self, agent: str) -> np.ndarray:
        raise NotImplementedError

    def _action_mask(self, agent: str) -> np.ndarray:
        raise NotImplementedError

    def _agent_info(self, agent: str) -> dict[str, Any]:
        return {}

    def _metrics(self) -> dict[str, Any]:
        return {"agents": {a: {"score": self._cumulative_rewards.get(a, 0.0)} for a in self.possible_agents}, "game": {}}

    def _render_text(self) -> str:
        raise NotImplementedError


def _jsonable(value: Any) -> Any:
    """A JSON-safe copy of a native action (numpy scalars and arrays become Python values)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)
