"""The person's seat in a page (``arena play --web``): what the page is asked and what it may answer.

:class:`WebSeat` is the game's side of the page, living in the server's event loop: the seat's
policy (:class:`WebSeatPolicy`, :class:`WebTankSeat`) awaits in :meth:`WebSeat.ask` the answer the
page posts (:meth:`WebSeat.answer`, which checks it against the open question before the game sees
it); :meth:`WebSeat.abandon` ends the wait with :class:`~arena_envs.runner.play_game.Quit`, so the
runner commits nothing. :meth:`WebSeat.state` is the page's view of it all (JSON), renewed with a
new ``version`` at every change.

Each question carries a form (:func:`answer_form`), derived from what the game asks: ``fields``
for a JSON answer (one input per field of :func:`~arena_envs.runner.play.bare_form`: a number with
its bounds, or a list of the field's values), ``choice`` for a list of choices, ``bid`` (the
auction: a bid or withdrawing), ``trade`` (one asset's decision and size), ``keys`` (the tank's
operations) and ``text``; every form but ``keys`` also takes free text. A posted answer becomes the
game's answer exactly as the terminal's typed line does (:func:`~arena_envs.runner.play.answer_text`,
:func:`~arena_envs.runner.play.bare_answer`), so the same answers play the same game.
"""
from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena_envs.core.answers import AnswerConstraint
from arena_envs.runner.play import PersonPolicy, answer_text, bare_answer, bare_form, legal_answers, typed_value
from arena_envs.runner.play_game import Quit
from arena_envs.view.tank_data import tank_now

#: the most characters of one posted text or value
MAX_TEXT = 4000
#: the tank's operations: (operation, browser key, label)
TANK_KEYS = (("up", "ArrowUp", "Move up"), ("down", "ArrowDown", "Move down"), ("left", "ArrowLeft", "Move left"),
             ("right", "ArrowRight", "Move right"), ("shoot", " ", "Shoot"), ("noop", "Escape", "Wait a round"))
_BOUNDS = re.compile(r"(\d+) <= X <= (\d+)")


class BadAnswer(ValueError):
    """A posted answer that does not fit the open question (the game never sees it)."""


@dataclass(frozen=True)
class Answer:
    """An answer the page gave: the game's answer and what the person gave, for the trace."""

    action: Any
    typed: str


def _field(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """One input of a ``fields`` form: a number (with its bounds), a list of values, or text."""
    if "enum" in schema:
        return {"name": name, "type": "enum", "options": [_option(value) for value in schema["enum"]]}
    if schema.get("type") in ("integer", "number"):
        return {"name": name, "type": schema["type"], "min": schema.get("minimum"), "max": schema.get("maximum")}
    return {"name": name, "type": "text"}


def _option(value: Any) -> dict[str, str]:
    """A value of a list: the text posted for it (read back as the terminal reads a typed token) and its label."""
    if value is None:
        return {"value": "null", "label": "(none)"}
    return {"value": value if isinstance(value, str) else repr(value).lower(), "label": str(value)}


def answer_form(env: str, constraint: AnswerConstraint | None, raw: Any = None) -> dict[str, Any]:
    """The form of a question of ``env`` under ``constraint`` (module docstring); ``raw``: the game."""
    if env == "tank_battle_v0":
        return {"kind": "keys", "ops": [{"op": op, "key": key, "label": label} for op, key, label in TANK_KEYS],
                "help": "keys: the arrows move, Space shoots (at the nearest enemy tank or base), Escape waits a "
                        "round; the game's text lists the operations it offers now"}
    if constraint is None:
        return {"kind": "text"}
    if constraint.kind == "choice":
        return {"kind": "choice", "choices": list(constraint.choices)}
    form = bare_form(constraint)
    if form is not None:
        outer, names = form
        properties = constraint.schema.get("properties", {})
        if outer is not None:
            properties = properties.get(outer, {}).get("properties", {})
        return {"kind": "fields", "outer": outer, "fields": [_field(n, properties.get(n, {})) for n in names]}
    if env == "auction_v0":
        bounds = _BOUNDS.search(constraint.description)
        low, high = (int(bounds[1]), int(bounds[2])) if bounds else (None, None)
        return {"kind": "bid", "min": low, "max": high, "bid": "I bid ${X}!", "withdraw": "I'm out!"}
    if env == "trading_v0" and getattr(raw, "n_assets", 1) == 1:
        return {"kind": "trade", "actions": ["BUY", "SELL", "HOLD"], "min": 0, "max": 1,
                "decision": "DECISION: {ACTION} {SIZE}"}
    return {"kind": "text"}


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise BadAnswer(f"{what} must be a text of at most {MAX_TEXT} characters")
    return value


def decode(body: Any, form: Mapping[str, Any], constraint: AnswerConstraint | None) -> Answer:
    """The game's answer for a posted ``body``: ``{"text": ...}`` (any form but ``keys``, read as
    the terminal reads a typed line), ``{"values": [...]}`` (a ``fields`` form, one text per field)
    or ``{"op": ...}`` (a ``keys`` form); :class:`BadAnswer` for anything else."""
    if not isinstance(body, dict):
        raise BadAnswer("the answer must be a JSON object")
    kind = form["kind"]
    if "op" in body and kind == "keys":
        ops = [entry["op"] for entry in form["ops"]]
        if body["op"] not in ops:
            raise BadAnswer(f"op must be one of {', '.join(ops)}")
        return Answer(body["op"], body["op"])
    if "values" in body and kind == "fields" and constraint is not None:
        values = body["values"]
        if not isinstance(values, list) or len(values) != len(form["fields"]):
            raise BadAnswer(f"values must be a list of {len(form['fields'])} texts")
        texts = [_text(value, "each value") for value in values]
        action = bare_answer([typed_value(text.strip()) for text in texts], constraint)
        if action is None:
            raise BadAnswer("the values do not fit the question")
        return Answer(action, " ".join(text.strip() for text in texts))
    if "text" in body and kind != "keys":
        line = _text(body["text"], "text")
        if "\n" in line or "\r" in line:
            raise BadAnswer("text must be one line")
        return Answer(answer_text(line, constraint), line)
    raise BadAnswer(f"a {kind} question takes " + ("op" if kind == "keys" else "text" + (
        " or values" if kind == "fields" else "")))


class WebSeat:
    """The game as the page sees it (module docstring). Used from the server's event loop only."""

    def __init__(self, env: str, me: str, header: str, folder: str):
        self.env, self.me, self.header, self.folder = env, me, header, folder
        self.version = 0
        self.status = "waiting"  # asking, over, abandoned, failed
        self.question: dict[str, Any] | None = None
        self.asked = 0  # questions asked so far; a question's id
        self.notes: list[str] = []  # the game's notes on the open decision's rejected answers
        self.last_words: str | None = None
        self.scores: dict[str, float] | None = None
        self.error: str | None = None
        self.board: dict[str, Any] | None = None  # the game's picture, where the page draws one
        self.boards = 0  # pictures shown so far; a picture's id
        self.board_final = False  # the board is the finished game's view
        self._constraint: AnswerConstraint | None = None
        self._pending: asyncio.Future[Answer] | None = None

    def _changed(self) -> None:
        self.version += 1

    def state(self) -> dict[str, Any]:
        """The page's view (JSON): status, the open question, the notes, the end."""
        return {"version": self.version, "status": self.status, "env": self.env, "me": self.me,
                "header": self.header, "folder": self.folder, "question": self.question, "notes": self.notes,
                "last_words": self.last_words, "scores": self.scores, "error": self.error,
                "board": self.board, "board_id": self.boards, "board_final": self.board_final}

    def show(self, board: dict[str, Any] | None, final: bool = False) -> None:
        """Draw ``board`` (the game's data, as ``static/games/*.js`` draws it; None: nothing new): the seat's
        picture of a turn, or with ``final`` the whole finished game's view."""
        if board is not None:
            self.board, self.boards, self.board_final = board, self.boards + 1, final
            self._changed()

    async def ask(self, text: str, constraint: AnswerConstraint | None, form: dict[str, Any]) -> Answer:
        """Show a question and wait for the page's answer (:class:`Quit` when the game is abandoned)."""
        if self.status == "abandoned":
            raise Quit("the page's game was abandoned")
        self.asked += 1
        legal = form["help"] if form["kind"] == "keys" else legal_answers(constraint).rpartition("\ncommands:")[0]
        self.question = {"id": self.asked, "text": text, "legal": legal, "form": form}
        self._constraint = constraint
        self.status = "asking"
        self._pending = asyncio.get_running_loop().create_future()
        self._changed()
        try:
            return await self._pending
        finally:
            self._pending = None
            if self.status == "asking":
                self.status, self.question = "waiting", None
                self._changed()

    def answer(self, body: Any) -> None:
        """Hand a posted answer to the open question; :class:`BadAnswer` when none is open, the body
        names another question, or it does not fit (nothing reaches the game then)."""
        if self._pending is None or self._pending.done() or self.question is None:
            raise BadAnswer("no question is open")
        if not isinstance(body, dict) or body.get("question") != self.question["id"]:
            raise BadAnswer("the answer names no open question (its id)")
        answer = decode({k: v for k, v in body.items() if k != "question"}, self.question["form"], self._constraint)
        self.notes = []
        self._pending.set_result(answer)

    def abandon(self) -> None:
        """End the game: the open wait, or the next one, raises :class:`Quit`."""
        if self.status in ("over", "failed", "abandoned"):
            return
        self.status = "abandoned"
        self.question = None
        if self._pending is not None and not self._pending.done():
            self._pending.set_exception(Quit("the page's game was abandoned"))
        self._changed()

    # Front: what the person sees besides the questions
    def rejected(self, kind: str, reason: str) -> None:
        self.notes = [*self.notes, f"[not accepted ({kind}): {reason}]"]
        self._changed()

    def game_over(self, text: str) -> None:
        self.last_words = text
        self._changed()

    def finished(self, scores: dict[str, float] | None, error: str | None = None) -> None:
        """The game ended: its scores (None: abandoned) or the error that stopped it."""
        self.question = None
        self.scores = scores
        self.error = error
        self.status = "failed" if error else ("over" if scores is not None else "abandoned")
        self._changed()


class WebSeatPolicy(PersonPolicy):
    """The person's seat in the page: each decision waits for the page's answer."""

    def __init__(self, seat: WebSeat):
        super().__init__()
        self.seat = seat

    def board(self) -> dict[str, Any] | None:
        """The game's picture now, where the page draws one (only what the seat may see); None by default."""
        return None

    async def aact(self, observation: Any, info: dict[str, Any]) -> Any:
        constraint = self.constraint()
        text = observation.get("text") if isinstance(observation, dict) else None
        self.seat.show(self.board())
        form = answer_form(self.seat.env, constraint, self._env)
        answer = await self.seat.ask(str(text if text is not None else observation), constraint, form)
        self.typed = answer.typed
        return answer.action


class WebTankSeat(WebSeatPolicy):
    """The person's tank in the page: an operation key, played as the environment's native action of
    its ``action_mode`` (as the ``keyboard`` policy plays it: the declared target the nearest enemy
    tank or base, no cooperation), with the battlefield drawn at each turn (every tank sees the whole
    field)."""

    def board(self) -> dict[str, Any] | None:
        return tank_now(self._env)

    async def aact(self, observation: Any, info: dict[str, Any]) -> Any:
        from arena_envs.tank_battle.env import MAX_PLAYERS, OPS, TARGET_IDS

        op = OPS.index(await super().aact(observation, info))
        env = self._env
        if env.settings.action_mode == "discrete":
            return op
        target = env.nearest_target(int(self.agent.rpartition("_")[2]))
        return {"op": op, "target": TARGET_IDS.index(target), "coop": 0, "coop_partner": 0,
                "reply": np.zeros(MAX_PLAYERS, dtype=np.int64)}
