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
"""
from __future__ import annotations

import asyncio
import json
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from arena_envs.core import Policy
from arena_envs.core.answers import AnswerConstraint
from arena_envs.core.arguments import listing
from arena_envs.gamma.answer import EXPLANATION_KEY
from arena_envs.runner import policy_registry as registry
from arena_envs.runner.cli_errors import UsageError
from arena_envs.runner.env_settings import env_arg, settled_env_kwargs
from arena_envs.runner.policy_specs import make_policy
from arena_envs.runner.run_config import env_factory
from arena_envs.runner.seeding import episode_seeds

#: the policy through which the person plays, where it is not ``human`` (the terminal)
PERSON_POLICY = {"tank_battle_v0": "keyboard"}  # the game's pygame window: arrows move, space shoots, Esc waits
#: the words the person may type instead of an answer
COMMANDS = "help (the legal answers again), quit (abandon the game)"
#: choices listed one per line up to this many; more are summarised
MAX_LISTED = 20


class PolicyFailed(RuntimeError):
    """An opponent's policy raised; the game stops."""


class Quit(Exception):
    """The person typed ``quit`` or closed the input."""


@dataclass(frozen=True)
class PlayResult:
    """The end of a game: the person's seat, each seat's score (None when abandoned) and the steps played."""

    seat: str
    scores: dict[str, float] | None
    steps: int


def default_opponent(env: str) -> str:
    """The env's ``rule`` policy when it has one, else ``random``."""
    return "rule" if registry.lookup(env, "rule") else "random"


def opponent_specs(env: str, players: Sequence[str], n_others: int) -> list[str]:
    """One spec per other seat: none given -> the default, one -> it for every seat, else one each."""
    if not players:
        return [default_opponent(env)] * n_others
    if len(players) == 1:
        return list(players) * n_others
    if len(players) != n_others:
        raise UsageError(f"--players: {env} needs 1 or {n_others} opponent specs (one per other seat), "
                         f"got {len(players)}: {listing(players, 100)}")
    return list(players)


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


def _value(token: str) -> Any:
    """A typed token as JSON (``42``, ``null``) where it parses, else as a string."""
    try:
        return json.loads(token)
    except (ValueError, RecursionError):  # nesting past the interpreter's depth: a string too
        return token


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
    if outer is None and len(fields) == 1:
        return json.dumps({fields[0]: _value(text)})
    tokens = text.replace(",", " ").split()
    if outer is not None:
        if len(tokens) != len(fields):
            return line
        return json.dumps({outer: dict(zip(fields, map(_value, tokens)))})
    if len(tokens) > len(fields):
        return line
    return json.dumps(dict(zip(fields, map(_value, tokens))))


def _constraint(raw: Any) -> AnswerConstraint | None:
    describe = getattr(raw, "answer_constraint", None)
    return describe() if callable(describe) else None


def _ask(human: Policy, observation: Any, info: dict[str, Any], constraint: AnswerConstraint | None) -> str:
    """The person's reply to ``observation``; ``help`` shows the legal answers again, ``quit`` raises Quit."""
    text = observation.get("text") if isinstance(observation, dict) else None
    shown = f"{text if text is not None else observation}\n\n{legal_answers(constraint)}"
    while True:
        try:
            line = human.act({"text": shown}, info)
        except EOFError as err:  # HumanInputClosed: the input ended
            raise Quit("input closed") from err
        word = line.strip().lower()
        if word == "quit":
            raise Quit("quit")
        if word != "help":
            return answer_text(line, constraint)
        shown = legal_answers(constraint)


async def _play(env_name: str, seat: int, opponents: list[str], seed: int, env_kwargs: Mapping[str, Any],
                output: TextIO) -> PlayResult:
    env = env_factory(env_name, env_kwargs)()
    raw = env.unwrapped
    agents = list(raw.possible_agents)
    if not 0 <= seat < len(agents):
        raise UsageError(f"--seat {seat}: {env_name} has seats 0..{len(agents) - 1} ({listing(agents, 100)})")
    specs = opponent_specs(env_name, opponents, len(agents) - 1)
    person = PERSON_POLICY.get(env_name, "human")
    specs.insert(seat, person)
    me = agents[seat]
    seeds = episode_seeds(seed, 0, len(agents))
    returns = dict.fromkeys(agents, 0.0)
    steps = 0
    policies: dict[str, Policy] = {}
    try:
        for agent, spec in zip(agents, specs):
            policies[agent] = make_policy(spec, env_name)
        settled = settled_env_kwargs(env_kwargs, specs, list(policies.values()))
        if settled != env_kwargs:  # an opponent's trained model carries settings the command left out
            env.close()
            env = env_factory(env_name, settled)()
            raw = env.unwrapped
            if list(raw.possible_agents) != agents:
                added = " ".join(env_arg(key, settled[key]) for key in settled if key not in env_kwargs)
                raise UsageError(f"the opponents' settings change the seats of {env_name}; give them: {added}")
        others = ", ".join(f"{a}: {s}" for a, s in zip(agents, specs) if a != me)
        print(f"{env_name}, seed {seed}: you are {me}" + (f"; {others}" if others else ""), file=output, flush=True)
        env.reset(seed=seeds.env)
        for j, agent in enumerate(agents):
            policies[agent].bind(raw)
            policies[agent].reset(agent, seeds.seats[j])
        while raw.agents:
            agent = raw.agent_selection
            observation, _, termination, truncation, info = env.last()
            if termination or truncation:
                if agent == me:  # the game's last word to the person (the final round's outcome)
                    text = observation.get("text") if isinstance(observation, dict) else observation
                    print(f"\n===== {me}: game over =====\n{text}", file=output, flush=True)
                await policies[agent].afinish(observation, info)
                env.step(None)
                continue
            if agent == me and person == "human":
                action: Any = _ask(policies[me], observation, info, _constraint(raw))
            else:
                try:
                    action = await policies[agent].aact(observation, info)
                except Exception as err:
                    raise PolicyFailed(f"policy {specs[agents.index(agent)]!r} of seat {agent} raised at step "
                                       f"{steps}: {type(err).__name__}: {err}") from err
            env.step(action)
            steps += 1
            for other, reward in raw.rewards.items():
                returns[other] += float(reward)
            bad = raw.infos.get(me, {}).get("invalid_action") if agent == me else None
            if bad:
                print(f"\n[not accepted ({bad['kind']}): {bad.get('reason', '')}]", file=output, flush=True)
        scores = returns
        if hasattr(raw, "episode_metrics"):
            metrics = raw.episode_metrics().get("agents", {})
            scores = {a: float(metrics[a]["score"]) for a in agents if a in metrics} or returns
        return PlayResult(me, scores, steps)
    except Quit:
        return PlayResult(me, None, steps)
    finally:
        for policy in policies.values():
            policy.close()
        env.close()


def play(env_name: str, seat: int = 0, opponents: Sequence[str] = (), seed: int = 0,
         env_kwargs: Mapping[str, Any] | None = None, output: TextIO | None = None) -> PlayResult:
    """Play one game of ``env_name`` with the person in seat ``seat`` (index into ``possible_agents``);
    Ctrl-C raises ``KeyboardInterrupt`` wherever the game waits."""
    game = _play(env_name, seat, list(opponents), seed, dict(env_kwargs or {}), output or sys.stdout)
    # asyncio.run replaces Python's default Ctrl-C handler with one that only cancels the game's task,
    # which a person's blocking read never notices: a handler of its own keeps Ctrl-C raising in place
    own = threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
    previous = signal.signal(signal.SIGINT, _interrupt) if own else None
    try:
        return asyncio.run(game)
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
