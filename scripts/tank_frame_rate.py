"""Frames per second of the tank battle's ``rgb_array`` drawing on one core.

    python scripts/tank_frame_rate.py [--stage K] [--rounds N]

Plays ``N`` rounds of stage ``K`` (default 7, the busiest) with random operations and NPCs and
times, per round, :func:`~arena_envs.tank_battle.render.draw_frame` plus the conversion to the
``(576, 832, 3)`` array that ``render()`` returns; the simulation's time is not counted.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from arena_envs.core import frame_array
from arena_envs.tank_battle.maps import apply_layout, load_map
from arena_envs.tank_battle.render import FrameInfo, draw_frame
from arena_envs.tank_battle.stages import stage_config
from arena_envs.tank_battle.world import OPERATIONS, World


def frame_rate(stage_number: int = 7, rounds: int = 300, seed: int = 0) -> float:
    """Frames per second over ``rounds`` frames (the world restarts when a game ends)."""
    stage = stage_config(stage_number)
    rng = np.random.default_rng(seed)
    game_map = apply_layout(load_map(stage.map_name), stage_number, 1, stage.n_players, rng)
    info = FrameInfo(messages=[(0, 3, "cover the left flank"), (3, 0, "Agree")])
    world = World(game_map, stage, rng)
    spent = 0.0
    for _ in range(rounds):
        if world.over:
            world = World(game_map, stage, rng)
        world.play_round({pid: OPERATIONS[int(rng.integers(5))] for pid in world.players})
        start = time.perf_counter()
        frame = frame_array(draw_frame(world, stage, info))
        spent += time.perf_counter() - start
    assert frame.shape == (576, 832, 3)
    return rounds / spent


if __name__ == "__main__":
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # no screen needed
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    print(f"stage {args.stage}: {frame_rate(args.stage, args.rounds):.0f} rgb_array frames/s")
