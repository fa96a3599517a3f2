"""The base of γ-Bench games 1-6: rounds of simultaneous answers.

Agents answer in index order; the answers stay in a :class:`~arena_envs.core.SimultaneousPhase`
until the last one of the round is in, then the round resolves at once (rewards for all, one
history record, one report per agent) and the next round starts.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from arena_envs.core import AnswerConstraint, Answered, InvalidAnswer, SimultaneousPhase
from arena_envs.core.answers import native_index
from arena_envs.core.arguments import check_bool
from arena_envs.gamma.answer import ChoiceField, IntField
from arena_envs.gamma.base import GammaEnv, random_legal_action, readonly
from arena_envs.gamma.simultaneous_rules import MAX_PLAYERS, MAX_ROUNDS, check_int
from arena_envs.gamma.transcript import report_block, request_block


class SimultaneousGameEnv(GammaEnv):
    """Games 1-6: ``n_rounds`` rounds in which every player answers once, hidden until resolution.

    Native actions are indices into ``self._values`` (a ``range`` of numbers or a tuple of
    words); a ``str`` is parsed by the game's answer field. A subclass sets ``metadata`` and
    implements the game hooks below; everything PettingZoo-facing lives here. Keyword options:
    those of :class:`~arena_envs.gamma.base.GammaEnv`, ``reveal_own_id=False`` and
    ``plain_numbers=False`` (in the games answered with a number, a reply holding no JSON answer may
    be one number in plain words, "I pick 33": :func:`arena_envs.gamma.answer.plain_number`; a game
    answered with a word reads its answers as before, so one setting serves a whole γ-Bench suite).
    """

    metadata: ClassVar[dict[str, Any]] = {"name": "gamma_simultaneous", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": True}
    #: Names of the game-specific features that follow ``round_index`` and ``n_rounds``.
    game_feature_names: tuple[str, ...] = ()
    #: The game's pure rules (a :class:`~arena_envs.gamma.simultaneous_rules.SimultaneousRules`).
    rules: Any
    #: The answer field of every decision, for games with one (see :meth:`_field`).
    _answer_field: IntField | ChoiceField

    def __init__(self, *, n_players: int, n_rounds: int, values: Sequence[Any], reveal_own_id: bool = False,
                 plain_numbers: bool = False, **options: Any):
        n_players = check_int("n_players", n_players, 2, MAX_PLAYERS)
        self.n_rounds = check_int("n_rounds", n_rounds, 1, MAX_ROUNDS)
        self.reveal_own_id = bool(reveal_own_id)
        self.plain_numbers = check_bool("plain_numbers", plain_numbers)
        self._values = values
        super().__init__(
            n_players=n_players,
            action_spaces={f"player_{i}": spaces.Discrete(len(values)) for i in range(n_players)},
            feature_names=("round_index", "n_rounds", *self.game_feature_names),
            **options,
        )
        self._full_mask = readonly(np.ones(len(values), dtype=np.int8))
        self._prefixes = [self._describe_game(self._intro(), self._rules(),
                                                   f"You are {a}." if self.reveal_own_id else None)
                               for a in self.possible_agents]

    # ---------------------------------------------------------------- hooks of a game

    def _intro(self) -> str:
        """First line(s) of the rules block (players, rounds, the game's premise)."""
        raise NotImplementedError

    def _rules(self) -> list[str]:
        raise NotImplementedError

    def _field(self, i: int) -> IntField | ChoiceField:
        """The answer field of player ``i``'s current decision; default: the game's one field,
        ``self._answer_field`` (set by the constructor)."""
        return self._answer_field

    def _new_round(self) -> None:
        """Draw or reset per-round private state (valuations, tokens); default: nothing."""

    def _round_mask(self, i: int) -> np.ndarray | None:
        """Player ``i``'s mask for this round, or ``None`` when every action is legal."""
        return None

    def _resolve(self, values: list[Any]) -> tuple[dict[str, Any], list[float]]:
        """The round record (history schema) and each player's reward for the given answers;
        default: the game's rules object (``self.settings``) resolves the round from the answers alone."""
        return self.settings.resolve(self.round + 1, values)  # type: ignore[no-any-return]

    def _report(self, i: int, record: dict[str, Any]) -> tuple[str, str]:
        """(public outcome, private outcome) texts of ``record`` as player ``i`` sees them."""
        raise NotImplementedError

    def _request(self, i: int) -> list[str]:
        """Objective and private lines of player ``i``'s current decision."""
        raise NotImplementedError

    def _instruction(self, i: int) -> str:
        """The JSON answer-format line of player ``i``'s current decision."""
        return self._field(i).instruction(self.prompt.cot)

    def _game_features(self, i: int) -> list[float]:
        raise NotImplementedError

    def _observed(self, i: int, record: dict[str, Any]) -> dict[str, Any]:
        """The part of ``record`` player ``i`` is shown (``infos["last_round_record"]``)."""
        raise NotImplementedError

    def _private_info(self, i: int) -> dict[str, Any]:
        """Private state of player ``i``'s decision for rule policies (valuation, tokens...)."""
        return {}

    def _agent_score(self, i: int) -> float:
        """What player ``i`` is ranked by in the metrics; default: its total payoff."""
        return self.totals[i]

    # ---------------------------------------------------------------- TextAECEnv hooks

    def config(self) -> dict[str, Any]:
        plain = {"plain_numbers": True} if self.plain_numbers else {}  # the default leaves configs as they were
        return {**super().config(), "reveal_own_id": self.reveal_own_id, **plain}

    def _start_game(self, options: dict[str, Any]) -> None:
        self.round = 0  # 0-based index of the current round; == n_rounds once the game is over
        self.totals = [0.0] * self.n_players
        self._phase: SimultaneousPhase[int, int] = SimultaneousPhase(range(self.n_players))
        self.history: list[dict[str, Any]] = []
        self._transcripts = self._seat_transcripts()
        self._last_seen: list[dict[str, Any] | None] = [None] * self.n_players
        self._new_round()
        self._clear_caches()

    def _clear_caches(self) -> None:
        self._request_text: list[tuple[str | None, str] | None] = [None] * self.n_players
        self._feature_cache: list[np.ndarray | None] = [None] * self.n_players
        self._mask_cache: list[np.ndarray | None] = [None] * self.n_players

    @property
    def done(self) -> bool:
        return self.round >= self.n_rounds

    @property
    def last_record(self) -> dict[str, Any] | None:
        """The record of the last resolved round (``None`` before the first)."""
        return self.history[-1] if self.history else None

    def _parse_text(self, agent: str, text: str) -> int:
        field = self._field(self._index[agent])
        value = field.parse(text, self.plain_numbers) if isinstance(field, IntField) else field.parse(text)
        try:
            return self._values.index(value)
        except ValueError:
            raise InvalidAnswer("illegal", f"{value!r} is not a legal answer") from None

    def _from_native(self, agent: str, action: Any) -> int:
        return native_index(action, len(self._values))

    def _validate(self, agent: str, move: int) -> None:
        if not self._action_mask(agent)[move]:
            field = self._field(self._index[agent])
            allowed = f"from {field.low} to {field.high}" if isinstance(field, IntField) else ", ".join(field.choices)
            raise InvalidAnswer("illegal",
                                f'"{field.key}" {self._values[move]!r} is not allowed now (allowed: {allowed})')

    def _fallback(self, agent: str) -> int:
        self._check_fallback(agent)
        return random_legal_action(self.np_random, self._action_mask(agent))

    def _apply(self, answered: Answered) -> None:
        if self._phase.submit(self._index[answered.agent], answered.move):
            self._resolve_round()

    def _resolve_round(self) -> None:
        values = [self._values[a] for a in self._phase.moves.values()]
        record, rewards = self._resolve(values)
        self.history.append(record)
        self.record.add("round", **record)
        title = f"Round {self.round + 1}"
        for i, agent in enumerate(self.possible_agents):
            self.rewards[agent] = rewards[i]
            self.totals[i] += rewards[i]
            public, private = self._report(i, record)
            self._transcripts[i].add(report_block(title, public, self._field(i).echo(values[i]), private))
            self._last_seen[i] = self._observed(i, record)
        self.round += 1
        if self.done:
            self._phase.start(())
            for agent in self.possible_agents:
                self.terminations[agent] = True
        else:
            self._phase.start(range(self.n_players))
            self._new_round()
        self._clear_caches()
        for agent in self.possible_agents:
            self._refresh_info(agent, None)

    def _next_agent(self) -> str | None:
        seat = self._phase.current
        return None if seat is None else self.possible_agents[seat]

    def _text(self, agent: str, note: str | None) -> str:
        i = self._index[agent]
        transcript = self._transcripts[i].text
        if not self._phase.awaits(i):
            return transcript
        cached = self._request_text[i]
        if cached is None or cached[0] != note:
            block = request_block(f"Round {self.round + 1}", self._request(i), self._instruction(i), note,
                                  self.prompt.cot)
            cached = self._request_text[i] = (note, block)
        return transcript + cached[1]

    def _features(self, agent: str) -> np.ndarray:
        i = self._index[agent]
        cached = self._feature_cache[i]
        if cached is None:
            cached = self._feature_cache[i] = readonly(
                np.array([self.round, self.n_rounds, *self._game_features(i)], dtype=np.float32))
        return cached

    def _action_mask(self, agent: str) -> np.ndarray:
        i = self._index[agent]
        cached = self._mask_cache[i]
        if cached is None:
            mask = None if self.done else self._round_mask(i)
            cached = self._mask_cache[i] = self._full_mask if mask is None else readonly(mask)
        return cached

    def _agent_info(self, agent: str) -> dict[str, Any]:
        i = self._index[agent]
        return {
            "round": min(self.round + 1, self.n_rounds),
            "phase": "done" if self.done else ("act" if self._phase.awaits(i) else "wait"),
            "action_mask": self._action_mask(agent),
            "last_round_record": self._last_seen[i],
            **self._private_info(i),
        }

    def action_of(self, value: Any) -> int:
        """The native action that answers ``value`` (a number or a word such as ``"go"``)."""
        try:
            return self._values.index(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an answer of {self.metadata['name']}; "
                             f"answers are {self._values}") from None

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint:
        agent = self.agent_selection if agent is None else agent
        return self._field(self._index[agent]).constraint(self.prompt.cot)

    def _metrics(self) -> dict[str, Any]:
        agents = {a: {"score": self._agent_score(i), "payoff": self.totals[i]}
                  for i, a in enumerate(self.possible_agents)}
        return {"agents": agents, "game": self._game_metrics()}
