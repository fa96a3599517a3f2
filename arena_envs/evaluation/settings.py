"""The paper settings of ``arena eval``: for each of the twelve games, who sits where, how many
episodes, and the paper's headline metric of the evaluated seats (the table of ``docs/eval.md``).

A game's evaluation is one or more *parts*, each an ordinary runner run with fixed seats
(``rotate=False``): the *subject* (the evaluated SPEC, or the random or rule baseline) plays the
part's subject seats, the paper's opponents (here rule policies) the others.

* γ-Bench: ten seats, all the subject, default parameters, 5 runs; the env's 0-100 score. The
  rule subject is each game's ``equilibrium`` policy (the γ games have no ``rule``).
* AucArena: three profit bidders, the challenger in seat 3 against two Rule bidders standing in
  for the paper's GPT-4-Turbo and GPT-3.5-Turbo; budget {20000, 40000} x order {random, ascending,
  descending}, 10 games each; TrueSkill per setting, ranked by profit. LLMs play ``agent=aucarena``.
* BattleAgentBench: parts ``stage1``..``stage7``, the subject in each stage's primary seats, the
  secondary seats (the paper's yi-1.5-9b) played by the rule tank; 5 runs on layouts 1-5.
* WiS: six players, the spy in seat 0; 15 games with the subject as the spy, 75 as a civilian in
  seat 1 (the paper's 90 games per model), the others the lexicon rule agent; headline: the
  average score of the paper's Table 2 (roles weighted 1 : 5).
* Agent Market Arena: the default real-data window, one trader; LLMs play ``agent=investor``;
  5 replays of the window; headline CR. ``--quick`` plays ``quick_episodes`` (1) per part.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from arena_envs.core.answers import excerpt
from arena_envs.evaluation import paper_metrics
from arena_envs.gamma.history import GAMES as GAMMA_GAMES
from arena_envs.runner.results import read_episodes

SUBJECTS: tuple[str, ...] = ("model", "random", "rule")
#: Spec prefixes of LLM policies (llm_policies.specs), whose options follow a ``?``.
LLM_PREFIXES = ("vllm", "vllm-local", "hf")
MANIFEST = "eval.json"


@dataclass(frozen=True)
class Part:
    """One run of a game's evaluation; the subject plays ``subject_seats`` (indices into the
    environment's agents), ``opponent`` every other seat."""

    name: str
    env_kwargs: Mapping[str, Any]
    episodes: int  #: full (paper) evaluation
    quick_episodes: int  #: --quick
    n_seats: int = 1
    subject_seats: tuple[int, ...] | None = (0,)  #: None: every seat (γ-Bench, whatever ``n_players``)
    opponent: str = "rule"


Metrics = Callable[[paper_metrics.Entries, paper_metrics.Seats, str], dict[str, float]]


@dataclass(frozen=True)
class PaperSetting:
    game: str  #: registry name
    paper: str
    label: str  #: display name
    parts: tuple[Part, ...]
    metric: str  #: headline metric, as the paper names it
    higher_is_better: bool
    secondary: tuple[str, ...]
    rule: str = "rule"  #: the policy the ``rule`` subject plays
    agent: str | None = None  #: ``agent=`` given to an LLM SPEC that names none
    env: str | None = None  #: the runner's environment when not ``game`` (a ``module:callable``)
    compute: Metrics = field(default=paper_metrics.gamma, repr=False)

    def part(self, name: str) -> Part:
        for part in self.parts:
            if part.name == name:
                return part
        raise KeyError(f"{self.game} has no part {name!r}; parts: {', '.join(p.name for p in self.parts)}")

    def subject_spec(self, spec: str, subject: str) -> str:
        """The policy spec the ``subject`` plays: the SPEC (with this game's ``agent=`` for an LLM
        spec that names none), or the game's ``random`` or rule policy. A SPEC that is just
        ``random`` or ``rule`` means that subject's policy (the γ games' rule is ``equilibrium``)."""
        if subject == "model" and spec.strip() in ("random", "rule"):
            subject = spec.strip()
        if subject == "random":
            return "random"
        if subject == "rule":
            return self.rule
        if subject != "model":
            raise ValueError(f"subject must be one of {', '.join(SUBJECTS)}, got {excerpt(subject)}")
        return with_agent(spec, self.agent) if self.agent else spec

    def players(self, part: Part, spec: str, subject: str, n_seats: int | None = None) -> tuple[str, ...]:
        """One policy spec per seat of ``part``'s run (in the environment's agent order); ``n_seats``:
        the seats when an ``n_players`` override changes them."""
        me = self.subject_spec(spec, subject)
        seats = part.subject_seats
        return tuple(me if seats is None or i in seats else part.opponent for i in range(n_seats or part.n_seats))

    def evaluated(self, episodes: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[str]]:
        """Part name -> the agents the subject plays, read from the entries' seat order."""
        seats: dict[str, list[str]] = {}
        for part in self.parts:
            entries = episodes.get(part.name) or ()
            agents = list(entries[0]["seats"]) if entries else []
            seats[part.name] = agents if part.subject_seats is None else [agents[i] for i in part.subject_seats
                                                                           if i < len(agents)]
        return seats

    def metrics(self, episodes: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, float]:
        """The headline (under ``metric``) and every ``secondary`` metric of the evaluated seats,
        from ``episodes`` (part name -> its ``episodes.jsonl`` entries) alone; NaN where undefined."""
        return self.compute(episodes, self.evaluated(episodes), self.metric)

    def headline(self, episodes: Mapping[str, Sequence[Mapping[str, Any]]]) -> float:
        """``metrics(episodes)[metric]`` (the statistic the card's bootstrap resamples)."""
        return self.metrics(episodes)[self.metric]

    def episodes(self, part: Part, quick: bool) -> int:
        return part.quick_episodes if quick else part.episodes

    def run_env(self, part: Part, seed: int, overrides: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """The runner's environment and keyword arguments of ``part`` in a run seeded ``seed``
        (``overrides``: the ``--env-arg`` values of this game)."""
        kwargs = {**part.env_kwargs, **(overrides or {})}
        if self.env is None:
            return self.game, kwargs
        return self.env, {**kwargs, "run_seed": seed}  # the layout builder maps episode seeds to layouts


def with_agent(spec: str, agent: str) -> str:
    """``spec`` with ``agent=AGENT`` added when it is an LLM spec (``vllm:``, ``vllm-local:``,
    ``hf:``) that names no agent; any other spec unchanged."""
    if spec.split(":", 1)[0].strip() not in LLM_PREFIXES:
        return spec
    _, mark, query = spec.partition("?")
    if any(key == "agent" for key, _ in parse_qsl(query, keep_blank_values=True)):
        return spec
    return f"{spec}{'&' if mark and query else '' if mark else '?'}agent={agent}"


def _gamma(game: str, label: str) -> PaperSetting:
    main = Part("main", {}, episodes=5, quick_episodes=1, n_seats=10, subject_seats=None)
    return PaperSetting(game, "γ-Bench", label, (main,), "Score (0-100)", True, (), rule="equilibrium")


_GAMMA_LABELS = ("Guess 2/3 of the Average", "El Farol Bar", "Divide the Dollar", "Public Goods Game",
                 "Diner's Dilemma", "Sealed-Bid Auction", "Battle Royale", "Pirate Game")

_AUCTION = PaperSetting(
    "auction_v0", "AucArena", "Auction",
    tuple(Part(f"budget{budget}_{order}", {"budgets": budget, "item_order": order}, episodes=10, quick_episodes=1,
               n_seats=3, subject_seats=(2,))
          for budget in (20000, 40000) for order in ("random", "ascending", "descending")),
    "TrueSkill μ", True, ("Profit ($)", "Items won", "Failed-bid rate (%)", "Belief-error rate (%)"),
    agent="aucarena", compute=paper_metrics.auction)

#: stage -> (players, primary seats: the tanks whose figures the paper reports).
_TANK_STAGES = {1: (1, (0,)), 2: (1, (0,)), 3: (2, (0, 1)), 4: (2, (0,)), 5: (4, (0, 2)), 6: (4, (0,)),
                7: (6, (0, 3))}

_TANK = PaperSetting(
    "tank_battle_v0", "BattleAgentBench", "Tank battle",
    tuple(Part(f"stage{k}", {"stage": k, "layouts": [1, 2, 3, 4, 5]}, episodes=5, quick_episodes=1, n_seats=n,
               subject_seats=primary) for k, (n, primary) in _TANK_STAGES.items()),
    "Avg. Score (stages 3-7)", True,
    ("Avg.Dis (stages 1-2)", "S1 FDis", "S2 FDis", "S3 Score", "S4 Score", "S5 Score", "S6 Score", "S7 Score",
     "FAcc", "MAcc"),
    env="arena_envs.evaluation.tank_layouts:env", compute=paper_metrics.tank)

_WIS = PaperSetting(
    "who_is_spy_v0", "WiS", "Who is Spy",
    (Part("spy", {"spy_seats": [0]}, episodes=15, quick_episodes=1, n_seats=6, subject_seats=(0,)),
     Part("civilian", {"spy_seats": [0]}, episodes=75, quick_episodes=1, n_seats=6, subject_seats=(1,))),
    "Avg. score", True,
    ("WiS rating (90 games)", "Spy win rate (%)", "Civilian win rate (%)", "Win rate (%)", "Avg. score as spy",
     "Avg. score as civilian", "Vote accuracy (%)"),
    compute=paper_metrics.who_is_spy)

_TRADING = PaperSetting(
    "trading_v0", "Agent Market Arena", "Trading",
    (Part("main", {"n_agents": 1}, episodes=5, quick_episodes=1),),
    "CR (%)", True, ("AR (%)", "AV (%)", "SR", "MDD (%)"), agent="investor", compute=paper_metrics.trading)

#: The twelve games in the report's order: the eight γ-Bench games (paper order), then the others.
SETTINGS: dict[str, PaperSetting] = {
    **{game: _gamma(game, label) for game, label in zip(GAMMA_GAMES, _GAMMA_LABELS)},
    "auction_v0": _AUCTION, "tank_battle_v0": _TANK, "who_is_spy_v0": _WIS, "trading_v0": _TRADING,
}


def load_episodes(out: Path, game: str, subject: str) -> dict[str, list[dict[str, Any]]]:
    """part -> finished episodes.jsonl entries of OUT/<game>/<subject>/<part> (sorted by id); a
    part with no folder yet maps to []."""
    return {part.name: sorted(read_episodes(Path(out) / game / subject / part.name / "episodes.jsonl"),
                              key=lambda e: e["episode"])
            for part in SETTINGS[game].parts}


def read_manifest(out: Path) -> dict[str, Any]:
    """eval.json of an evaluation folder; ValueError (one line) when OUT is not one."""
    path = Path(out) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{out} is not an evaluation folder: it has no {MANIFEST} (made by arena eval)") from None
    except (OSError, ValueError) as err:
        raise ValueError(f"{path} cannot be read as JSON: {err}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != 1:
        raise ValueError(f"{path} is not an arena eval manifest of format 1")
    return manifest
