"""What the eight γ-Bench environments share: :class:`GammaEnv` and small helpers.

:class:`GammaEnv` is a :class:`~arena_envs.core.TextAECEnv` that takes the γ-Bench options once
for every game: the invalid-answer loop's ``max_retries`` and ``fallback_action``, the prompt
options (``persona``, ``cot``, ``history_window``, ``prompt_variant``), ``score_variant``,
``invalid_action_penalty`` and ``render_mode``. It keeps the seats' rules blocks and
transcripts (:mod:`arena_envs.gamma.transcript`), the round records in ``self.history`` (schema:
:mod:`arena_envs.gamma.history`), the scores (:mod:`arena_envs.gamma.scoring`), ``config()`` and
the ``ansi`` rendering. :class:`~arena_envs.gamma.simultaneous.SimultaneousGameEnv` (games 1-6)
and :class:`~arena_envs.gamma.sequential.SequentialGameEnv` (Battle Royale, Pirate) build on it.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from gymnasium import spaces

from arena_envs.core import EpisodeRecord, TextAECEnv
from arena_envs.core.arguments import check_choice
from arena_envs.gamma import scoring
from arena_envs.gamma.prompt_options import DEFAULT_HISTORY_WINDOW
from arena_envs.gamma.prompt_variants import GammaPromptOptions, PromptVariant, resolve_prompt_variant
from arena_envs.gamma.simultaneous_rules import check_int
from arena_envs.gamma.transcript import Transcript

__all__ = ["DEFAULT_MAX_RETRIES", "FALLBACKS", "Fallback", "GammaEnv", "check_int", "fmt", "percent",
           "random_legal_action", "readonly"]

#: Re-asks before the fallback applies (``max_invalid_retries``' default).
DEFAULT_MAX_RETRIES = 5
#: What happens after the last re-ask: a uniformly random legal action (env RNG) or an error.
FALLBACKS = ("random", "raise")

Fallback = Literal["random", "raise"]


class GammaEnv(TextAECEnv):
    """The options, transcripts, history and scores of every γ-Bench game; see the module docstring.

    ``metadata["name"]`` is the game's registered name, which selects its scoring functions.
    """

    record: EpisodeRecord  #: made by ``reset()``; a game's hooks run only after it

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
        history_window: int | None = DEFAULT_HISTORY_WINDOW,
        prompt_variant: str | PromptVariant = "v1",
        score_variant: str | None = None,
        invalid_action_penalty: float = 0.0,
        render_mode: str | None = None,
        max_cycles: int | None = None,
    ):
        variants = scoring.VARIANTS[self.metadata["name"]]
        if score_variant is not None:
            check_choice("score_variant", score_variant, variants)
        check_choice("fallback_action", fallback_action, FALLBACKS)
        self.score_variant = score_variant or variants[0]
        self.fallback_action = fallback_action
        self.prompt = GammaPromptOptions(persona, bool(cot), history_window, resolve_prompt_variant(prompt_variant))
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

    def _summary(self, record: dict[str, Any]) -> str:
        """One line of ``render()`` for a history record."""
        raise NotImplementedError

    # ---------------------------------------------------------------- shared machinery

    def _describe_game(self, intro: str, rules: Sequence[str], identity: str | None = None) -> str:
        """A seat's rules block in the prompt's variant and persona."""
        return self.prompt.description(self.metadata["name"], self.params(), intro, rules, identity)

    def _seat_transcripts(self) -> list[Transcript]:
        """A fresh transcript per seat, starting with its rules block (``self._prefixes``, set by
        the game's constructor with :meth:`_describe_game`) and showing ``history_window`` reports."""
        return [Transcript(prefix, self.prompt.history_window) for prefix in self._prefixes]

    def _check_fallback(self, agent: str) -> None:
        """Raise when the fallback is ``"raise"``: the seat ran out of re-asks."""
        if self.fallback_action == "raise":
            raise RuntimeError(f"{agent} gave {self.max_retries + 1} invalid answers in a row "
                               "(fallback_action='raise')")

    def compute_raw_score(self) -> Any:
        """The game's raw γ-Bench statistic (S1..S8) of the history so far."""
        return scoring.raw_score(self.metadata["name"], self.params(), self.history, self.score_variant)

    def compute_score(self) -> float:
        """The 0-100 γ-Bench score of the history so far (``score_variant``; default: the paper's)."""
        return scoring.score(self.metadata["name"], self.params(), self.history, self.score_variant)

    def _scored(self) -> bool:
        """Whether the γ-Bench score is defined for this configuration (SBA: first-price only)."""
        return True

    def _game_metrics(self, raw: Any = None) -> dict[str, Any]:
        """The game part of the metrics: rounds played and, when defined, the raw and 0-100 scores
        (``raw``: the raw statistic when the game has it at hand; computed once otherwise)."""
        game: dict[str, Any] = {"rounds": len(self.history), "score_variant": self.score_variant,
                                "raw_score": None, "score": None}
        if self.history and self._scored():
            name, params = self.metadata["name"], self.params()
            if raw is None:
                raw = scoring.raw_score(name, params, self.history, self.score_variant)
            game.update(raw_score=list(raw) if isinstance(raw, tuple) else raw,
                        score=scoring.score_of_raw(name, params, self.history, raw, self.score_variant))
        return game

    def config(self) -> dict[str, Any]:
        return {**self.params(), "score_variant": self.score_variant, "max_retries": self.max_retries,
                "fallback_action": self.fallback_action, "persona": self.prompt.persona, "cot": self.prompt.cot,
                "history_window": self.prompt.history_window, "prompt_variant": self.prompt.variant.name}

    def _render_text(self) -> str:
        return "\n".join(f"Round {r['round']}: {self._summary(r)}" for r in self.history)


def random_legal_action(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A uniformly random index where ``mask`` is 1 (the fallback of the invalid-answer loop)."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def fmt(x: float) -> str:
    """A number as players read it: at most 2 decimals, no trailing zeros (``54.5``, ``33.33``, ``20``)."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def percent(x: float) -> str:
    """``0.6`` -> ``60%``."""
    return f"{fmt(x * 100)}%"
