"""The runner: seeds, seat rotation, determinism across runs and concurrency, step logs, errors."""
from __future__ import annotations

import asyncio
import io
import json
import math
import random

import numpy as np
import pytest
from pettingzoo.utils import BaseWrapper

from arena_envs.core import Policy
from arena_envs.registration import ENVIRONMENTS, env_module
from arena_envs.runner import RunConfig, RunError, run
from arena_envs.runner.episode import _sync_hooks
from arena_envs.runner.line_json import EpisodeLines, Seats, dumps, dumps_with, to_jsonable
from arena_envs.runner.policy_specs import SpecError, make_policy
from arena_envs.runner.results import read_record, read_steps
from arena_envs.runner.runner import arun
from arena_envs.runner.seeding import episode_seeds, seat_players
from baselines.human import HumanPolicy
from baselines.random_policy import RandomPolicy
from tests._tiny_game import env as tiny_env
from tests.results_helpers import folder_content

TINY = "tests._tiny_game:env"


def test_episode_seeds_come_from_seed_sequence_children():
    seeds = episode_seeds(11, 5, 3)
    grandchildren = np.random.SeedSequence(11).spawn(6)[5].spawn(4)  # [env, seat 0, seat 1, seat 2]
    assert seeds.env == int(grandchildren[0].generate_state(1)[0])
    assert seeds.seats == tuple(int(c.generate_state(1)[0]) for c in grandchildren[1:])
    all_seeds = [s for k in range(20) for s in (episode_seeds(11, k, 3).env, *episode_seeds(11, k, 3).seats)]
    assert len(set(all_seeds)) == len(all_seeds)
    with pytest.raises(ValueError, match="seed"):
        episode_seeds(-1, 0, 3)


def test_seat_rotation_gives_every_player_every_seat():
    assert seat_players(3, 0) == (0, 1, 2)
    assert seat_players(3, 1) == (2, 0, 1)  # player 0 moved to seat 1
    for n in (2, 3, 5):
        for player in range(n):
            seats = [seat_players(n, k).index(player) for k in range(n)]
            assert sorted(seats) == list(range(n))


def test_fixed_seats_keep_every_player_in_its_seat_and_are_part_of_the_configuration(tmp_path):
    assert [seat_players(3, k, rotate=False) for k in range(4)] == [(0, 1, 2)] * 4
    config = RunConfig(TINY, ("random", "always_one", "random"), episodes=4, seed=1, rotate=False)
    summary = run(config, tmp_path / "r", policy_factory=lambda spec, env: RandomPolicy())
    assert {tuple(e["seats"].values()) for e in summary.episodes} == {("random#1", "always_one", "random#2")}
    assert json.loads((tmp_path / "r" / "run.json").read_text())["config"]["rotate"] is False
    assert "rotate" not in RunConfig(TINY, ("random",) * 3, episodes=1).to_dict()  # older folders still resume
    with pytest.raises(ValueError, match="rotate"):  # a rotating run does not resume a fixed-seat folder
        run(RunConfig(TINY, config.players, episodes=4, seed=1), tmp_path / "r",
            policy_factory=lambda spec, env: RandomPolicy())


def test_run_records_rotation_seeds_and_metrics(tmp_path):
    config = RunConfig(TINY, ("random", "random", "random"), episodes=6, seed=3)
    summary = run(config, tmp_path / "r")
    assert summary.played == 6 and summary.resumed == 0
    lines = (tmp_path / "r" / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines == [reference_dumps(json.loads(line)) for line in lines]
    labels = ["random#1", "random#2", "random#3"]
    for k, episode in enumerate(summary.episodes):
        assert episode["episode"] == k
        seeds = episode_seeds(3, k, 3)
        assert episode["seed"] == seeds.env
        assert list(episode["policy_seeds"].values()) == list(seeds.seats)
        assert list(episode["seats"].values()) == [labels[i] for i in seat_players(3, k)]
        record = read_record(tmp_path / "r", k)
        assert record["seed"] == seeds.env
        assert record["metrics"] == episode["metrics"]
        steps = read_steps(tmp_path / "r", k)
        assert len(steps) == episode["steps"] == 12
        assert [s["step"] for s in steps] == list(range(12))
        assert all(s["policy"] == episode["seats"][s["agent"]] for s in steps)
        guesses = [e["guess"] for e in record["events"] if e["type"] == "guess"]
        assert [s["action"] for s in steps] == guesses  # native actions logged as given
        for agent, metrics in episode["metrics"]["agents"].items():
            assert metrics["score"] == sum(s["rewards"].get(agent, 0) for s in steps)


def test_same_seed_same_results_and_other_seed_differs(tmp_path):
    config = RunConfig(TINY, ("random", "random", "random"), episodes=8, seed=21)
    run(config, tmp_path / "a")
    run(config, tmp_path / "b")
    assert folder_content(tmp_path / "a") == folder_content(tmp_path / "b")
    run(RunConfig(TINY, config.players, episodes=8, seed=22), tmp_path / "c")
    assert folder_content(tmp_path / "a")["episodes"] != folder_content(tmp_path / "c")["episodes"]


@pytest.mark.parametrize("env, players", [(TINY, ("random", "random", "random")),
                                          ("auction_v0", ("rule", "rule", "random"))])
def test_concurrency_does_not_change_results(tmp_path, env, players):
    config = RunConfig(env, players, episodes=9, seed=5)
    run(config, tmp_path / "k1", concurrency=1)
    run(config, tmp_path / "k4", concurrency=4)
    assert folder_content(tmp_path / "k1") == folder_content(tmp_path / "k4")


class AwaitingRandom(RandomPolicy):
    """An async policy that awaits a random, unseeded delay before each decision, as an LLM policy
    awaits its server; counts how many decisions are awaited at once across all instances."""

    waiting = 0
    most_waiting = 0

    async def aact(self, observation, info):
        cls = AwaitingRandom
        cls.waiting += 1
        cls.most_waiting = max(cls.most_waiting, cls.waiting)
        await asyncio.sleep(random.random() / 2000)
        cls.waiting -= 1
        return self.act(observation, info)


def test_interleaved_async_episodes_give_the_same_results(tmp_path):
    def factory(spec: str, env: str):
        return AwaitingRandom()

    config = RunConfig(TINY, ("a", "b", "c"), episodes=12, seed=8)
    run(config, tmp_path / "k1", policy_factory=factory)
    assert AwaitingRandom.most_waiting == 1
    run(config, tmp_path / "k5", concurrency=5, policy_factory=factory)
    assert AwaitingRandom.most_waiting == 5
    assert folder_content(tmp_path / "k1") == folder_content(tmp_path / "k5")


class RememberingRandom(RandomPolicy):
    """Random play that, like AucArena's bidder, works once more when its seat's episode is over."""

    def reset(self, agent, seed=None):
        super().reset(agent, seed)
        self.agent, self.decisions, self.finished_with = agent, 0, None

    def act(self, observation, info):
        self.decisions += 1
        return super().act(observation, info)

    def finish(self, observation, info):
        assert self.finished_with is None, "finish called twice"
        self.finished_with = observation["text"]
        return self.agent == "player_1"  # only this seat has work worth logging

    def trace(self):
        return {"decisions": self.decisions, "last_text": self.finished_with}


def test_finish_hook_runs_once_per_seat_and_its_work_is_logged(tmp_path):
    made: list[RememberingRandom] = []

    def factory(spec: str, env: str):
        made.append(RememberingRandom())
        return made[-1]

    run(RunConfig(TINY, ("a", "b", "c"), episodes=2, seed=3), tmp_path / "r", policy_factory=factory)
    assert all(p.finished_with for p in made)  # every seat was told, with its last observation
    for episode in range(2):
        lines = read_steps(tmp_path / "r", episode)
        (finish,) = [line for line in lines if line.get("finish")]
        assert finish["agent"] == "player_1" and finish["action"] is None
        assert finish["trace"]["decisions"] == sum(1 for line in lines if line["agent"] == "player_1") - 1
        assert lines[-1] == finish and finish["step"] == len(lines) - 1  # after every decision


def test_text_answers_invalid_counts_and_traces(tmp_path):
    """A human answering through a stream: text is logged as given; invalid counts agree everywhere."""
    answers = "abc\n1\n7\n3\n" * 40

    def policies(spec: str, env: str):
        return HumanPolicy(io.StringIO(answers), io.StringIO()) if spec == "human" else make_policy(spec, env)

    summary = run(RunConfig(TINY, ("human", "random", "random"), episodes=3, seed=1), tmp_path / "r",
                  policy_factory=policies)
    total = retries_seen = 0
    for episode in summary.episodes:
        steps = read_steps(tmp_path / "r", episode["episode"])
        human_seat = next(a for a, label in episode["seats"].items() if label == "human")
        human_steps = [s for s in steps if s["agent"] == human_seat]
        assert all(isinstance(s["action"], str) and s["trace"] == {"text": s["action"]} for s in human_steps)
        for s in human_steps:  # the parsed move: the digit, or nothing while the seat is asked again
            if s["invalid_action"] is None:
                assert s["parsed"] == int(s["action"])
            elif not s["fallback"]:
                assert s["parsed"] is None
            else:
                assert isinstance(s["parsed"], int)
        for kind in ("unparseable", "illegal"):
            logged = sum(1 for s in human_steps if s["invalid_action"] and s["invalid_action"]["kind"] == kind)
            assert episode["invalid"][human_seat][kind] == logged == episode["metrics"]["agents"][human_seat][kind]
        assert episode["invalid"][human_seat]["fallback"] == sum(s["fallback"] for s in human_steps)
        total += episode["invalid"][human_seat]["unparseable"]
        # a decision ends with a taken answer or the fallback; it was re-asked when steps came before its end
        ends = [k for k, s in enumerate(human_steps) if s["invalid_action"] is None or s["fallback"]]
        retried = sum(1 for k, end in enumerate(ends) if end - (ends[k - 1] if k else -1) > 1)
        assert episode["validity"][human_seat] == {"decisions": len(ends), "retried": retried,
                                                   "fallback": episode["invalid"][human_seat]["fallback"]}
        retries_seen += retried
        for seat, counts in episode["validity"].items():
            if seat != human_seat:  # random players answer natively: every decision their own
                assert counts["retried"] == counts["fallback"] == 0 < counts["decisions"]
    assert total > 0 and retries_seen > 0
    lines = (tmp_path / "r" / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines == [reference_dumps(json.loads(line)) for line in lines]  # non-zero counts written as json does


def policies_with_closing_human(lines: int):
    """HumanPolicy whose input ends after ``lines`` answers; "7" is always illegal, so every human
    decision takes exactly 1 + max_retries = 4 lines and its failure point is known."""
    def factory(spec: str, env: str):
        if spec == "human":
            return HumanPolicy(io.StringIO("7\n" * lines), io.StringIO())
        return make_policy(spec, env)
    return factory


@pytest.mark.parametrize("concurrency", [1, 3])
def test_policy_error_stops_run_and_keeps_finished_episodes(tmp_path, concurrency):
    config = RunConfig(TINY, ("random", "random", "human"), episodes=6, seed=2)
    # the human makes 4 decisions of 4 lines per episode: 2 episodes and a bit for each instance
    with pytest.raises(RunError, match=r"policy 'human' raised in episode \d .*HumanInputClosed"):
        run(config, tmp_path / "r", concurrency=concurrency, policy_factory=policies_with_closing_human(2 * 16 + 5))
    finished = sorted(json.loads(line)["episode"] for line in (tmp_path / "r" / "episodes.jsonl").open())
    assert len(finished) >= 2
    if concurrency == 1:
        assert finished == [0, 1]
    logged = {json.loads(line)["episode"] for line in (tmp_path / "r" / "log.jsonl").open()}
    assert logged == set(finished)  # the failed episode left no lines
    # the same configuration resumes: only the missing episodes are played
    summary = run(config, tmp_path / "r", concurrency=concurrency, policy_factory=policies_with_closing_human(10_000))
    assert summary.resumed == len(finished) and summary.played == 6 - len(finished)
    assert [e["episode"] for e in summary.episodes] == list(range(6))
    run(config, tmp_path / "fresh", policy_factory=policies_with_closing_human(10_000))
    assert folder_content(tmp_path / "r") == folder_content(tmp_path / "fresh")


def test_bad_configurations_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match=r"3 seats .* players lists 2"):
        run(RunConfig(TINY, ("random", "random"), episodes=1), tmp_path / "a")
    with pytest.raises(ValueError, match="unknown environment 'nope'"):
        run(RunConfig("nope", ("random",), episodes=1), tmp_path / "b")
    with pytest.raises(ValueError, match="bad --env-arg"):
        run(RunConfig(TINY, ("random",) * 3, episodes=1, env_kwargs={"colour": 1}), tmp_path / "c")
    with pytest.raises(ValueError, match="episodes"):
        RunConfig(TINY, ("random",) * 3, episodes=0)
    with pytest.raises(ValueError, match="concurrency"):
        run(RunConfig(TINY, ("random",) * 3, episodes=1), tmp_path / "d", concurrency=0)
    assert not (tmp_path / "a").exists()


def test_env_kwargs_reach_the_environment(tmp_path):
    config = RunConfig(TINY, ("random",) * 4, episodes=2, env_kwargs={"n_players": 4, "rounds": 2})
    summary = run(config, tmp_path / "r")
    assert all(e["steps"] == 8 and len(e["seats"]) == 4 for e in summary.episodes)


class FreshEveryEpisode(BaseWrapper):
    """Builds a new inner environment at every reset: what the runner did before it kept one
    environment per worker and reset it for every episode."""

    def __init__(self, build):
        self.build = build
        super().__init__(build())

    def reset(self, seed=None, options=None):
        self.env.close()
        self.env = self.build()
        self.env.reset(seed=seed, options=options)


class SometimesNonsense(RandomPolicy):
    """Random legal moves, but every third decision or so an unparseable answer, so that retries,
    invalid counts and fallbacks (state a reset must clear) happen in every game."""

    def reset(self, agent, seed=None):
        super().reset(agent, seed)
        self.rng = random.Random(seed)

    def act(self, observation, info):
        return "no idea" if self.rng.random() < 0.3 else super().act(observation, info)


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_one_environment_per_worker_equals_a_fresh_one_per_episode(tmp_path, name):
    """``reset`` is the contract: replaying episodes on one environment gives byte-identical
    results (steps, records, metrics) to building a new environment for every episode."""
    config = RunConfig(name, ("x",) * len(env_module(name).env().possible_agents), episodes=4, seed=5)
    reused = run(config, tmp_path / "reused", policy_factory=lambda spec, env: SometimesNonsense())
    assert reused.played == 4
    assert any(sum(counts.values()) for e in reused.episodes for counts in e["invalid"].values())
    run(config, tmp_path / "fresh", make_env=lambda: FreshEveryEpisode(env_module(name).env),
        policy_factory=lambda spec, env: SometimesNonsense())
    assert folder_content(tmp_path / "reused") == folder_content(tmp_path / "fresh")


def reference_dumps(value):
    """What the results folder must hold: ``json.dumps`` with the runner's options, a non-finite
    number written as ``null`` (JSON has no NaN)."""
    return json.dumps(_nulls(value), default=to_jsonable, ensure_ascii=False, allow_nan=False)


def _nulls(value):
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _nulls(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nulls(v) for v in value]
    return value


VALUES = [1, 'x\n"é\u2028', None, True, False, 2.5, float("nan"), float("inf"), np.int64(3), np.float32(0.5),
          {"a": [1, None]}, -0.0, 10 ** 30, 1e300, "ünï", ("t", [np.arange(2)], {1: {2.5: {None: True}}}), {"s"}]


def test_dumps_and_dumps_with_write_what_json_dumps_writes():
    """``dumps`` (one encoder for every call) and ``dumps_with`` (a value encoded beforehand) give
    ``json.dumps``'s bytes."""
    for value in VALUES:
        assert dumps(value) == reference_dumps(value)
        record = {"env": "x", "seed": 3, "config": {"k": value}, "metrics": {"agents": {"a": value}}}
        assert dumps_with(record, {"metrics": dumps(record["metrics"])}) == reference_dumps(record)
    odd_keys = {"metrics": {}, 7: "int keys are written as strings by json"}
    assert dumps_with(odd_keys, {"metrics": "{}"}) == reference_dumps(odd_keys)
    assert EpisodeLines(4, Seats({})).block(record, {"metrics": dumps(record["metrics"])}).decode("utf-8") == \
        reference_dumps({"episode": 4, "record": record}) + "\n"


def test_step_lines_are_what_json_writes_for_the_same_fields():
    """The hand-joined step lines equal ``json.dumps`` of the same dict, escapes and numpy values included."""
    values = VALUES
    seats = {'p"0': "rule#1", "p1": "ran\\dom"}
    lines = EpisodeLines(7, Seats(seats))
    expected = []
    for i, value in enumerate(values):
        fields = {"action": value, "parsed": value, "invalid_action": value if i % 2 else None,
                  "fallback": bool(i % 2), "retries": value, "rewards": {'p"0': value, "p1": 0, "other": 1.5},
                  "trace": {"t": value} if i % 3 else {}}
        lines.decision(i, 'p"0', *fields.values())
        logged = {**fields, "rewards": {a: r for a, r in fields["rewards"].items() if r}}  # the non-zero ones
        expected.append({"episode": 7, "step": i, "agent": 'p"0', "policy": "rule#1", **logged})
    lines.finish(99, "p1", {"calls": ["a"]})
    expected.append({"episode": 7, "step": 99, "agent": "p1", "policy": "ran\\dom", "action": None, "finish": True,
                     "trace": {"calls": ["a"]}})
    expected.append({"episode": 7, "record": {"r": [1]}})
    assert lines.block({"r": [1]}).decode("utf-8").split("\n") == [reference_dumps(e) for e in expected] + [""]


def test_the_base_async_hooks_are_skipped_only_where_they_are_inherited():
    """The runner calls ``act``/``finish`` directly only for a policy whose ``aact``/``afinish``
    are :class:`Policy`'s own (they would only call them), and skips ``trace`` only where it is the base one."""
    class Sync(Policy):
        def act(self, observation, info):
            return 0

    class Async(Sync):
        async def aact(self, observation, info):
            return 1

    class Traced(Sync):
        def trace(self):
            return {"why": "a reason"}

    patched = Sync()
    patched.afinish = Async().aact  # an instance's own coroutine method is awaited too
    assert _sync_hooks(Sync()) == (True, True, False)
    assert _sync_hooks(Async()) == (False, True, False)
    assert _sync_hooks(patched) == (True, False, False)
    assert _sync_hooks(Traced()) == (True, True, True)


class Trained(RandomPolicy):
    """A random player that carries environment settings, as a trained model does."""

    def __init__(self, **settings):
        super().__init__()
        self.env_settings = settings


def carriers(settings):
    """A policy factory: ``spec`` -> a :class:`Trained` with ``settings[spec]``."""
    return lambda spec, env: Trained(**settings.get(spec, {}))


def test_the_settings_players_carry_join_the_run_and_its_run_json(tmp_path):
    config = RunConfig(TINY, ("a", "b", "c"), episodes=2, env_kwargs={"n_players": 3})
    summary = run(config, tmp_path / "r", policy_factory=carriers({"a": {"rounds": 2}, "b": {"rounds": 2}}))
    stored = json.loads((tmp_path / "r" / "run.json").read_text())["config"]
    assert summary.config.env_kwargs == stored["env_kwargs"] == {"n_players": 3, "rounds": 2}
    assert all(e["steps"] == 3 * 2 for e in summary.episodes)  # two rounds of three decisions
    again = run(config, tmp_path / "r", policy_factory=carriers({"a": {"rounds": 2}}))  # the same command resumes
    assert (again.played, again.resumed) == (0, 2)


@pytest.mark.parametrize(("given", "settings", "own_builder", "message"), [
    ({"rounds": 3}, {"b": {"rounds": 2}}, False, "player 'b' was trained with rounds=2 and this run sets rounds=3; "
                                                 "give --env-arg rounds=2 (or leave rounds out)"),
    ({}, {"a": {"rounds": 2}, "c": {"rounds": 5}}, False, "players 'a' and 'c' need other values of the environment "
                                                          "setting rounds (2 and 5); they cannot play in one run"),
    # the caller builds the environment itself: a missing setting cannot be added, so it is named
    ({}, {"a": {"label": "5"}}, True, "player 'a' needs the environment setting label='5' (it was trained with "
                                      "it); add --env-arg 'label=\"5\"'"),
])
def test_settings_a_run_cannot_take_are_refused_before_any_folder(tmp_path, given, settings, own_builder, message):
    config = RunConfig(TINY, ("a", "b", "c"), episodes=1, env_kwargs=given)
    with pytest.raises(SpecError) as caught:
        run(config, tmp_path / "r", policy_factory=carriers(settings), make_env=tiny_env if own_builder else None)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "r").exists()


class Gated(RandomPolicy):
    """Random play whose second episode waits on ``gate`` before its first decision: an episode that
    ends, then a long one (an LLM's, a person's) during which no other episode ends."""

    def __init__(self, gate: asyncio.Event):
        super().__init__()
        self.gate, self.episodes = gate, 0

    def reset(self, agent, seed=None):
        super().reset(agent, seed)
        self.episodes += 1

    async def aact(self, observation, info):
        if self.episodes == 2:
            await self.gate.wait()
        return self.act(observation, info)


def test_a_finished_episode_is_committed_within_the_sync_interval_while_the_next_one_runs(tmp_path):
    """Episode 0 ends while episode 1 waits: its line reaches episodes.jsonl within ``sync_interval``
    (0.2 s here) by the runner's timer, not when episode 1 ends."""
    out = tmp_path / "run"

    async def main() -> float:
        gate = asyncio.Event()
        config = RunConfig(TINY, ("a", "b", "c"), episodes=2, seed=3)
        task = asyncio.ensure_future(arun(config, out, policy_factory=lambda spec, env: Gated(gate),
                                          sync_interval=0.2, plots=False))
        episodes = out / "episodes.jsonl"
        waited, deadline = 0.0, 5.0
        while waited < deadline and not (episodes.exists() and episodes.read_bytes().count(b"\n") == 1):
            assert not task.done(), task.exception() if task.done() else None
            await asyncio.sleep(0.02)
            waited += 0.02
        gate.set()
        await task
        return waited

    waited = asyncio.run(main())
    assert waited < 1.0, f"episode 0 was committed only after {waited:.2f} s"
    assert [json.loads(line)["episode"] for line in (out / "episodes.jsonl").read_text().splitlines()] == [0, 1]
