"""Render the first frame of each tank battle stage to ``docs/envs/img/tank_stage<k>.png``.

    python scripts/tank_screenshots.py [OUT_DIR]

The frames are drawn by :func:`arena_envs.tank_battle.render.draw_frame` from the stage's world at
layout seed 0 (the official map as drawn), with SDL's dummy video driver (no screen needed).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from arena_envs.tank_battle.maps import apply_layout, load_map
from arena_envs.tank_battle.render import FrameInfo, draw_frame
from arena_envs.tank_battle.stages import stage_config
from arena_envs.tank_battle.world import World

OUT = Path(__file__).resolve().parent.parent / "docs" / "envs" / "img"


def main(out: Path = OUT) -> list[Path]:
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # no screen needed
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for k in range(1, 8):
        stage = stage_config(k)
        rng = np.random.default_rng(0)
        game_map = apply_layout(load_map(stage.map_name), k, 0, stage.n_players, rng)
        world = World(game_map, stage, rng)
        path = out / f"tank_stage{k}.png"
        pygame.image.save(draw_frame(world, stage, FrameInfo()), str(path))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(f"{path} ({path.stat().st_size} bytes)")
