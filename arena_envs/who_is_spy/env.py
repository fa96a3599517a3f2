"""Who is Spy (WiS paper) as a PettingZoo AEC environment on :class:`arena_envs.core.TextAECEnv`.

The rules are :class:`arena_envs.who_is_spy.game.WisGame`'s; this module adds the seats, spaces,
texts (:mod:`.text`), numbers, infos, rewards and records. Arguments: :class:`WhoIsSpyEnv`.

* **Seats**: the player names. Each round every player still in describes once, in seat order from
  the first speaker, then votes once in the same order. Eliminated players stay in ``agents``
  (never selected); everyone terminates together with the final reward (0 before that).
* **Actions**: ``action_mode="text"``: a :class:`~arena_envs.core.spaces.UnicodeText` of 4,096
  characters, a description or a vote (a name, ``"abstain"`` or a sentence the lenient parser
  reads; a ballot naming no legal candidate abstains after ``max_retries`` re-asks, default 0).
  ``"discrete"``: ``Discrete(n + 1 + clue_actions)``: vote for seat ``0 … n−1``, ``n`` abstain,
  ``n+1+k`` say the ``k``-th clue of :func:`arena_envs.who_is_spy.clues.ranked_clues`.
* **Observation**: ``text`` (speeches quoted so they cannot pose as the host), ``observation``
  (int64: round, phase, own seat, first speaker, players alive, own word id, alive flags,
  elimination rounds, every vote, every clue's code) and, in discrete mode, ``action_mask``.
  ``infos`` (what rule policies read) are refreshed for every agent at every step.
* **Rewards**: :func:`.scoring.rewards` of ``reward_mode`` at the end; the record is
  :meth:`.game.WisGame.record`'s.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np
from gymnasium import spaces

from arena_envs.core import AnswerConstraint, Answered, InvalidAnswer, TextAECEnv, UnicodeText
from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice, check_int
from arena_envs.core.records import jsonable
from arena_envs.who_is_spy import clues
from arena_envs.who_is_spy.game import PHASES, Ballot, Description, Elimination, WisConfig, WisGame, draw_setup
from arena_envs.who_is_spy.rules import max_vote_note_chars, norm
from arena_envs.who_is_spy.scoring import REWARD_MODES, rewards
from arena_envs.who_is_spy.text import WisTexts
from arena_envs.who_is_spy.words import MAX_WORD_CHARS, clue_vocabulary, load_lexicon, load_pairs, word_vocabulary

ACTION_MODES = ("text", "discrete")
#: Most characters of a text action.
MAX_ACTION_CHARS = 4096
_INT_HIGH = 2**31 - 1


class Move(NamedTuple):
    """A decision as the game takes it: the phase, the description (None: nothing said) or the
    ballot, the public analysis, and a note on how the action was read."""

    phase: str
    what: Any
    analysis: str | None = None
    note: str | None = None


class WhoIsSpyEnv(TextAECEnv):
    """Who is Spy; see the module docstring. Arguments are the game's rules (:class:`.game.WisConfig`),
    plus ``n_spies`` (several spies score as :mod:`.scoring` says), ``clue_actions`` (discrete mode),
    ``spy_seats`` (the spies' seats in every game, e.g. ``[0]`` for the paper's injection experiments,
    where the hacker is always the spy: ``arena run --fixed-seats`` keeps it in seat 0; the draw is
    still made, so the words and first speaker do not change) and the core's ``max_cycles`` (a phase
    is a cycle: truncation after that many describe or vote phases)."""

    metadata: ClassVar[dict[str, Any]] = {"name": "who_is_spy_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": False}

    def __init__(self, n_players: int = 6, *, n_spies: int = 1, max_rounds: int = 3, end_alive_threshold: int = 3,
                 language: str = "en", max_description_chars: int | None = None,
                 word_pairs: Any = None, lexicon: Any = None, pair_order: str = "dataset",
                 allow_self_vote: bool = False, vote_parsing: str = "lenient", action_mode: str = "text",
                 reward_mode: str = "score", allow_public_analysis: bool = False, analysis_max_chars: int = 1200,
                 player_names: Sequence[str] | None = None, include_rules_in_obs: bool = True,
                 clue_actions: int = 8, spy_seats: Sequence[int] | None = None, max_retries: int = 0,
                 max_cycles: int | None = None,
                 render_mode: str | None = None):
        self.settings = WisConfig(n_players, n_spies, max_rounds, end_alive_threshold, language, max_description_chars,
                               allow_self_vote, vote_parsing, allow_public_analysis, analysis_max_chars, pair_order,
                               None if player_names is None else tuple(player_names))
        check_choice("action_mode", action_mode, ACTION_MODES)
        check_choice("reward_mode", reward_mode, REWARD_MODES)
        clue_actions = check_int("clue_actions", clue_actions, 1, 64)
        self.action_mode, self.reward_mode, self.clue_actions = action_mode, reward_mode, clue_actions
        self.include_rules_in_obs = include_rules_in_obs
        self.pairs = load_pairs(word_pairs, language)
        self._pair_words = [(p.civilian, p.spy) for p in self.pairs]
        self.lexicon = load_lexicon(lexicon, language)
        self.word_vocabulary = word_vocabulary(self.pairs)
        self.clue_vocabulary = clue_vocabulary(self.lexicon)
        self._word_ids = {w: i for i, w in enumerate(self.word_vocabulary)}
        self._clue_ids = _vocabulary_ids(tuple(self.clue_vocabulary))
        names = self.settings.names
        n, rounds = n_players, max_rounds
        if action_mode == "text":
            action: spaces.Space[Any] = UnicodeText(MAX_ACTION_CHARS)
        else:
            action = spaces.Discrete(n + 1 + clue_actions)
        self._layout = (6, 6 + n, 6 + 2 * n, 6 + 2 * n + rounds * n)  # alive, elim round, votes, clues
        texts = WisTexts(language, names, n_spies, max_rounds, end_alive_threshold,
                         self.settings.description_limit, allow_public_analysis, include_rules_in_obs)
        # the text space holds the longest text these arguments allow (module docstring)
        max_text = texts.max_chars(MAX_WORD_CHARS, self.settings.analysis_max_chars, max_vote_note_chars(names))
        super().__init__(agents=list(names), action_spaces={a: action for a in names},
                         feature_names=_feature_names(names, rounds), feature_shape=(6 + 2 * n + 2 * rounds * n,),
                         feature_dtype=np.int64, feature_low=-1, feature_high=_INT_HIGH, max_retries=max_retries,
                         render_mode=render_mode, max_text_length=max_text, max_cycles=max_cycles)
        self.texts = texts
        self._seat = {name: i for i, name in enumerate(names)}
        self.spy_seats = None if spy_seats is None else list(spy_seats)
        if self.spy_seats is not None:  # checked as a reset option would be
            draw_setup(self.settings, self._pair_words, np.random.default_rng(0), {"spy_seats": self.spy_seats})
        self._word_codes: dict[str, dict[str, int]] = {}

    def config(self) -> dict[str, Any]:
        r = self.settings
        return {"n_players": r.n_players, "n_spies": r.n_spies, "max_rounds": r.max_rounds,
                "end_alive_threshold": r.end_alive_threshold, "language": r.language,
                "max_description_chars": r.description_limit, "pair_order": r.pair_order,
                "allow_self_vote": r.allow_self_vote, "vote_parsing": r.vote_parsing,
                "action_mode": self.action_mode, "reward_mode": self.reward_mode,
                "allow_public_analysis": r.allow_public_analysis, "analysis_max_chars": r.analysis_max_chars,
                "player_names": list(r.names), "pairs": len(self.pairs), "clue_actions": self.clue_actions,
                "spy_seats": self.spy_seats}

    # ------------------------------------------------------------------ the game

    def _start_game(self, options: dict[str, Any]) -> None:
        if self.spy_seats is not None:
            options = {"spy_seats": self.spy_seats, **(options if isinstance(options, Mapping) else {})}
        setup = draw_setup(self.settings, self._pair_words, self.np_random, options)
        self.game = game = WisGame(self.settings, setup, self.record.seed if self.record else None)
        n = game.n
        self._prefixes = [self.texts.prefix(s, game.word_of(s), game.first_speaker) for s in range(n)]
        self._history: list[str] = [self.texts.round_head(1)]
        self._history_text: str | None = None
        self._public = np.full(self.feature_shape, -1, dtype=np.int64)
        self._clue_codes = {**self._codes_of(setup.civilian_word), **self._codes_of(setup.spy_word)}
        self._notes_of: dict[str, str | None] = dict.fromkeys(self.possible_agents)
        self._slots: tuple[int, int, list[str]] | None = None  # (seat, step, ranked clues) of the current turn
        self._invalid_note: str | None = None
        self._shared: dict[str, Any] = {}
        self._history_entries: tuple[list[dict[str, Any]], ...] = ([], [], [])  # eliminations, clues, ballots
        self._state_text = ""
        assert self.record is not None
        self.record.add("setup", pair_id=self.pairs[setup.pair_index].id if not options_forced(options) else None,
                        civilian_word=setup.civilian_word, spy_word=setup.spy_word,
                        spy_seats=list(setup.spy_seats), first_speaker=self.possible_agents[setup.first_speaker])
        self._refresh_public()
        self._refresh_shared()
        for agent in self.possible_agents:
            self._refresh_info(agent, None)

    def _codes_of(self, word: str) -> dict[str, int]:
        """norm(clue) -> code of the rule describer's clues of ``word`` (computed once per word)."""
        codes = self._word_codes.get(word)
        if codes is None:
            codes = self._word_codes[word] = _clue_codes(word, self.lexicon, self._clue_ids, self.settings.language)
        return codes

    def _parse_text(self, agent: str, text: str) -> Any:
        return self._from_native(agent, text)

    def _from_native(self, agent: str, action: Any) -> Move:
        """What ``action`` says in the current phase (a description, None for nothing said, or a ballot)."""
        game = self.game
        n = game.n
        index = int(action) if isinstance(action, (int, np.integer)) and not isinstance(action, bool) else None
        if index is None and action is not None and not isinstance(action, str) and not (
                isinstance(action, Mapping) and game.phase == "describe"):
            raise InvalidAnswer("unparseable", f"expected a text, an action index or None, got {excerpt(action)}")
        if game.phase == "describe":
            if index is not None and self.action_mode == "discrete":
                slots = self._clue_slots(self._seat[agent])
                k = index - n - 1
                if 0 <= k < len(slots):
                    return Move("describe", slots[k])
                return Move("describe", None,
                            note=f"index {excerpt(index)} is not a clue (clues: {n + 1}..{n + len(slots)})")
            if isinstance(action, Mapping):
                return Move("describe", _text_or_none(action.get("description")),
                            _text_or_none(action.get("analysis")))
            return Move("describe", _text_or_none(action))
        if index is not None and self.action_mode == "discrete" and not 0 <= index <= n:
            return Move("vote", None, note=f"index {excerpt(index)} is not a vote (0..{n - 1}: a seat, {n}: abstain)")
        return Move("vote", action)

    def _validate(self, agent: str, move: Move) -> None:
        """A ballot that names no legal candidate (and is no explicit abstention) is invalid."""
        if move.phase != "vote" or move.note is not None:
            return
        try:
            self.game.read_vote(self._seat[agent], move.what)
        except InvalidAnswer as invalid:
            self._invalid_note = invalid.reason
            raise

    def _apply(self, answered: Answered) -> None:
        agent, move = answered.agent, answered.move
        game, seat = self.game, self._seat[agent]
        phase, what = move.phase, move.what
        round_before = game.round
        if phase == "describe":
            note = game.describe(seat, what, move.analysis)
            said = game.descriptions[-1]
            self._history.append(self.texts.clue(seat, said.text, said.analysis))
            code = self._clue_codes.get(norm(said.text), 0) if said.text else -1
            self._public[self._layout[3] + (round_before - 1) * game.n + seat] = code
            log = game.rounds[round_before - 1]
            if log.adjudicated:
                self._history.append(self.texts.fouls([(d.seat, d.violation) for d in log.descriptions
                                                       if d.violation]))
        else:
            note = game.vote(seat, what)
            log = game.rounds[round_before - 1]
            if log.tally is not None:
                base = self._layout[2] + (round_before - 1) * game.n
                for ballot in log.ballots:
                    self._public[base + ballot.voter] = 0 if ballot.target is None else ballot.target + 1
                counts = log.tally
                self._history.append(self.texts.votes([(b.voter, b.target) for b in log.ballots], log.voted_out,
                                                      max(counts.values(), default=0), bool(counts), not game.over))
        note = move.note or note
        self._notes_of[agent] = note
        assert self.record is not None
        self.record.add(phase, agent=agent, text=what if phase == "describe" else None,
                        ballot=None if phase == "describe" else jsonable(what), note=note)
        if game.round != round_before and not game.over:
            self._history.append(self.texts.round_head(game.round))
        self._history_text = None
        self._slots = None
        self._refresh_public()
        self._refresh_shared()
        if game.over:
            self._finish()
        for other in self.possible_agents:
            if other != agent:
                self._refresh_info(other, None)

    def _finish(self) -> None:
        game = self.game
        spies = {game.names[s] for s in game.spy_seats}
        assert game.winner is not None
        for agent, reward in rewards(game.scores, self.reward_mode, spies, game.winner).items():
            self.rewards[agent] = reward
            self.terminations[agent] = True
        assert self.record is not None
        self.record.add("game_over", winner=game.winner, end_condition=game.end_condition,
                        scores={a: float(s) for a, s in game.scores.items()})

    def _fallback(self, agent: str) -> Move:
        """An invalid ballot abstains (the only invalid answers are ballots)."""
        return Move("vote", None, note=self._invalid_note)

    def _next_agent(self) -> str | None:
        actor = self.game.actor
        return None if actor is None else self.possible_agents[actor]

    def _clue_slots(self, seat: int) -> list[str]:
        """The ranked clues of ``seat``'s discrete describe actions this turn (never empty)."""
        if self._slots is not None and self._slots[:2] == (seat, self.num_steps):
            return self._slots[2]
        game = self.game
        word = game.word_of(seat)
        others: set[str] = set()
        for d in game.descriptions:
            if d.seat != seat:
                others |= clues.tokens(d.text, self.settings.language)
        ranked = clues.ranked_clues(word, self.lexicon.get(word, ()), game.said, frozenset(others), game.round,
                                    self.settings.language, self.clue_actions) \
            or [clues.last_resort(game.round, self.possible_agents[seat], self.settings.language)]
        self._slots = (seat, self.num_steps, ranked)
        return ranked

    # ------------------------------------------------------------------ what a seat sees

    def _refresh_public(self) -> None:
        """The public numbers every seat's observation shares: the round, phase, players alive,
        alive flags and elimination rounds (votes and clues are written as they happen)."""
        game, public = self.game, self._public
        public[0], public[1], public[4] = game.round, PHASES.index(game.phase), len(game.alive_seats)
        alive_at, round_at = self._layout[0], self._layout[1]
        for s in range(game.n):
            r = game.elimination_round(s)
            public[alive_at + s] = 0 if r else 1
            public[round_at + s] = r

    def _refresh_shared(self) -> None:
        """The public parts of every info, once per step: the history lists grow by the step's new
        entries and are handed out as tuples (what an info showed never changes afterwards)."""
        game = self.game
        names = game.names
        history = self._history_entries
        _grow(history[0], game.eliminations, _elimination_entry, names)
        _grow(history[1], game.descriptions, _description_entry, names)
        _grow(history[2], game.ballots, _ballot_entry, names)
        self._shared = {
            "phase": game.phase, "round": game.round,
            "first_speaker": names[game.first_speaker],
            "speaking_order": [names[s] for s in game.order],
            "alive_players": [names[s] for s in game.alive_seats],
            "eliminated": tuple(history[0]), "descriptions": tuple(history[1]), "votes": tuple(history[2]),
        }
        out = [(s, game.elimination_round(s), _violation_of(game, s)) for s in range(game.n) if not game.is_alive(s)]
        self._state_text = self.texts.state(game.alive_seats, out)
        if game.over:
            self._shared.update(winner=game.winner, spy=names[min(game.spy_seats)],
                                spies=[names[s] for s in sorted(game.spy_seats)],
                                civilian_word=game.civilian_word, spy_word=game.spy_word,
                                scores={a: float(s) for a, s in game.scores.items()})

    def _agent_info(self, agent: str) -> dict[str, Any]:
        game, seat = self.game, self._seat[agent]
        turn = game.actor == seat
        info = {"name": agent, "seat": seat, "word": game.word_of(seat), "is_my_turn": turn,
                "alive": game.is_alive(seat), **self._shared,
                "legal_vote_targets": [game.names[s] for s in game.legal_targets(seat)]
                if turn and game.phase == "vote" else [],
                "last_action_note": self._notes_of[agent]}
        if game.over:
            info["role"] = "spy" if game.is_spy(seat) else "civilian"
            info["final_score"] = float(game.scores[agent])
        elif self.action_mode == "discrete" and turn and game.phase == "describe":
            info["clue_options"] = list(self._clue_slots(seat))
        return info

    def _text(self, agent: str, note: str | None) -> str:
        game, seat = self.game, self._seat[agent]
        if self._history_text is None:
            self._history_text = "".join(self._history)
        texts = self.texts
        if game.over:
            request = texts.game_over(game.winner or "", sorted(game.spy_seats), game.civilian_word, game.spy_word,
                                      self._shared["scores"])
        elif game.actor != seat:
            request = texts.waiting(game.actor or 0, game.phase, not game.is_alive(seat))
        elif game.phase == "describe":
            request = texts.describe_request()
        else:
            request = texts.vote_request(game.legal_targets(seat), note)
        return self._prefixes[seat] + self._history_text + self._state_text + "\n" + request

    def _features(self, agent: str) -> np.ndarray:
        game, seat = self.game, self._seat[agent]
        features = self._public.copy()
        features[2] = seat
        features[3] = game.first_speaker
        features[5] = self._word_ids.get(game.word_of(seat), -1)
        return features

    def _action_mask(self, agent: str) -> np.ndarray:
        game, seat = self.game, self._seat[agent]
        n = game.n
        mask = np.zeros(n + 1 + self.clue_actions, dtype=np.int8)
        if game.actor == seat:
            if game.phase == "vote":
                mask[game.legal_targets(seat)] = 1
                mask[n] = 1
            elif game.phase == "describe":
                mask[n + 1:n + 1 + len(self._clue_slots(seat))] = 1
        return mask

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint:
        game = self.game
        seat = self._seat[agent or self.agent_selection]
        if game.phase == "vote":
            names = tuple(game.names[s] for s in game.legal_targets(seat))
            return AnswerConstraint("choice", "one candidate's name, or abstain", choices=(*names, "abstain"))
        limit = self.settings.description_limit
        return AnswerConstraint("regex", f"one line of at most {limit} characters: a clue about your word",
                                pattern=rf"[^\n]{{1,{limit}}}")

    # ------------------------------------------------------------------ results

    def _metrics(self) -> dict[str, Any]:
        game = self.game
        names = game.names
        agents: dict[str, dict[str, Any]] = {}
        fouls = {d.seat: d.violation for d in game.descriptions if d.violation}
        turns = [0] * game.n
        foul_counts = [0] * game.n
        for d in game.descriptions:
            turns[d.seat] += 1
            foul_counts[d.seat] += d.violation is not None
        for seat, name in enumerate(names):
            spy = game.is_spy(seat)
            cast = [b for b in game.ballots if b.voter == seat]
            valid = [b for b in cast if b.target is not None]
            hits = sum(1 for b in valid if b.target is not None and game.is_spy(b.target))
            won = float(game.over and (spy == (game.winner == "spy")))
            agents[name] = {
                "score": float(game.scores.get(name, Fraction(0))),
                "spy": float(spy), "won": won,
                "spy_win": won if spy else None,
                "civilian_win": None if spy else won,
                "civilian_votes": None if spy else float(len(valid)),
                "votes_for_spy": None if spy else float(hits),
                "vote_accuracy": None if spy or not valid else hits / len(valid),
                "abstentions": float(len(cast) - len(valid)),
                "turns": float(turns[seat]), "fouls": float(foul_counts[seat]),
                "foul_rate": foul_counts[seat] / turns[seat] if turns[seat] else None,
                "foul": fouls.get(seat),
                "survival_rounds": float(game.survival_rounds[name]),
            }
        game_metrics = {"civilians_won": float(game.winner == "civilians"), "rounds": float(game.round)}
        return {"agents": agents, "game": game_metrics}

    def episode_record(self) -> dict[str, Any]:
        record = super().episode_record()
        record["game"] = self.game.record()
        return record

    def _render_text(self) -> str:
        if self._history_text is None:
            self._history_text = "".join(self._history)
        return self.texts.rules_text + self._history_text + self._state_text


def _violation_of(game: WisGame, seat: int) -> str | None:
    """The foul that put ``seat`` out, None if it was voted out."""
    return next((e.violation for e in game.eliminations if e.seat == seat), None)


T = TypeVar("T")


def _grow(entries: list[dict[str, Any]], source: Sequence[T], entry: Callable[[T, Sequence[str]], dict[str, Any]],
          names: Sequence[str]) -> None:
    """Append the info entries of the items of ``source`` that ``entries`` does not hold yet."""
    entries.extend(entry(item, names) for item in source[len(entries):])


def _elimination_entry(e: Elimination, names: Sequence[str]) -> dict[str, Any]:
    return {"name": names[e.seat], "round": e.round, "cause": e.cause, "violation": e.violation}


def _description_entry(d: Description, names: Sequence[str]) -> dict[str, Any]:
    return {"round": d.round, "speaker": names[d.seat], "text": d.text, "analysis": d.analysis}


def _ballot_entry(b: Ballot, names: Sequence[str]) -> dict[str, Any]:
    return {"round": b.round, "voter": names[b.voter], "target": None if b.target is None else names[b.target]}


def _text_or_none(value: Any) -> str | None:
    """A description as given: a ``str`` or None (nothing said); anything else is no description."""
    if value is None or isinstance(value, str):
        return value
    raise InvalidAnswer("unparseable", f"a description is a text, got {excerpt(value)}")


def options_forced(options: Any) -> bool:
    """Whether reset ``options`` forced the words (the record then names no dataset pair)."""
    return isinstance(options, Mapping) and ("civilian_word" in options or "spy_word" in options)


@functools.lru_cache(maxsize=16)
def _vocabulary_ids(vocabulary: tuple[str, ...]) -> dict[str, int]:
    return {attribute: i + 1 for i, attribute in enumerate(vocabulary)}


def _clue_codes(word: str, lexicon: Mapping[str, tuple[str, ...]], ids: Mapping[str, int],
                language: str) -> dict[str, int]:
    """norm(clue) -> code for the rule describer's clues of ``word`` (every template round)."""
    attributes = lexicon.get(word, ())
    codes: dict[str, int] = {}
    for form in clues.TEMPLATES[language]:
        for position, _, key, _ in clues.candidates(word, attributes, form, language):
            if position < len(attributes):
                codes[key] = ids.get(attributes[position].casefold(), 0)
    return codes


def _feature_names(names: Sequence[str], rounds: int) -> tuple[str, ...]:
    head = ("round", "phase", "own_seat", "first_speaker", "alive_count", "own_word_id")
    return (head + tuple(f"alive_{a}" for a in names) + tuple(f"eliminated_round_{a}" for a in names)
            + tuple(f"vote_r{r}_{a}" for r in range(1, rounds + 1) for a in names)
            + tuple(f"clue_r{r}_{a}" for r in range(1, rounds + 1) for a in names))
