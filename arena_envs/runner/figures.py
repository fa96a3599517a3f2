"""Figures a run writes into its results folder when it ends, for the environments that have them.

:data:`FIGURES` maps an environment name to ``"module:function"``, imported only when such a run
ends (``import arena_envs`` stays free of matplotlib). The function is called as
``function(episodes, out)`` with an iterable of ``(episode id, record, seats)`` (the record of
``log.jsonl``, the seat labels of ``episodes.jsonl``) and the folder ``<results>/figures``, and
returns the paths it wrote.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena_envs.runner.policy_specs import load_object
from arena_envs.runner.results import iter_log, read_episodes

FIGURES: dict[str, str] = {
    "trading_v0": "arena_envs.analysis.trading_plots:write_figures",
}


def _episodes(folder: Path) -> Iterator[tuple[int, dict[str, Any] | None, dict[str, str]]]:
    seats = {e["episode"]: e["seats"] for e in read_episodes(folder / "episodes.jsonl")}
    for block in iter_log(folder):
        yield block.episode, block.record, seats[block.episode]


def write_run_figures(env: str, folder: str | Path) -> list[Path]:
    """The figures of every committed episode of results folder ``folder`` of a run of ``env``
    (none when ``env`` has no entry in :data:`FIGURES`)."""
    target = FIGURES.get(env)
    if target is None:
        return []
    folder = Path(folder)
    paths: list[Path] = load_object(target)(_episodes(folder), folder / "figures")
    return paths
