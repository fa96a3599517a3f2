"""Drawing the tank battle: the 832 x 576 pygame frame and the ANSI character map.

pygame is imported only inside the functions that draw, so ``import arena_envs`` stays light. What
does not change from frame to frame is drawn once and cached per process: the fonts, the frame
and panel background, the rendered panel lines, and the terrain layer (bricks, steel, water): it is
built from the NumPy arrays once per map, and after that only the brick pieces that changed since
the last frame are redrawn (a shot removes at most four).

The world is read through its interface (:mod:`arena_envs.tank_battle.world`); what the panel shows
beyond it (scores, targets, the cooperation messages, the blink phase of frozen tanks) comes in a
:class:`FrameInfo` built by the environment.
"""
from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from arena_envs.tank_battle.stages import Stage

if TYPE_CHECKING:
    import pygame

    from arena_envs.tank_battle.records import Tank
    from arena_envs.tank_battle.world import World

WIDTH, HEIGHT = 832, 576
FIELD = 512
TILE = 32
PIECE = 8
OFFSET = (32, 32)  # the play field's top-left corner in the frame
PANEL_X = 576  # the side panel starts here
PANEL_PAD = 10
#: the panel's dark box, level with the field, so that every text colour reads on it (contrast >= 4.5)
PANEL_BOX = (PANEL_X, OFFSET[1], WIDTH - PANEL_X - 16, FIELD)

FRAME_COLOUR = (95, 87, 79)
FIELD_COLOUR = (0, 0, 0)
PANEL_COLOUR = (0, 0, 0)
BRICK = (164, 74, 36)
BRICK_EDGE = (110, 48, 22)  # the 1-px border of every piece, so partly shot tiles show
STEEL = (160, 160, 170)
WATER = (30, 90, 200)
GOLD = (230, 200, 60)
NPC_BODY = (170, 170, 170)
SPAWN_OUTLINE = (70, 70, 70)
BULLET_COLOUR = (255, 255, 255)
#: a bullet (4 x 4 in the world) is drawn as an 8 x 8 white square on its centre, in a 1-px black ring
#: that sets it off from bricks, steel and tanks
BULLET_SIZE = 8
BULLET_RING = (0, 0, 0)
FROZEN = (0, 255, 255)
FROZEN_ALPHA = 110
PLAYER_ID = (255, 255, 255)
NPC_ID = (255, 255, 0)
TEXT = (235, 235, 235)
DIM_TEXT = (180, 180, 180)
GAME_OVER = (255, 0, 0)
#: teams 0-3 blue, red, green, yellow (team 0 is always blue); 4-7 only for custom free-for-alls of up to 8 tanks
TEAM_COLOURS = ((0, 128, 255), (255, 0, 0), (0, 200, 0), (255, 255, 0),
                (255, 140, 0), (170, 80, 255), (255, 105, 180), (0, 170, 170))
NO_OWNER = (255, 255, 255)  # border of the navigation goal, which nobody owns
BASE_LETTERS = "ABCD"
FONT_NAMES = "dejavusansmono,liberationmono,couriernew,monospace"
FONT_SIZE = 12
LINE_HEIGHT = 16
PANEL_CHARS = 31  # characters per panel line (236 px at 7.2 px per character of the 12-px font)
MAX_MESSAGES = 6  # cooperation messages shown at the bottom of the panel
OUTCOME_CHARS = 24  # characters per line of the winner, in the 14-px bold font
#: why a game ended (``World.ended_by``), as the panel says it under GAME OVER
END_WORDS = {"touch": "the goal was reached", "last_base": "one base is left", "timeout": "time is up",
             "no_players": "no player tank is left", "no_bases": "no base is left"}


@dataclass(frozen=True)
class FrameInfo:
    """What the side panel shows beyond the world: each player's score and declared target (by
    player id; missing ones show 0 and -1), the last cooperation messages ``(src, dst, text)``
    oldest first, and the blink phase: a frozen tank gets its cyan overlay only when ``blink_on``
    (the environment alternates it in ``human`` mode and keeps it on in ``rgb_array``)."""

    scores: Mapping[int, float] = field(default_factory=dict)
    targets: Mapping[int, int] = field(default_factory=dict)
    messages: Sequence[tuple[int, int, str]] = ()
    blink_on: bool = True


def team_colour(team: int) -> tuple[int, int, int]:
    """The colour of a team (:data:`TEAM_COLOURS`); NPCs (team -1) are grey."""
    return NPC_BODY if team < 0 else TEAM_COLOURS[team % len(TEAM_COLOURS)]


def player_status(world: World, player_id: int) -> str:
    """``KILLED``, ``WON``, ``FROZEN`` or ``""`` for a player tank."""
    tank = world.players[player_id]
    if world.win_state.get(player_id) == 1:
        return "WON"
    if not tank.alive:
        return "KILLED"
    return "FROZEN" if tank.frozen else ""


def player_line(world: World, player_id: int, info: FrameInfo) -> str:
    """``P{id} T{team} HP{h} S{score} [{status}]``: a player's line of the side panel."""
    tank = world.players[player_id]
    score = info.scores.get(player_id, 0)
    status = player_status(world, player_id)
    health = tank.health if tank.alive else 0
    line = f"P{player_id} T{world.team_of(player_id)} HP{health} S{score:g}"
    return f"{line} [{status}]" if status else line


def panel_lines(world: World, stage: Stage, info: FrameInfo) -> list[tuple[str, tuple[int, int, int]]]:
    """The side panel's text, one ``(line, colour)`` per row, top to bottom."""
    npcs_in_area = sum(tank.is_npc for tank in world.tanks)
    title = f"Stage {stage.number}" if stage.number else "Custom map"
    lines: list[tuple[str, tuple[int, int, int]]] = [("TANK BATTLE", TEXT), (title, TEXT)]
    lines += [(part, DIM_TEXT) for part in textwrap.wrap(stage.name, PANEL_CHARS)]
    lines += [("", TEXT),
              (f"Round {world.rounds_played} / {stage.rounds}", TEXT),
              (f"Time left {world.time_left}", TEXT),
              (f"NPCs left {max(world.npc_total - world.npc_spawned, 0)}", TEXT),
              (f"NPCs in area {npcs_in_area}", TEXT),
              ("", TEXT)]
    for pid in sorted(world.players):
        lines.append((player_line(world, pid, info), team_colour(world.team_of(pid))))
        lines.append((f"  target {info.targets.get(pid, -1)}", DIM_TEXT))
    return lines


def outcome(world: World) -> tuple[list[str], tuple[int, int, int], str]:
    """What the panel says under ``GAME OVER``: who won (``P1 won``, ``Team 0 won: P0 P2``, ``Won: P0
    P1`` or ``No winner``, wrapped to :data:`OUTCOME_CHARS`), in the winners' colour when they are one
    team, and why the game ended (:data:`END_WORDS`, "" when it is not over)."""
    winners = sorted(p for p, state in world.win_state.items() if state == 1)
    teams = sorted({world.team_of(p) for p in winners})
    names = " ".join(f"P{p}" for p in winners)
    if not winners:
        who = "No winner"
    elif len(winners) == 1:
        who = f"{names} won"
    else:
        who = f"Team {teams[0]} won: {names}" if len(teams) == 1 else f"Won: {names}"
    colour = team_colour(teams[0]) if len(teams) == 1 else TEXT
    return textwrap.wrap(who, OUTCOME_CHARS), colour, END_WORDS.get(world.ended_by or "", "")


def message_lines(info: FrameInfo) -> list[str]:
    """The last cooperation messages, ``{src} -> {dst}: {text}`` wrapped to the panel's width."""
    lines: list[str] = []
    for src, dst, text in list(info.messages)[-MAX_MESSAGES:]:
        lines += textwrap.wrap(f"{src} -> {dst}: {text}", PANEL_CHARS, subsequent_indent="  ") or [""]
    return lines


# ------------------------------------------------------------------------------------------ pygame


class _Cache:
    """Per-process drawing state: fonts, the background, rendered text, the terrain layer."""

    def __init__(self) -> None:
        import pygame

        if not pygame.font.get_init():
            pygame.font.init()
        mono = pygame.font.match_font(FONT_NAMES) or pygame.font.get_default_font()
        self.font = pygame.font.Font(mono, FONT_SIZE)
        self.id_font = pygame.font.Font(mono, 14)
        self.id_font.set_bold(True)
        self.letter_font = pygame.font.Font(mono, 20)
        self.letter_font.set_bold(True)
        self.background = pygame.Surface((WIDTH, HEIGHT))
        self.background.fill(FRAME_COLOUR)
        self.background.fill(FIELD_COLOUR, (*OFFSET, FIELD, FIELD))
        self.background.fill(PANEL_COLOUR, PANEL_BOX)
        self.texts: dict[tuple[str, tuple[int, int, int], int], pygame.Surface] = {}
        self.terrain = pygame.Surface((FIELD, FIELD))
        self.drawn_bricks: np.ndarray | None = None  # the bricks the terrain layer shows
        self.drawn_tiles: bytes | None = None  # and its steel and water
        self.frozen = pygame.Surface((TILE, TILE), pygame.SRCALPHA)
        self.frozen.fill((*FROZEN, FROZEN_ALPHA))
        piece = np.empty((PIECE, PIECE, 3), dtype=np.uint8)
        piece[:] = BRICK_EDGE
        piece[1:-1, 1:-1] = BRICK
        self.brick_pattern = np.tile(piece, (FIELD // PIECE, FIELD // PIECE, 1))
        self.piece = pygame.Surface((PIECE, PIECE))
        self.piece.fill(BRICK_EDGE)
        self.piece.fill(BRICK, (1, 1, PIECE - 2, PIECE - 2))

    def text(self, line: str, colour: tuple[int, int, int], kind: int = 0) -> pygame.Surface:
        """``line`` rendered once (kind 0: panel font, 1: tank ids, 2: base letters)."""
        key = (line, colour, kind)
        surface = self.texts.get(key)
        if surface is None:
            if len(self.texts) > 2048:  # scores and rounds make new lines; keep the cache bounded
                self.texts.clear()
            font = (self.font, self.id_font, self.letter_font)[kind]
            surface = self.texts[key] = font.render(line, True, colour)
        return surface

    def terrain_surface(self, bricks: np.ndarray, steel: np.ndarray, water: np.ndarray) -> pygame.Surface:
        """The field's bricks, steel and water: drawn whole for a new map, else only the brick
        pieces that changed since the last call."""
        import pygame

        tiles = steel.tobytes() + water.tobytes()
        changed = None if self.drawn_bricks is None else np.argwhere(bricks != self.drawn_bricks)
        if tiles != self.drawn_tiles or changed is None or len(changed) > 64:  # another map
            rgb = np.where(np.repeat(np.repeat(bricks, PIECE, axis=0), PIECE, axis=1)[:, :, None],
                           self.brick_pattern, np.uint8(0))  # (y, x, colour)
            rgb[np.repeat(np.repeat(steel, TILE, axis=0), TILE, axis=1)] = STEEL
            rgb[np.repeat(np.repeat(water, TILE, axis=0), TILE, axis=1)] = WATER
            pygame.surfarray.blit_array(self.terrain, rgb.transpose(1, 0, 2))
            self.drawn_tiles = tiles
        else:
            for row, col in changed:
                spot = (int(col) * PIECE, int(row) * PIECE)
                if bricks[row, col]:
                    self.terrain.blit(self.piece, spot)
                else:
                    self.terrain.fill(FIELD_COLOUR, (*spot, PIECE, PIECE))
        self.drawn_bricks = bricks.copy()
        return self.terrain


_cache: _Cache | None = None


def _get_cache() -> _Cache:
    """The drawing cache, made again after ``pygame.quit()`` (which invalidates its fonts)."""
    import pygame

    global _cache
    if _cache is None or not pygame.font.get_init():
        _cache = _Cache()
    return _cache


def _barrel(tank: Tank) -> tuple[int, int, int, int]:
    """The 8 x 14 barrel rectangle (field coordinates) from the tank's centre toward its facing."""
    x, y = tank.x, tank.y
    return {"up": (x + 12, y, 8, 14), "down": (x + 12, y + 18, 8, 14),
            "left": (x, y + 12, 14, 8), "right": (x + 18, y + 12, 14, 8)}[tank.facing]


def _darker(colour: tuple[int, int, int]) -> tuple[int, int, int]:
    r, g, b = colour
    return (r * 3 // 5, g * 3 // 5, b * 3 // 5)


def draw_frame(world: World, stage: Stage, info: FrameInfo | None = None) -> pygame.Surface:
    """The 832 x 576 frame: the frame colour, the play field at (32, 32) with bricks
    (each remaining 8 x 8 piece), steel, water, bases, NPC spawn outlines, tanks, bullets
    (:data:`BULLET_SIZE`) and frozen overlays, and the side panel on its dark box (:data:`PANEL_BOX`)."""
    import pygame

    info = info or FrameInfo()
    cache = _get_cache()
    frame = pygame.Surface((WIDTH, HEIGHT))
    frame.blit(cache.background, (0, 0))
    ox, oy = OFFSET
    frame.blit(cache.terrain_surface(world.bricks, world.steel, world.water), OFFSET)
    for x, y in world.npc_spawns:
        pygame.draw.rect(frame, SPAWN_OUTLINE, (ox + x, oy + y, TILE, TILE), 1)
    for base in world.bases.values():
        owner = world.base_owner_team(base.id)
        rect = pygame.Rect(ox + base.x, oy + base.y, TILE, TILE)
        frame.fill(NO_OWNER if owner is None else team_colour(owner), rect)
        frame.fill(GOLD, rect.inflate(-6, -6))
        letter = cache.text(BASE_LETTERS[(base.id - 100) % len(BASE_LETTERS)], (0, 0, 0), 2)
        frame.blit(letter, letter.get_rect(center=rect.center))
    for tank in world.tanks:
        body = NPC_BODY if tank.is_npc else team_colour(world.team_of(tank.id))
        rect = pygame.Rect(ox + tank.x, oy + tank.y, TILE, TILE)
        frame.fill(body, rect)
        bx, by, bw, bh = _barrel(tank)
        frame.fill(_darker(body), (ox + bx, oy + by, bw, bh))
        label = cache.text(str(tank.id), NPC_ID if tank.is_npc else PLAYER_ID, 1)
        frame.blit(label, label.get_rect(center=rect.center))
        if tank.frozen and info.blink_on:
            frame.blit(cache.frozen, rect)
    for bullet in world.bullets:
        core = pygame.Rect(0, 0, BULLET_SIZE, BULLET_SIZE)
        core.center = (ox + bullet.x + 2, oy + bullet.y + 2)  # the centre of its 4 x 4 square
        frame.fill(BULLET_RING, core.inflate(2, 2))
        frame.fill(BULLET_COLOUR, core)
    _draw_panel(frame, cache, world, stage, info)
    return frame


def _draw_panel(frame: pygame.Surface, cache: _Cache, world: World, stage: Stage, info: FrameInfo) -> None:
    x = PANEL_X + PANEL_PAD
    y = OFFSET[1]
    for line, colour in panel_lines(world, stage, info):
        if line:
            frame.blit(cache.text(line, colour), (x, y))
        y += LINE_HEIGHT
    if world.over:
        y += LINE_HEIGHT // 2
        frame.blit(cache.text("GAME OVER", GAME_OVER, 2), (x, y))
        y += cache.letter_font.get_linesize()
        winner, colour, reason = outcome(world)
        for line in winner:
            frame.blit(cache.text(line, colour, 1), (x, y))
            y += cache.id_font.get_linesize()
        if reason:
            frame.blit(cache.text(reason, DIM_TEXT), (x, y))
    messages = message_lines(info)
    if messages:
        y = HEIGHT - OFFSET[1] - LINE_HEIGHT * (len(messages) + 1)
        frame.blit(cache.text("Cooperation:", TEXT), (x, y))
        for line in messages:
            y += LINE_HEIGHT
            frame.blit(cache.text(line, DIM_TEXT), (x, y))



# -------------------------------------------------------------------------------------------- ANSI


def ansi_map(world: World, info: FrameInfo | None = None) -> str:
    """The 16 x 16 character map (``#`` brick tile with a piece left, ``@`` steel, ``~``
    water, ``A``-``D`` bases, ``*`` bullets, the player's id or ``n`` for an NPC at the tile holding
    the tank's centre, ``.`` empty), then one status line per player."""
    info = info or FrameInfo()
    n = FIELD // TILE
    grid = np.full((n, n), ".", dtype="<U1")
    grid[world.bricks.reshape(n, TILE // PIECE, n, TILE // PIECE).any(axis=(1, 3))] = "#"
    grid[world.steel] = "@"
    grid[world.water] = "~"
    for base in world.bases.values():
        grid[base.y // TILE, base.x // TILE] = BASE_LETTERS[(base.id - 100) % len(BASE_LETTERS)]
    for bullet in world.bullets:
        row, col = (bullet.y + 2) // TILE, (bullet.x + 2) // TILE
        if 0 <= row < n and 0 <= col < n:  # under ``removal_skip`` a bullet can lie off the field
            grid[row, col] = "*"
    for tank in world.tanks:
        grid[(tank.y + TILE // 2) // TILE, (tank.x + TILE // 2) // TILE] = "n" if tank.is_npc else str(tank.id)
    rows = ["".join(row) for row in grid]
    return "\n".join(rows + [player_line(world, pid, info) for pid in sorted(world.players)])
