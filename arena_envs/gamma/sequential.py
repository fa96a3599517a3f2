"""What the two sequential γ-Bench environments (Battle Royale, Pirate Game) share.

:class:`SequentialGameEnv` is a :class:`~arena_envs.core.TextAECEnv` with the γ-Bench prompt
options (persona, CoT, history window), the fallback choice of the invalid-answer loop, one
:class:`~arena_envs.gamma.base.Transcript` per seat, a per-decision cache of the request block,
per-seat returns, and scoring through :mod:`arena_envs.gamma.scoring` on ``self.history`` (the
schema of :mod:`arena_envs.gamma.history`). A game supplies the rules, the text and the moves.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_envs.core import TextAECEnv
from arena_envs.gamma import scoring
from arena_envs.gamma.base import DEFAULT_MAX_RETRIES, Fallback, PromptOptions, Transcript, check_fallback
from arena_envs.gamma.prompt_variants import PromptVariant, resolve_prompt_variant


class SequentialGameEnv(TextAECEnv):
    """Shared adapter of Battle Royale and the Pirate Game; see the module docstring."""

    metadata: dict[str, Any] = {"name": "gamma_sequential", "render_modes": ["ansi", "human"],
                                "is_parallelizable": False}

    def __init__(
        self,
        *,
        n_players: int,
        action_spaces: dict[str, spaces.Space],
        feature_names: tuple[str, ...],
        max_retries: int = DEFAULT_MAX_RETRIES,
        fallback_action: Fallback = "random",
        persona: str | None = None,
        cot: bool = False,
        history_window: int | None = None,
        prompt_variant: str | PromptVariant = "v1",
        score_variant: str | None = None,
        invalid_action_penalty: float = 0.0,
        render_mode: str | None = None,
        max_cycles: int | None = None,
    ):
        check_fallback(fallback_action)
        variants = scoring.VARIANTS[self.metadata["name"]]
        if score_variant is not None and score_variant not in variants:
            raise ValueError(f"score_variant must be one of {variants}, got {score_variant!r}")
        self.fallback_action = fallback_action
        self.score_variant = score_variant or variants[0]
        self.prompt = PromptOptions(persona, bool(cot), history_window, resolve_prompt_variant(prompt_variant))
        self.n_players = n_players
        super().__init__(
            agents=[f"player_{i}" for i in range(n_players)],
            action_spaces=action_spaces,
            feature_names=feature_names,
            max_retries=max_retries,
            invalid_action_penalty=invalid_action_penalty,
            render_mode=render_mode,
            max_cycles=max_cycles,
        )
        self._index = {a: i for i, a in enumerate(self.possible_agents)}

    # ---------------------------------------------------------------- what a game provides

    def params(self) -> dict[str, Any]:
        """The game's parameters in the history schema (``arena_envs.gamma.history``)."""
        raise NotImplementedError

    def _prefixes(self) -> list[str]:
        """The rules block of every seat (built once per episode)."""
        raise NotImplementedError

    def _summary(self, record: dict[str, Any]) -> str:
        """One line of ``render()`` for a history record."""
        raise NotImplementedError

    # ---------------------------------------------------------------- shared machinery

    def _start_transcripts(self) -> None:
        """Fresh per-episode state every sequential game has; call from ``_start_game``."""
        self.history: list[dict[str, Any]] = []
        self.returns = [0.0] * self.n_players
        self._transcripts = [Transcript(p, self.prompt.history_window) for p in self._prefixes()]
        self._request_cache: dict[int, tuple[Any, str]] = {}
        self._feature_cache: dict[int, np.ndarray] = {}

    def _changed(self) -> None:
        """Drop the cached requests and features after the state moved on."""
        self._request_cache.clear()
        self._feature_cache.clear()

    def _cached_request(self, i: int, key: Any, build: Callable[[], str]) -> str:
        """The request block of seat ``i`` for decision ``key`` (rebuilt only when ``key`` changes)."""
        cached = self._request_cache.get(i)
        if cached is None or cached[0] != key:
            cached = self._request_cache[i] = (key, build())
        return cached[1]

    def _cached_features(self, i: int, build: Callable[[], list[float]]) -> np.ndarray:
        cached = self._feature_cache.get(i)
        if cached is None:
            cached = np.array(build(), dtype=np.float32)
            cached.setflags(write=False)
            self._feature_cache[i] = cached
        return cached

    def _reward(self, i: int, value: float) -> None:
        self.rewards[self.possible_agents[i]] = value
        self.returns[i] += value

    def _check_fallback(self, agent: str) -> None:
        if self.fallback_action == "raise":
            raise RuntimeError(f"{agent} gave {self.max_retries + 1} invalid answers in a row "
                               "(fallback_action='raise')")

    def compute_raw_score(self) -> Any:
        """The raw γ-Bench statistic of the episode so far (spec §1.6)."""
        return scoring.raw_score(self.metadata["name"], self.params(), self.history, self.score_variant)

    def compute_score(self) -> float:
        """The 0-100 γ-Bench score of the episode so far."""
        return scoring.score(self.metadata["name"], self.params(), self.history, self.score_variant)

    def config(self) -> dict[str, Any]:
        return {**self.params(), "max_retries": self.max_retries, "fallback_action": self.fallback_action,
                "persona": self.prompt.persona, "cot": self.prompt.cot,
                "history_window": self.prompt.history_window, "prompt_variant": self.prompt.variant.name,
                "score_variant": self.score_variant}

    def _game_metrics(self) -> dict[str, Any]:
        game: dict[str, Any] = {"rounds": len(self.history), "score_variant": self.score_variant}
        if self.history:
            raw = self.compute_raw_score()
            game.update(raw_score=list(raw) if isinstance(raw, tuple) else raw, score=self.compute_score())
        return game

    def _render_text(self) -> str:
        return "\n".join(f"Round {r['round']}: {self._summary(r)}" for r in self.history)
