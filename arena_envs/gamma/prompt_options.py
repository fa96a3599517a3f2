"""Prompt knobs every text game offers: persona, chain of thought and the history window."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena_envs.core.answers import excerpt
from arena_envs.gamma.transcript import check_window, rules_block

#: Reports a transcript shows by default: the full history of every default-length game of the
#: suite (γ-Bench's games last at most 20 rounds or turns by default), while a longer game's text
#: stays bounded (the oldest reports drop out; the records keep everything).
DEFAULT_HISTORY_WINDOW = 20


@dataclass(frozen=True)
class PromptOptions:
    """How a game words its text for one episode, validated once at construction."""

    persona: str | None = None  #: one sentence put before the rules (e.g. "You are a selfish player.")
    cot: bool = False  #: ask for an "explanation" first and add the step-by-step trigger
    history_window: int | None = DEFAULT_HISTORY_WINDOW  #: reports shown (None: all of them)

    def __post_init__(self) -> None:
        if self.persona is not None and not isinstance(self.persona, str):
            raise ValueError(f"persona must be a str or None, got {excerpt(self.persona)}")
        check_window(self.history_window)

    def rules(self, intro: str, rules: Sequence[str], identity: str | None = None) -> str:
        """The rules block with this prompt's persona."""
        return rules_block(intro, rules, self.persona, identity)
