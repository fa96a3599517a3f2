"""``arena play ENV``: a person plays one seat at the terminal against chosen policies.

The person's seat is the registry's ``human`` policy (it shows the observation's text and reads one
line), in the tank battle its ``keyboard`` policy (the game's pygame window); the opponents are
policy specs, by default the environment's ``rule`` policy (else ``random``); the settings an
opponent's trained model carries join ``env_kwargs`` (:mod:`arena_envs.runner.env_settings`). The
seeds come from :func:`arena_envs.runner.seeding.episode_seeds` (episode 0 of a run seeded with
``--seed``), so the same seed and the same answers replay the same game.

Each prompt ends with the legal answers (the environment's answer constraint); ``help`` repeats
them, ``quit`` (or the end of the input) abandons the game. JSON answers may be typed bare: the
value of a one-field answer (``42`` for ``{"chosen_number": 42}``), the values of several fields in
order (``shoot player_2``), or those of one object field's fields (a pirate proposal
``40 0 30 ...``); a number ``k`` picks the k-th listed choice of a choice decision. Anything else
goes to the environment as typed, which parses it like an LLM's reply and asks again when it cannot
use it. Ctrl-C abandons the game wherever it waits (a prompt, the tank's window, an opponent's model):
:func:`play` raises ``KeyboardInterrupt``.

The game is recorded as an ordinary results folder, played by the runner itself
(:mod:`arena_envs.runner.play_game`); ``arena play --web`` seats the person in a page instead
(:mod:`arena_envs.view.web_seat`), with the same answers (:func:`answer_text`, :func:`bare_answer`).
"""
from __future__ import annotations

import asyncio
import json
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from arena_envs.core import Policy
from arena_envs.core.answers import AnswerConstraint
from arena_envs.gamma.answer import EXPLANATION_KEY
from arena_envs.runner.play_game import (
    PERSON,
    PlayResult,
    PolicyFailed,
    Quit,
    default_opponent,
    opponent_specs,
    play_game,
    prepare,
    start,
)
from arena_envs.runner.policy_specs import make_policy

__all__ = ["PERSON", "PlayResult", "PolicyFailed", "Quit", "TerminalSeat", "answer_text", "bare_answer", "bare_form",
           "default_opponent", "legal_answers", "opponent_specs", "play", "result_text"]

#: the policy through which the person plays, where it is not ``human`` (the terminal)
PERSON_POLICY = {"tank_battle_v0": "keyboard"}  # the game's pygame window: arrows move, space shoots, Esc waits
#: the words the person may type instead of an answer
COMMANDS = "help (the legal answers again), quit (abandon the game)"
#: choices listed one per line up to this many; more are summarised
MAX_LISTED = 20


def legal_answers(constraint: AnswerConstraint | None) -> str:
    """The lines that tell the person what to type for ``constraint``."""
    if constraint is None:
        return f"answer: free text\ncommands: {COMMANDS}"
    lines = [f"legal answers: {constraint.description}"]
    if constraint.kind == "choice":
        shown = constraint.choices[:MAX_LISTED]
        lines += [f"  {k}. {choice}" for k, choice in enumerate(shown, 1)]
        if len(constraint.choices) > MAX_LISTED:
            lines.append(f"  ... {len(constraint.choices) - MAX_LISTED} more")
        lines.append("type a choice or its number")
    hint = bare_hint(constraint)
    if hint:
        lines.append(hint)
    lines.append(f"commands: {COMMANDS}")
    return "\n".join(lines)


def bare_form(constraint: AnswerConstraint) -> tuple[str | None, list[str]] | None:
    """How a JSON answer may be typed bare: ``(None, fields)``, values of the answer's fields in order,
    or ``(outer, fields)``, values of the fields of the one object field ``outer`` (the pirate game's
    proposal); None for other answers. The γ-Bench CoT ``explanation`` is left out (the games read
    the answer without it)."""
    if constraint.kind != "json":
        return None
    properties = constraint.schema.get("properties", {})
    fields = [key for key in constraint.schema.get("required", []) if key != EXPLANATION_KEY]
    if len(fields) == 1:
        inner = properties.get(fields[0], {})
        if inner.get("type") == "object" and inner.get("required"):
            return fields[0], list(inner["required"])
    return (None, fields) if fields else None


def bare_hint(constraint: AnswerConstraint) -> str:
    """The line that says how to type ``constraint``'s answer bare ("" when it cannot be)."""
    form = bare_form(constraint)
    if form is None:
        return ""
    outer, fields = form
    if outer is not None:
        return f"type the {len(fields)} values of {outer} ({' '.join(fields)}) in order, or the JSON object"
    if len(fields) == 1:
        return f"type the {fields[0]} alone (sent as {{\"{fields[0]}\": ...}}), or the JSON object"
    return (f"type the values of {' '.join(fields)} in order (the last may be left out where the game "
            "allows it), or the JSON object")


def bare_answer(values: Sequence[Any], constraint: AnswerConstraint) -> str | None:
    """The JSON answer of ``values`` given bare for ``constraint``'s fields in order (:func:`bare_form`;
    the last ones may be left out, not those of an object field), or None when they do not fit."""
    form = bare_form(constraint)
    if form is None:
        return None
    outer, fields = form
    if outer is not None:
        return json.dumps({outer: dict(zip(fields, values))}) if len(values) == len(fields) else None
    return json.dumps(dict(zip(fields, values))) if len(values) <= len(fields) else None


def answer_text(line: str, constraint: AnswerConstraint | None) -> str:
    """The reply the environment gets for the typed ``line`` (a bare value completed, see module doc)."""
    text = line.strip()
    if constraint is None or not text:
        return line
    if constraint.kind == "choice" and text not in constraint.choices:
        if text.isdigit() and 1 <= int(text) <= len(constraint.choices):
            return constraint.choices[int(text) - 1]
        matches = [c for c in constraint.choices if c.lower() == text.lower()]
        return matches[0] if matches else line
    form = bare_form(constraint)
    if form is None or text.startswith("{"):
        return line
    outer, fields = form
    tokens = [text] if outer is None and len(fields) == 1 else text.replace(",", " ").split()
    return bare_answer([typed_value(token) for token in tokens], constraint) or line


def typed_value(token: str) -> Any:
    """A typed token as JSON (``42``, ``null``) where it parses, else as a string."""
    try:
        return json.loads(token)
    except (ValueError, RecursionError):  # nesting past the interpreter's depth: a string too
        return token


class PersonPolicy(Policy):
    """The person's seat (label ``human``): the game's answer constraint at hand (``constraint()``,
    from the bound environment), and the answer as the person gave it in the step log's trace."""

    name = PERSON

    def __init__(self) -> None:
        self._env: Any = None
        self.agent = ""
        self.typed: str | None = None

    def bind(self, env: Any) -> None:
        self._env = env

    def reset(self, agent: str, seed: int | None = None) -> None:
        self.agent, self.typed = agent, None

    def constraint(self) -> AnswerConstraint | None:
        describe = getattr(self._env, "answer_constraint", None)
        return describe() if callable(describe) else None

    def trace(self) -> dict[str, Any]:
        return {"text": self.typed}


class TerminalSeat(PersonPolicy):
    """The person at the terminal, through ``human`` (a policy that shows a text and returns a typed
    line: the registry's ``human``): ``help`` shows the legal answers again, ``quit`` or the end of
    the input raise :class:`Quit`, a bare value is completed (:func:`answer_text`)."""

    def __init__(self, human: Policy):
        super().__init__()
        self.human = human

    def reset(self, agent: str, seed: int | None = None) -> None:
        super().reset(agent, seed)
        self.human.reset(agent, seed)

    def act(self, observation: Any, info: dict[str, Any]) -> str:
        constraint = self.constraint()
        text = observation.get("text") if isinstance(observation, dict) else None
        shown = f"{text if text is not None else observation}\n\n{legal_answers(constraint)}"
        while True:
            try:
                line = self.human.act({"text": shown}, info)
            except EOFError as err:  # HumanInputClosed: the input ended
                raise Quit("input closed") from err
            word = line.strip().lower()
            if word == "quit":
                raise Quit("quit")
            if word != "help":
                self.typed = line
                return answer_text(line, constraint)
            shown = legal_answers(constraint)

    def close(self) -> None:
        self.human.close()


class TerminalFront:
    """Says at the terminal what the person must see besides the questions."""

    def __init__(self, output: TextIO, me: str):
        self.output, self.me = output, me

    def rejected(self, kind: str, reason: str) -> None:
        print(f"\n[not accepted ({kind}): {reason}]", file=self.output, flush=True)

    def game_over(self, text: str) -> None:
        print(f"\n===== {self.me}: game over =====\n{text}", file=self.output, flush=True)


def play(env_name: str, seat: int = 0, opponents: Sequence[str] = (), seed: int = 0,
         env_kwargs: Mapping[str, Any] | None = None, output: TextIO | None = None,
         out: str | Path | None = None) -> PlayResult:
    """Play one game of ``env_name`` with the person in seat ``seat`` (index into ``possible_agents``),
    recorded into the results folder ``out`` (default: a new one under ``results/``, see
    :func:`~arena_envs.runner.play_game.prepare`), whose path is printed first; Ctrl-C raises
    ``KeyboardInterrupt`` wherever the game waits."""
    output = output or sys.stdout
    game = prepare(env_name, seat, list(opponents), seed, dict(env_kwargs or {}), out)
    person_spec = PERSON_POLICY.get(env_name)
    person = make_policy(person_spec, env_name) if person_spec else TerminalSeat(make_policy(PERSON, env_name))
    runner = start(game, person, TerminalFront(output, game.me))
    print(f"results folder: {game.out}", file=output, flush=True)
    print(game.header(), file=output, flush=True)
    # asyncio.run replaces Python's default Ctrl-C handler with one that only cancels the game's task,
    # which a person's blocking read never notices: a handler of its own keeps Ctrl-C raising in place
    own = threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
    previous = signal.signal(signal.SIGINT, _interrupt) if own else None
    try:
        return asyncio.run(play_game(runner))
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def result_text(result: PlayResult) -> str:
    """The closing lines: each seat's score, the person's marked."""
    if result.scores is None:
        return f"game abandoned after {result.steps} steps; no scores"
    lines = ["result (scores):"]
    for agent, score in sorted(result.scores.items(), key=lambda item: -item[1]):
        mark = "  <- you" if agent == result.seat else ""
        lines.append(f"  {agent:<14}{score:10.3f}{mark}")
    return "\n".join(lines)
