"""Shared pieces of the eight γ-Bench environments (spec §1.3, §2.1).

Text blocks (any γ-Bench game, simultaneous or sequential):

* :func:`rules_block` - the stable prefix: optional persona, the game's intro, the numbered
  rules, optional identity line. Build it once per agent.
* :func:`report_block` - one finished round: public outcome, the agent's own canonical JSON
  answer echo (``answer.canonical_json`` / ``field.echo``), private outcome.
* :func:`request_block` - the current decision: "round t starts", objective and private lines,
  the correction note of a rejected answer, the JSON format line (``format_instruction``). It is
  never stored; the next report replaces it.
* :class:`Transcript` - one agent's rules prefix plus its report blocks, appended incrementally
  (``history_window`` keeps only the last reports).
* :class:`PromptOptions` - persona, CoT, history window and prompt variant, validated once.
* :func:`random_legal_action` / :data:`FALLBACKS` - the documented fallback of the invalid-answer
  loop (uniform over the legal actions, env RNG) and its ``"raise"`` alternative.

Sequential games (Battle Royale, Pirate) subclass :class:`~arena_envs.core.TextAECEnv` directly
and use the pieces above; e.g. ``Transcript(rules_block(intro, rules, options.persona,
identity=...), options.history_window)``, ``transcript.add(report_block(f"Round {t}", public,
echo, private))`` and, in ``_text``, ``transcript.text + request_block(f"Round {t}", lines,
instruction, note, options.cot)``.

:class:`SimultaneousGameEnv` is the base of games 1-6: agents answer in index order, answers stay
hidden until the last one of the round is in, then the round resolves at once (rewards for all,
one history record, one report per agent) and the next round starts.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import aec_to_parallel

from arena_envs.core import AnswerConstraint, InvalidAnswer, TextAECEnv
from arena_envs.gamma import scoring
from arena_envs.gamma.answer import ChoiceField, IntField
from arena_envs.gamma.prompt_variants import DefaultVariant, PromptVariant, resolve_prompt_variant
from arena_envs.gamma.simultaneous_rules import check_int

#: Re-asks before the fallback applies (spec §1.4: ``max_invalid_retries`` default 5).
DEFAULT_MAX_RETRIES = 5
#: What happens after the last re-ask: a uniformly random legal action (env RNG) or an error.
FALLBACKS = ("random", "raise")
#: Zero-shot CoT trigger appended to the request when ``cot=True`` (spec §11.2).
COT_TRIGGER = "Think it through step by step before you answer."

Fallback = Literal["random", "raise"]


# ---------------------------------------------------------------------------------- text blocks

def rules_block(intro: str, rules: Sequence[str], persona: str | None = None, identity: str | None = None) -> str:
    """The stable prefix: persona sentence, intro, numbered rules, then the identity line."""
    parts = [persona.strip()] if persona else []
    parts.append(intro)
    parts.append("Rules:\n" + "\n".join(f"{n}. {rule}" for n, rule in enumerate(rules, 1)))
    if identity:
        parts.append(identity)
    return "\n\n".join(parts) + "\n"


def report_block(title: str, public: str, echo: str | None, private: str) -> str:
    """A finished round: public outcome, own answer echo (``None``: no answer), private outcome."""
    lines = [f"\n=== {title} results ===", public]
    if echo is not None:
        lines.append(f"Your answer: {echo}")
    if private:
        lines.append(private)
    return "\n".join(lines) + "\n"


def correction_note(reason: str) -> str:
    return f"Your previous answer could not be used: {reason}. Answer again in the required JSON format."


def request_block(title: str, lines: Sequence[str], instruction: str, note: str | None = None, cot: bool = False) -> str:
    """The current decision (not kept in the history)."""
    parts = [f"\n=== {title} starts ===", *lines]
    if note:
        parts.append(correction_note(note))
    if cot:
        parts.append(COT_TRIGGER)
    parts.append(instruction)
    return "\n".join(parts) + "\n"


class Transcript:
    """One agent's context: the rules prefix plus its report blocks, newest last.

    ``window`` keeps only the last ``window`` reports (spec §1.3's ``history_window``; ``None``
    keeps all). ``text`` is rebuilt only when a report is added, so reading it is free.
    """

    __slots__ = ("prefix", "window", "reports", "text")

    def __init__(self, prefix: str, window: int | None = None):
        self.prefix = prefix
        self.window = window
        self.reports: list[str] = []
        self.text = prefix

    def add(self, report: str) -> None:
        self.reports.append(report)
        if self.window is None:
            self.text += report
        else:
            self.text = self.prefix + "".join(self.reports[-self.window:]) if self.window else self.prefix


@dataclass(frozen=True)
class PromptOptions:
    """Prompt knobs shared by every γ-Bench game (spec §1.3, §11.2)."""

    persona: str | None = None  #: one sentence put before the rules (e.g. "You are a selfish player.")
    cot: bool = False  #: ask for an "explanation" key first and add the step-by-step trigger
    history_window: int | None = None  #: keep only the last reports (None = the full history)
    variant: PromptVariant = field(default_factory=DefaultVariant)  #: template set of the description (spec §11.1)

    def __post_init__(self) -> None:
        if self.persona is not None and not isinstance(self.persona, str):
            raise ValueError(f"persona must be a str or None, got {self.persona!r}")
        if self.history_window is not None and (not isinstance(self.history_window, int) or self.history_window < 0):
            raise ValueError(f"history_window must be None or an int >= 0, got {self.history_window!r}")

    def description(self, game: str, params: dict[str, Any], intro: str, rules: Sequence[str],
                    identity: str | None = None) -> str:
        """The rules block of ``game`` as this prompt's variant words it, with the persona."""
        intro, rules = self.variant.describe(game, params, intro, rules)
        return rules_block(intro, rules, self.persona, identity)


def random_legal_action(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A uniformly random index where ``mask`` is 1 (the fallback of the invalid-answer loop)."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def check_fallback(fallback_action: str) -> None:
    if fallback_action not in FALLBACKS:
        raise ValueError(f"fallback_action must be one of {FALLBACKS}, got {fallback_action!r}")


def readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def fmt(x: float) -> str:
    """A number as players read it: at most 2 decimals, no trailing zeros (``54.5``, ``33.33``, ``20``)."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def percent(x: float) -> str:
    """``0.6`` -> ``60%``."""
    return f"{fmt(x * 100)}%"


def entry_points(cls: type[TextAECEnv]) -> tuple[Callable[..., AECEnv], Callable[..., TextAECEnv], Callable[..., ParallelEnv]]:
    """``env``, ``raw_env`` and ``parallel_env`` of a versioned entry module.

    ``parallel_env`` has no re-ask (``max_retries=0``): the parallel API steps every agent once
    per cycle, so an invalid answer falls back at once (still recorded and counted).
    """

    def raw_env(**kwargs: Any) -> TextAECEnv:
        return cls(**kwargs)

    def env(**kwargs: Any) -> AECEnv:
        return wrappers.OrderEnforcingWrapper(cls(**kwargs))

    def parallel_env(**kwargs: Any) -> ParallelEnv:
        if kwargs.setdefault("max_retries", 0) != 0:
            raise ValueError(f"parallel_env needs max_retries=0 (every agent acts once per cycle), got {kwargs['max_retries']!r}")
        return aec_to_parallel(env(**kwargs))

    raw_env.__doc__ = f"The unwrapped :class:`{cls.__module__}.{cls.__name__}`."
    env.__doc__ = f"{cls.__name__} wrapped in PettingZoo's OrderEnforcingWrapper (the AEC API)."
    parallel_env.__doc__ = f"{cls.__name__} through the Parallel API (aec_to_parallel; invalid answers fall back at once)."
    return env, raw_env, parallel_env


# ------------------------------------------------------------------------ simultaneous games

class SimultaneousGameEnv(TextAECEnv):
    """Games 1-6: ``n_rounds`` rounds in which every player answers once, hidden until resolution.

    Native actions are indices into ``self._values`` (a ``range`` of numbers or a tuple of
    words); a ``str`` is parsed by the game's answer field. A subclass sets ``metadata`` and
    implements the game hooks below; everything PettingZoo-facing lives here.
    """

    metadata: dict[str, Any] = {"name": "gamma_simultaneous", "render_modes": ["ansi", "human"], "is_parallelizable": True}
    #: Names of the game-specific features that follow ``round_index`` and ``n_rounds``.
    game_feature_names: tuple[str, ...] = ()
    #: The game's registered name, which selects its scoring functions.
    game: str = ""

    def __init__(
        self,
        *,
        n_players: int,
        n_rounds: int,
        values: Sequence[Any],
        max_retries: int = DEFAULT_MAX_RETRIES,
        fallback_action: Fallback = "random",
        persona: str | None = None,
        cot: bool = False,
        history_window: int | None = None,
        prompt_variant: str | PromptVariant = "v1",
        reveal_own_id: bool = False,
        score_variant: str | None = None,
        invalid_action_penalty: float = 0.0,
        render_mode: str | None = None,
        max_cycles: int | None = None,
    ):
        variants = scoring.VARIANTS[self.game]
        if score_variant is not None and score_variant not in variants:
            raise ValueError(f"score_variant must be one of {variants}, got {score_variant!r}")
        self.score_variant = score_variant or variants[0]
        self.n_players = check_int("n_players", n_players, 2)
        self.n_rounds = check_int("n_rounds", n_rounds, 1)
        check_fallback(fallback_action)
        self.fallback_action = fallback_action
        self.prompt = PromptOptions(persona, bool(cot), history_window, resolve_prompt_variant(prompt_variant))
        self.reveal_own_id = bool(reveal_own_id)
        self._values = values
        agents = [f"player_{i}" for i in range(self.n_players)]
        super().__init__(
            agents=agents,
            action_spaces={a: spaces.Discrete(len(values)) for a in agents},
            feature_names=("round_index", "n_rounds", *self.game_feature_names),
            max_retries=max_retries,
            invalid_action_penalty=invalid_action_penalty,
            render_mode=render_mode,
            max_cycles=max_cycles,
        )
        self._index = {a: i for i, a in enumerate(agents)}
        self._full_mask = readonly(np.ones(len(values), dtype=np.int8))
        self._prefixes = [
            self.prompt.description(self.game, self.params(), self._intro(), self._rules(),
                                    f"You are {a}." if self.reveal_own_id else None)
            for a in agents
        ]

    # ---------------------------------------------------------------- hooks of a game

    def _intro(self) -> str:
        """First line(s) of the rules block (players, rounds, the game's premise)."""
        raise NotImplementedError

    def _rules(self) -> list[str]:
        raise NotImplementedError

    def _field(self, i: int) -> IntField | ChoiceField:
        """The answer field of player ``i``'s current decision."""
        raise NotImplementedError

    def _new_round(self) -> None:
        """Draw or reset per-round private state (valuations, tokens); default: nothing."""

    def _round_mask(self, i: int) -> np.ndarray | None:
        """Player ``i``'s mask for this round, or ``None`` when every action is legal."""
        return None

    def _resolve(self, values: list[Any]) -> tuple[dict[str, Any], list[float]]:
        """The round record (history schema) and each player's reward for the given answers."""
        raise NotImplementedError

    def _report(self, i: int, record: dict[str, Any]) -> tuple[str, str]:
        """(public outcome, private outcome) texts of ``record`` as player ``i`` sees them."""
        raise NotImplementedError

    def _request(self, i: int) -> list[str]:
        """Objective and private lines of player ``i``'s current decision."""
        raise NotImplementedError

    def _instruction(self, i: int) -> str:
        """The JSON answer-format line of player ``i``'s current decision."""
        return self._field(i).instruction(self.prompt.cot)

    def _game_features(self, i: int) -> list[float]:
        raise NotImplementedError

    def _observed(self, i: int, record: dict[str, Any]) -> dict[str, Any]:
        """The part of ``record`` player ``i`` is shown (``infos["last_round_record"]``)."""
        raise NotImplementedError

    def _private_info(self, i: int) -> dict[str, Any]:
        """Private state of player ``i``'s decision for rule policies (valuation, tokens...)."""
        return {}

    def _summary(self, record: dict[str, Any]) -> str:
        """One line of ``render()`` for a resolved round."""
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The game's parameters in the history schema (``arena_envs.gamma.history``)."""
        raise NotImplementedError

    def _agent_score(self, i: int) -> float:
        """What player ``i`` is ranked by in the metrics; default: its total payoff."""
        return self.totals[i]

    def compute_raw_score(self) -> Any:
        """The game's raw γ-Bench statistic (S1..S6) of the history so far."""
        return scoring.raw_score(self.game, self.params(), self.history, self.score_variant)

    def compute_score(self) -> float:
        """The 0-100 γ-Bench score of the history so far (``score_variant``; default: the paper's)."""
        return scoring.score(self.game, self.params(), self.history, self.score_variant)

    # ---------------------------------------------------------------- TextAECEnv hooks

    def config(self) -> dict[str, Any]:
        return {**self.params(), "score_variant": self.score_variant, "max_retries": self.max_retries, "fallback_action": self.fallback_action,
                "persona": self.prompt.persona, "cot": self.prompt.cot, "history_window": self.prompt.history_window,
                "prompt_variant": self.prompt.variant.name, "reveal_own_id": self.reveal_own_id}

    def _start_game(self, options: dict[str, Any]) -> None:
        self.round = 0  # 0-based index of the current round; == n_rounds once the game is over
        self.history: list[dict[str, Any]] = []
        self.totals = [0.0] * self.n_players
        self._moves: list[int] = []
        self._transcripts = [Transcript(p, self.prompt.history_window) for p in self._prefixes]
        self._last_seen: list[dict[str, Any] | None] = [None] * self.n_players
        self._new_round()
        self._clear_caches()

    def _clear_caches(self) -> None:
        self._request_text: list[tuple[str | None, str] | None] = [None] * self.n_players
        self._feature_cache: list[np.ndarray | None] = [None] * self.n_players
        self._mask_cache: list[np.ndarray | None] = [None] * self.n_players

    @property
    def done(self) -> bool:
        return self.round >= self.n_rounds

    @property
    def last_record(self) -> dict[str, Any] | None:
        """The record of the last resolved round (``None`` before the first)."""
        return self.history[-1] if self.history else None

    def _parse_text(self, agent: str, text: str) -> int:
        i = self._index[agent]
        value = self._field(i).parse(text)
        try:
            return self._values.index(value)
        except ValueError:
            raise InvalidAnswer("illegal", f"{value!r} is not a legal answer") from None

    def _from_native(self, agent: str, action: Any) -> int:
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
                action = action.item()
            else:
                raise InvalidAnswer("unparseable", f"expected an action index or a text answer, got {action!r}")
        if not 0 <= action < len(self._values):
            raise InvalidAnswer("illegal", f"action {action} is outside 0..{len(self._values) - 1}")
        return int(action)

    def _validate(self, agent: str, move: int) -> None:
        if not self._action_mask(agent)[move]:
            field = self._field(self._index[agent])
            allowed = f"from {field.low} to {field.high}" if isinstance(field, IntField) else ", ".join(field.choices)
            raise InvalidAnswer("illegal", f'"{field.key}" {self._values[move]!r} is not allowed now (allowed: {allowed})')

    def _fallback(self, agent: str) -> int:
        if self.fallback_action == "raise":
            raise RuntimeError(f"{agent} gave {self.max_retries + 1} invalid answers in a row (fallback_action='raise')")
        return random_legal_action(self.np_random, self._action_mask(agent))

    def _apply(self, agent: str, move: int, fell_back: bool) -> None:
        self._moves.append(move)
        if len(self._moves) == self.n_players:
            self._resolve_round()

    def _resolve_round(self) -> None:
        values = [self._values[a] for a in self._moves]
        record, rewards = self._resolve(values)
        self.history.append(record)
        self.record.add("round", **record)
        title = f"Round {self.round + 1}"
        for i, agent in enumerate(self.possible_agents):
            self.rewards[agent] = rewards[i]
            self.totals[i] += rewards[i]
            public, private = self._report(i, record)
            self._transcripts[i].add(report_block(title, public, self._field(i).echo(values[i]), private))
            self._last_seen[i] = self._observed(i, record)
        self._moves = []
        self.round += 1
        if self.done:
            for agent in self.possible_agents:
                self.terminations[agent] = True
        else:
            self._new_round()
        self._clear_caches()
        for agent in self.possible_agents:
            self._refresh_info(agent, None)

    def _next_agent(self) -> str | None:
        return None if self.done else self.possible_agents[len(self._moves)]

    def _asked(self, i: int) -> bool:
        return not self.done and i >= len(self._moves)

    def _text(self, agent: str, note: str | None) -> str:
        i = self._index[agent]
        transcript = self._transcripts[i].text
        if not self._asked(i):
            return transcript
        cached = self._request_text[i]
        if cached is None or cached[0] != note:
            block = request_block(f"Round {self.round + 1}", self._request(i), self._instruction(i), note, self.prompt.cot)
            cached = self._request_text[i] = (note, block)
        return transcript + cached[1]

    def _features(self, agent: str) -> np.ndarray:
        i = self._index[agent]
        cached = self._feature_cache[i]
        if cached is None:
            cached = self._feature_cache[i] = readonly(
                np.array([self.round, self.n_rounds, *self._game_features(i)], dtype=np.float32))
        return cached

    def _action_mask(self, agent: str) -> np.ndarray:
        i = self._index[agent]
        cached = self._mask_cache[i]
        if cached is None:
            mask = None if self.done else self._round_mask(i)
            cached = self._mask_cache[i] = self._full_mask if mask is None else readonly(mask)
        return cached

    def _agent_info(self, agent: str) -> dict[str, Any]:
        i = self._index[agent]
        return {
            "round": min(self.round + 1, self.n_rounds),
            "phase": "done" if self.done else ("act" if self._asked(i) else "wait"),
            "action_mask": self._action_mask(agent),
            "last_round_record": self._last_seen[i],
            **self._private_info(i),
        }

    def action_of(self, value: Any) -> int:
        """The native action that answers ``value`` (a number or a word such as ``"go"``)."""
        try:
            return self._values.index(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an answer of {self.game}; answers are {self._values}") from None

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint:
        agent = self.agent_selection if agent is None else agent
        return self._field(self._index[agent]).constraint(self.prompt.cot)

    def _metrics(self) -> dict[str, Any]:
        agents = {a: {"score": self._agent_score(i), "payoff": self.totals[i]} for i, a in enumerate(self.possible_agents)}
        game: dict[str, Any] = {"rounds": len(self.history), "score_variant": self.score_variant,
                                "raw_score": None, "score": None}
        if self.history and self._scored():
            game.update(raw_score=self.compute_raw_score(), score=self.compute_score())
        return {"agents": agents, "game": game}

    def _scored(self) -> bool:
        """Whether the γ-Bench score is defined for this configuration (SBA: first-price only)."""
        return True

    def _render_text(self) -> str:
        return "\n".join(f"Round {r['round']}: {self._summary(r)}" for r in self.history)
