"""Battle Royale (γ-Bench game 7, a sequential game) as a PettingZoo AEC environment.

One shooter acts per turn (``agent_selection``); every turn is one "round" of the paper. Native
action: ``Discrete(N + 1)``, ``a < N`` shoots ``player_a``, ``a = N`` misses on purpose; the mask
allows the living opponents and the miss. A text answer is ``{"action": "shoot" | "miss",
"target": "player_k" | null}``. A hit player is terminated at once (dead-agent protocol); the last
survivor ends the game with reward +1, everyone else gets 0; reaching ``max_turns`` with several
alive truncates the survivors.

Features (``observation``, float32): ``round_index`` (turns played), ``max_turns`` (-1: no cap),
``own_hit_rate`` (probability), ``own_position`` (1-based place among the living in shooting
order, -1 once eliminated), then per seat ``alive_i`` and ``hit_rate_i`` (probability).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from arena_envs.core import AnswerConstraint, Answered, InvalidAnswer
from arena_envs.core.answers import excerpt, native_index
from arena_envs.core.arguments import check_real
from arena_envs.core.json_answer import key_values
from arena_envs.gamma.answer import answer_object, canonical_json, format_instruction, json_constraint
from arena_envs.gamma.base import check_int, random_legal_action
from arena_envs.gamma.battle_royale_rules import (
    DEFAULT_HIT_RATE_BASE,
    DEFAULT_HIT_RATE_STEP,
    DEFAULT_MAX_TURNS,
    DEFAULT_PLAYERS,
    MAX_PLAYERS,
    BattleRoyale,
    check_hit_rates,
    linear_hit_rates,
    shooting_order,
)
from arena_envs.gamma.sequential import SequentialGameEnv
from arena_envs.gamma.simultaneous_rules import MAX_ROUNDS
from arena_envs.gamma.transcript import SharedTranscripts, report_block, request_block

#: Words of the "action" key that mean an intentional miss (anything else defers to "target").
MISS_WORDS = frozenset({"miss", "intentional miss", "intentionally miss", "miss on purpose", "miss intentionally",
                        "deliberate miss", "deliberately miss", "pass", "skip", "none"})
#: Target values that mean an intentional miss.
NO_TARGET = frozenset({"", "null", "none", "nobody", "no one", "-1", "miss"})
_PLAYER = re.compile(r"(?:player[\s_#-]*)?(\d{1,6})")


def _pct(rate: float) -> str:
    return f"{rate:g}%"


def parse_target(value: Any) -> int | None:
    """A target index from ``"player_k"``, ``"k"`` or ``k``; ``None`` for an intentional miss."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == -1):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        word = " ".join(value.strip().strip(".!'\"").lower().split())
        if word in NO_TARGET:
            return None
        match = _PLAYER.fullmatch(word)
        if match:
            return int(match.group(1))
    raise InvalidAnswer("illegal", '"target" must name a player such as "player_3", or be null to miss on purpose; '
                        f"got {excerpt(value)}")


def parse_answer(text: str) -> int | None:
    """The target of a text answer (``None``: intentional miss); raises :class:`InvalidAnswer`."""
    obj = answer_object(text, "target") or answer_object(text, "action")
    if obj is not None:
        action, has_target, target = obj.get("action"), "target" in obj, obj.get("target")
    else:  # no JSON object parses: the two keys' pairs where they stand (a null target is a miss)
        actions, targets = key_values(text, "action"), key_values(text, "target")
        action, has_target, target = actions[-1] if actions else None, bool(targets), targets[-1] if targets else None
        if action is None and not has_target:
            raise InvalidAnswer("unparseable", 'no JSON object with "action" and "target" was found')
    if isinstance(action, str) and " ".join(action.strip().strip(".!").lower().split()) in MISS_WORDS:
        return None
    if not has_target:
        raise InvalidAnswer("unparseable", 'the answer has no "target": name the player you shoot at, or null to miss')
    return parse_target(target)


class BattleRoyaleEnv(SequentialGameEnv):
    """γ-Bench Battle Royale; see the module docstring for spaces, rewards and features."""

    metadata: ClassVar[dict[str, Any]] = {"name": "battle_royale_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": False}

    def __init__(
        self,
        n_players: int | None = None,
        hit_rate_base: float = DEFAULT_HIT_RATE_BASE,
        hit_rate_step: float = DEFAULT_HIT_RATE_STEP,
        hit_rates: Sequence[float] | None = None,
        max_turns: int | None = DEFAULT_MAX_TURNS,
        **options: Any,
    ):
        if hit_rates is None:
            n_players = check_int("n_players", DEFAULT_PLAYERS if n_players is None else n_players, 2, MAX_PLAYERS)
            hit_rates = linear_hit_rates(n_players, check_real("hit_rate_base", hit_rate_base),
                                         check_real("hit_rate_step", hit_rate_step))
        elif n_players is not None and n_players != len(hit_rates):
            raise ValueError(f"n_players ({excerpt(n_players)}) must equal len(hit_rates) ({len(hit_rates)}) "
                             "when both are given")
        self.hit_rates = check_hit_rates(hit_rates)
        if max_turns is not None:
            max_turns = check_int("max_turns", max_turns, 1, MAX_ROUNDS)
        self.max_turns = max_turns
        n = len(self.hit_rates)
        self.order = shooting_order(self.hit_rates)
        super().__init__(
            n_players=n,
            action_spaces={f"player_{i}": spaces.Discrete(n + 1) for i in range(n)},
            feature_names=("round_index", "max_turns", "own_hit_rate", "own_position",
                           *(f"{kind}_{i}" for i in range(n) for kind in ("alive", "hit_rate"))),
            **options,
        )
        self._labels = [f"player_{p} ({_pct(rate)})" for p, rate in enumerate(self.hit_rates)]
        self._prefixes = [self._rules_for(i) for i in range(n)]
        self._living_text: tuple[int, str] = (-1, "")  # (players alive, their labels) of the request
        self._miss_only = np.zeros(n + 1, dtype=np.int8)  # the mask of a seat that cannot shoot
        self._miss_only[n] = 1
        self._miss_only.setflags(write=False)
        self._instruction = format_instruction(
            {"action": "shoot or miss", "target": "the player you shoot at, e.g. player_3, or null to miss on purpose"},
            self.prompt.cot)

    # ---------------------------------------------------------------- text

    def _rules_for(self, i: int) -> str:
        n = self.n_players
        ranking = ", ".join(self._labels[p] for p in self.order)
        rules = [
            "Every player has a fixed hit rate. In shooting order (ascending hit rate): " + ranking + ".",
            "Players take turns in that order; after the last one the first shoots again. "
            "Eliminated players are skipped.",
            "On your turn you either shoot at one other player who is still in the game, or miss on purpose. "
            "Bullets are unlimited.",
            "A shot hits with the shooter's hit rate. A player who is hit is eliminated.",
            "The last player standing wins.",
        ]
        identity = (f"You are player_{i}. Your hit rate is {_pct(self.hit_rates[i])}. "
                    f"You are number {self.order.index(i) + 1} in the shooting order.")
        intro = f"You are one of {n} players (player_0 to player_{n - 1}) in a last-one-standing shooting game."
        return self._describe_game(intro, rules, identity)

    def _request(self, i: int) -> list[str]:
        living = self.game.living
        if self._living_text[0] != len(living):  # the list changes only when a hit removes a player
            self._living_text = (len(living), ", ".join([self._labels[p] for p in living]))
        return [
            "Your goal is to eliminate the other players and be the last one standing.",
            "Players still in the game, in shooting order: " + self._living_text[1] + ".",
            f"You are player_{i}, hit rate {_pct(self.hit_rates[i])}, number {living.index(i) + 1} of the "
            f"{len(living)} remaining players in the shooting order.",
            "Decide whether to shoot at one of the other remaining players or to miss on purpose.",
        ]

    def _describe(self, record: dict[str, Any]) -> str:
        s, x = record["shooter"], record["target"]
        if x is None:
            return f"player_{s} missed on purpose."
        if record["hit"]:
            return f"player_{s} shot at player_{x} and hit: player_{x} is eliminated."
        return f"player_{s} shot at player_{x} but missed."

    def _summary(self, record: dict[str, Any]) -> str:
        return f"{self._describe(record)} {len(record['alive_after'])} left."

    # ---------------------------------------------------------------- TextAECEnv hooks

    def params(self) -> dict[str, Any]:
        return {"n_players": self.n_players, "hit_rates": list(self.hit_rates), "max_turns": self.max_turns}

    def _start_game(self, options: dict[str, Any]) -> None:
        self.game = BattleRoyale(self.hit_rates, self.max_turns)
        self._start_episode()
        self._transcripts = SharedTranscripts(self._prefixes, self.prompt.history_window)
        self._masks: dict[int, np.ndarray] = {}
        self._living_text = (-1, "")
        # the features with every seat's (alive_i, hit_rate_i) after the four of the observing seat, and the
        # mask "living targets + miss", updated at each hit
        self._feature_row = np.array([0.0] * 4 + [v for rate in self.hit_rates for v in (1.0, rate / 100.0)],
                                     dtype=np.float32)
        self._living_mask = np.ones(self.n_players + 1, dtype=np.int8)

    def _changed(self) -> None:
        super()._changed()
        self._masks.clear()

    def _eliminate(self, p: int) -> None:
        self._feature_row[4 + 2 * p] = 0.0
        self._living_mask[p] = 0
        self._transcripts.leave(p)
        self.terminations[self.possible_agents[p]] = True

    def _parse_text(self, agent: str, text: str) -> int | None:
        return parse_answer(text)

    def _from_native(self, agent: str, action: Any) -> int | None:
        index = native_index(action, self.n_players + 1)
        return None if index == self.n_players else index

    def _validate(self, agent: str, move: int | None) -> None:
        problem = self.game.target_problem(self._index[agent], move)
        if problem:
            raise InvalidAnswer("illegal", problem)

    def _fallback(self, agent: str) -> int | None:
        self._check_fallback(agent)
        return self._from_native(agent, random_legal_action(self.np_random, self._action_mask(agent)))

    def _apply(self, answered: Answered) -> None:
        move: int | None = answered.move
        record = self.game.play(move, self.np_random)
        self.history.append(record)
        self.record.add("turn", fallback=answered.fell_back, **record)
        shooter = record["shooter"]
        echo = canonical_json({"action": "miss" if move is None else "shoot",
                               "target": None if move is None else f"player_{move}"})
        title = f"Round {record['round']}"
        public = f"{self._describe(record)} {len(record['alive_after'])} players are left."
        own = {shooter: report_block(title, public, echo, "")}
        if record["hit"]:
            own[record["target"]] = report_block(title, public, None, "You have been eliminated.")
        self._transcripts.post(report_block(title, public, None, ""), own)
        if record["hit"]:
            self._eliminate(record["target"])
        if self.game.over:
            survivors = [f"player_{p}" for p in self.game.alive]
            if self.game.cut_off:
                for a in survivors:
                    self.truncations[a] = True
            else:
                self._reward(self.game.alive[0], 1.0)
                self.terminations[survivors[0]] = True
        self._changed()

    def _next_agent(self) -> str | None:
        return None if self.game.over else f"player_{self.game.shooter}"

    def _text(self, agent: str, note: str | None) -> str:
        i = self._index[agent]
        text = self._transcripts.text(i)
        if self.game.over or self.game.shooter != i:
            return text
        turn = self.game.turns_played + 1
        return text + self._cached_request(i, (turn, note), lambda: request_block(
            f"Round {turn}", self._request(i), self._instruction, note, self.prompt.cot))

    def _features(self, agent: str) -> np.ndarray:
        i = self._index[agent]

        def build() -> list[float]:
            position = self.game.living.index(i) + 1 if self._living_mask[i] else -1
            cap = -1 if self.max_turns is None else self.max_turns
            return [self.game.turns_played, cap, self.hit_rates[i] / 100.0, position]

        return self._cached_features(i, build, self._feature_row)

    def _action_mask(self, agent: str) -> np.ndarray:
        i = self._index[agent]
        mask = self._masks.get(i)
        if mask is None:
            if self._living_mask[i] and not self.game.over:
                mask = self._living_mask.copy()
                mask[i] = 0
                mask.setflags(write=False)
            else:
                mask = self._miss_only
            self._masks[i] = mask
        return mask

    def _agent_info(self, agent: str) -> dict[str, Any]:
        i = self._index[agent]
        acting = not self.game.over and self.game.shooter == i
        return {
            "round": self.game.turns_played + (0 if self.game.over else 1),
            "phase": "done" if self.game.over else ("shoot" if acting else "wait"),
            "player": i,
            "hit_rates": list(self.hit_rates),
            "alive": list(self.game.alive),
            "shooting_order": list(self.game.living),
            "strongest_opponents": self.game.strongest(i) if self._living_mask[i] else [],
            "last_round_record": self.history[-1] if self.history else None,
        }

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint:
        i = self._index[self.agent_selection if agent is None else agent]
        targets = [f"player_{p}" for p in self.game.legal_targets(i)]
        return json_constraint(
            {"action": {"enum": ["shoot", "miss"]}, "target": {"enum": [*targets, None]}},
            f"shoot one of {', '.join(targets)} or miss (target null)", self.prompt.cot)

    def _metrics(self) -> dict[str, Any]:
        turns = [0] * self.n_players
        correct = [0] * self.n_players
        for r in self.history:
            turns[r["shooter"]] += 1
            correct[r["shooter"]] += r["correct"]
        agents = {a: {"score": self.returns[i], "survived": i in self.game.alive, "turns": turns[i],
                      "strongest_target_turns": correct[i]} for i, a in enumerate(self.possible_agents)}
        game = self._game_metrics()
        game.update(survivors=list(self.game.alive), truncated=self.game.cut_off)
        return {"agents": agents, "game": game}
