"""The episode payload: everything the episode page draws, as one JSON object.

Contract (shared with the game views, static/games/*.js)::

    {"env": run.json config.env, "env_kwargs": config.env_kwargs, "episode": K,
     "entry": K's episodes.jsonl line, "steps": K's log.jsonl lines before its record line, in order
     (decision and finish lines; a corrupt line is {"corrupt": why}), "record": its record line's
     "record" (null when the block is missing), "game": game_data.view_data(...) (may be null)}

:func:`script_json` writes a value for a ``<script type="application/json">`` element: ``<``, ``>``
and ``&`` as ``\\u003c``, ``\\u003e``, ``\\u0026``, so no text in it can end the element.
"""
from __future__ import annotations

import json
from typing import Any

from arena_envs.view.game_data import view_data


def episode_payload(env: str, env_kwargs: dict[str, Any], entry: dict[str, Any],
                    block: list[dict[str, Any]] | None) -> tuple[dict[str, Any], str | None]:
    """The payload of the episode whose ``episodes.jsonl`` line is ``entry`` and whose ``log.jsonl`` block
    (every line, parsed) is ``block`` (None: the log holds no block for it), and why its ``game`` is
    null when ``view_data`` failed (raised, or returned something that is not JSON), else None."""
    lines = block or []
    steps = [line for line in lines if not _is_record(line)]
    records = [line["record"] for line in lines if _is_record(line)]
    record = records[-1] if records else None
    game, failure = None, None
    try:
        game = view_data(env, env_kwargs, entry, steps, record)
        json.dumps(game, allow_nan=False)
    except Exception as err:  # a game view's data that fails must not take the transcript with it
        game, failure = None, f"{type(err).__name__}: {err}"
    return {"env": env, "env_kwargs": env_kwargs, "episode": entry["episode"], "entry": entry, "steps": steps,
            "record": record, "game": game}, failure


def _is_record(line: dict[str, Any]) -> bool:
    return "record" in line and "agent" not in line


def script_json(value: Any) -> str:
    """``value`` as JSON safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
