"""What a game's view draws, derived from one committed episode of a results folder."""
from __future__ import annotations

from typing import Any


def view_data(env: str, env_kwargs: dict[str, Any], entry: dict[str, Any], steps: list[dict[str, Any]],
              record: Any) -> dict[str, Any] | None:
    """The data ``static/games/*.js`` draws for episode ``entry`` (its ``episodes.jsonl`` line) of a run
    of ``env`` with ``env_kwargs``, from its decision lines ``steps`` and its ``record``: None where the
    game has no view beyond the transcript."""
    return None
