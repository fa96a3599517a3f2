"""Frames of games that draw: ``rgb_array`` arrays and a ``human`` pygame window.

A game that lists ``"rgb_array"`` in ``metadata["render_modes"]`` implements one method,
``_draw_frame()``, returning the current frame as a ``pygame.Surface`` it drew or as an RGB
array ``(H, W, 3)`` of ``uint8``; :class:`~arena_envs.core.TextAECEnv` does the rest through a
:class:`FrameWindow`: ``render()`` returns the array (``rgb_array``) or shows the frame in a
window at ``metadata["render_fps"]`` (``human``), and ``close()`` releases the window. pygame is
imported here only when a frame is made, never by ``import arena_envs``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

#: Render modes that make frames (in a game that draws, ``human`` opens a window).
FRAME_MODES = ("rgb_array", "human")


def frame_array(frame: Any) -> np.ndarray:
    """An RGB ``(H, W, 3)`` ``uint8`` array of ``frame`` (a ``pygame.Surface`` or such an array)."""
    if isinstance(frame, np.ndarray):
        if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            raise ValueError(f"a frame array must be (H, W, 3) uint8, got {frame.shape} {frame.dtype}")
        return frame
    import pygame

    if not isinstance(frame, pygame.Surface):
        raise TypeError(f"_draw_frame must return a pygame.Surface or an RGB array, got {type(frame).__name__}")
    width, height = frame.get_size()
    # row-major RGB bytes straight from SDL: five times faster than surfarray.array3d's (W, H) transpose
    return np.frombuffer(bytearray(pygame.image.tobytes(frame, "RGB")), dtype=np.uint8).reshape(height, width, 3)


class FrameWindow:
    """The pygame window of one environment, opened at the first ``human`` frame."""

    def __init__(self, title: str, fps: float):
        if not fps or fps <= 0:
            raise ValueError(f"human rendering of frames needs metadata['render_fps'] > 0, got {fps!r}")
        self.title = title
        self.fps = float(fps)
        self._screen: Any = None
        self._clock: Any = None

    @property
    def is_open(self) -> bool:
        return self._screen is not None

    def show(self, frame: Any) -> None:
        """Show ``frame`` (Surface or RGB array), pump the window's events, keep to ``fps``."""
        import pygame

        surface = frame if isinstance(frame, pygame.Surface) else pygame.surfarray.make_surface(
            frame_array(frame).transpose(1, 0, 2))
        if self._screen is None or self._screen.get_size() != surface.get_size():
            pygame.display.init()
            self._screen = pygame.display.set_mode(surface.get_size())
            pygame.display.set_caption(self.title)
            self._clock = pygame.time.Clock()
        self._screen.blit(surface, (0, 0))
        pygame.event.pump()
        pygame.display.flip()
        self._clock.tick(self.fps)

    def close(self) -> None:
        """Release the window (nothing to do when none was opened)."""
        if self._screen is not None:
            import pygame

            pygame.display.quit()
            self._screen = self._clock = None

    def __reduce__(self) -> tuple[Any, ...]:
        """A pickled or copied environment gets a closed window of its own (windows are not shared)."""
        return FrameWindow, (self.title, self.fps)
