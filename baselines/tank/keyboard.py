"""A person plays a tank from the keyboard in the game's pygame window: the arrow keys move, the
space bar shoots, Escape lets the round pass (``noop``). Closing the window stops the run like
Ctrl-C (:class:`WindowClosed`), so ``arena run`` can resume it later; Ctrl-C itself stops it too,
within :data:`POLL_MS`, while a key is awaited.

The window is the environment's own (``render_mode="human"``); with ``render_mode=None`` the
policy switches the environment to ``human`` so that the person sees the game, and with
``rgb_array`` (e.g. while a replay is recorded) it shows the environment's frames in a window of
its own. The answer is the native action of the environment's ``action_mode``; the declared target
is the nearest enemy tank or base. pygame is imported only when a key is awaited.
"""
from __future__ import annotations

from typing import Any

from arena_envs.core import FrameWindow, Policy
from arena_envs.tank_battle.world import Operation
from baselines.tank.answer import TankMove, native_action, player_of

#: pygame key name -> operation
KEY_OPERATIONS: dict[str, Operation] = {"K_UP": "up", "K_DOWN": "down", "K_LEFT": "left", "K_RIGHT": "right",
                                        "K_SPACE": "shoot", "K_ESCAPE": "noop"}
HELP = "arrows move, space shoots, Esc waits"
#: how long one wait for a key lasts (ms) before Python looks at its signals (Ctrl-C) and waits again
POLL_MS = 100


class WindowClosed(KeyboardInterrupt):
    """The person closed the game window while a key was awaited: the run stops (and can resume)."""


def key_operation(key: int) -> Operation | None:
    """The operation of a pygame key code (None: a key that means nothing here)."""
    import pygame

    for name, op in KEY_OPERATIONS.items():
        if key == getattr(pygame, name):
            return op
    return None


class KeyboardTank(Policy):
    """Waits in the pygame event queue for the person's key (see the module docstring)."""

    name = "keyboard"
    follows_game = True  # draws the game's window

    def __init__(self) -> None:
        self._env: Any = None
        self.agent = ""
        self.player = -1
        self._window: FrameWindow | None = None

    def bind(self, env: Any) -> None:
        mode = env.render_mode
        if mode is None:
            env.render_mode = "human"
        elif mode not in ("human", "rgb_array"):
            raise ValueError(f"the keyboard tank plays in the game's window: render_mode must be 'human', "
                             f"'rgb_array' or None, got {mode!r}")
        self._env = env

    def reset(self, agent: str, seed: int | None = None) -> None:
        if self._env is None:
            raise RuntimeError("KeyboardTank needs bind(env) before reset(agent, seed): it plays in env's window")
        self.agent, self.player = agent, player_of(agent)

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        import pygame

        env = self._env
        self._show()
        title = pygame.display.get_caption()[0]
        pygame.display.set_caption(f"{title} - {self.agent} to play ({HELP})")
        try:
            op = self._wait_for_key()
        finally:
            if pygame.display.get_init():
                pygame.display.set_caption(title)
        return native_action(env.settings.action_mode, TankMove(op, env.nearest_target(self.player)))

    def finish(self, observation: Any, info: dict[str, Any]) -> bool:
        """Show how the game ended for this seat."""
        self._show()
        return False

    def _show(self) -> None:
        """Draw the current state in the window."""
        env = self._env
        if env.render_mode == "human":
            env.render()
            return
        if self._window is None:
            self._window = FrameWindow(f"Tank Battle - {self.agent}", env.metadata.get("render_fps", 4))
        self._window.show(env.render())

    def _wait_for_key(self) -> Operation:
        import pygame

        while True:
            event = pygame.event.wait(POLL_MS)  # NOEVENT when none came: an endless wait would hold off Ctrl-C
            if event.type == pygame.QUIT:
                raise WindowClosed(f"the game window was closed while {self.agent} was to play")
            if event.type == pygame.KEYDOWN:
                op = key_operation(event.key)
                if op is not None:
                    return op
            elif event.type in (pygame.WINDOWEXPOSED, pygame.VIDEOEXPOSE):
                pygame.display.flip()

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None
