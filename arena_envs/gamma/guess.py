"""Guess 2/3 of the Average (γ-Bench game 1) as a PettingZoo AEC environment.

Native action ``a`` (``Discrete(MAX - MIN + 1)``) means the number ``MIN + a``; a text answer is
``{"chosen_number": "<integer>"}``. Reward: 1 to every winner of a round, 0 otherwise.
Players see the mean, the target and the winning number(s), never the others' choices.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

from arena_envs.gamma.answer import IntField
from arena_envs.gamma.base import fmt
from arena_envs.gamma.guess_rules import GuessRules, as_fraction, ratio_text
from arena_envs.gamma.simultaneous import SimultaneousGameEnv

NA = -1.0


class GuessTwoThirdsEnv(SimultaneousGameEnv):
    """Guess R x the average; see :mod:`arena_envs.gamma.guess_rules` for the rules."""

    metadata: ClassVar[dict[str, Any]] = {"name": "guess_two_thirds_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": True}
    game_feature_names = ("min_value", "max_value", "ratio", "last_mean", "last_target",
                          "last_min_winning_number", "own_last_choice", "own_last_won")

    def __init__(self, n_players: int = 10, n_rounds: int = 20, min_value: int = 0, max_value: int = 100,
                 ratio: Fraction | float | str = Fraction(2, 3), tie_rule: str = "all", **options: Any):
        self.settings = GuessRules(n_players, n_rounds, min_value, max_value, as_fraction("ratio", ratio), tie_rule)
        self._answer_field = IntField("chosen_number", min_value, max_value)
        super().__init__(n_players=n_players, n_rounds=n_rounds, values=range(min_value, max_value + 1), **options)

    def params(self) -> dict[str, Any]:
        r = self.settings
        return {"n_players": self.n_players, "n_rounds": self.n_rounds, "min_value": r.min_value,
                "max_value": r.max_value, "ratio": float(r.ratio), "ratio_text": ratio_text(r.ratio),
                "tie_rule": r.tie_rule}

    def _intro(self) -> str:
        return f"You are one of {self.n_players} players in a number-guessing game that lasts {self.n_rounds} rounds."

    def _rules(self) -> list[str]:
        r, shown = self.settings, ratio_text(self.settings.ratio)
        return [
            f"Every round, each player secretly chooses a whole number from {r.min_value} to {r.max_value} "
            "(both included).",
            "When all have chosen, the average of all chosen numbers (yours included) is computed; the target is "
            f"{shown} times that average.",
            "The player or players whose number is closest to the target win the round.",
            "After each round you learn the average, the target and the winning number, but not the other "
            "players' choices.",
        ]

    def _report(self, i: int, record: dict[str, Any]) -> tuple[str, str]:
        numbers = ", ".join(str(n) for n in record["winning_numbers"])
        label = "number is" if len(record["winning_numbers"]) == 1 else "numbers are"
        public = (f"The average of all chosen numbers is {fmt(record['average'])}; the target "
                  f"({ratio_text(self.settings.ratio)} of the average) is {record['target']:.2f}. "
                  f"The winning {label} {numbers}.")
        won = i in record["winners"]
        outcome = "You won this round." if won else "You did not win this round."
        return public, f"You chose {record['choices'][i]}. {outcome}"

    def _request(self, i: int) -> list[str]:
        return [f"Choose the number you expect to be closest to {ratio_text(self.settings.ratio)} of the average "
                "of all numbers chosen this round, your own included."]

    def _observed(self, i: int, record: dict[str, Any]) -> dict[str, Any]:
        return {"round": record["round"], "average": record["average"], "target": record["target"],
                "winning_numbers": record["winning_numbers"], "own_choice": record["choices"][i],
                "won": i in record["winners"]}

    def _game_features(self, i: int) -> list[float]:
        r, last = self.settings, self.last_record
        head = [r.min_value, r.max_value, float(r.ratio)]
        if last is None:
            return head + [NA] * 5
        return head + [last["average"], last["target"], last["winning_numbers"][0], last["choices"][i],
                       float(i in last["winners"])]

    def _summary(self, record: dict[str, Any]) -> str:
        return (f"choices {record['choices']}, average {fmt(record['average'])}, target {record['target']:.2f}, "
                f"winners {[f'player_{w}' for w in record['winners']]}")
