"""The Pirate Game (γ-Bench game 8, a sequential game) as a PettingZoo AEC environment.

Each round the most senior surviving pirate proposes (``agent_selection`` = proposer), then every
other survivor votes in rank order; votes stay hidden until the round resolves. A rejected plan
terminates the proposer with ``death_reward``; an accepted plan terminates everyone left with
reward = their coins. A lone pirate (only with ``n_players=1``) takes all G at reset.

* **Action**: ``Dict(coins=MultiDiscrete([N] * G), vote=Discrete(2))``: proposing, ``coins[k]`` is
  the seat that gets coin k (every split has this form); voting, ``vote`` (1 = accept). Also
  accepted: ``{"proposal": shares}`` or a bare sequence of shares (proposer first, then the juniors
  by rank; N entries with a zero tail, or one per survivor; sum G), an int / bool vote, and the
  texts ``{"proposal": {"<rank>": coins, ...}}`` and ``{"decision": "accept" | "reject"}``.
* **Mask** (exact: a masked sample is always legal): ``{"coins": G int8 arrays of length N, "vote":
  int8 array of length 2}``; proposing, each coin allows the seats on board; voting, the vote
  allows 0 and 1; every entry the current decision does not read allows only 0.
* **Features** (float32): ``round_index``, ``max_rounds`` (N), ``golds``, ``own_rank``,
  ``proposer_rank``, ``n_remaining``, ``phase`` (0 propose, 1 vote, -1 over), ``offered_coins``
  (own share of the plan under vote, else -1), ``proposal_i`` per seat (-1 where none).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from arena_envs.core import AnswerConstraint, Answered, InvalidAnswer
from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_real
from arena_envs.gamma import scoring
from arena_envs.gamma.answer import (
    EXPLANATION_KEY,
    answer_value,
    canonical_json,
    format_instruction,
    json_constraint,
    to_int,
    to_vote,
)
from arena_envs.gamma.base import check_int
from arena_envs.gamma.pirate_rules import (
    DEFAULT_GOLDS,
    DEFAULT_PLAYERS,
    MAX_PLAYERS,
    PirateGame,
    accepts_needed,
    check_params,
    proposal_problem,
)
from arena_envs.gamma.sequential import SequentialGameEnv
from arena_envs.gamma.simultaneous_rules import MAX_VALUE
from arena_envs.gamma.transcript import report_block, request_block

OBJECTIVES = ("Your goals, in order of priority: (1) stay alive; (2) get as many coins as possible; "
              "(3) when everything else is equal, see another pirate thrown overboard.")
_RANK_KEY = re.compile(r"\D*?(\d+)\D*")
_PLAYER_KEY = re.compile(r"\s*player[\s_-]*(\d+)\s*", re.IGNORECASE)


def _coins(n: int) -> str:
    return f"{n} coin" if n == 1 else f"{n} coins"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _key_rank(key: Any) -> int | None:
    """The rank a proposal key names: ``"3"``, ``"3-th"``, ``"rank 3"`` -> 3; ``"player_2"`` -> 3."""
    text = str(key)
    player = _PLAYER_KEY.fullmatch(text)
    if player:
        return int(player.group(1)) + 1
    match = _RANK_KEY.fullmatch(text)
    return int(match.group(1)) if match else None


def parse_shares(value: Any, ranks: Sequence[int], golds: int) -> list[int]:
    """Shares in rank order from a proposal value: an object keyed by rank (mapped by rank when the
    keys are exactly ``ranks``, else taken in order), a list, or a string holding either."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's stack
            raise InvalidAnswer("unparseable", '"proposal" must be an object mapping each rank to its coins') from None
    if isinstance(value, Mapping):
        keyed = {_key_rank(k): v for k, v in value.items()}
        items = [keyed[r] for r in ranks] if sorted(r for r in keyed if r is not None) == list(ranks) \
            and len(keyed) == len(ranks) else list(value.values())
    elif isinstance(value, list):
        items = value
    else:
        raise InvalidAnswer("unparseable", '"proposal" must be an object mapping each rank to its coins')
    return [to_int(v, "proposal", 0, golds) for v in items]


def parse_answer(text: str, golds: int, ranks: Sequence[int] | None = None) -> tuple[str, Any]:
    """A text answer: given the ``ranks`` on board (a proposal is asked for), ``("propose", shares
    in rank order)``; else ``("vote", True to accept)``. Raises :class:`InvalidAnswer`."""
    if ranks is not None:
        return "propose", parse_shares(answer_value(text, "proposal"), ranks, golds)
    return "vote", to_vote(answer_value(text, "decision")) == "accept"


class PirateGameEnv(SequentialGameEnv):
    """γ-Bench Pirate Game; see the module docstring for spaces, rewards and features."""

    metadata: ClassVar[dict[str, Any]] = {"name": "pirate_game_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": False}

    def __init__(
        self,
        n_players: int = DEFAULT_PLAYERS,
        golds: int = DEFAULT_GOLDS,
        death_reward: float = -1.0,
        **options: Any,
    ):
        n_players = check_int("n_players", n_players, 1, MAX_PLAYERS)
        golds = check_int("golds", golds, 0, MAX_VALUE)
        check_params(n_players, golds)
        self.golds = golds
        self.death_reward = check_real("death_reward", death_reward)
        space = spaces.Dict({"coins": spaces.MultiDiscrete([n_players] * golds), "vote": spaces.Discrete(2)})
        super().__init__(
            n_players=n_players,
            action_spaces={f"player_{i}": space for i in range(n_players)},
            feature_names=("round_index", "max_rounds", "golds", "own_rank", "proposer_rank", "n_remaining",
                           "phase", "offered_coins", *(f"proposal_{i}" for i in range(n_players))),
            **options,
        )
        self._prefixes = [self._rules_for(i) for i in range(n_players)]
        self._masks: dict[tuple[Any, ...], dict[str, Any]] = {}  # per decision kind; fixed by the params
        self._vote_instruction = format_instruction({"decision": "accept or reject"}, self.prompt.cot)

    # ---------------------------------------------------------------- text

    def _rules_for(self, i: int) -> str:
        n, g = self.n_players, self.golds
        rules = [
            f"The most senior pirate still on board proposes how to divide the {g} coins among all pirates on "
            f"board: every share is a whole number of at least 0 and the shares add up to {g}.",
            "Every other pirate on board votes to accept or reject the plan; the proposer counts as accepting. "
            "Votes are secret: after everyone has voted, only the number of accepts is announced.",
            "If at least half of the pirates on board (the proposer included) accept, the plan is carried out "
            "and the game ends.",
            "Otherwise the proposer is thrown overboard and gets nothing, and the next most senior pirate "
            "makes a new proposal to those left.",
            "The game ends when a plan is accepted or when only one pirate is left, who then takes all the coins.",
        ]
        intro = (f"You are one of {n} pirates who share {g} gold coins. The pirates are ranked by seniority "
                 f"from 1 (most senior) to {n} (most junior).")
        identity = f"You are player_{i}, the {_ordinal(i + 1)} most senior pirate (rank {i + 1})."
        return self._describe_game(intro, rules, identity)

    def _proposal_json(self, shares: Sequence[int], first_rank: int) -> str:
        return json.dumps({str(first_rank + k): int(s) for k, s in enumerate(shares)})

    def _proposer_lines(self) -> list[str]:
        game = self.game
        j, n = game.proposer + 1, game.n_survivors
        return [
            OBJECTIVES,
            f"You are the most senior pirate on board, so you propose the division. {n} pirates are on board: "
            f"ranks {j} (you) to {self.n_players}.",
            f"Propose how to divide the {self.golds} coins: {n} whole numbers of at least 0 that add up to "
            f"{self.golds}, keyed by rank from you (rank {j}) down to rank {self.n_players}.",
        ]

    def _proposal_instruction(self) -> str:
        ranks = range(self.game.proposer + 1, self.n_players + 1)
        body = ", ".join(f'"{r}": coins for rank {r}' for r in ranks)
        head = f'"{EXPLANATION_KEY}": "your step-by-step reasoning", ' if self.prompt.cot else ""
        return "Answer with one JSON object and nothing else, in this form: {" + head + '"proposal": {' + body + "}}"

    def _voter_lines(self, i: int) -> list[str]:
        game = self.game
        assert game.proposal is not None  # voters are asked only about a proposal
        return [
            OBJECTIVES,
            f"The rank-{game.proposer + 1} pirate proposes (coins per rank): "
            f"{self._proposal_json(game.proposal, game.proposer + 1)}.",
            f"Under this plan you would get {_coins(game.offered(i))}.",
            "Vote to accept or reject the plan.",
        ]

    def _report(self, i: int, record: dict[str, Any]) -> tuple[str, str | None, str]:
        proposer, n = record["proposer"], self.n_players - record["proposer"]
        shares = record["proposal"][proposer:]
        verdict = "at least half accepted: the plan passes" if record["accepted"] else \
            f"fewer than half ({accepts_needed(n)} needed) accepted: the plan fails"
        public = (f"The rank-{proposer + 1} pirate proposed (coins per rank): "
                  f"{self._proposal_json(shares, proposer + 1)}. "
                  f"{record['n_accepts']} of {n} pirates accepted; {verdict}.")
        if i == proposer:
            echo = canonical_json({"proposal": {str(proposer + 1 + k): s for k, s in enumerate(shares)}})
        else:
            echo = canonical_json({"decision": "accept" if record["votes"][i] else "reject"})
        if record["accepted"]:
            private = f"The plan is accepted and the game is over: you receive {_coins(record['proposal'][i])}."
        elif i == proposer:
            private = "You, the proposer, were thrown overboard and receive nothing."
        else:
            private = f"The rank-{proposer + 1} pirate was thrown overboard; the game continues."
        if i == proposer:
            private = "As the proposer you count as accepting. " + private
        return public, echo, private

    def _summary(self, record: dict[str, Any]) -> str:
        proposer = record["proposer"]
        shares = record["proposal"][proposer:]
        outcome = "accepted" if record["accepted"] else f"rejected, player_{proposer} overboard"
        return (f"player_{proposer} proposes {shares}; {record['n_accepts']}/{self.n_players - proposer} accept; "
                f"{outcome}.")

    # ---------------------------------------------------------------- TextAECEnv hooks

    def params(self) -> dict[str, Any]:
        return {"n_players": self.n_players, "golds": self.golds}

    def config(self) -> dict[str, Any]:
        return {**super().config(), "death_reward": self.death_reward}

    def _start_game(self, options: dict[str, Any]) -> None:
        self.game = PirateGame(self.n_players, self.golds)
        self._start_episode()
        self._transcripts = self._seat_transcripts()
        if self.n_players == 1:  # a lone pirate: resolved at once, recorded as the proposal [G]
            self._close(self.game.resolve_last_pirate())
            self._cumulative_rewards["player_0"] = self.rewards["player_0"]

    def _parse_text(self, agent: str, text: str) -> tuple[str, Any]:
        ranks = list(range(self.game.proposer + 1, self.n_players + 1)) if self.game.phase == "propose" else None
        return parse_answer(text, self.golds, ranks)

    def _from_native(self, agent: str, action: Any) -> tuple[str, Any]:
        if self.game.phase == "propose":
            if isinstance(action, Mapping) and "coins" in action:
                return "propose", self._coin_shares(action["coins"])
            value = action.get("proposal") if isinstance(action, Mapping) else action
            try:
                entries = [int(v) if float(v) == int(v) else float(v) for v in np.asarray(value).ravel()]
            except (TypeError, ValueError, OverflowError, RecursionError):  # not numbers, inf, 10**400, deep nesting
                raise InvalidAnswer("unparseable",
                                    f"expected a proposal of {self.n_players} integers, got {excerpt(value)}") from None
            n = self.game.n_survivors
            if len(entries) == self.n_players and any(entries[n:]):
                raise InvalidAnswer("illegal", f"only the first {n} proposal entries (the survivors) may be non-zero")
            return "propose", entries[:n] if len(entries) == self.n_players else entries
        value = action.get("vote") if isinstance(action, Mapping) else action
        if isinstance(value, np.ndarray) and value.shape == ():
            value = value.item()
        if not isinstance(value, (bool, int, np.integer, np.bool_)) or int(value) not in (0, 1):
            raise InvalidAnswer("illegal", f"a vote is 1 (accept) or 0 (reject), got {excerpt(value)}")
        return "vote", bool(value)

    def _coin_shares(self, value: Any) -> list[int]:
        """The survivors' shares of a ``coins`` action (``coins[k]``: the seat that gets coin k)."""
        try:
            seats = np.asarray(value)
        except (TypeError, ValueError, OverflowError, RecursionError):  # ragged, inf, 10**400, deep nesting
            seats = np.asarray(None)
        if seats.size != self.golds or seats.dtype.kind not in "iu":
            raise InvalidAnswer("unparseable", f"expected coins: {self.golds} seat indices (the seat that gets each "
                                               f"coin), got {excerpt(value)}")
        seats = seats.ravel()
        first = self.game.proposer
        outside = seats[(seats < first) | (seats >= self.n_players)]
        if outside.size:
            raise InvalidAnswer("illegal", f"coins go to the pirates on board, seats {first}..{self.n_players - 1}; "
                                           f"got seat {int(outside[0])}")
        return [int(c) for c in np.bincount(seats - first, minlength=self.n_players - first)]

    def _validate(self, agent: str, move: tuple[str, Any]) -> None:
        kind, value = move
        if kind == "propose":
            problem = proposal_problem(value, self.game.n_survivors, self.golds)
            if problem:
                raise InvalidAnswer("illegal", problem)

    def _fallback(self, agent: str) -> tuple[str, Any]:
        self._check_fallback(agent)
        if self.game.phase == "propose":
            return "propose", random_composition(self.np_random, self.golds, self.game.n_survivors)
        return "vote", bool(self.np_random.integers(2))

    def _apply(self, answered: Answered) -> None:
        kind, value = answered.move
        i, fell_back = self._index[answered.agent], answered.fell_back
        if kind == "propose":
            self.game.propose(value)
            self.record.add("proposal", round=self.game.round, proposer=i, shares=list(value), fallback=fell_back)
        else:
            self.game.vote(i, value)
            self.record.add("vote", round=self.game.round, voter=i, accept=value, fallback=fell_back)
            if self.game.next_voter() is None:
                self._close(self.game.resolve())
        self._changed()

    def _close(self, record: dict[str, Any]) -> None:
        """Record a resolved round, send the reports, and hand out rewards and terminations."""
        self.history.append(record)
        self.record.add("round", **record)
        survivors = [p for p, share in enumerate(record["proposal"]) if share is not None]
        for p in survivors:
            public, echo, private = self._report(p, record)
            self._transcripts[p].add(report_block(f"Round {record['round']}", public, echo, private))
        if record["accepted"]:
            for p in survivors:
                self._reward(p, float(record["proposal"][p]))
                self.terminations[self.possible_agents[p]] = True
        else:
            self._reward(record["proposer"], self.death_reward)
            self.terminations[self.possible_agents[record["proposer"]]] = True

    def _next_agent(self) -> str | None:
        game = self.game
        if game.over:
            return None
        seat = game.proposer if game.phase == "propose" else game.next_voter()
        return None if seat is None else self.possible_agents[seat]

    def _acting(self, i: int) -> bool:
        game = self.game
        return not game.over and i == (game.proposer if game.phase == "propose" else game.next_voter())

    def _text(self, agent: str, note: str | None) -> str:
        i = self._index[agent]
        text = self._transcripts[i].text
        if not self._acting(i):
            return text
        game = self.game

        def build() -> str:
            if game.phase == "propose":
                lines, instruction = self._proposer_lines(), self._proposal_instruction()
            else:
                lines, instruction = self._voter_lines(i), self._vote_instruction
            return request_block(f"Round {game.round}", lines, instruction, note, self.prompt.cot)

        return text + self._cached_request(i, (game.round, game.phase, note), build)

    def _features(self, agent: str) -> np.ndarray:
        i = self._index[agent]

        def build() -> list[float]:
            game = self.game
            proposal = [-1.0] * self.n_players
            if game.proposal is not None:
                proposal[game.proposer:] = game.proposal
            phase = -1 if game.over else (0 if game.phase == "propose" else 1)
            offered = game.offered(i) if game.phase == "vote" and i > game.proposer else -1
            return [game.round - 1, self.n_players, self.golds, i + 1, game.proposer + 1,
                    game.n_survivors, phase, offered, *proposal]

        return self._cached_features(i, build)

    def _action_mask(self, agent: str) -> dict[str, Any]:
        i = self._index[agent]
        game = self.game
        if not self._acting(i):
            key: tuple[Any, ...] = ("idle",)
        else:
            key = ("propose", game.n_survivors) if game.phase == "propose" else ("vote",)
        mask = self._masks.get(key)
        if mask is None:
            mask = self._masks[key] = self._build_mask(key)
        return mask

    def _build_mask(self, key: tuple[Any, ...]) -> dict[str, Any]:
        n = self.n_players
        first = n - key[1] if key[0] == "propose" else n  # the proposer's seat: coins go to it and its juniors
        on_board = np.array([k >= first for k in range(n)], dtype=np.int8)
        if not on_board.any():
            on_board[0] = 1  # a decision that reads no coin: they allow only 0
        vote = np.array([1, int(key[0] == "vote")], dtype=np.int8)
        for array in (on_board, vote):
            array.setflags(write=False)
        return {"coins": (on_board,) * self.golds, "vote": vote}

    def _agent_info(self, agent: str) -> dict[str, Any]:
        i = self._index[agent]
        game = self.game
        on_board = not game.over and i >= game.proposer
        phase = "done" if game.over else (game.phase if self._acting(i) else "wait")
        proposal = None
        if game.proposal is not None:
            proposal = [None] * game.proposer + list(game.proposal)
        return {
            "round": game.round,
            "phase": phase,
            "player": i,
            "rank": i + 1,
            "n_players": self.n_players,
            "golds": self.golds,
            "proposer": game.proposer,
            "n_survivors": game.n_survivors,
            "position": i - game.proposer if on_board else None,
            "proposal": proposal,
            "offered": proposal[i] if proposal is not None and on_board else None,
            "last_round_record": self.history[-1] if self.history else None,
        }

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint:
        if self.game.phase == "propose":
            ranks = [str(r) for r in range(self.game.proposer + 1, self.n_players + 1)]
            prop = {"type": "object", "properties": {r: {"type": "integer", "minimum": 0, "maximum": self.golds}
                                                      for r in ranks},
                    "required": ranks, "additionalProperties": False}
            return json_constraint({"proposal": prop}, f"coins per rank {ranks[0]}..{ranks[-1]}, summing to "
                                   f"{self.golds}", self.prompt.cot)
        return json_constraint({"decision": {"enum": ["accept", "reject"]}}, "decision: accept or reject",
                               self.prompt.cot)

    def _metrics(self) -> dict[str, Any]:
        final = self.game.final_shares
        overboard = {r["proposer"] for r in self.history if not r["accepted"]}
        agents = {a: {"score": self.returns[i], "coins": final[i] if final else 0,
                      "overboard": i in overboard} for i, a in enumerate(self.possible_agents)}
        params = self.params()
        stats = [scoring.pirate_round_stats(params, r, self.score_variant) for r in self.history]
        game = self._game_metrics(scoring.pirate_raw_of_stats(stats, self.score_variant) if stats else None)
        game["per_round"] = [dict(zip(("l1", "correct_votes", "votes"), s)) for s in stats]
        game["final_shares"] = final
        return {"agents": agents, "game": game}


def random_composition(rng: np.random.Generator, golds: int, parts: int) -> list[int]:
    """A uniformly random split of ``golds`` into ``parts`` non-negative integers (stars and bars)."""
    bars = np.sort(rng.choice(golds + parts - 1, size=parts - 1, replace=False)) if parts > 1 else np.array([], int)
    edges = [-1, *bars.tolist(), golds + parts - 1]
    return [edges[k + 1] - edges[k] - 1 for k in range(parts)]
