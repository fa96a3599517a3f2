"""Maps of the tank battle (spec §2.2, §2.4, §2.5): the text format, the six official maps (shipped
as ``data/maps/<name>.txt``), custom maps from a string, a list of rows or a file, and the spawn
layouts ("layout seeds": 1-5 from the shipped table ``data/layouts.json``, 6 and up drawn by the
relocation rule with the environment's generator).

INTERFACE CONTRACT: ``GameMap`` fields and ``load_map``/``parse_map``/``apply_layout`` signatures.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

OFFICIAL_MAPS = ("single1", "single30", "double10", "multi30", "multi20", "coop30", "coop8")


@dataclass(frozen=True)
class GameMap:
    """A parsed 16 x 16 map. Positions are pixel top-left corners."""

    name: str
    rows: tuple[str, ...]  # the 16 rows of 16 characters, as drawn
    bricks: np.ndarray  # (64, 64) bool: brick pieces of 8 x 8 px
    steel: np.ndarray  # (16, 16) bool tiles
    water: np.ndarray  # (16, 16) bool tiles
    players: dict[int, tuple[int, int]]  # player id -> spawn (x, y)
    bases: dict[int, tuple[int, int]]  # base id (100..103) -> (x, y)
    npc_spawns: tuple[tuple[int, int], ...]  # (x, y) in reading order


def parse_map(text: str | list[str] | tuple[str, ...], name: str = "custom") -> GameMap:
    """Parse a map: 16 lines of 16 characters (longer ones cut, shorter or missing ones padded with
    ``.``). A bad character raises a one-line ValueError naming it, its row and column and the
    accepted characters."""
    raise NotImplementedError


def load_map(name: str) -> GameMap:
    """An official map by name (``OFFICIAL_MAPS``)."""
    raise NotImplementedError


def apply_layout(game_map: GameMap, stage: int, layout_seed: int, n_players: int,
                 rng: np.random.Generator) -> GameMap:
    """The map with the players' spawns relocated (spec §2.5): seed 0 unchanged; 1-5 the shipped
    table of the paper's layouts (a relocated spawn on a brick tile clears that tile); 6 and up
    the relocation rule drawn with ``rng`` (stage 7: the 5 x 5 corner blocks)."""
    raise NotImplementedError
