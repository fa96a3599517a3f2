"""The tank battle's view: the world at every round of a logged episode, found by playing it again.

The step log holds the actions, not the world, so the episode is re-stepped exactly as a replay video
is (:func:`arena_envs.runner.replay.restep`: the registered ``tank_battle_v0`` built with the run's
settings, reset with the episode's seed, stepped with the logged actions) and, at each picture, the
world is read: tanks, bullets, living bases, the brick pieces shot away since the last picture, and
the side panel's lines as the pygame renderer writes them (:mod:`arena_envs.tank_battle.render`).
Pixels are the game's own coordinates (what the tanks' texts show), origin top-left.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arena_envs.runner.replay import ReplayError, restep
from arena_envs.runner.runner import env_factory
from arena_envs.tank_battle.render import BASE_LETTERS, FrameInfo, outcome, panel_lines
from arena_envs.view.shapes import text

ENV = "tank_battle_v0"
#: the most pictures a view holds (a stage plays at most 80 rounds; a custom ``max_rounds`` may ask more)
MAX_FRAMES = 1000
#: the most cooperation messages a view holds (each is cut to the game's own message length)
MAX_MESSAGES = 2000


def tank_view(env_kwargs: dict[str, Any], entry: dict[str, Any], steps: list[dict[str, Any]],
              record: Any) -> dict[str, Any]:
    """The pictures of an episode of ``tank_battle_v0`` with ``env_kwargs`` (see the module docstring):
    ``{"kind": "tank", "field", "stage", "bricks", "steel", "water", "npc_spawns", "bases", "teams",
    "frames": [...], "mismatch"}`` or ``{"kind": "tank", "error": ...}`` when it cannot be played again.
    ``mismatch`` lists the rounds whose operations, targets, eliminations or destroyed bases differ
    from the logged ``record``'s (a log of another version of the game)."""
    seed = entry.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        return {"kind": "tank", "error": "the episode has no environment seed"}
    decisions = [line for line in steps if isinstance(line, dict) and "agent" in line and not line.get("finish")]
    kwargs = {k: v for k, v in env_kwargs.items() if k not in ("render_mode", "render_every_tick")}
    try:
        env = env_factory(ENV, kwargs)()
    except (TypeError, ValueError, KeyError, AttributeError) as err:
        return {"kind": "tank", "error": text(f"cannot build {ENV}: {err}", 500)}
    frames: list[dict[str, Any]] = []
    view: dict[str, Any] = {"kind": "tank"}
    try:
        shown: np.ndarray | None = None
        told = 0
        for stepped in restep(env, seed, decisions, int(entry.get("episode") or 0)):
            raw = stepped.unwrapped
            if shown is None:
                view.update(_static(raw))
                shown = raw.world.bricks.copy()
            frames.append(_picture(raw, shown))
            told += len(frames[-1]["messages"])
            if told > MAX_MESSAGES:  # the panel shows the last six; keep the view's size bounded
                frames[-1]["messages"] = []
            shown = raw.world.bricks.copy()
            if len(frames) >= MAX_FRAMES:
                view["cut"] = True
                break
        own = [e for e in raw.record.events if e.get("type") == "round"] if shown is not None else []
    except (ReplayError, ValueError, TypeError, KeyError, AttributeError, IndexError, ArithmeticError) as err:
        return {**view, "error": text(f"cannot play the episode again: {err}", 500), "frames": frames}
    finally:
        env.close()
    view["frames"] = frames
    view["mismatch"] = _mismatch(own, record)
    return view


def tank_now(raw: Any) -> dict[str, Any]:
    """The battlefield of a live game as one picture (what every tank may see: the whole field), in the
    form of :func:`tank_view`: the page of ``arena play --web`` draws it at each of the person's turns."""
    return {"kind": "tank", **_static(raw), "frames": [_picture(raw, raw.world.bricks)], "mismatch": []}


def _static(raw: Any) -> dict[str, Any]:
    """What does not change during the episode: the field, the stage, steel, water, spawns, the bases' owners."""
    world, stage = raw.world, raw.stage
    return {
        "field": {"size": 512, "tile": 32, "piece": 8},
        "stage": {"number": stage.number, "name": stage.name, "rounds": stage.rounds},
        "bricks": ["".join("1" if v else "0" for v in row) for row in world.bricks.tolist()],
        "steel": np.argwhere(world.steel).tolist(),
        "water": np.argwhere(world.water).tolist(),
        "npc_spawns": [list(xy) for xy in world.npc_spawns],
        "bases": [{"id": b.id, "x": b.x, "y": b.y, "owner": world.base_owner_team(b.id),
                   "letter": BASE_LETTERS[(b.id - 100) % len(BASE_LETTERS)]} for b in world.bases.values()],
        "teams": {str(p): world.team_of(p) for p in world.players},
    }


def _picture(raw: Any, shown: np.ndarray) -> dict[str, Any]:
    """The world now: what the renderer draws, with the brick pieces changed since ``shown``."""
    world = raw.world
    changed = np.argwhere(world.bricks != shown)
    rounds = [e for e in raw.record.events[-1:] if e.get("type") == "round"] if raw.frame_id else []
    messages = [[src, dst, text(message, 300)] for src, dst, message in rounds[0].get("requests", [])] if rounds else []
    info = FrameInfo(scores={p: raw.weights.score(e) for p, e in world.events.items()},
                     targets=dict(raw.targets), messages=[tuple(m) for m in messages])
    winner, colour, reason = outcome(world)
    return {
        "round": world.rounds_played,
        "tanks": [{"id": t.id, "x": t.x, "y": t.y, "dir": t.facing, "hp": t.health, "frozen": t.frozen,
                   "npc": t.is_npc} for t in world.tanks],
        "bullets": [[b.x, b.y] for b in world.bullets],
        "bases": sorted(world.bases),
        "bricks": [[int(r), int(c), bool(world.bricks[r, c])] for r, c in changed],
        "targets": {str(p): t for p, t in raw.targets.items()},
        "panel": [[line, _hex(colour)] for line, colour in panel_lines(world, raw.stage, info)],
        "messages": messages,
        "over": world.over,
        "outcome": {"winner": winner, "colour": _hex(colour), "reason": reason} if world.over else None,
    }


def _hex(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def _mismatch(own: list[dict[str, Any]], record: Any) -> list[int]:
    """Rounds whose logged record differs from the re-stepped game's (only what both say is compared)."""
    events = record.get("events") if isinstance(record, dict) else None
    if not isinstance(events, list):
        return []
    logged = [e for e in events if isinstance(e, dict) and e.get("type") == "round"]
    keys = ("ops", "targets", "eliminated", "bases_destroyed")
    differ = []
    for k, mine in enumerate(own):
        theirs = logged[k] if k < len(logged) else None
        if theirs is None:
            continue
        for key in keys:
            if key in theirs and _json_keys(mine.get(key)) != theirs[key]:
                differ.append(k)
                break
    return differ


def _json_keys(value: Any) -> Any:
    """``value`` as it reads back from JSON (int keys become strings)."""
    if isinstance(value, dict):
        return {str(k): _json_keys(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_keys(v) for v in value]
    return value


__all__ = ["ENV", "tank_now", "tank_view"]
