"""A tiny TextAECEnv game for the runner tests (the runner must serve any environment).

"Guess the die": each round the environment rolls a hidden number 0..4 from its seeded generator;
the seats guess in turn, a guess may not repeat the previous seat's guess (masked), and a correct
guess scores 1. Text answers are a single digit. Fallback: the lowest allowed guess.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from arena_envs.core import AnswerConstraint, Answered, InvalidAnswer, TextAECEnv

FACES = 5


class TinyGame(TextAECEnv):
    metadata: dict[str, Any] = {"name": "tiny_game_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False}

    def __init__(self, n_players: int = 3, rounds: int = 4, **kwargs: Any):
        agents = [f"player_{i}" for i in range(n_players)]
        super().__init__(agents=agents, action_spaces={a: spaces.Discrete(FACES) for a in agents},
                         feature_names=("round", "previous_guess"), **kwargs)
        self.rounds = rounds

    def config(self) -> dict[str, Any]:
        return {"n_players": len(self.possible_agents), "rounds": self.rounds}

    def _start_game(self, options: dict[str, Any]) -> None:
        self.round = 0
        self.turn = 0
        self.previous: int | None = None
        self.points = {a: 0 for a in self.agents}
        self.target = int(self.np_random.integers(FACES))

    def _parse_text(self, agent: str, text: str) -> int:
        digits = [c for c in text if c.isdigit()]
        if len(digits) != 1:
            raise InvalidAnswer("unparseable", "answer with one digit 0-4")
        return int(digits[0])

    def _from_native(self, agent: str, action: Any) -> int:
        return int(action)

    def _validate(self, agent: str, move: int) -> None:
        if not 0 <= move < FACES or move == self.previous:
            raise InvalidAnswer("illegal", f"{move} is not allowed")

    def _fallback(self, agent: str) -> int:
        return int(np.flatnonzero(self._action_mask(agent))[0])

    def _apply(self, answered: Answered) -> None:
        agent, move = answered.agent, answered.move
        hit = move == self.target
        self.points[agent] += hit
        self.rewards[agent] = float(hit)
        self.record.add("guess", agent=agent, guess=move, hit=hit)
        self.previous = move
        self.turn += 1
        if self.turn == len(self.agents):
            self.turn, self.round, self.previous = 0, self.round + 1, None
            self.target = int(self.np_random.integers(FACES))
            if self.round == self.rounds:
                self.terminations = {a: True for a in self.agents}

    def _next_agent(self) -> str | None:
        return None if self.round == self.rounds else self.agents[self.turn]

    def _text(self, agent: str, note: str | None) -> str:
        text = f"You are {agent}. Round {self.round}. Previous guess: {self.previous}. Answer one digit 0-4."
        return text if note is None else f"{text}\nYour last answer was invalid: {note}"

    def _features(self, agent: str) -> np.ndarray:
        return np.array([self.round, -1 if self.previous is None else self.previous], dtype=np.float32)

    def _action_mask(self, agent: str) -> np.ndarray:
        mask = np.ones(FACES, dtype=np.int8)
        if self.previous is not None:
            mask[self.previous] = 0
        return mask

    def _agent_info(self, agent: str) -> dict[str, Any]:
        return {"previous": self.previous}

    def _metrics(self) -> dict[str, Any]:
        return {"agents": {a: {"score": float(self.points[a]), "hits": self.points[a]} for a in self.possible_agents},
                "game": {"rounds": self.rounds}}

    def _render_text(self) -> str:
        return f"round {self.round} points {self.points}"

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint:
        return AnswerConstraint("regex", "one digit 0-4", pattern="[0-4]")


def env(**kwargs: Any) -> TinyGame:
    return TinyGame(**kwargs)
