"""Replays: re-render a finished episode from its step log into a video file.

A results folder holds everything an episode needs to be played again: ``run.json`` names the
environment and its keyword arguments, the episode's ``episodes.jsonl`` entry its environment
seed, and ``log.jsonl`` every decision in order (the action as the policy gave it). The replay
builds the environment with ``render_mode="rgb_array"``, resets it with that seed and feeds the
logged actions back through ``agent_iter``, taking a frame at the start and whenever the picture
changed (an environment that counts its pictures in ``frame_id`` says when; otherwise after every
decision): :func:`restep`, which the viewer's tank battle also reads its worlds from. So a run pays
nothing for frames: ``arena run ... --record DIR`` and ``arena replay`` both come here. Videos are MP4
through ``imageio-ffmpeg`` when it is installed, GIF through Pillow otherwise
(``pip install 'arena-envs[render]'``).

A results folder is data: the environment its ``run.json`` names is built only when it is a registered
one (``arena list``) or the caller names it too (``env=``, ``arena replay --env``); any other name is
refused in one line before anything is imported.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from pettingzoo import AECEnv

from arena_envs.core.extras import needs_extra, require
from arena_envs.registration import ENVIRONMENTS
from arena_envs.runner.results import ResultsError, read_config, read_episodes, read_steps
from arena_envs.runner.runner import env_factory

DEFAULT_FPS = 4.0
EXTENSIONS = (".mp4", ".gif")


class ReplayError(ValueError):
    """An episode that cannot be replayed: the environment cannot draw, or the log and the environment disagree."""


def drawing_env(name: str, env_kwargs: dict[str, Any]) -> AECEnv:
    """Environment ``name`` built with ``env_kwargs`` and ``render_mode="rgb_array"``; a
    :class:`ReplayError` when it has no ``rgb_array`` render mode."""
    kwargs = {key: value for key, value in env_kwargs.items() if key != "render_mode"}
    try:
        return env_factory(name, {**kwargs, "render_mode": "rgb_array"})()
    except ValueError:
        probe = env_factory(name, kwargs)()  # an unknown name or bad arguments raise their own error here
        modes = list(probe.unwrapped.metadata.get("render_modes", ()))
        probe.close()
        if "rgb_array" in modes:
            raise
        raise ReplayError(f"environment {name} cannot draw replays: its render modes are {modes}, "
                          "a replay needs 'rgb_array'") from None


def native_action(action: Any) -> Any:
    """A logged action as the environment takes it: JSON lists (numpy arrays when logged) become arrays again."""
    if isinstance(action, list):
        return np.asarray(action)
    if isinstance(action, dict):
        return {key: native_action(value) for key, value in action.items()}
    return action


def _trusted_env(folder: Path, stored: Any, given: str | None) -> str:
    """The environment ``stored`` that ``folder``'s ``run.json`` names, when it may be built: a registered
    name, or ``given``, the name the caller gives, which must then be the folder's. Else a
    :class:`ResultsError` (one line), before anything is imported."""
    if given is not None and given != stored:
        raise ResultsError(f"{folder} holds a run of environment {_quoted(stored)}, not of {given!r}")
    if given is None and (not isinstance(stored, str) or stored not in ENVIRONMENTS):
        raise ResultsError(f"{folder / 'run.json'} names environment {_quoted(stored)}, which is not registered; "
                           "a results folder is data: name an unregistered environment yourself (arena replay "
                           f"--env NAME) to build it; registered: {', '.join(sorted(ENVIRONMENTS))}")
    return str(stored)


def _quoted(value: Any, limit: int = 120) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _open_episode(folder: Path, episode: int, env: str | None) -> tuple[AECEnv, int, list[dict[str, Any]]]:
    """The drawing environment of ``folder``'s run (:func:`_trusted_env`), ``episode``'s environment seed and
    its decision lines."""
    config = read_config(folder)
    name = _trusted_env(folder, config.get("env"), env)
    kwargs = config.get("env_kwargs", {})
    if not isinstance(kwargs, dict):
        raise ResultsError(f"{folder / 'run.json'}: env_kwargs must be a JSON object, got {_quoted(kwargs)}")
    entries = {e["episode"]: e for e in read_episodes(folder / "episodes.jsonl")}
    if episode not in entries:
        known = sorted(entries)
        shown = ", ".join(map(str, known[:20])) + (" ..." if len(known) > 20 else "") if known else "none"
        raise ResultsError(f"{folder}: episode {episode} is not committed; committed episodes: {shown}")
    decisions = [line for line in read_steps(folder, episode) if not line.get("finish")]
    return drawing_env(name, kwargs), entries[episode]["seed"], decisions


def episode_frames(folder: str | Path, episode: int, env: str | None = None) -> Iterator[np.ndarray]:
    """The frames of committed ``episode`` of results folder ``folder``, re-rendered from its log:
    the first picture after ``reset``, then one per change of ``frame_id`` (without one: per decision). Raises
    :class:`ReplayError` when the log and the environment disagree (another agent to move, too few
    or too many logged decisions). ``env``: the folder's environment, named by the caller (needed only
    for an unregistered one, see the module docstring)."""
    made, seed, decisions = _open_episode(Path(folder), episode, env)
    return _frames(made, seed, decisions, episode)


def _frames(env: AECEnv, seed: int, decisions: list[dict[str, Any]], episode: int) -> Iterator[np.ndarray]:
    try:
        for stepped in restep(env, seed, decisions, episode):
            yield _frame(stepped)
    finally:
        env.close()


def restep(env: AECEnv, seed: int, decisions: list[dict[str, Any]], episode: int,
           before: Callable[[str], None] | None = None) -> Iterator[AECEnv]:
    """Play ``episode`` again: reset ``env`` with ``seed`` and step it with the logged ``decisions``
    (decision lines, finish lines left out) through ``agent_iter`` (a finished agent steps ``None``);
    yield ``env`` at each picture: after ``reset``, then whenever its ``frame_id`` changes (without
    one: after every decision). ``before(agent)`` is called before each logged decision is stepped
    (the viewer reads the prompt there). Raises :class:`ReplayError` when the log and the environment
    disagree (another agent to move, too few or too many logged decisions). The caller closes ``env``."""
    env.reset(seed=seed)
    raw = env.unwrapped
    yield env
    shown = getattr(raw, "frame_id", None)
    step = 0
    for agent in env.agent_iter():
        done = bool(raw.terminations.get(agent) or raw.truncations.get(agent))
        if done:
            env.step(None)
        else:
            if step == len(decisions):
                raise ReplayError(f"episode {episode}: the log ends after {step} decisions but the environment "
                                  f"asks {agent} for another one")
            line = decisions[step]
            if line.get("agent") != agent:
                raise ReplayError(f"episode {episode}, decision {step}: the log has {line.get('agent')} to move, "
                                  f"the environment {agent}")
            if before is not None:
                before(agent)
            env.step(native_action(line.get("action")))
            step += 1
        current = getattr(raw, "frame_id", None)
        if current != shown or (current is None and not done):  # uncounted: a frame per decision
            shown = current
            yield env
    if step != len(decisions):
        raise ReplayError(f"episode {episode}: the environment finished after {step} decisions but the log "
                          f"holds {len(decisions)}")


def _frame(env: AECEnv) -> np.ndarray:
    frame = env.render()
    if not isinstance(frame, np.ndarray):
        raise ReplayError(f"render() in rgb_array mode returned {type(frame).__name__}, not an array")
    return frame


def video_extension() -> str:
    """``.mp4`` when imageio can write it (imageio-ffmpeg installed), else ``.gif``."""
    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError:
        return ".gif"
    return ".mp4"


def write_video(frames: Iterable[np.ndarray], out: str | Path, fps: float = DEFAULT_FPS) -> int:
    """Write ``frames`` to ``out`` (``.mp4`` with imageio-ffmpeg, ``.gif`` with Pillow, by its
    extension); the number of frames written."""
    with needs_extra("render", "a replay video"):
        import imageio.v2 as imageio
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in EXTENSIONS:
        raise ReplayError(f"a replay file must end in {' or '.join(EXTENSIONS)}, got {str(out)!r}")
    if fps <= 0:
        raise ReplayError(f"fps must be > 0, got {fps}")
    out.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".mp4":
        require("render", "an .mp4 replay video", "imageio_ffmpeg")
        # 16-pixel macro blocks: frames whose sides are not multiples of 16 are padded, not resized
        writer = imageio.get_writer(out, format="FFMPEG", mode="I", fps=fps, codec="libx264",
                                    macro_block_size=16, ffmpeg_log_level="error")
    else:
        # Pillow: every frame kept (no merging of equal frames), looping forever
        writer = imageio.get_writer(out, format="GIF", mode="I", duration=1000.0 / fps, loop=0)
    count = 0
    try:
        for frame in frames:
            writer.append_data(frame)
            count += 1
    finally:
        writer.close()
    if count == 0:
        out.unlink(missing_ok=True)
    return count


def replay_episode(folder: str | Path, episode: int, out: str | Path | None = None,
                   fps: float | None = None, env: str | None = None) -> Path:
    """Re-render ``episode`` of results folder ``folder`` into a video (default
    ``FOLDER/replays/episode_<N>.mp4``, or ``.gif`` without imageio-ffmpeg) at ``fps`` frames per
    second (default: the environment's ``metadata["render_fps"]``, else 4); the path written.
    ``env`` as for :func:`episode_frames`."""
    folder = Path(folder)
    path = Path(out) if out is not None else folder / "replays" / f"episode_{episode}{video_extension()}"
    made, seed, decisions = _open_episode(folder, episode, env)
    if fps is None:
        fps = float(made.unwrapped.metadata.get("render_fps") or DEFAULT_FPS)
    write_video(_frames(made, seed, decisions, episode), path, fps)
    return path


def record_episodes(folder: str | Path, out_dir: str | Path, fps: float | None = None,
                    episodes: Iterable[int] | None = None, env: str | None = None) -> list[Path]:
    """Write ``OUT_DIR/episode_<N>.<ext>`` for every committed episode of ``folder`` (or those of
    ``episodes``) that has no file there yet; the paths written, by episode id. ``env`` as for
    :func:`episode_frames`."""
    folder, out_dir = Path(folder), Path(out_dir)
    committed = sorted(e["episode"] for e in read_episodes(folder / "episodes.jsonl"))
    wanted = committed if episodes is None else sorted(set(committed) & set(episodes))
    ext = video_extension()
    written = []
    for episode in wanted:
        path = out_dir / f"episode_{episode}{ext}"
        if not path.exists():
            written.append(replay_episode(folder, episode, path, fps, env))
    return written


def check_drawable(name: str, env_kwargs: dict[str, Any]) -> None:
    """Raise :class:`ReplayError` now, before a run, when environment ``name`` cannot draw replays."""
    drawing_env(name, env_kwargs).close()
    require("render", "arena run --record", "imageio")


__all__ = ["ReplayError", "check_drawable", "drawing_env", "episode_frames", "native_action", "record_episodes",
           "replay_episode", "restep", "video_extension", "write_video"]

