"""Maps of the tank battle: the text format, the official maps (shipped
as ``data/maps/<name>.txt``), custom maps from a string, a list of rows or a file, and the spawn
layouts ("layout seeds": 1-5 from the shipped table ``data/layouts.json``, 6 and up drawn by the
relocation rule with the environment's generator).

INTERFACE CONTRACT: ``GameMap`` fields and ``load_map``/``parse_map``/``apply_layout`` signatures.
The arrays of a ``GameMap`` are read-only (official maps are cached and shared): a world copies them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

import numpy as np

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_int
from arena_envs.core.package_data import read_text

OFFICIAL_MAPS = ("single1", "single30", "double10", "multi30", "multi20", "coop30", "coop8")
SIZE = 16  # tiles per side
ACCEPTED = ". #@~*12345678ABCD"
BASE_IDS = {"A": 100, "B": 101, "C": 102, "D": 103}
#: the stage whose official map the shipped layouts 1-5 were drawn on
_LAYOUT_MAPS = {1: "single1", 2: "single30", 3: "double10", 4: "multi30", 5: "multi30", 6: "multi20", 7: "coop30"}
TABLE_SEEDS = range(1, 6)


@dataclass(frozen=True)
class GameMap:
    """A parsed 16 x 16 map. Positions are pixel top-left corners."""

    name: str
    rows: tuple[str, ...]  # the 16 rows of 16 characters, as drawn (a space read as ".")
    bricks: np.ndarray  # (64, 64) bool: brick pieces of 8 x 8 px
    steel: np.ndarray  # (16, 16) bool tiles
    water: np.ndarray  # (16, 16) bool tiles
    players: dict[int, tuple[int, int]]  # player id -> spawn (x, y)
    bases: dict[int, tuple[int, int]]  # base id (100..103) -> (x, y)
    npc_spawns: tuple[tuple[int, int], ...]  # (x, y) in reading order


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def parse_map(text: str | list[str] | tuple[str, ...], name: str = "custom") -> GameMap:
    """Parse a map: 16 lines of 16 characters (longer ones cut, shorter or missing ones padded with
    ``.``). A bad character raises a one-line ValueError naming it, its row and column and the
    accepted characters."""
    lines = text.splitlines() if isinstance(text, str) else list(text)
    rows = tuple(line[:SIZE].ljust(SIZE, ".").replace(" ", ".") for line in lines[:SIZE])
    rows += ("." * SIZE,) * (SIZE - len(rows))
    bricks = np.zeros((4 * SIZE, 4 * SIZE), dtype=bool)
    steel = np.zeros((SIZE, SIZE), dtype=bool)
    water = np.zeros((SIZE, SIZE), dtype=bool)
    players: dict[int, tuple[int, int]] = {}
    bases: dict[int, tuple[int, int]] = {}
    npc_spawns: list[tuple[int, int]] = []
    for r, row in enumerate(rows):
        for c, char in enumerate(row):
            pos = (32 * c, 32 * r)
            if char == ".":
                continue
            if char == "#":
                bricks[4 * r:4 * r + 4, 4 * c:4 * c + 4] = True
            elif char == "@":
                steel[r, c] = True
            elif char == "~":
                water[r, c] = True
            elif char == "*":
                npc_spawns.append(pos)
            elif char in BASE_IDS or (char.isdigit() and char in ACCEPTED):
                found = bases if char in BASE_IDS else players
                key = BASE_IDS[char] if char in BASE_IDS else int(char) - 1
                if key in found:
                    raise ValueError(f"map {excerpt(name)}: {excerpt(char)} appears twice (row {r}, col {c}); "
                                     f"each spawn digit and base letter may appear once")
                found[key] = pos
            else:
                raise ValueError(f"map {excerpt(name)}: bad character {excerpt(char)} at row {r}, col {c}; "
                                 f"accepted: {ACCEPTED!r}")
    return GameMap(name, rows, _read_only(bricks), _read_only(steel), _read_only(water),
                   dict(sorted(players.items())), dict(sorted(bases.items())), tuple(npc_spawns))


@cache
def load_map(name: str) -> GameMap:
    """An official map by name (``OFFICIAL_MAPS``), parsed once and shared."""
    if name not in OFFICIAL_MAPS:
        raise ValueError(f"unknown map {excerpt(name)}; official maps: {', '.join(OFFICIAL_MAPS)}")
    return parse_map(read_text("arena_envs.tank_battle", f"data/maps/{name}.txt"), name)


@cache
def _layout_table() -> dict[int, dict[int, tuple[tuple[int, int, int, bool], ...]]]:
    """stage -> layout seed -> ((player id, x, y, cleared), ...) from ``data/layouts.json``."""
    data = json.loads(read_text("arena_envs.tank_battle", "data/layouts.json"))
    table: dict[int, dict[int, tuple[tuple[int, int, int, bool], ...]]] = {}
    for group in data["layouts"]:
        seeds = {int(seed): tuple((int(p), int(x), int(y), bool(c)) for p, x, y, c in spawns)
                 for seed, spawns in group["seeds"].items()}
        for stage in group["stages"]:
            table[stage] = seeds
    return table


def layout_spawns(stage: int, layout_seed: int) -> tuple[tuple[int, int, int, bool], ...]:
    """The shipped layout ``layout_seed`` (1-5) of ``stage``: (player id, x, y, cleared) per player."""
    return _layout_table()[stage][layout_seed]


def _relocated(grid: list[list[str]], moves: list[tuple[int, int, int]]) -> list[list[str]]:
    """``grid`` with each (player id, new row, new col) applied in order: the old spawn tile becomes
    empty, the new one (a brick tile is cleared) holds the digit."""
    for player, r, c in moves:
        digit = str(player + 1)
        old = next((i, j) for i, row in enumerate(grid) for j, ch in enumerate(row) if ch == digit)
        grid[old[0]][old[1]] = "."
        grid[r][c] = digit
    return grid


def apply_layout(game_map: GameMap, stage: int, layout_seed: int, n_players: int,
                 rng: np.random.Generator) -> GameMap:
    """The map with the players' spawns relocated: seed 0 unchanged; 1-5 the shipped
    table of the paper's layouts (a relocated spawn on a brick tile clears that tile); 6 and up
    the relocation rule drawn with ``rng`` (stage 7: the 5 x 5 corner blocks)."""
    check_int("layout_seed", layout_seed, 0)
    missing = [p for p in range(n_players) if p not in game_map.players]
    if missing:
        raise ValueError(f"map {excerpt(game_map.name)} has no spawn for player(s) {missing}; "
                         f"it spawns players {sorted(game_map.players)}")
    if layout_seed == 0:
        return game_map
    if layout_seed in TABLE_SEEDS:
        return _table_layout(game_map.rows, game_map.name, stage, int(layout_seed), n_players)
    grid = [list(row) for row in game_map.rows]
    low, high = (0, 4) if stage == 7 else (0, 7)  # drawn offsets inside a quadrant, measured from its corner
    for player in range(n_players):
        r0, c0 = next((i, j) for i, row in enumerate(grid) for j, ch in enumerate(row) if ch == str(player + 1))
        rows = range(low, high + 1) if r0 < 8 else range(15 - high, 16 - low)
        cols = range(low, high + 1) if c0 < 8 else range(15 - high, 16 - low)
        if not any(grid[r][c] in ".#" for r in rows for c in cols):
            raise ValueError(f"map {excerpt(game_map.name)}: no empty or brick tile left for player {player} to "
                             "spawn on "
                             f"in rows {rows.start}-{rows.stop - 1}, cols {cols.start}-{cols.stop - 1}")
        while True:
            r = int(rng.integers(rows.start, rows.stop))
            c = int(rng.integers(cols.start, cols.stop))
            if grid[r][c] in ".#":
                break
        _relocated(grid, [(player, r, c)])
    return parse_map(["".join(row) for row in grid], game_map.name)


@cache
def _table_layout(rows: tuple[str, ...], name: str, stage: int, layout_seed: int, n_players: int) -> GameMap:
    expected = _LAYOUT_MAPS.get(stage)
    if expected is None or name != expected or n_players != len(layout_spawns(stage, layout_seed)):
        raise ValueError(f"layout seeds 1-5 are the paper's layouts of the official stages 1-7 (their maps and "
                         f"player counts), got stage {stage} on map {name!r} with {n_players} players; "
                         f"use layout_seed 0 or >= 6")
    moves = [(p, y // 32, x // 32) for p, x, y, _ in layout_spawns(stage, layout_seed)]
    return parse_map(["".join(row) for row in _relocated([list(row) for row in rows], moves)], name)
