"""What a tank says: the text action grammar and the answer constraint for guided decoding.

:func:`parse_answer` reads an answer into a :class:`Decision` and never raises; :func:`parse_decision`
is the game's parser (one with an operation, else :class:`~arena_envs.core.InvalidAnswer`). Neither
knows the world, so neither judges target ids; the env combines them with :func:`target_valid` at
step time, while the world still shows the state the agent saw:

* the control part is valid (:func:`control_valid`) iff an operation was found and, in stages 3-7,
  its target is -1, 200 (a wall: the previous target stays, :func:`effective_target`), a listed
  enemy tank or a current enemy base; otherwise the round's operation is ``noop``;
* :func:`format_ok` (FAcc): the control part is valid and, in cooperative stages, a cooperation
  operation was found. :func:`format_problem` says why not in one line, for the agent's next text.

``strict=False`` (the reference mode, default) reproduces the reference code's matching, quirks
included (stages 1-2: the first operation of a fixed priority list found anywhere wins).
``strict=True`` (ours) reads the control operation after the last ``#Operation:`` / ``#Attack
operation:`` header and the cooperation operation after the last ``#Cooperation operation:``
header (the Chinese templates' headers too), in the whole answer when a header is missing. In both
modes the message of a ``#Request_coop#`` is only a message, never an operation, target, header or
reply; replies are read anywhere.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from arena_envs.core.answers import AnswerConstraint, InvalidAnswer
from arena_envs.tank_battle.coop import legal_partners
from arena_envs.tank_battle.decision import Coop, Decision
from arena_envs.tank_battle.stages import Stage
from arena_envs.tank_battle.world import Operation

if TYPE_CHECKING:
    from arena_envs.tank_battle.world import World

#: the answer tokens of the five operations, in the reference's priority order
OP_TOKENS: dict[str, Operation] = {"Move_up": "up", "Move_down": "down", "Move_left": "left",
                                   "Move_right": "right", "Shoot": "shoot"}
#: an operation's token as the texts show it (``Noop`` only for native actions, never offered to LLMs)
TOKEN_OF: dict[str, str] = {**{op: token for token, op in OP_TOKENS.items()}, "noop": "Noop"}
NO_TARGET = -1
WALL_TARGET = 200
#: what a target id too long to be any id parses to (it is never valid)
OUT_OF_RANGE_TARGET = -2
_MAX_ID_DIGITS = 9

_OPS = "|".join(OP_TOKENS)
_OP_ANY = re.compile(_OPS)
_TARGET = re.compile(r"Target\s*\{?(-?\d+)\}?:\s*#?(" + _OPS + ")#?")
_REQUEST = re.compile(r"#?Request_coop#?\s*\{?(\d+)\}?:\s*(.+)")
# a request's message on its own line only: an empty message leaves the next line the sender's own
_REQUEST_LINE = re.compile(r"#?Request_coop#?\s*\{?(\d+)\}?:[ \t]*([^\n]*)")
_COOP_TOKENS: tuple[tuple[str, Coop], ...] = (("Keep_coop", "keep"), ("Stop_coop", "stop"), ("No_coop", "none"))
# Reply_message, optional "#", an optional source id (braces and colon optional), the answer up to the
# end of the line or the next Reply_message
_REPLY = re.compile(r"Reply_message#?[ \t]*(?:\{?[ \t]*(\d+)[ \t]*\}?[ \t]*[:：]?)?[ \t]*((?:(?!Reply_message)[^\n])*)")
_REPLY_STRIP = " \t\r\f\v{}[]()\"'`“”‘’「」#*.,;:!?。，；：！？"
_CONTROL_HEADER = re.compile(r"#(?:Operation|Attack operation|操作|攻击操作)[ \t]*[:：]")
_COOP_HEADER = re.compile(r"#(?:Cooperation operation|协作操作)[ \t]*[:：]")
#: the longest request message kept (texts show messages cut to 200 characters)
MAX_MESSAGE = 200
#: why an answer without an operation is not taken, in each answer language
NO_OPERATION = {"en": "no operation found: answer with one of the operation tokens of the format above",
                "zh": "未找到操作：请按上面的格式给出一个操作"}


def parse_answer(text: str, stage: Stage, strict: bool = False) -> Decision:
    """Read an answer for ``stage``; never raises (a non-str reads as an empty answer)."""
    if not isinstance(text, str):
        text = ""
    own = _without_messages(text) if "Request_coop" in text else text
    control = own[_after_last(_CONTROL_HEADER, own):] if strict else own
    target: int | None = None
    if stage.navigation:
        op = _strict_op(control) if strict else _priority_op(control)
    else:
        matches = list(_TARGET.finditer(control))
        op = None
        if matches:
            last = matches[-1]
            target = _int_id(last.group(1))
            op = OP_TOKENS[last.group(2)]
    if not stage.cooperative:
        return Decision(op=op or "noop", op_found=op is not None, target=target)
    coop, partner, message = _cooperation(text[_after_last(_COOP_HEADER, own):] if strict else text)
    replies, reply_all = _replies(own)
    return Decision(op=op or "noop", op_found=op is not None, target=target, coop=coop, partner=partner,
                    message=message, replies=replies, reply_all=reply_all)


def parse_decision(text: str, stage: Stage, strict: bool = False, lang: str = "en") -> Decision:
    """The decision of :func:`parse_answer` when it holds an operation; else :class:`InvalidAnswer`
    (``unparseable``, :data:`NO_OPERATION` in ``lang``)."""
    decision = parse_answer(text, stage, strict)
    if not decision.op_found:
        raise InvalidAnswer("unparseable", NO_OPERATION[lang])
    return decision


def _after_last(header: re.Pattern[str], text: str) -> int:
    """Where the part of ``text`` after its last ``header`` starts (0 without one)."""
    start = 0
    for match in header.finditer(text):
        start = match.end()
    return start


def _without_messages(text: str) -> str:
    """``text`` with the message of every cooperation request blanked out (its length kept): what a
    tank writes to another is never read as its own operation, target, header or reply."""
    return _REQUEST_LINE.sub(lambda m: m[0][:m.start(2) - m.start()] + " " * len(m[2]), text)


def _priority_op(text: str) -> Operation | None:
    for token, op in OP_TOKENS.items():
        if token in text:
            return op
    return None


def _strict_op(text: str) -> Operation | None:
    found = _OP_ANY.findall(text)
    return OP_TOKENS[found[-1]] if found else None


def _int_id(digits: str) -> int:
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("-").lstrip("0") or "0"
    return sign * int(digits) if len(digits) <= _MAX_ID_DIGITS else OUT_OF_RANGE_TARGET


def _cooperation(text: str) -> tuple[Coop | None, int | None, str]:
    requests = list(_REQUEST.finditer(text))
    if requests:
        last = requests[-1]
        return "request", _int_id(last.group(1)), last.group(2).strip()[:MAX_MESSAGE]
    for token, coop in _COOP_TOKENS:
        if token in text:
            return coop, None, ""
    return None, None, ""


def _replies(text: str) -> tuple[dict[int, bool], bool | None]:
    replies: dict[int, bool] = {}
    reply_all: bool | None = None
    if "Reply_message" not in text:
        return replies, reply_all
    for match in _REPLY.finditer(text):
        agree = match.group(2).strip(_REPLY_STRIP).lower() == "agree"
        if match.group(1) is None:
            reply_all = agree
        else:
            replies[_int_id(match.group(1))] = agree
    return replies, reply_all


# ------------------------------------------------------------------ judging a decision against the world

def valid_targets(world: World, player: int) -> list[int]:
    """The ids ``player`` may name as target now, sorted: -1 (none), 200 (a wall), the listed enemy
    tanks and the current enemy bases; never teammates, own bases or unknown ids."""
    return sorted({NO_TARGET, WALL_TARGET, *(t.id for t in world.enemy_tanks(player)),
                   *(b.id for b in world.enemy_bases(player))})


def target_valid(world: World, player: int, target: int | None) -> bool:
    """Whether ``target`` is one of :func:`valid_targets` (``None``, not stated, is not)."""
    if target is None:
        return False
    return target in (NO_TARGET, WALL_TARGET) or any(t.id == target for t in world.enemy_tanks(player)) \
        or any(b.id == target for b in world.enemy_bases(player))


def control_valid(world: World, player: int, stage: Stage, decision: Decision) -> bool:
    """Whether the control part is applied (else the round's operation is ``noop``, target unchanged)."""
    if not decision.op_found:
        return False
    return stage.navigation or target_valid(world, player, decision.target)


def format_ok(world: World, player: int, stage: Stage, decision: Decision) -> bool:
    """Format validity of one decision (FAcc): the control part is valid and, in
    cooperative stages, a cooperation operation was found."""
    return control_valid(world, player, stage, decision) and (not stage.cooperative or decision.coop is not None)


def format_problem(world: World, player: int, stage: Stage, decision: Decision) -> str | None:
    """Why a decision is not format-valid, in one line for the agent's next text (``None``: it is)."""
    if not decision.op_found:
        if stage.navigation:
            return "no operation found; answer with #Operation: and one of #Move_up#, #Move_down#, #Move_left#, " \
                   "#Move_right#, #Shoot#"
        return "no target clause found; answer with Target {id}: and an operation, e.g. Target -1: #Move_up#"
    if not stage.navigation and not target_valid(world, player, decision.target):
        valid = ", ".join(str(i) for i in valid_targets(world, player))
        return f"target {decision.target} is not an enemy tank or enemy base on the map; valid targets: {valid}"
    if stage.cooperative and decision.coop is None:
        return "no cooperation operation found; add #Cooperation operation: with #No_coop#, #Keep_coop#, " \
               "#Stop_coop# or #Request_coop# {id}: {message}"
    return None


def effective_target(previous: int, stated: int | None) -> int:
    """The target after a valid decision: 200 (a wall) and an unstated target keep ``previous``."""
    return previous if stated is None or stated == WALL_TARGET else stated


# ------------------------------------------------------------------ guided decoding

#: the longest thought line and request message a constrained answer may hold: short enough that a
#: whole answer fits the LLM policies' default 256 new tokens even at one token per character (a
#: small model padding its thought with numbers gets there), so guided answers are never cut off
THOUGHT_MAX = 140
MESSAGE_MAX = 60
# no "_", "#" or ":": free text can then hold no operation, target, cooperation or reply token
_FREE = r"[^\n#_:]"
#: the templates whose answer format names the control line "#Attack operation:" (the others "#Operation:")
ATTACK_TEMPLATES = (3, 6, 7)
# the headers hold no regex metacharacter: they are their own pattern (plain text suits every guided-decoding engine)
_HEADERS = {
    "en": ("#Thought process:", "#Operation:", "#Attack operation:", "#Cooperation operation:"),
    "zh": ("#思考过程:", "#操作:", "#攻击操作:", "#协作操作:"),
}


def answer_constraint(stage: Stage, world: World, player: int, pending_sources: Iterable[int] = (),
                      lang: str = "en") -> AnswerConstraint:
    """A regex that only parseable, valid answers match (for vLLM guided decoding): one short
    thought line, then the stage's operation line with the legal target ids, in cooperative stages
    a cooperation line (requests only to the legal partners of :func:`~.coop.legal_partners`), and
    one ``Reply_message {src}: Agree|Disagree`` line per pending request source (the sources of
    :meth:`~.coop.CoopState.pending`). ``world`` must show the state the agent sees."""
    thought, operation, attack, cooperation = _HEADERS["zh" if lang == "zh" else "en"]
    ops = "#(" + _OPS + ")#"
    lines = [thought + f" {_FREE}{{1,{THOUGHT_MAX}}}"]
    if stage.navigation:
        lines.append(operation + " " + ops)
        description = f"{thought} <one line>, then {operation} #<Move_up|Move_down|Move_left|Move_right|Shoot>#"
    else:
        header = attack if stage.template in ATTACK_TEMPLATES else operation
        lines.append(header + " Target (" + "|".join(str(i) for i in valid_targets(world, player)) + "): " + ops)
        description = f"{thought} <one line>, then {header} Target <id>: #<operation>#"
    if stage.cooperative:
        choices = ["#Keep_coop#", "#Stop_coop#", "#No_coop#"]
        partners = legal_partners(world, stage, player)
        if partners:
            choices.insert(0, "#Request_coop# (" + "|".join(str(p) for p in partners) + "): "
                           + f"{_FREE}{{1,{MESSAGE_MAX}}}")
        lines.append(cooperation + " (" + "|".join(choices) + ")")
        description += f", then {cooperation} <cooperation operation>"
        sources = sorted(set(pending_sources))
        lines.extend(f"Reply_message {src}: (Agree|Disagree)" for src in sources)
        if sources:
            description += ", then one Reply_message <id>: Agree|Disagree line per received request"
    return AnswerConstraint("regex", description, pattern="\n".join(lines))
