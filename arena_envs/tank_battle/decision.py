"""One tank decision as the parser reads it (:mod:`.parser`) and the cooperation protocol takes it
(:mod:`.coop`); native actions are converted to it too."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from arena_envs.tank_battle.world import Operation

Coop = Literal["none", "keep", "stop", "request"]


@dataclass(frozen=True)
class Decision:
    """One parsed answer.

    ``op``: the control operation (``noop`` when none was found, ``op_found`` False); ``target``:
    the stated target (stages 3-7; -1 none, 200 a wall, ``None`` not stated); ``coop``: the
    cooperation operation (``None``: none found, a format failure in cooperative stages);
    ``partner``/``message``: the request's addressee and text (``request`` only); ``replies``:
    answers to pending requests by source id (True = agree); ``reply_all``: an answer given without
    a source id, for every pending request that ``replies`` does not name (``None``: none given).
    """

    op: Operation = "noop"
    op_found: bool = False
    target: int | None = None
    coop: Coop | None = None
    partner: int | None = None
    message: str = ""
    replies: dict[int, bool] = field(default_factory=dict)
    reply_all: bool | None = None

    def reply_to(self, source: int) -> bool | None:
        """This answer's reply to a request from ``source`` (``None``: no reply, i.e. it expires)."""
        return self.replies.get(source, self.reply_all)
