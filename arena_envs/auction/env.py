"""AucArena as a PettingZoo AEC environment (the adapter around :mod:`arena_envs.auction.rules`).

* **Turns**: rounds are simultaneous; a round's eligible bidders are selected one at a time in seat
  order and their decisions buffered until the last, so no observation shows another bidder's
  same-round decision. A rejected or unreadable reply re-selects the bidder with the auctioneer's
  correction; after ``max_retries`` re-asks it is a forced withdrawal.
* **Actions** (``action_mode``): ``"discrete"`` (default) ``Discrete(discrete_levels + 1)``: 0
  withdraws, a >= 1 bids m + (a − 1)·inc from the minimum valid bid m, masked to the budget;
  ``"amount"`` ``Discrete(max_budget + 2, start=-1)``: the bid in dollars, −1 withdraws.
  ``step()`` also takes the bidder's text ("I bid $1200!", "I'm out!").
* **Rewards**: at each hammer the winner gets ``true value − price`` or 1 (``reward_mode``), plus
  ``invalid_action_penalty`` per rejected attempt.
* **Ties** (``tie_break``): ``"random"`` (seeded), ``"repo"`` (the reference code's order,
  :func:`~arena_envs.auction.rules.repo_tie_break`), ``"lowest_seat"``, a list of agents used one
  per tie, or a callable ``(tied agents, context: item, round, top bid, decisions) -> agent``
  (kept by reference: copy an env mid-episode only with a list or a stateless module function).
* **Texts** (``prompt``): ``"full"`` (default) or ``"paper"`` (:mod:`arena_envs.auction.text`);
  :meth:`AuctionEnv.bid_turn` is the turn's new message. ``state()``: a float32 vector
  (``state_names``, ``state_space``); ``state_dict()`` the same as a dict.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, cast

import numpy as np
from gymnasium import spaces

from arena_envs.auction import metrics as M
from arena_envs.auction import text as T
from arena_envs.auction.config import AuctionConfig, TieBreak, amounts
from arena_envs.auction.items import MAX_MONEY, Item, coerce_items, order_items
from arena_envs.auction.parser import parse_reply
from arena_envs.auction.rules import WITHDRAW, AuctionRules, repo_tie_break
from arena_envs.core import EpisodeRecord
from arena_envs.core.answers import AnswerConstraint, Answered, InvalidAnswer, excerpt, native_index
from arena_envs.core.space_cache import own_copy, prototype
from arena_envs.core.text_env import TextAECEnv


class AuctionEnv(TextAECEnv):
    """AucArena's auction; its arguments are checked and kept as an :class:`~.config.AuctionConfig`
    (``settings``); see the module docstring and ``docs/envs/auction.md``."""

    # a plain attribute in PettingZoo's AECEnv, so not a ClassVar
    metadata = {"name": "auction_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False}
    #: The methods a policy calls to tell the game something its metrics count (a plan, a belief), each
    #: taking the reporting seat first: an agent service passes such calls on its copy of the game to
    #: the arena's game.
    REPORTS: ClassVar[frozenset[str]] = frozenset({"check_belief", "record_plan"})

    # the episode's state, set by reset()
    record: EpisodeRecord
    game: AuctionRules
    texts: T.AuctionTexts
    plans: dict[str, list[dict[str, Any]]]
    belief_checks: dict[str, dict[str, int]]
    _last_status: dict[str, str]
    _new_item_seen: dict[str, int]
    _feature_cache: dict[int, np.ndarray]
    _item_feature_cache: dict[tuple[int, int], np.ndarray]
    _exchanges: list[tuple[int, list[tuple[str, str]]]]  # per seat: (item index, [(turn, reply)])

    def __init__(
        self,
        items: Sequence[Item | dict] | None = None,
        item_order: str = "random",
        n_bidders: int = 3,
        budgets: int | Sequence[int] = 20000,
        desires: str | Sequence[str] = "maximize_profit",
        overestimate_percent: int | Sequence[int] = 10,
        min_markup_pct: int = 10,
        action_mode: str = "discrete",
        max_retries: int = 3,
        reveal_status: bool = True,
        prompt: str = "full",
        belief_match: str = "exact",
        tie_break: TieBreak = "random",
        enable_discount: bool = False,
        auto_withdraw_unaffordable: bool = False,
        reward_mode: str = "by_desire",
        invalid_action_penalty: float = 0.0,
        discrete_levels: int = 21,
        max_steps: int | None = None,
        render_mode: str | None = None,
        max_cycles: int | None = None,
    ):
        settings = self.settings = AuctionConfig(
            items=items, item_order=item_order, n_bidders=n_bidders, budgets=budgets, desires=desires,
            overestimate_percent=overestimate_percent, min_markup_pct=min_markup_pct, action_mode=action_mode,
            max_retries=max_retries, reveal_status=reveal_status, prompt=prompt, belief_match=belief_match,
            tie_break=tie_break, enable_discount=enable_discount, auto_withdraw_unaffordable=auto_withdraw_unaffordable,
            reward_mode=reward_mode, invalid_action_penalty=invalid_action_penalty, discrete_levels=discrete_levels,
            max_steps=max_steps)
        agents = settings.agents
        n_bidders, m = len(agents), len(cast(tuple[Item, ...], settings.items))
        self.seat_of = {agent: seat for seat, agent in enumerate(agents)}
        self._max_budget = max(cast(tuple[int, ...], settings.budgets))
        if settings.action_mode == "discrete":
            action_space: spaces.Discrete = spaces.Discrete(settings.discrete_levels + 1)
        else:
            action_space = spaces.Discrete(self._max_budget + 2, start=-1)
        names = ["item_index", "num_items", "round", "start_price", "est_value", "min_increment",
                 "highest_bid", "leader", "min_valid_bid", "budget_remaining", "profit", "items_won"]
        names += [f"withdrawn_{i + 1}" for i in range(n_bidders)]
        names += [f"upcoming_start_price_{k}" for k in range(m)]
        names += [f"upcoming_est_value_{k}" for k in range(m)]
        names += [f"past_{field}_{k}" for k in range(m) for field in ("winner", "price", "true_value")]
        self.state_names = ("item_index", "round", "highest_bid", "leader", "cursor", "finished",
                            *(f"{field}_{i + 1}" for field in ("remaining", "profit", "withdrawn", "eligible")
                              for i in range(n_bidders)),
                            *(f"result_{field}_{k}" for k in range(m) for field in ("winner", "price")))
        low = np.array([-np.inf if name.startswith("profit_") else -1 for name in self.state_names], np.float32)
        self.state_space = own_copy(prototype(("auction_state", n_bidders, m), lambda: spaces.Box(
            low, np.inf, shape=low.shape, dtype=np.float32)))  # -1: none; a profit can be negative
        self._bid_space = action_space  # every bidder's (a Discrete space, typed as such)
        super().__init__(agents=agents, action_spaces={a: action_space for a in agents}, feature_names=tuple(names),
                         max_retries=settings.max_retries, invalid_action_penalty=settings.invalid_action_penalty,
                         render_mode=render_mode, max_cycles=max_cycles)

    def config(self) -> dict[str, Any]:
        return self.settings.record()

    # ------------------------------------------------------------------ game hooks

    def _start_game(self, options: dict[str, Any]) -> None:
        settings = self.settings
        configured = cast(tuple[Item, ...], settings.items)
        order = options.get("item_order", settings.item_order)
        budgets = amounts(options.get("budgets", settings.budgets), len(self.possible_agents), "budgets", 0, MAX_MONEY)
        if settings.action_mode == "amount" and max(budgets) > self._max_budget:
            raise ValueError("in amount mode, budgets given at reset cannot exceed the constructor's budgets")
        items = coerce_items(options["items"]) if "items" in options else configured
        if len(items) != len(configured):
            raise ValueError(f"items given at reset must keep the number of items ({len(configured)})")
        ordered = order_items(items, order, self.np_random)
        estimates = [[item.true_value * (100 + o) // 100 for item in ordered]
                     for o in cast(tuple[int, ...], settings.overestimate_percent)]
        self.plans = {a: [] for a in self.possible_agents}
        self.belief_checks = {a: {"self_pass": 0, "self_fail": 0, "other_pass": 0, "other_fail": 0, "sanity_errors": 0}
                              for a in self.possible_agents}
        self._last_status = {a: "none" for a in self.possible_agents}
        self._new_item_seen = {a: -1 for a in self.possible_agents}
        self.tie_breaks_used = 0  # scripted tie-breaks consumed so far
        self.record.add("setup", order=[item.name for item in ordered], budgets=budgets, estimates=estimates)
        self.game = AuctionRules(ordered, budgets, estimates, self._choose_leader, self.possible_agents,
                                  settings.min_markup_pct, settings.auto_withdraw_unaffordable,
                                  settings.enable_discount)
        self.record.events.extend(self.game.take_events())
        prompts = T.PromptConfig(tuple(settings.desires), settings.reveal_status, settings.prompt)
        self.texts = T.AuctionTexts(self.game, prompts)
        self._exchanges = [(-1, []) for _ in self.possible_agents]
        self._item_feature_cache = {}
        self._new_round()
        self._finish_if_over()

    def _choose_leader(self, tied: list[int], ctx: dict[str, Any]) -> int:
        tie_break = self.settings.tie_break
        if tie_break == "lowest_seat":
            return tied[0]
        if tie_break == "random":
            return tied[int(self.np_random.integers(len(tied)))]
        if tie_break == "repo":
            decisions = [(self.seat_of[agent], amount) for agent, amount in ctx["decisions"]]
            return repo_tie_break(decisions, lambda: int(self.np_random.integers(2)))
        if isinstance(tie_break, tuple):
            if self.tie_breaks_used >= len(tie_break):
                raise ValueError(f"the scripted tie_break has no entry left for the tie {ctx}")
            chosen = tie_break[self.tie_breaks_used]
            self.tie_breaks_used += 1
            if self.seat_of[chosen] not in tied:
                raise ValueError(f"scripted tie_break entry {chosen!r} is not among the tied bidders "
                                 f"{[self.possible_agents[s] for s in tied]} ({ctx})")
            return self.seat_of[chosen]
        assert callable(tie_break)
        chosen = tie_break([self.possible_agents[s] for s in tied], ctx)
        if chosen not in self.seat_of:
            raise ValueError(f"tie_break returned {chosen!r}, not an agent")
        return self.seat_of[chosen]

    def _parse_text(self, agent: str, text: str) -> int:
        return parse_reply(text)

    def _from_native(self, agent: str, action: Any) -> int:
        space = self._bid_space
        a = native_index(action, int(space.n), int(space.start))
        if self.settings.action_mode == "amount":
            return WITHDRAW if a == -1 else a
        if a == 0:
            return WITHDRAW
        return self.game.min_valid_bid() + (a - 1) * self.game.increment

    def _validate(self, agent: str, move: int) -> None:
        if move != WITHDRAW:
            reason = self.game.bid_error(self.seat_of[agent], move)
            if reason:
                raise InvalidAnswer("illegal", reason)

    def _fallback(self, agent: str) -> int:
        return WITHDRAW

    def _apply(self, answered: Answered) -> None:
        agent, move, game = answered.agent, answered.move, self.game
        exchange = None
        if self.settings.prompt == "paper":
            reply = answered.text
            if reply is None:
                reply = "I'm out!" if move == WITHDRAW else f"I bid ${move}!"
            exchange = self._exchange(answered, reply)
        events = game.decide(self.seat_of[agent], move, forced=answered.fell_back)
        if answered.text is not None:
            events[0]["answer"] = answered.text  # the decision event: the raw reply it was parsed from
        self.record.events.extend(events)
        self._last_status[agent] = "forced_withdraw" if answered.fell_back else "accepted"
        for event in events:
            if event["type"] == "hammer":
                winner = event["winner"]
                seat = self.seat_of[winner]
                self.rewards[winner] += self._reward(seat, event["true_value"] - event["price"])
        if game.cursor == 0:  # a round resolved or a new item opened
            self._new_round()
        max_steps = self.settings.max_steps
        if max_steps is not None and self.num_steps >= max_steps and not game.finished:
            for a in self.agents:
                self.truncations[a] = True
        self._finish_if_over()
        if exchange is not None:
            self._exchanges[self.seat_of[agent]] = exchange

    def _rejected(self, answered: Answered) -> None:
        invalid, agent = answered.invalid, answered.agent
        assert invalid is not None
        self._last_status[agent] = "unparseable" if invalid.kind == "unparseable" else f"rejected:{invalid.reason}"
        if self.settings.prompt == "paper":
            reply = answered.text if answered.text is not None else f"(action {excerpt(answered.answer)})"
            self._exchanges[self.seat_of[agent]] = self._exchange(answered, reply)

    def _exchange(self, answered: Answered, reply: str) -> tuple[int, list[tuple[str, str]]]:
        """prompt="paper": the bidder's exchanges of the current item with the turn it answered and
        its ``reply`` added (read before the answer changes the auction)."""
        seat = self.seat_of[answered.agent]
        turn = self.texts.paper_turn(seat, answered.note)  # bid_turn() as the bidder saw it
        return self.game.item_index, [*self._item_exchanges(seat), (turn, reply)]

    def _reward(self, seat: int, profit: int) -> float:
        mode = self.settings.reward_mode
        if mode == "by_desire":
            mode = "items" if self.settings.desires[seat] == "maximize_items" else "profit"
        return float(profit) if mode == "profit" else 1.0

    def _finish_if_over(self) -> None:
        if self.game.finished:
            for a in self.agents:
                self.terminations[a] = True

    def _new_round(self) -> None:
        """Drop the per-round caches of texts and features (a round resolved or an item opened)."""
        self.texts.new_round()
        self._feature_cache = {}

    def _next_agent(self) -> str | None:
        if any(self.truncations.values()):
            return None
        seat = self.game.current_seat()
        return None if seat is None else self.possible_agents[seat]

    def _text(self, agent: str, note: str | None) -> str:
        seat = self.seat_of[agent]
        if self.settings.prompt == "paper":
            return self.texts.paper_prompt(seat, note, self._item_exchanges(seat))
        return self.texts.prompt(seat, note)

    def _item_exchanges(self, seat: int) -> list[tuple[str, str]]:
        """prompt="paper": ``seat``'s turns and replies of the current item so far."""
        item, exchanges = self._exchanges[seat]
        return exchanges if item == self.game.item_index else []

    def bid_turn(self, agent: str) -> str:
        """``agent``'s new message of the current turn in the reference code's per-item conversation
        (the bidding instruction at an item's first round, the auctioneer's next-round message, or
        its answer to a rejected or unreadable reply); the same in both ``prompt`` settings."""
        if self.game.finished:
            raise RuntimeError("bid_turn() after the auction ended")
        return self.texts.paper_turn(self.seat_of[agent], self._notes.get(agent))

    def _features(self, agent: str) -> np.ndarray:
        seat = self.seat_of[agent]
        features = self._feature_cache.get(seat)
        if features is None:
            features = self._feature_cache[seat] = self._round_features(seat)
        return features.copy()

    def _round_features(self, seat: int) -> np.ndarray:
        """Features as of the start of the current round (same-round decisions stay hidden)."""
        game = self.game
        n = game.n
        out = self._item_features(seat).copy()
        j = min(game.item_index, len(game.items) - 1)
        live = not game.finished
        out[:12] = (j, len(game.items), game.round, game.price if live else 0, game.estimates[seat][j],
                    game.increment if live else 0, game.highest or 0, -1 if game.leader is None else game.leader,
                    game.min_valid_bid() if live else 0, game.remaining[seat], game.profit[seat],
                    len(game.won[seat]))
        out[12:12 + n] = game.round_withdrawn
        return out

    def _item_features(self, seat: int) -> np.ndarray:
        """The part of the features that changes only between items: upcoming items and past results."""
        game = self.game
        key = (seat, len(game.results))
        cached = self._item_feature_cache.get(key)
        if cached is not None:
            return cached
        n, m = game.n, len(game.items)
        out = np.full(len(self.feature_names), -1.0, dtype=np.float32)
        upcoming = range(game.item_index + 1, m)
        base = 12 + n
        out[base: base + len(upcoming)] = [game.items[i].start_price for i in upcoming]
        out[base + m: base + m + len(upcoming)] = [game.estimates[seat][i] for i in upcoming]
        past = base + 2 * m
        for i, result in enumerate(game.results):
            if result is not None:
                out[past + 3 * i: past + 3 * i + 3] = (result[0], result[1], game.items[i].true_value)
        self._item_feature_cache = {k: v for k, v in self._item_feature_cache.items() if k[1] == key[1]}
        self._item_feature_cache[key] = out
        return out

    def _action_mask(self, agent: str) -> np.ndarray:
        space = self._bid_space
        mask = np.zeros(int(space.n), dtype=np.int8)
        mask[0] = 1  # withdraw
        game = self.game
        if game.finished or not game.awaits(self.seat_of[agent]):
            return mask
        budget = game.remaining[self.seat_of[agent]]
        low = game.min_valid_bid()
        if budget < low:
            return mask
        if self.settings.action_mode == "amount":
            mask[low + 1: budget + 2] = 1
        else:
            top = min(self.settings.discrete_levels, (budget - low) // game.increment + 1)
            mask[1: top + 1] = 1
        return mask

    def _agent_info(self, agent: str) -> dict[str, Any]:
        game = self.game
        seat = self.seat_of[agent]
        last = game.results[-1] if game.results else None
        finished_item = len(game.results) - 1
        if finished_item < 0:
            last_hammer = None
        elif last is None:
            last_hammer = {"item": game.items[finished_item].name, "sold": False}
        else:
            last_hammer = {"item": game.items[finished_item].name, "sold": True,
                           "winner": self.possible_agents[last[0]], "price": last[1],
                           "true_value": game.items[finished_item].true_value}
        current = None if game.finished else game.item_index
        new_item = current is not None and not game.item_rounds and self._new_item_seen[agent] != current
        if new_item and agent == self.agent_selection:
            self._new_item_seen[agent] = game.item_index  # said once, at its turn
        counts = self.invalid_counts[agent]
        return {
            "item_index": current, "item": None if current is None else game.item.name,
            "round": game.round, "start_price": game.price if current is not None else None,
            "increment": game.increment, "highest_bid": game.highest,
            "leader": None if game.leader is None else self.possible_agents[game.leader],
            "min_valid_bid": None if current is None else game.min_valid_bid(),
            "remaining_budget": game.remaining[seat],
            "est_value": None if current is None else game.estimates[seat][current],
            "new_item": new_item, "last_hammer": last_hammer,
            "last_status": self._last_status[agent], "forced_withdraw": self._last_status[agent] == "forced_withdraw",
            "failed_bids": counts["illegal"], "parse_failures": counts["unparseable"],
        }

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint:
        agent = agent or self.agent_selection
        game = self.game
        budget = game.remaining[self.seat_of[agent]]
        low = game.min_valid_bid() if not game.finished else 0
        if budget < low:
            return AnswerConstraint("choice", "withdraw: you cannot afford the minimum bid", choices=("I'm out!",))
        return AnswerConstraint(
            "regex",
            f'"I bid $X!" with {low} <= X <= {budget}, or "I\'m out!"',
            pattern=rf"I'm out!|I bid \$[1-9][0-9]{{0,{len(str(budget)) - 1}}}!",
        )

    # ------------------------------------------------------------------ AucArena helper API

    def names(self) -> list[str]:
        return [T.display_name(s) for s in range(len(self.possible_agents))]

    def ground_truth_status(self, after_item: int | None = None) -> dict[str, Any]:
        """Every bidder's remaining budget, total profit and won items (name -> price), now or right
        after the hammer of item ``after_item`` (0-based, an item already resolved)."""
        game = self.game
        done = len(game.results)
        if after_item is None:
            after_item = done - 1
        if not -1 <= after_item < done:
            raise ValueError(f"after_item must be a resolved item, -1..{done - 1}, got {after_item}")
        names = self.names()
        won: list[dict[str, int]] = [{} for _ in range(game.n)]
        remaining, profit = list(game.budgets), [0] * game.n
        for index, result in enumerate(game.results[:after_item + 1]):
            if result is not None:
                seat, price = result
                item = game.items[index]
                won[seat][item.name] = price
                remaining[seat] -= price
                profit[seat] += item.true_value - price
        return {
            "remaining_budget": {names[s]: remaining[s] for s in range(game.n)},
            "total_profits": {names[s]: profit[s] for s in range(game.n)},
            "winning_bids": {names[s]: won[s] for s in range(game.n)},
        }

    def check_belief(self, agent: str, belief: dict[str, Any] | str, item: int | None = None) -> list[str]:
        """The auctioneer's check of ``agent``'s status JSON against the state right after item
        ``item``'s hammer (default: the last resolved item); counts every check. Keys
        and item names are matched as ``belief_match`` says."""
        errors, checks = M.check_belief(belief, self.ground_truth_status(item), self.seat_of[agent], self.names(),
                                        self.settings.belief_match)
        counts = self.belief_checks[agent]
        if not checks:
            counts["sanity_errors"] += 1
        for scope, ok in checks:
            counts[f"{scope}_{'pass' if ok else 'fail'}"] += 1
        self.record.add("belief_check", agent=agent, item=len(self.game.results) - 1 if item is None else item,
                        belief=belief, errors=errors, checks=[[s, ok] for s, ok in checks])
        return errors

    def record_plan(self, agent: str, priorities: dict[str, Any], kind: str = "initial") -> dict[int, int]:
        """Store a plan's priorities (1-3 per item name), stamped with the next item to auction."""
        if kind not in ("initial", "replan"):
            raise ValueError(f"kind must be 'initial' or 'replan', got {kind!r}")
        names = [item.name for item in self.game.items]
        scores = M.parse_priorities(priorities, names)
        stamp = len(self.game.results)
        self.plans[agent].append({"kind": kind, "stamp": stamp, "priorities": scores})
        self.record.add("plan", agent=agent, kind=kind, stamp=stamp,
                        priorities={names[i]: s for i, s in sorted(scores.items())})
        return scores

    def final_report(self) -> dict[str, Any]:
        return T.final_report(self.game)

    def state(self) -> np.ndarray:
        """PettingZoo's global state: a float32 vector laid out as ``state_names`` (in ``state_space``).

        -1 stands for "none" (no highest bid, no leader, an item not sold or not auctioned yet).
        :meth:`state_dict` gives the same state as a dict.
        """
        game = self.game
        assert game is not None, "state() before reset()"
        results = [(-1, -1) if r is None else r for r in game.results]
        results += [(-1, -1)] * (len(game.items) - len(results))
        return np.array([
            game.item_index, game.round, -1 if game.highest is None else game.highest,
            -1 if game.leader is None else game.leader, game.cursor, game.finished,
            *game.remaining, *game.profit, *game.withdrawn, *(s in game.eligible for s in range(game.n)),
            *(v for r in results for v in r),
        ], dtype=np.float32)

    def state_dict(self) -> dict[str, Any]:
        """The global state as a dict (for tests and debugging)."""
        game = self.game
        assert game is not None, "state_dict() before reset()"
        return {"item_index": game.item_index, "round": game.round, "highest": game.highest,
                "leader": game.leader, "withdrawn": list(game.withdrawn), "remaining": list(game.remaining),
                "profit": list(game.profit), "eligible": list(game.eligible), "cursor": game.cursor,
                "finished": game.finished, "results": list(game.results)}

    # ------------------------------------------------------------------ metrics and rendering

    def _metrics(self) -> dict[str, Any]:
        return M.episode_metrics(self.game, self.record.events, self.settings.desires, self.invalid_counts,
                                 self.belief_checks, self.plans)

    def _render_text(self) -> str:
        return T.render_log(self.game, self.record.events)
