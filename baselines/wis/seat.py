"""What a Who is Spy rule player knows about its seat, and the base class of the rule players.

A rule player reads only ``info``: the public clues, the phase, the legal
vote targets. :class:`ClueMemory` reads each new clue of ``info["descriptions"]`` once (its normal
form, its content tokens by speaker), so a decision costs the same in round 3 as in round 1.
:class:`WisPlayer` binds to the environment (language, lexicon, action mode), asks its
describer for a clue and its voter for a target, and answers in the env's action mode: a string in
text mode; in discrete mode the clue's index ``n+1+k`` in ``info["clue_options"]`` (the first
option when the clue is not among them) and the seat index of the target, ``n`` to abstain.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from pettingzoo import AECEnv

from arena_envs.core import Policy
from arena_envs.who_is_spy.clues import tokens
from arena_envs.who_is_spy.rules import is_empty, norm


class ClueMemory:
    """The public clues of one game as one seat reads them, updated incrementally."""

    def __init__(self, me: str, language: str) -> None:
        self.me, self.language = me, language
        self.said: set[str] = set()  #: normal forms of every non-empty clue so far (the repeat foul's)
        self.tokens_of: dict[str, frozenset[str]] = {}  #: speaker -> content tokens of all their clues
        self.others: set[str] = set()  #: content tokens of every other player's clues
        self.texts: list[tuple[int, str, str]] = []  #: (round, speaker, text) of every clue, in order

    def update(self, descriptions: Sequence[Mapping[str, Any]]) -> None:
        """Read the clues of ``descriptions`` (``info["descriptions"]``) not read yet."""
        for d in descriptions[len(self.texts):]:
            text, speaker = d["text"], d["speaker"]
            self.texts.append((d["round"], speaker, text))
            key, found = read_clue(text, self.language)
            if key is not None:
                self.said.add(key)
            self.tokens_of[speaker] = self.tokens_of.get(speaker, frozenset()) | found
            if speaker != self.me:
                self.others |= found


@functools.lru_cache(maxsize=4096)
def read_clue(text: str, language: str) -> tuple[str | None, frozenset[str]]:
    """A clue's normal form (None for an empty clue) and its content tokens; cached, because every
    seat of a table reads the same clues."""
    return (None if is_empty(text) else norm(text)), tokens(text, language)


@dataclass
class Seat:
    """One seat of one game: what a describer or voter may use."""

    name: str
    language: str
    lexicon: Mapping[str, tuple[str, ...]]
    seed: int | None = None
    memory: ClueMemory = field(init=False)
    _rng: np.random.Generator | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.memory = ClueMemory(self.name, self.language)

    @property
    def rng(self) -> np.random.Generator:
        """The seat's generator, seeded from ``seed`` when first used (deterministic players never
        pay for one)."""
        if self._rng is None:
            self._rng = np.random.default_rng(self.seed)
        return self._rng


class Describer(Protocol):
    def describe(self, seat: Seat, info: Mapping[str, Any]) -> str: ...


class Voter(Protocol):
    def vote(self, seat: Seat, info: Mapping[str, Any], candidates: Sequence[str]) -> str | None:
        """A name of ``candidates`` (never empty), or None to abstain."""
        ...


@dataclass(frozen=True)
class Table:
    """The environment's settings a rule player needs, read once per :meth:`WisPlayer.bind`."""

    language: str
    lexicon: Mapping[str, tuple[str, ...]]
    names: tuple[str, ...]
    discrete: bool
    description_limit: int
    public_analysis: bool

    @classmethod
    def of(cls, env: AECEnv, who: str) -> Table:
        raw = getattr(env, "unwrapped", env)
        settings = getattr(raw, "settings", None)
        named = getattr(raw, "metadata", {}).get("name")
        if settings is None or not hasattr(raw, "lexicon") or named != "who_is_spy_v0":
            raise ValueError(f"{who} plays who_is_spy_v0, got {type(raw).__name__}")
        return cls(settings.language, raw.lexicon, tuple(raw.possible_agents), raw.action_mode == "discrete",
                   settings.description_limit, settings.allow_public_analysis)


class WisPlayer(Policy):
    """A Who is Spy rule player: ``describer`` for clues, ``voter`` for ballots (module docstring).
    Subclasses may override :meth:`describe` and :meth:`vote`; all randomness comes from the seed
    given to :meth:`reset`."""

    name = "wis_player"
    reads_text = False  # decides from the info

    def __init__(self, describer: Describer, voter: Voter) -> None:
        self.describer, self.voter = describer, voter
        self.table: Table | None = None
        self.seat: Seat | None = None
        self._bound: AECEnv | None = None

    def bind(self, env: AECEnv) -> None:
        if env is not self._bound:  # a runner binds the same env before every episode
            self.table, self._bound = Table.of(env, type(self).__name__), env

    def reset(self, agent: str, seed: int | None = None) -> None:
        if self.table is None:
            raise RuntimeError(f"{type(self).__name__} needs bind(env) before reset(agent, seed): "
                               "it reads the env's language, lexicon and action mode")
        self.seat = Seat(agent, self.table.language, self.table.lexicon, seed)

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        seat, table = self._ready()
        seat.memory.update(info["descriptions"])
        n = len(table.names)
        if info["phase"] == "describe":
            clue = self.describe(info)
            if not table.discrete:
                return clue
            options = info.get("clue_options") or []
            return n + 1 + (options.index(clue) if clue in options else 0)
        target = self.vote(info, info["legal_vote_targets"])
        if not table.discrete:
            return "abstain" if target is None else target
        return n if target is None else table.names.index(target)

    def describe(self, info: Mapping[str, Any]) -> str:
        seat, _ = self._ready()
        return self.describer.describe(seat, info)

    def vote(self, info: Mapping[str, Any], candidates: Sequence[str]) -> str | None:
        seat, _ = self._ready()
        return self.voter.vote(seat, info, candidates) if candidates else None

    def _ready(self) -> tuple[Seat, Table]:
        if self.seat is None or self.table is None:
            raise RuntimeError(f"{type(self).__name__}.act before bind(env) and reset(agent, seed)")
        return self.seat, self.table
