"""The cooperation protocol of the tank battle: requests, replies, records and current partners.

Timeline (ours: deterministic, one round of delay; the reference exchanged messages
asynchronously): a request that A sends in round t is delivered at the end of round t into B's
inbox (and the message log); B sees it in round t+1 and may answer then; at the end of round t+1 an
agreement appends a record (A, B, message) and makes B the current partner of A; a request not
answered in round t+1 expires (= disagree). ``Stop_coop`` by a tank with a current partner appends a
"stop" record and clears the partner. Cooperation has no effect on the game's mechanics.

Legal partners (``Stage.partners``): "teammates" -> the living teammates; "players" -> every other
living player (stage 6: all enemies; stage 7: teammates and enemies). NPCs never cooperate, requests
to anyone else are well-formed but never delivered. Unlike the reference, requests to player 0 are
delivered.

The env calls :meth:`CoopState.end_round` once per round with every deciding player's
:class:`~.decision.Decision`, after the last agent acted and **before** ``World.play_round`` (the
legal partners are those of the state the agents saw). The texts read :meth:`pending`,
:meth:`history` and :meth:`partner`.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from arena_envs.tank_battle.stages import Stage

if TYPE_CHECKING:
    from arena_envs.tank_battle.decision import Decision
    from arena_envs.tank_battle.world import World

#: how many records the "historical cooperation" section shows
HISTORY = 5
STOP_MESSAGE = "stop cooperation"


@dataclass(frozen=True)
class Request:
    """A cooperation request sent by ``source`` to ``partner`` in round ``round``."""

    round: int
    source: int
    partner: int
    message: str


@dataclass(frozen=True)
class CoopRecord:
    """An agreed request (``kind="agree"``, made in ``round``: the round of the reply) or a stop
    (``kind="stop"``, message :data:`STOP_MESSAGE`)."""

    round: int
    source: int
    partner: int
    message: str
    kind: Literal["agree", "stop"] = "agree"


@dataclass(frozen=True)
class CoopRound:
    """What one :meth:`CoopState.end_round` did: requests delivered, records made, requests expired."""

    delivered: tuple[Request, ...] = ()
    records: tuple[CoopRecord, ...] = ()
    expired: tuple[Request, ...] = ()


def legal_partners(world: World, stage: Stage, player: int) -> list[int]:
    """The players ``player`` may ask for cooperation now, by id (module docstring)."""
    if stage.partners == "none":
        return []
    if stage.partners == "players":
        return sorted(t.id for t in world.tanks if not t.is_npc and t.id != player)
    return [t.id for t in world.teammates(player)]


@dataclass
class CoopState:
    """One episode's cooperation state (picklable; its size is bounded by the game's length)."""

    stage: Stage
    round: int = 0  # the round whose decisions the next end_round takes
    messages: list[Request] = field(default_factory=list)  # every delivered request, in order
    records: list[CoopRecord] = field(default_factory=list)  # every record, in order
    _inbox: dict[int, list[Request]] = field(default_factory=dict)
    _partner: dict[int, int] = field(default_factory=dict)
    _history: dict[int, deque[CoopRecord]] = field(default_factory=dict)

    def pending(self, player: int) -> tuple[Request, ...]:
        """The requests ``player`` may answer in the current round, in the order they were sent."""
        return tuple(self._inbox.get(player, ()))

    def history(self, player: int) -> tuple[CoopRecord, ...]:
        """The last :data:`HISTORY` records in which ``player`` is source or partner, oldest first."""
        return tuple(self._history.get(player, ()))

    def partner(self, player: int) -> int | None:
        """``player``'s current partner (set when a request of its own was agreed)."""
        return self._partner.get(player)

    def end_round(self, decisions: Mapping[int, Decision], world: World) -> CoopRound:
        """Resolve one round: stops first (they refer to the partners the agents knew), then the
        replies to the requests delivered last round (unanswered ones expire), then this round's
        requests are delivered. ``decisions`` holds the decision of every player that acted."""
        t = self.round
        self.round += 1
        if not self.stage.cooperative:
            return CoopRound()
        made: list[CoopRecord] = []
        for player in sorted(decisions):
            current = self._partner.get(player)
            if decisions[player].coop == "stop" and current is not None:
                made.append(self._record(CoopRecord(t, player, current, STOP_MESSAGE, "stop")))
                del self._partner[player]
        expired: list[Request] = []
        for partner in sorted(self._inbox):
            decision = decisions.get(partner)
            for request in self._inbox[partner]:
                if decision is not None and decision.reply_to(request.source):
                    made.append(self._record(CoopRecord(t, request.source, partner, request.message)))
                    self._partner[request.source] = partner
                else:
                    expired.append(request)
        self._inbox = {}
        delivered: list[Request] = []
        for player in sorted(decisions):
            decision = decisions[player]
            if decision.coop != "request" or decision.partner is None:
                continue
            if decision.partner in legal_partners(world, self.stage, player):
                request = Request(t, player, decision.partner, decision.message)
                self._inbox.setdefault(decision.partner, []).append(request)
                self.messages.append(request)
                delivered.append(request)
        return CoopRound(tuple(delivered), tuple(made), tuple(expired))

    def _record(self, record: CoopRecord) -> CoopRecord:
        self.records.append(record)
        for player in {record.source, record.partner}:
            self._history.setdefault(player, deque(maxlen=HISTORY)).append(record)
        return record
