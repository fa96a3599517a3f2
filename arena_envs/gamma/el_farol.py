"""El Farol Bar (γ-Bench game 2) as a PettingZoo AEC environment.

Native action 0 = stay home, 1 = go (``Discrete(2)``); a text answer is ``{"decision": "go"}``
(also "go to the bar"; "stay home", "home"). Reward: the round's utility (MAX, MIN or HOME).
In the implicit mode (default, scored) a player who stayed home learns nothing about attendance.
"""
from __future__ import annotations

from typing import Any, ClassVar

from arena_envs.gamma.answer import ChoiceField
from arena_envs.gamma.base import fmt, percent
from arena_envs.gamma.el_farol_rules import DECISIONS, ElFarolRules
from arena_envs.gamma.simultaneous import SimultaneousGameEnv

NA = -1.0
SYNONYMS = {"go to the bar": "go", "going": "go", "bar": "go", "stay home": "stay", "stay at home": "stay",
            "home": "stay", "staying": "stay"}


class ElFarolEnv(SimultaneousGameEnv):
    """Go to the bar or stay home; see :mod:`arena_envs.gamma.el_farol_rules` for the rules."""

    metadata: ClassVar[dict[str, Any]] = {"name": "el_farol_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": True}
    game_feature_names = ("capacity_ratio", "max_utility", "min_utility", "home_utility",
                          "own_last_go", "own_last_utility", "last_go_rate")

    def __init__(self, n_players: int = 10, n_rounds: int = 20, capacity_ratio: float = 0.6, max_utility: float = 10,
                 min_utility: float = 0, home_utility: float = 5, mode: str = "implicit", **options: Any):
        self.settings = ElFarolRules(n_players, n_rounds, capacity_ratio, max_utility, min_utility, home_utility, mode)
        self._answer_field = ChoiceField("decision", ("go", "stay"), SYNONYMS)
        super().__init__(n_players=n_players, n_rounds=n_rounds, values=DECISIONS, **options)

    def params(self) -> dict[str, Any]:
        r = self.settings
        return {"n_players": self.n_players, "n_rounds": self.n_rounds, "capacity_ratio": r.capacity_ratio,
                "max_utility": r.max_utility, "min_utility": r.min_utility, "home_utility": r.home_utility,
                "mode": r.mode}

    def _intro(self) -> str:
        return (f"You are one of {self.n_players} players in a game that lasts {self.n_rounds} rounds. "
                "Every round, each player decides whether to go to the bar or to stay home.")

    def _rules(self) -> list[str]:
        r, cap = self.settings, percent(self.settings.capacity_ratio)
        told = ("Only the players who went to the bar learn how many players went; a player who stayed home "
                "learns only its own utility." if r.mode == "implicit"
                else "After each round every player learns how many players went to the bar.")
        return [
            f"If at most {cap} of the players go to the bar, the bar is fun: every player who went gets a utility "
            f"of {fmt(r.max_utility)}.",
            f"If more than {cap} of the players go, the bar is crowded: every player who went gets a utility "
            f"of {fmt(r.min_utility)}.",
            f"A player who stays home gets a utility of {fmt(r.home_utility)}, however many go.",
            "All players decide at the same time, without knowing the others' decisions.",
            told,
        ]

    def _sees_attendance(self, i: int, record: dict[str, Any]) -> bool:
        return self.settings.mode == "explicit" or record["go"][i]

    def _report(self, i: int, record: dict[str, Any]) -> tuple[str, str]:
        r, n, g = self.settings, self.n_players, record["attendance"]
        went = record["go"][i]
        private = (("You went to the bar. " if went else "You stayed home. ")
                   + f"Your utility this round is {fmt(record['utilities'][i])}.")
        if not self._sees_attendance(i, record):
            return "You stayed home, so you do not learn how many players went to the bar.", private
        compare = "more than" if record["crowded"] else "at most"
        fun = "less" if record["crowded"] else "more"
        public = (f"{g} players went to the bar and {n - g} stayed home. {g}/{n} of the players went, which is "
                  f"{compare} {percent(r.capacity_ratio)}. Going to the bar was {fun} fun than staying home.")
        return public, private

    def _request(self, i: int) -> list[str]:
        cap = percent(self.settings.capacity_ratio)
        return ["Your goal is to maximise your total utility (your fun) over the game.",
                f"Go to the bar if you expect at most {cap} of the players to go; otherwise stay home.",
                'Decide: "go" or "stay".']

    def _observed(self, i: int, record: dict[str, Any]) -> dict[str, Any]:
        seen = {"round": record["round"], "own_go": record["go"][i], "utility": record["utilities"][i]}
        if self._sees_attendance(i, record):
            seen.update(attendance=record["attendance"], go_rate=record["go_rate"], crowded=record["crowded"])
        return seen

    def _game_features(self, i: int) -> list[float]:
        r, last = self.settings, self.last_record
        head = [r.capacity_ratio, r.max_utility, r.min_utility, r.home_utility]
        if last is None:
            return head + [NA] * 3
        rate = last["go_rate"] if self._sees_attendance(i, last) else NA
        return head + [float(last["go"][i]), last["utilities"][i], rate]

    def _summary(self, record: dict[str, Any]) -> str:
        return f"{record['attendance']}/{self.n_players} went ({'crowded' if record['crowded'] else 'fun'})"
