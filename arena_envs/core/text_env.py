"""Base class for the suite's text AEC games: the PettingZoo side that every game shares.

* Observations: ``Dict(text, observation, action_mask)``; ``observation`` is float32 features or
  the game's own shape (``feature_shape``, ``feature_dtype``, ``feature_low``/``feature_high``);
  ``action_mask`` where the action space can be masked (:func:`mask_space`).
* ``step()`` takes a native action or a ``str`` (raw LLM text, parsed by the game), never raises
  on it, and builds encodable texts. An :class:`~arena_envs.core.answers.InvalidAnswer` is recorded
  (``infos[agent]["invalid_action"]``), said in the agent's next text and asked again up to
  ``max_retries`` times; then the game's fallback applies (``infos[agent]["fallback"]``).
* ``max_cycles`` truncates after that many cycles (every agent still in moved once; a re-ask is
  not a move). A terminated agent's info is refreshed in the step that ends it. ``reset(seed)``
  seeds ``self.np_random``; out of order, ``raw_env()`` raises or warns as PettingZoo's ``env()``.
* Pickling and ``copy.deepcopy`` keep the whole state (``_ezpickle_args``, ``_ezpickle_kwargs``: a fresh one);
  the JSON episode record, the metrics hook, ``render_mode="ansi"``, and ``"human"`` (drawn after
  ``reset()`` and each changing ``step()``, with no ``render()`` call).

Hooks: ``_start_game``, ``_parse_text``, ``_from_native``, ``_validate``, ``_apply``, ``_rejected``,
``_fallback``, ``_next_agent``, ``_text``, ``_features``, ``_action_mask``, ``_agent_info``,
``_metrics``, ``_render_text``, ``answer_constraint`` (``None``: the game does not constrain answers).
A game overrides hooks only, never ``step()`` or a private method of this class. A step hands the
game an :class:`~arena_envs.core.answers.Answered` (the agent, its answer as given, the move, the
invalid answer behind a fallback, the correction the agent answered): ``_apply(answered)`` plays its
move; ``_rejected(answered)`` hears of an invalid answer asked again, before the agent's info is
refreshed. An :class:`InvalidAnswer`'s ``code`` rides along for games that log one.
"""
from __future__ import annotations

import operator
from collections.abc import Hashable
from typing import Any, ClassVar, TypeVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo.utils.env_logger import EnvLogger

from arena_envs.core.answers import AnswerConstraint, Answered, InvalidAnswer, encodable
from arena_envs.core.arguments import MAX_RETRIES, check_choice, check_int, check_real
from arena_envs.core.dead_agents import CountedDeadAgents
from arena_envs.core.frame_render import FRAME_MODES, FrameWindow, frame_array
from arena_envs.core.records import EpisodeRecord, jsonable
from arena_envs.core.space_cache import array_key, own_copy, prototype
from arena_envs.core.spaces import UnicodeText

#: Default maximum length of a text observation (characters); ``None``: no bound, because the
#: text keeps the history of an episode whose length the configuration need not bound.
MAX_TEXT_LENGTH: int | None = None

E = TypeVar("E", bound="TextAECEnv")


def mask_space(action_space: spaces.Space[Any]) -> spaces.Space[Any] | None:
    """The space of ``action_space``'s mask, in the form its ``sample(mask=...)`` takes; ``None``
    when it cannot be masked.

    ``Discrete(n)``: ``Box(0, 1, (n,), int8)``; a 1-D ``MultiDiscrete``: a ``Tuple`` of one such Box
    per entry; a ``Dict`` of maskable spaces: a ``Dict`` of their masks.
    """
    if isinstance(action_space, spaces.Discrete):
        return spaces.Box(0, 1, shape=(int(action_space.n),), dtype=np.int8)
    if isinstance(action_space, spaces.MultiDiscrete) and action_space.nvec.ndim == 1:
        return spaces.Tuple([spaces.Box(0, 1, shape=(int(n),), dtype=np.int8) for n in action_space.nvec])
    if isinstance(action_space, spaces.Dict):
        parts = {key: mask_space(sub) for key, sub in action_space.spaces.items()}
        masks = {key: part for key, part in parts.items() if part is not None}
        if len(masks) == len(parts):
            return spaces.Dict(masks)
    return None


def observation_space_for(action_space: spaces.Space[Any], max_text_length: int | None, shape: tuple[int, ...],
                          dtype: Any = np.float32, low: Any = -np.inf, high: Any = np.inf) -> spaces.Dict:
    """``Dict(text, observation, action_mask)`` of a game: the text, the numeric observation of
    ``shape`` (the feature vector, or the game's own shape), the mask where ``action_space`` has one."""
    parts: dict[str, spaces.Space[Any]] = {
        "text": UnicodeText(max_text_length),
        "observation": spaces.Box(low, high, shape=shape, dtype=dtype),
    }
    mask = mask_space(action_space)
    if mask is not None:
        parts["action_mask"] = mask
    return spaces.Dict(parts)


def _action_key(space: spaces.Space[Any]) -> Hashable:
    """The configuration of an action space (equal keys: interchangeable spaces)."""
    if isinstance(space, spaces.Discrete):
        return ("Discrete", int(space.n), int(space.start))
    if isinstance(space, spaces.MultiDiscrete):
        return ("MultiDiscrete", array_key(space.nvec), array_key(space.start))
    if isinstance(space, spaces.Dict):
        return ("Dict", tuple((k, _action_key(s)) for k, s in space.spaces.items()))
    return ("object", id(space))


def _mask_key(key: Hashable) -> Hashable:
    """The part of an action-space key that the observation space depends on (its mask, if any)."""
    if isinstance(key, tuple) and key[0] == "object":
        return None
    if isinstance(key, tuple) and key[0] == "Dict":
        parts = [_mask_key(sub) for _, sub in key[1]]
        return None if None in parts else key
    return key


class TextAECEnv(CountedDeadAgents, EzPickle):
    """Common machinery of the text games; see the module docstring for the contract."""

    metadata: ClassVar[dict[str, Any]] = {"name": "text_env", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": False}

    def __new__(cls: type[E], *args: Any, **kwargs: Any) -> E:
        env: E = super().__new__(cls)
        EzPickle.__init__(env, *args, **kwargs)  # the constructor arguments, for every game at once
        return env

    def __init__(
        self,
        *,
        agents: list[str],
        action_spaces: dict[str, spaces.Space[Any]],
        feature_names: tuple[str, ...],
        feature_low: float | np.ndarray = -np.inf,
        feature_high: float | np.ndarray = np.inf,
        feature_shape: tuple[int, ...] | None = None,
        feature_dtype: Any = np.float32,
        max_retries: int = 3,
        invalid_action_penalty: float = 0.0,
        render_mode: str | None = None,
        max_text_length: int | None = MAX_TEXT_LENGTH,
        max_cycles: int | None = None,
    ):
        super().__init__()
        if render_mode is not None:
            check_choice("render_mode", render_mode, self.metadata["render_modes"])
        self.max_retries = check_int("max_retries", max_retries, 0, MAX_RETRIES)
        self.invalid_action_penalty = check_real("invalid_action_penalty", invalid_action_penalty, high=0)
        if max_cycles is not None:
            check_int("max_cycles", max_cycles, 1)
        self.render_mode = render_mode
        self.max_cycles = max_cycles
        self.possible_agents = list(agents)
        self.feature_names = tuple(feature_names)
        self.feature_shape = (len(self.feature_names),) if feature_shape is None else tuple(feature_shape)
        features = (self.feature_shape, np.dtype(feature_dtype).str, array_key(feature_low), array_key(feature_high))
        # one copy per distinct configuration in this environment (agents alike share it, as in
        # PettingZoo's own games); copies of cached prototypes, so no two environments share one
        copies: dict[Hashable, spaces.Space[Any]] = {}
        self.action_spaces: dict[str, spaces.Space[Any]] = {}
        self.observation_spaces: dict[str, spaces.Space[Any]] = {}
        for agent, space in action_spaces.items():
            key = _action_key(space)
            if key not in copies:
                copies[key] = own_copy(space)
                copies["observation", key] = own_copy(prototype(
                    ("observation", max_text_length, features, _mask_key(key)),
                    lambda space=space: observation_space_for(  # type: ignore[misc]
                        space, max_text_length, self.feature_shape, feature_dtype, feature_low, feature_high)))
            self.action_spaces[agent] = copies[key]
            self.observation_spaces[agent] = copies["observation", key]
        self.np_random = np.random.default_rng()
        self.record: EpisodeRecord | None = None

    # ------------------------------------------------------------------ pickling

    def __getstate__(self) -> dict[str, Any]:
        """The whole state (EzPickle's default would rebuild a fresh, reset-less environment)."""
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # ------------------------------------------------------------------ PettingZoo API

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed = None if seed is None else operator.index(seed)  # np.int64(5) -> 5: the record stays JSON-safe
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
        #: completed cycles (see the module docstring); the agents that moved in the current one
        self.num_cycles = 0
        self._cycle_movers: set[str] = set()
        #: the move the last step applied, as the game's rules take it (parsed text, native action or
        #: fallback); None when the answer was invalid and the agent is asked again
        self.last_move: Any = None
        self.record = EpisodeRecord(self.metadata["name"], seed, self.config())
        self._start_game(options or {})
        self.agent_selection = self._next_agent() or self.agents[0]
        for agent in self.agents:
            self._refresh_info(agent, None)
        self._finished = {a for a in self.agents if self.terminations[a] or self.truncations[a]}
        self._done_count = self._count_done()
        self._human_shown = None
        if self.render_mode == "human":
            self._show_human()

    def observe(self, agent: str) -> dict[str, Any]:
        if self.record is None:
            raise _not_reset("observe")
        obs: dict[str, Any] = {
            "text": encodable(self._text(agent, self._notes.get(agent))),
            "observation": self._features(agent),
        }
        if "action_mask" in self.observation_spaces[agent].spaces:  # type: ignore[attr-defined]
            obs["action_mask"] = self._action_mask(agent)
        return obs

    def observe_numeric(self, agent: str) -> tuple[np.ndarray, Any]:
        """``agent``'s numeric observation and action mask (``None`` when the space has no mask),
        without building its text: what a learner that never reads the text pays for."""
        masked = "action_mask" in self.observation_spaces[agent].spaces  # type: ignore[attr-defined]
        return self._features(agent), self._action_mask(agent) if masked else None

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last()``; out of order it raises as the module docstring says."""
        if self.record is None:
            raise _not_reset("last")
        if not self.agents:
            raise RuntimeError(f"{self.metadata['name']}: last() after the episode: every agent is done; "
                               "reset() starts another")
        result: tuple[Any, float, bool, bool, dict[str, Any]] = super().last(observe)
        return result

    def step(self, action: Any) -> None:
        """PettingZoo's ``step()`` (the module docstring says what it takes); in ``human`` mode it
        then shows the game if the step changed it."""
        self._step(action)
        if self.render_mode == "human":
            self._show_human()

    def _step(self, action: Any) -> None:
        """The step itself: a move, an invalid answer asked again, or a finished agent's ``None``."""
        if self.record is None:
            raise _not_reset("step")
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._clear_rewards()
        self._cumulative_rewards[agent] = 0.0
        self.num_steps += 1
        self.last_move = None
        note = self._notes[agent]  # the correction the agent's text showed when it answered
        invalid: InvalidAnswer | None = None
        try:
            move = self._parse_text(agent, action) if isinstance(action, str) else self._from_native(agent, action)
            self._validate(agent, move)
        except InvalidAnswer as err:
            invalid = err
            self.invalid_counts[agent][err.kind] += 1
            self._retries[agent] += 1
            self.record.add("invalid", agent=agent, kind=err.kind, reason=err.reason,
                            answer=jsonable(action),
                            attempt=self._retries[agent])
            if self._retries[agent] <= self.max_retries:
                self._notes[agent] = err.reason
                self.rewards[agent] = self.invalid_action_penalty
                self._rejected(Answered(agent, action, None, err, note, asked_again=True))
                self._refresh_info(agent, err)
                self._accumulate_rewards()
                return
            move = self._fallback(agent)
            self.invalid_counts[agent]["fallback"] += 1
            self.record.add("fallback", agent=agent, action=jsonable(move))
            self.rewards[agent] = self.invalid_action_penalty
        fell_back = invalid is not None
        self._retries[agent] = 0
        self._notes[agent] = None
        self._apply(Answered(agent, action, move, invalid, note))
        self.last_move = move
        nxt = self._next_agent()
        self._count_cycle(agent, nxt)
        done = self._count_done()
        if nxt is None and not done:
            raise RuntimeError(f"{type(self).__name__}: no agent to act but the game did not end")
        self._refresh_info(agent, invalid, fell_back)
        self.agent_selection = nxt if nxt is not None else agent
        if nxt is not None and nxt != agent:
            self._refresh_info(nxt, None)
        self._finalise_infos(agent, nxt, done)
        self._accumulate_rewards()
        self._deads_step_first()

    def _count_cycle(self, agent: str, nxt: str | None) -> None:
        """Count a finished cycle and truncate the episode at ``max_cycles`` (module docstring)."""
        self._cycle_movers.add(agent)
        if nxt is None or nxt not in self._cycle_movers:
            return
        self.num_cycles += 1
        self._cycle_movers = set()
        if self.max_cycles is not None and self.num_cycles >= self.max_cycles:
            live = [a for a in self.agents if not (self.terminations[a] or self.truncations[a])]
            for a in live:
                self.truncations[a] = True
            if live:
                assert self.record is not None
                self.record.add("truncated", cycles=self.num_cycles, agents=live)

    def _count_done(self) -> int:
        """The terminated and truncated flags still in the dicts (``_done_count`` after a live step)."""
        return sum(self.terminations.values()) + sum(self.truncations.values())

    def _finalise_infos(self, agent: str, nxt: str | None, done: int) -> None:
        """Refresh the info of every agent this step terminated or truncated (eliminated players)."""
        if done == self._done_count:  # only live steps end agents: an unchanged count means no new end
            return
        self._done_count = done
        for a in self.agents:
            if (self.terminations[a] or self.truncations[a]) and a not in self._finished:
                self._finished.add(a)
                if a != agent and a != nxt:
                    self._refresh_info(a, None)

    #: The pygame window of a game that draws frames (opened by the first ``human`` frame).
    _frame_window: FrameWindow | None = None
    #: A game that counts its pictures sets this (the tank battle: one a round); ``human`` mode draws
    #: a frame when it changes. ``None``: any step may change the picture.
    frame_id: int | None = None
    #: What ``human`` mode showed last: the ``frame_id`` drawn or the text printed (``None``: nothing yet).
    _human_shown: Any = None

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the game's text; ``human``: that text printed, or, in a game that lists
        ``rgb_array`` among its render modes, the frame shown in a window; ``rgb_array``: the frame.

        ``human`` needs no call: ``reset()`` and every ``step()`` that changed the game show it (a
        game that draws: the frame, when ``frame_id`` changed or, without one, after every step,
        kept to ``_frame_rate()``; a text game: the lines of its text from the first one that
        differs from the text shown before). A call prints the whole text again; in a game that
        draws it does nothing while the window shows the current ``frame_id``, so a loop that
        calls ``render()`` after every decision is not slowed down twice."""
        if self.render_mode is None:
            return None
        if self._draws_frames():
            if self.render_mode == "human" and self._showing():
                return None
            frame = self._draw_frame()
            if self.render_mode == "rgb_array":
                return frame_array(frame)
            if self._frame_window is None:
                self._frame_window = FrameWindow(self._frame_title(), self._frame_rate())
            self._frame_window.show(frame)
            self._human_shown = self.frame_id
            return None
        text = encodable(self._render_text())
        if self.render_mode == "human":
            print(text)
            self._human_shown = text
            return None
        return text

    def _draws_frames(self) -> bool:
        """Whether ``render()`` makes frames (a game that lists ``rgb_array``, in a frame mode)."""
        return self.render_mode in FRAME_MODES and "rgb_array" in self.metadata["render_modes"]

    def _showing(self) -> bool:
        """Whether the open ``human`` window shows the current picture (a game with a ``frame_id``)."""
        return self.frame_id is not None and self.frame_id == self._human_shown \
            and self._frame_window is not None and self._frame_window.is_open

    def _show_human(self) -> None:
        """``human`` mode after ``reset()`` or ``step()``: show what changed (see :meth:`render`)."""
        if self._draws_frames():
            self.render()
            return
        text = encodable(self._render_text())
        new = text if self._human_shown is None else new_lines(self._human_shown, text)
        self._human_shown = text
        if new:
            print(new)

    def close(self) -> None:
        """Release the frame window, if one was opened."""
        if self._frame_window is not None:
            self._frame_window.close()
            self._frame_window = None

    def _draw_frame(self) -> Any:
        """The current frame as a ``pygame.Surface`` or an RGB ``(H, W, 3)`` uint8 array (games that draw)."""
        raise NotImplementedError(f"{type(self).__name__} lists rgb_array but does not implement _draw_frame")

    def _frame_rate(self) -> float:
        """Frames per second of the ``human`` window (default ``metadata["render_fps"]``, 0: no limit)."""
        return float(self.metadata.get("render_fps", 0))

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
        assert self.record is not None, "episode_record() before reset()"
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

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint | None:
        """Valid answers of ``agent``'s current decision, for guided decoding.

        Every game must say what it constrains: return an :class:`AnswerConstraint`, or ``None``
        to declare that answers are free text. Not overriding it is an error, never "no constraint".
        """
        raise NotImplementedError(f"{type(self).__name__} must define answer_constraint() "
                                  "(return None to declare that its answers are not constrained)")

    # ------------------------------------------------------------------ hooks

    def _start_game(self, options: dict[str, Any]) -> None:
        raise NotImplementedError

    def _parse_text(self, agent: str, text: str) -> Any:
        raise NotImplementedError

    def _from_native(self, agent: str, action: Any) -> Any:
        raise NotImplementedError

    def _validate(self, agent: str, move: Any) -> None:
        """Raise :class:`InvalidAnswer` if ``move`` breaks the rules; default: accept."""

    def _apply(self, answered: Answered) -> None:
        """Play ``answered.move`` (read from the answer, or the fallback: ``answered.fell_back``)."""
        raise NotImplementedError

    def _rejected(self, answered: Answered) -> None:
        """``answered`` was invalid and the agent is asked again (before its info is refreshed);
        default: nothing."""

    def _fallback(self, agent: str) -> Any:
        raise NotImplementedError

    def _next_agent(self) -> str | None:
        raise NotImplementedError

    def _text(self, agent: str, note: str | None) -> str:
        raise NotImplementedError

    def _features(self, agent: str) -> np.ndarray:
        raise NotImplementedError

    def _action_mask(self, agent: str) -> Any:
        """The mask of ``agent``'s decision, shaped as :func:`mask_space` of its action space."""
        raise NotImplementedError

    def _agent_info(self, agent: str) -> dict[str, Any]:
        return {}

    def _metrics(self) -> dict[str, Any]:
        return {"agents": {a: {"score": self._cumulative_rewards.get(a, 0.0)} for a in self.possible_agents},
                "game": {}}

    def _render_text(self) -> str:
        raise NotImplementedError


def new_lines(shown: str, text: str) -> str:
    """The lines of ``text`` from the first one that differs from ``shown``'s ("" when none does):
    what a text game's ``human`` mode prints after a step (a log that grew: its new lines)."""
    old, lines = shown.split("\n"), text.split("\n")
    same = 0
    for before, now in zip(old, lines):
        if before != now:
            break
        same += 1
    return "\n".join(lines[same:])


def _not_reset(call: str) -> AssertionError:
    """PettingZoo's error for ``call`` before ``reset()`` (what ``env()``'s OrderEnforcingWrapper raises)."""
    return AssertionError(f"reset() needs to be called before {call}.")
