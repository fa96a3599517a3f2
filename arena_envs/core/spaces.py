"""The text space of the games' observations and answers.

gymnasium's ``Text`` space only admits a fixed alphabet (alphanumerics by default), which rejects
prompts with spaces, punctuation or non-ASCII. :class:`UnicodeText` accepts any Python string up
to ``max_length`` characters (``None``: any length, for a text that keeps a growing history), so a
prompt or a raw LLM reply is always a member of the space.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Space

_SAMPLE_ALPHABET = np.array(list("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789$!.,:;'\"-\né€ü"))


class UnicodeText(Space[str]):
    """Any ``str`` of ``min_length`` to ``max_length`` characters (every Unicode code point allowed).

    ``max_length=None`` declares no upper bound: the right declaration for a text that keeps the
    whole history of an episode whose length the configuration does not bound.
    """

    def __init__(self, max_length: int | None, min_length: int = 0,
                 seed: int | np.random.Generator | None = None):
        if min_length < 0 or (max_length is not None and max_length < min_length):
            raise ValueError(f"need 0 <= min_length <= max_length, got {min_length}, {max_length}")
        self.max_length = None if max_length is None else int(max_length)
        self.min_length = int(min_length)
        super().__init__(dtype=str, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise ValueError("UnicodeText.sample takes no mask")
        top = 64 if self.max_length is None else min(self.max_length, 64)
        length = int(self.np_random.integers(self.min_length, max(top, self.min_length) + 1))
        return "".join(self.np_random.choice(_SAMPLE_ALPHABET, size=length))

    def contains(self, x: Any) -> bool:
        return (isinstance(x, str) and self.min_length <= len(x)
                and (self.max_length is None or len(x) <= self.max_length))

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"UnicodeText(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, UnicodeText)
            and other.max_length == self.max_length
            and other.min_length == self.min_length
        )

    def __hash__(self) -> int:
        return hash(("UnicodeText", self.min_length, self.max_length))
