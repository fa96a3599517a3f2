"""The Who is Spy game as a pure state machine, without PettingZoo or texts.

:func:`draw_setup` draws a game's words, spies and first speaker from a numpy Generator in a fixed
order (:func:`draw_setup`); :class:`WisGame` then takes the actions one at a time: :meth:`WisGame.describe`
for the current speaker and :meth:`WisGame.vote` for the current voter. The last description of a
phase adjudicates the fouls (violators eliminated together) and checks the end (A); the last vote
tallies and checks the end (B). Every action costs O(n): the repeat check looks up a set of earlier
normal forms and the public history only grows by appends.

**Several spies** (``n_spies > 1``, fewer than half the seats; the paper's game has one): the civilians
win when every spy is eliminated (E1); a spy alive when 3 or fewer players remain (E2) or after the
last round's vote (E3) wins the game for the spies. Everyone still sees only their own word and
nobody learns how many spies are caught before the end. Scoring: :mod:`.scoring` (each spy owns
``2n/k`` of the pot). With one spy all of this is exactly the paper's game.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice, check_int
from arena_envs.who_is_spy.rules import (
    ABSTAIN_WORDS,
    DESCRIPTION_LIMITS,
    VOTE_MODES,
    WINNERS,
    canon,
    check_end,
    check_language,
    judge_utterance,
    norm,
    parse_vote,
    read_ballot,
    speaking_order,
    split_analysis,
    tally,
    truncate,
    vote_counts,
)
from arena_envs.who_is_spy.scoring import final_scores
from arena_envs.who_is_spy.words import MAX_WORD_CHARS

if TYPE_CHECKING:
    import numpy as np

RECORD_VERSION = 1
PAIR_ORDERS = ("dataset", "random")
#: The values of :attr:`WisGame.phase`, in the order of the numeric observation's phase code.
PHASES = ("describe", "vote", "game_over")
#: The longest player name: names head every line of the public history.
MAX_NAME_CHARS = 100


@dataclass(frozen=True)
class WisConfig:
    """The rule options of a game (the env's own options, e.g. spaces and texts, live in the env)."""

    n_players: int = 6
    n_spies: int = 1
    max_rounds: int = 3
    end_alive_threshold: int = 3
    language: str = "en"
    max_description_chars: int | None = None  # None: 400 (en) / 120 (zh)
    allow_self_vote: bool = False
    vote_parsing: str = "lenient"
    allow_public_analysis: bool = False
    analysis_max_chars: int = 1200
    pair_order: str = "dataset"
    player_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        n = check_int("n_players", self.n_players, 4, 12)
        check_int("n_spies", self.n_spies, 1, (n - 1) // 2)
        check_int("max_rounds", self.max_rounds, 1, 1000)
        check_int("end_alive_threshold", self.end_alive_threshold, 1, n - 1)
        check_language(self.language)
        if self.max_description_chars is not None:
            check_int("max_description_chars", self.max_description_chars, 1, 10**6)
        check_int("analysis_max_chars", self.analysis_max_chars, 1, 10**6)
        check_choice("vote_parsing", self.vote_parsing, VOTE_MODES)
        check_choice("pair_order", self.pair_order, PAIR_ORDERS)
        if self.player_names is not None:
            names = tuple(self.player_names)
            object.__setattr__(self, "player_names", names)
            for name in names:
                if not isinstance(name, str) or not name.isprintable() or not 0 < len(name) <= MAX_NAME_CHARS:
                    raise ValueError(f"player_names must be printable one-line names of 1 to {MAX_NAME_CHARS} "
                                     f"characters, got {excerpt(name, 100)}")
            keys = [canon(x) for x in names]
            if (len(names) != n or "" in keys or len(set(keys)) != n
                    or any(k in ABSTAIN_WORDS for k in keys)):
                raise ValueError(
                    f"player_names must be {n} strings, distinct ignoring case, spaces, '_' and '-', "
                    f"and no abstain word, got {excerpt(list(names))}")

    @property
    def names(self) -> tuple[str, ...]:
        """The player names in seat order: ``player_names`` or ``player_0 … player_{n−1}``."""
        return self.player_names or tuple(f"player_{i}" for i in range(self.n_players))

    @property
    def description_limit(self) -> int:
        return self.max_description_chars or DESCRIPTION_LIMITS[self.language]


@dataclass(frozen=True)
class Setup:
    """A drawn game: the pair index and orientation (for the record), the words, spies, first speaker."""

    pair_index: int
    swapped: bool
    civilian_word: str
    spy_word: str
    spy_seats: tuple[int, ...]
    first_speaker: int


def draw_setup(
    config: WisConfig,
    pairs: Sequence[tuple[str, str]],
    rng: np.random.Generator,
    options: object = None,
) -> Setup:
    """Draw a setup in this order: the pair index, the orientation bit (only with
    ``pair_order="random"``), the spy seat(s), the first speaker. ``options`` (a mapping; anything
    else and unknown keys are ignored) may force ``civilian_word`` and ``spy_word`` (both),
    ``spy_seat`` (one spy) or ``spy_seats``, and ``first_speaker``; a forced value still consumes its
    draw, so the others do not change. ``pairs`` are ``(civilian, spy)`` words."""
    n, k = config.n_players, config.n_spies
    if len(pairs) == 0:
        raise ValueError("pairs must hold at least one (civilian, spy) word pair, got none")
    pair_index = int(rng.integers(len(pairs)))
    swapped = bool(rng.integers(2)) if config.pair_order == "random" else False
    if k == 1:
        spy_seats: tuple[int, ...] = (int(rng.integers(n)),)
    else:
        spy_seats = tuple(sorted(int(s) for s in rng.choice(n, size=k, replace=False)))
    first_speaker = int(rng.integers(n))
    civilian, spy = pairs[pair_index]
    if swapped:
        civilian, spy = spy, civilian
    opts: Mapping[Any, Any] = options if isinstance(options, Mapping) else {}
    if "civilian_word" in opts or "spy_word" in opts:
        forced = opts.get("civilian_word"), opts.get("spy_word")
        if not (isinstance(forced[0], str) and isinstance(forced[1], str) and norm(forced[0])
                and norm(forced[1]) and norm(forced[0]) != norm(forced[1])
                and max(len(forced[0]), len(forced[1])) <= MAX_WORD_CHARS):
            raise ValueError(f"options civilian_word and spy_word must be two different non-empty words of at "
                             f"most {MAX_WORD_CHARS} characters, got {forced[0]!r:.80} and {forced[1]!r:.80}")
        civilian, spy = forced[0], forced[1]
    if "spy_seats" in opts:
        seats = opts["spy_seats"]
        if (not isinstance(seats, Sequence) or isinstance(seats, str) or len(seats) != k
                or len({check_int("spy_seats item", s, 0, n - 1) for s in seats}) != k):
            raise ValueError(f"option spy_seats must be {k} distinct seats in 0..{n - 1}, got {excerpt(seats)}")
        spy_seats = tuple(sorted(int(s) for s in seats))
    elif "spy_seat" in opts:
        if k != 1:
            raise ValueError(f"option spy_seat is for one spy; with n_spies={k} pass spy_seats")
        spy_seats = (check_int("option spy_seat", opts["spy_seat"], 0, n - 1),)
    if "first_speaker" in opts:
        first_speaker = check_int("option first_speaker", opts["first_speaker"], 0, n - 1)
    return Setup(pair_index, swapped, civilian, spy, spy_seats, first_speaker)


@dataclass
class Description:
    """One published utterance. ``violation`` is filled in at adjudication (after the phase),
    so it is public whenever it is set."""

    round: int
    seat: int
    raw_text: str | None
    text: str
    analysis: str | None
    violation: str | None = None


@dataclass(frozen=True)
class Ballot:
    """One vote: ``target`` is a seat, or None for an abstention or invalid ballot."""

    round: int
    voter: int
    target: int | None
    raw_action: Any
    note: str | None


@dataclass(frozen=True)
class Elimination:
    seat: int
    round: int
    cause: str  # "violation" or "vote"
    violation: str | None


@dataclass
class RoundLog:
    """The public log of one round. ``ballots``, ``tally`` and ``voted_out`` are set at the tally;
    ``tally`` stays None when the round had no vote (the game ended at check A)."""

    number: int
    order: tuple[int, ...]
    descriptions: list[Description] = field(default_factory=list)
    adjudicated: bool = False
    fouled: list[int] = field(default_factory=list)
    ballots: list[Ballot] = field(default_factory=list)
    tally: dict[int, int] | None = None
    voted_out: int | None = None


def _json_safe(x: object) -> Any:
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, Integral):
        return int(x)
    if isinstance(x, Real):
        return float(x)
    return str(x)


class WisGame:
    """One game of Who is Spy from a :class:`Setup`; seats are ints, names come from the config."""

    def __init__(self, config: WisConfig, setup: Setup, seed: int | None = None) -> None:
        n, k = config.n_players, config.n_spies
        if (len(set(setup.spy_seats)) != k or not all(0 <= s < n for s in setup.spy_seats)
                or not 0 <= setup.first_speaker < n):
            raise ValueError(f"setup must have {k} distinct spy seats and a first speaker in 0..{n - 1}, "
                             f"got {setup.spy_seats} and {setup.first_speaker}")
        self.config = config
        self.setup = setup
        self.seed = seed
        self.names = config.names
        self.spy_seats = frozenset(setup.spy_seats)
        self._alive = set(range(n))
        self._elim_round = [0] * n
        self.eliminations: list[Elimination] = []
        self.descriptions: list[Description] = []
        self.ballots: list[Ballot] = []  # completed phases only
        self.rounds: list[RoundLog] = []
        self._norms: set[str] = set()
        self._codes: list[str | None] = []  # judged codes of the current describe phase
        self._pending: list[Ballot] = []  # ballots of the current vote phase (secret)
        self.phase = "describe"
        self.round = 1
        self.end_condition: str | None = None
        self.scores: dict[str, Fraction] = {}
        self._actors: tuple[int, ...] = ()
        self._pos = 0
        self._start_round()

    # ---- read access ---------------------------------------------------------------------------

    @property
    def n(self) -> int:
        return self.config.n_players

    @property
    def first_speaker(self) -> int:
        return self.setup.first_speaker

    @property
    def over(self) -> bool:
        return self.phase == "game_over"

    @property
    def order(self) -> tuple[int, ...]:
        """The current phase's actors in order (speakers, or voters after adjudication); at game
        over, the alive seats in speaking order."""
        return self._actors

    @property
    def actor(self) -> int | None:
        """The seat to act now, or None once the game is over."""
        return None if self.over else self._actors[self._pos]

    @property
    def alive_seats(self) -> list[int]:
        return sorted(self._alive)

    @property
    def said(self) -> frozenset[str] | set[str]:
        """The normal forms (:func:`.rules.norm`) of every non-empty utterance so far (read-only)."""
        return self._norms

    def is_alive(self, seat: int) -> bool:
        return seat in self._alive

    def elimination_round(self, seat: int) -> int:
        """The round ``seat`` was eliminated in, 0 while alive."""
        return self._elim_round[seat]

    def is_spy(self, seat: int) -> bool:
        return seat in self.spy_seats

    def word_of(self, seat: int) -> str:
        return self.setup.spy_word if seat in self.spy_seats else self.setup.civilian_word

    @property
    def civilian_word(self) -> str:
        return self.setup.civilian_word

    @property
    def spy_word(self) -> str:
        return self.setup.spy_word

    def legal_targets(self, seat: int) -> list[int]:
        """The seats ``seat`` may vote for: the alive players, itself only with ``allow_self_vote``."""
        return [s for s in sorted(self._alive) if s != seat or self.config.allow_self_vote]

    @property
    def winner(self) -> str | None:
        """``"civilians"`` or ``"spy"`` once the game is over."""
        return WINNERS[self.end_condition] if self.end_condition else None

    @property
    def survival_rounds(self) -> dict[str, int]:
        """Rounds survived per player: ``r − 1`` if eliminated in round ``r``, else the
        number of rounds played so far."""
        return {name: (r - 1 if r else self.round) for name, r in zip(self.names, self._elim_round)}

    # ---- actions -------------------------------------------------------------------------------

    def _expect(self, phase: str, seat: int) -> None:
        if self.phase != phase or seat != self.actor:
            raise ValueError(f"it is not seat {seat}'s {phase} turn: phase {self.phase}, actor {self.actor}")

    def describe(self, seat: int, text: str | None, analysis: str | None = None) -> str | None:
        """Seat ``seat`` (the current speaker) says ``text`` (None: no answer, an ``empty`` foul).
        With ``allow_public_analysis``, ``analysis`` (or a text line starting ``ANALYSIS:``) is
        published beside it, truncated, exempt from the foul checks; otherwise it is dropped.
        Returns a note for the actor when something was dropped, else None."""
        self._expect("describe", seat)
        for what, value in (("description", text), ("analysis", analysis)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{what} must be a str or None, got {type(value).__name__}")
        note = None
        raw = text
        cfg = self.config
        if cfg.allow_public_analysis:
            if analysis is None and text is not None:
                text, analysis = split_analysis(text)
            analysis = truncate(analysis, cfg.language, cfg.analysis_max_chars) or None
        elif analysis is not None:
            note = "analysis ignored: the public analysis channel is off"
            analysis = None
        said = truncate(text, cfg.language, cfg.description_limit)
        code = judge_utterance(said, self.word_of(seat), self._norms, cfg.language)
        if code != "empty":
            self._norms.add(norm(said))
        entry = Description(self.round, seat, raw, said, analysis)
        self.rounds[-1].descriptions.append(entry)
        self.descriptions.append(entry)
        self._codes.append(code)
        self._pos += 1
        if self._pos == len(self._actors):
            self._adjudicate()
        return note

    def read_vote(self, seat: int, action: object) -> int | None:
        """The seat ``seat``'s ballot names now (None: an explicit abstention), without recording it;
        an invalid ballot is :func:`~.rules.read_ballot`'s ``InvalidAnswer``, whose reason is the
        note :meth:`vote` would record (for an env that asks again after an unreadable ballot)."""
        cfg = self.config
        return read_ballot(action, self.names, seat, self._alive, cfg.allow_self_vote, cfg.vote_parsing)

    def vote(self, seat: int, action: object) -> str | None:
        """Seat ``seat`` (the current voter) votes: ``action`` is a target seat, a name or free text
        (parsed by :func:`~.rules.parse_vote` in the configured mode), or None to abstain. Invalid ballots abstain.
        Returns the parser's note (why it abstained or coerced), else None."""
        self._expect("vote", seat)
        cfg = self.config
        target, note = parse_vote(action, self.names, seat, self._alive, cfg.allow_self_vote, cfg.vote_parsing)
        self._pending.append(Ballot(self.round, seat, target, _json_safe(action), note))
        self._pos += 1
        if self._pos == len(self._actors):
            self._tally()
        return note

    # ---- transitions ---------------------------------------------------------------------------

    def _start_round(self) -> None:
        order = tuple(speaking_order(self.first_speaker, self._alive, self.n))
        self.rounds.append(RoundLog(self.round, order))
        self._actors = order
        self._pos = 0
        self._codes = []

    def _eliminate(self, seat: int, cause: str, code: str | None = None) -> None:
        self._alive.discard(seat)
        self._elim_round[seat] = self.round
        self.eliminations.append(Elimination(seat, self.round, cause, code))

    def _check_end(self, after_vote: bool) -> bool:
        cfg = self.config
        spies_alive = len(self.spy_seats & self._alive)
        end = check_end(spies_alive, len(self._alive), self.round, cfg.max_rounds,
                        cfg.end_alive_threshold, after_vote)
        if end is None:
            return False
        self.end_condition = end
        self.phase = "game_over"
        self._actors = tuple(speaking_order(self.first_speaker, self._alive, self.n))
        self._pos = 0
        names = self.names
        self.scores = final_scores(
            names, {names[s] for s in self.spy_seats},
            {names[s]: r for s, r in enumerate(self._elim_round) if r},
            [(names[b.voter], None if b.target is None else names[b.target]) for b in self.ballots],
            cfg.max_rounds)
        return True

    def _adjudicate(self) -> None:
        log = self.rounds[-1]
        for entry, code in zip(log.descriptions, self._codes):
            if code is not None:
                entry.violation = code
                log.fouled.append(entry.seat)
                self._eliminate(entry.seat, "violation", code)
        log.adjudicated = True
        self._codes = []
        if not self._check_end(after_vote=False):
            self.phase = "vote"
            self._actors = tuple(s for s in log.order if s in self._alive)
            self._pos = 0

    def _tally(self) -> None:
        log = self.rounds[-1]
        log.ballots, self._pending = self._pending, []
        self.ballots.extend(log.ballots)
        log.tally = vote_counts(b.target for b in log.ballots)
        log.voted_out = tally(b.target for b in log.ballots)
        if log.voted_out is not None:
            self._eliminate(log.voted_out, "vote")
        if not self._check_end(after_vote=True):
            self.round += 1
            self.phase = "describe"
            self._start_round()

    # ---- record ------------------------------------------------------------------------------

    def record(self) -> dict[str, Any]:
        """The JSON-safe game record (omniscient: includes the current phase)."""
        names = self.names
        rounds = []
        for log in self.rounds:
            pending = log is self.rounds[-1] and not log.adjudicated
            codes = self._codes if pending else [d.violation for d in log.descriptions]
            ballots = log.ballots if log.tally is not None else self._pending if log is self.rounds[-1] else []
            rounds.append({
                "round": log.number,
                "speaking_order": [names[s] for s in log.order],
                "descriptions": [
                    {"speaker": names[d.seat], "raw_text": d.raw_text, "text": d.text,
                     "analysis": d.analysis, "violation": code}
                    for d, code in zip(log.descriptions, codes)],
                "votes": [{"voter": names[b.voter], "raw_action": b.raw_action,
                           "target": None if b.target is None else names[b.target]} for b in ballots],
                "tally": {names[s]: c for s, c in (log.tally or {}).items()},
                "eliminated_by_vote": None if log.voted_out is None else names[log.voted_out],
                "eliminated_by_violation": [names[s] for s in log.fouled],
            })
        spy_rounds = {names[s]: (self._elim_round[s] or None) for s in sorted(self.spy_seats)}
        outcome = None
        if self.end_condition:
            caught = [r for r in spy_rounds.values() if r]
            outcome = {
                "winner": self.winner,
                "spy_elimination_round": max(caught) if self.winner == "civilians" else None,
                "end_condition": self.end_condition,
                "spy_elimination_rounds": spy_rounds,
            }
        setup = self.setup
        return {
            "version": RECORD_VERSION, "seed": self.seed, "language": self.config.language,
            "n_players": self.n, "max_rounds": self.config.max_rounds,
            "civilian_word": setup.civilian_word, "spy_word": setup.spy_word,
            "spy_seat": min(self.spy_seats), "spy_seats": sorted(self.spy_seats),
            "first_speaker": setup.first_speaker, "player_names": list(names),
            "rounds": rounds, "outcome": outcome,
            "scores": {name: float(s) for name, s in self.scores.items()},
            "survival_rounds": self.survival_rounds if self.over else {},
        }
