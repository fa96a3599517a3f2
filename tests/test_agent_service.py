"""Agents as HTTP services (issue 36): ``agent:URL`` seats against the reference service (real uvicorn
servers on 127.0.0.1) give the results of the same policies played in-process; a misbehaving agent is
an invalid answer or a one-line stop with the finished episodes kept, and the same command resumes
to the same results."""
from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agent_service.protocol import jsonable
from agent_service.server import ServedEnv
from agent_service.spec_options import SPEC_OPTIONS
from arena_envs.cli import main
from arena_envs.core.policy import PolicyFault
from arena_envs.registration import make
from arena_envs.runner.line_json import to_json
from arena_envs.runner.policy_specs import make_policy
from arena_envs.trading.accounting import Order
from tests.agent_helpers import comparable, serve_agent_process, served
from tests.chat_servers import JsonHandler, chat_server
from tests.llm_helpers import OWN_ENGINE
from tests.process_helpers import REPO, child_env, finished_count, wait_until

WIS = "who_is_spy_v0"
RULES = "rule,rule,rule,rule"


def arena_run(capsys: pytest.CaptureFixture[str], env: str, players: str, out: Path, episodes: int,
              *extra: str) -> tuple[int, str]:
    """``arena run`` in this process (seed 7): its exit status, and its stderr after its stdout."""
    capsys.readouterr()
    status = main(["run", env, "--players", players, "--episodes", str(episodes), "--seed", "7", "--out", str(out),
                   "--no-progress", "--no-plots", *extra])
    said = capsys.readouterr()
    return status, said.err + said.out


def run_child(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=300)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ------------------------------------------------------------------------------------ same results

def test_a_who_is_spy_tournament_over_http_equals_it_in_process(tmp_path, capsys) -> None:
    """Two served seats (one seeded random, one rule), concurrent episodes, every seat rotation."""
    with served(WIS, "random") as random_agent, served(WIS, "lexicon") as rule_agent:
        a, b = f"agent:{random_agent.url}", f"agent:{rule_agent.url}"
        status, err = arena_run(capsys, WIS, f"{a},{b},{RULES}", tmp_path / "http", 6, "--concurrency", "3")
        assert status == 0, err
    assert arena_run(capsys, WIS, f"random,lexicon,{RULES}", tmp_path / "local", 6)[0] == 0
    http = comparable(tmp_path / "http", {a: "random", b: "lexicon"})
    assert http == comparable(tmp_path / "local", {}) and len(http) > 6
    steps = [json.loads(line) for line in (tmp_path / "http" / "log.jsonl").read_text().splitlines()]
    traces = [s["trace"] for s in steps if s.get("policy") == a]
    assert traces and all(t["attempts"] == 1 and t["latency_s"] > 0 and t["backend"] == a for t in traces)


GAMES = [  # game, served spec, the same policy's name in-process, the other players, env args
    ("auction_v0", "rule", "rule:K=4", "rule,rule", []),
    ("el_farol_v0", "equilibrium", "mixed", "always_go,always_stay", ["n_players=3"]),
    ("divide_dollar_v0", "adaptive", "adaptive", "fair,greedy", ["n_players=3"]),
    ("pirate_game_v0", "nash", "equilibrium", "greedy,random", ["n_players=3"]),
    # no text at all: the numeric observation and the mask, which seeded random sampling reads
    ("auction_v0", "random", "random", "rule,rule", ["obs_mode=numeric"]),
]


@pytest.mark.parametrize("game, spec, alias, others, env_args", GAMES, ids=[f"{g[0]}-{g[1]}" for g in GAMES])
def test_rule_players_that_read_the_game_through_bind_play_the_same_served(game: str, spec: str, alias: str,
                                                                            others: str, env_args: list[str],
                                                                            tmp_path, capsys) -> None:
    extra = [x for arg in env_args for x in ("--env-arg", arg)]
    with served(game, spec) as agent:
        label = f"agent:{agent.url}"
        status, err = arena_run(capsys, game, f"{label},{others}", tmp_path / "http", 3, *extra)
        assert status == 0, err
    assert arena_run(capsys, game, f"{alias},{others}", tmp_path / "local", 3, *extra)[0] == 0
    assert comparable(tmp_path / "http", {label: alias}) == comparable(tmp_path / "local", {})


# ------------------------------------------------------------------------------------ faults

def test_an_agent_that_refuses_connections_stops_the_run_before_it_starts(tmp_path, capsys) -> None:
    spec = f"agent:http://127.0.0.1:{free_port()}?timeout=2"
    status, err = arena_run(capsys, WIS, f"{spec},rule,{RULES}", tmp_path / "r", 2)
    line = err.splitlines()[0]
    assert status == 2 and line.startswith(f"arena: error: policy spec '{spec}': agent at") and "Traceback" not in err
    assert "does not answer GET /health: ConnectError" in line and "is the agent running?" in line, err
    assert not (tmp_path / "r" / "episodes.jsonl").exists()


FAULTS = [  # mode, spec options, what the one line says, the requests the failing decision took
    ("silent", "timeout=1&retries=1", "no complete answer within the 1s deadline", 1),
    ("garbage", "retries=2", "malformed answer: the answer to /act is not UTF-8", 2),
    ("error", "retries=2", "HTTP 503: 'overloaded\\n try later'", 2),
    ("lost", "retries=3", "AgentLost: agent at", 1),  # a 409 is not retried
]


@pytest.mark.parametrize("mode, options, expected, requests", FAULTS, ids=[f[0] for f in FAULTS])
def test_a_failing_agent_stops_the_run_in_one_line_and_the_same_command_resumes_exactly(
        mode: str, options: str, expected: str, requests: int, tmp_path, capsys) -> None:
    with served(WIS, "random") as agent:
        spec = f"agent:{agent.url}?{options}"
        agent.switch.set(mode, after=9)
        status, err = arena_run(capsys, WIS, f"{spec},rule,{RULES}", tmp_path / "http", 6)
        first = err.splitlines()[0]
        assert status == 1 and "Traceback" not in err, err
        assert first.startswith(f"arena: run stopped: policy '{spec}' raised in episode") and expected in first, first
        assert agent.url in first and len(first) < 900 and agent.switch.acts == requests
        kept = finished_count(tmp_path / "http")
        assert 1 <= kept < 6
        agent.switch.set("ok")
        status, err = arena_run(capsys, WIS, f"{spec},rule,{RULES}", tmp_path / "http", 6)
        assert status == 0 and f"{6 - kept} episodes played, {kept} already there" in err
    assert arena_run(capsys, WIS, f"random,rule,{RULES}", tmp_path / "local", 6)[0] == 0
    assert comparable(tmp_path / "http", {spec: "random"}) == comparable(tmp_path / "local", {})


def test_a_passing_5xx_is_retried_and_changes_nothing(tmp_path, capsys) -> None:
    with served(WIS, "random") as agent:
        spec = f"agent:{agent.url}"
        agent.switch.set("once", after=3)
        assert arena_run(capsys, WIS, f"{spec},rule,{RULES}", tmp_path / "http", 2)[0] == 0
    assert arena_run(capsys, WIS, f"random,rule,{RULES}", tmp_path / "local", 2)[0] == 0
    assert comparable(tmp_path / "http", {spec: "random"}) == comparable(tmp_path / "local", {})
    steps = [json.loads(line) for line in (tmp_path / "http" / "log.jsonl").read_text().splitlines()]
    assert sorted(s["trace"]["attempts"] for s in steps if s.get("policy") == spec)[-1] == 2


def test_an_action_no_game_reads_is_an_invalid_answer_not_a_stop(tmp_path, capsys) -> None:
    with served(WIS, "random") as agent:
        spec = f"agent:{agent.url}"
        agent.switch.set("nonsense")
        status, err = arena_run(capsys, WIS, f"{spec},rule,{RULES}", tmp_path / "http", 2, "--env-arg",
                                "action_mode=discrete")
        assert status == 0, err
    entries = [json.loads(line) for line in (tmp_path / "http" / "episodes.jsonl").read_text().splitlines()]
    invalid = [e["invalid"][seat] for e in entries for seat, label in e["seats"].items() if label == spec]
    assert sum(i["unparseable"] for i in invalid) > 0 and sum(i["fallback"] for i in invalid) > 0
    steps = [json.loads(line) for line in (tmp_path / "http" / "log.jsonl").read_text().splitlines()]
    explained = [s for s in steps if s.get("policy") == spec]
    assert explained and all(s["trace"]["explanation"] == "no idea" for s in explained)


def test_a_served_agent_that_dies_mid_run_stops_it_and_a_restarted_one_resumes_it(tmp_path) -> None:
    """``arena serve-agent`` and ``arena run`` as processes; the agent is killed after the first
    committed episode, restarted on its port, and the same command finishes the run."""
    def command(players: str, out: Path) -> list[str]:
        return [sys.executable, "-m", "arena_envs.cli", "run", WIS, "--players", players, "--episodes", "30",
                "--seed", "7", "--out", str(out), "--no-progress", "--no-plots"]

    out = tmp_path / "http"
    with serve_agent_process(WIS, "random") as (agent, url):
        spec = f"agent:{url}?retries=2"
        with subprocess.Popen(command(f"{spec},rule,{RULES}", out), cwd=REPO, env=child_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as run:
            assert wait_until(lambda: finished_count(out) >= 1 or run.poll() is not None, 120, 0.002)
            agent.send_signal(signal.SIGKILL)
            _, err = run.communicate(timeout=120)
    kept = finished_count(out)
    assert run.returncode == 1 and err.count("\n") <= 2 and "Traceback" not in err, err
    assert err.startswith(f"arena: run stopped: policy '{spec}'") and "ConnectError" in err, err
    assert 1 <= kept < 30
    port = url.rsplit(":", 1)[1]
    with serve_agent_process(WIS, "random", int(port)):
        resumed = run_child(command(f"{spec},rule,{RULES}", out))
    assert resumed.returncode == 0, resumed.stderr
    assert f"{30 - kept} episodes played, {kept} already there" in resumed.stdout + resumed.stderr
    local = tmp_path / "local"
    reference = run_child(command(f"random,rule,{RULES}", local))
    assert reference.returncode == 0, reference.stderr
    assert comparable(out, {spec: "random"}) == comparable(local, {})


# ------------------------------------------------------------------------------------ following the game

FOLLOWED = [  # game, served spec (a policy that reads the live game), the other players, env args
    ("tank_battle_v0", "rule", "random,npc,random,npc,npc", ["stage=7"]),  # reads env.world
    ("trading_v0", "sma_crossover", "buy_and_hold,random,momentum", []),  # reads info["snapshot"]; answers Orders
]


@pytest.mark.parametrize("game, spec, others, env_args", FOLLOWED, ids=[f[0] for f in FOLLOWED])
def test_a_served_policy_that_reads_the_live_game_follows_it_with_the_moves_and_plays_the_same(
        game: str, spec: str, others: str, env_args: list[str], tmp_path, capsys) -> None:
    """Its health says it follows the game: without follow=1 the run refuses before any episode; with it
    the service's copy steps every move and the results are the in-process ones, concurrent episodes too."""
    extra = [x for arg in env_args for x in ("--env-arg", arg)]
    with served(game, spec) as agent:
        bare = f"agent:{agent.url}"
        status, err = arena_run(capsys, game, f"{bare},{others}", tmp_path / "refused", 1, *extra)
        line = err.splitlines()[0]
        assert status == 2 and line.startswith(f"arena: error: policy spec '{bare}': ") and "?follow=1" in line, err
        assert not (tmp_path / "refused" / "episodes.jsonl").exists()
        label = f"{bare}?follow=1"
        status, err = arena_run(capsys, game, f"{label},{others}", tmp_path / "http", 3, "--concurrency", "2", *extra)
        assert status == 0, err
    assert arena_run(capsys, game, f"{spec},{others}", tmp_path / "local", 3, *extra)[0] == 0
    served_lines = comparable(tmp_path / "http", {label: spec})
    assert served_lines == comparable(tmp_path / "local", {}) and len(served_lines) > 20


def test_the_step_log_and_the_protocol_carry_an_order_as_its_fields() -> None:
    """The trading game's native action ``{symbol: Order}`` crosses as JSON fields, which the game reads back."""
    env = make("trading_v0")
    env.reset(seed=0)
    raw = env.unwrapped
    order = {"SPX": Order("BUY", 0.3125)}
    fields = jsonable(order)
    assert fields == json.loads(to_json(order)) == {"SPX": {"kind": "BUY", "size": 0.3125, "target": None}}
    env.step(fields)
    assert raw.last_move.orders == (Order("BUY", 0.3125),) and not raw.infos[raw.agents[0]].get("invalid_action")


def test_a_followed_session_whose_copy_plays_another_game_is_refused() -> None:
    """The moves say who moved; a copy with another seat to move, or another text, is a 422 (not retried)."""
    game = "tank_battle_v0"
    env = make(game)
    env.reset(seed=5)
    seat = env.agent_selection
    observation, *_ = env.last()
    with served(game, "rule") as agent, httpx.Client(base_url=agent.url, timeout=10) as client:
        for session, moves, text, expected in [
                ("a", [["tank_9", 0]], None, "at move 0 the arena has 'tank_9' to move"),
                ("b", [], "another prompt", "another text than the arena"),
                ("c", None, None, "must carry its moves")]:
            start = {"protocol": 1, "session": session, "game": game, "env_kwargs": {}, "seat": seat, "seed": 1,
                     "env_seed": 5}
            assert client.post("/start", json=start).status_code == 200
            answer = client.post("/act", json={"protocol": 1, "session": session, "game": game, "seat": seat,
                                               "step": 0, "info": {}, "deadline_s": 5, "moves": moves,
                                               "text": text})
            assert answer.status_code in (400, 422) and expected in answer.json()["error"], answer.text
        good = {"protocol": 1, "session": "d", "game": game, "env_kwargs": {}, "seat": seat, "seed": 1, "env_seed": 5}
        assert client.post("/start", json=good).status_code == 200
        answer = client.post("/act", json={"protocol": 1, "session": "d", "game": game, "seat": seat, "step": 0,
                                           "info": {}, "deadline_s": 5, "moves": [],
                                           "text": observation["text"] if isinstance(observation, dict) else None})
        assert answer.status_code == 200 and "#Operation" in answer.json()["action"], answer.text


@pytest.mark.parametrize("options, expected", [
    ("", "which only an agent that follows the game (follow=1: one you trust) may"),
    ("?follow=1", "a report is [method, args, kwargs] with a method of []"),  # Who is Spy takes no reports
], ids=["unfollowed", "followed"])
def test_a_report_the_game_does_not_take_from_this_agent_stops_the_run_as_its_fault(options: str, expected: str,
                                                                                    tmp_path, capsys) -> None:
    with served(WIS, "random") as agent:
        spec = f"agent:{agent.url}{options}"
        agent.switch.set("report")
        status, err = arena_run(capsys, WIS, f"{spec},rule,{RULES}", tmp_path / "r", 2)
    line = err.splitlines()[0]
    assert status == 1 and "PolicyFault" in line and expected in line and "resuming will not help" in err, err


def test_an_unfollowed_copy_refuses_a_read_of_the_live_game() -> None:
    view = ServedEnv(make("tank_battle_v0"))
    assert view.stage is view.env.stage  # the fixed settings read through
    with pytest.raises(PolicyFault, match=r"reads env\.world, the game's live state"):
        view.world  # noqa: B018


MIN_BID = re.compile(r"\"I bid \$X!\" with (\d+) <= X")


class BidderHandler(JsonHandler):
    """A scripted model of the AucArena bidder's calls: the fixed belief for a JSON request, the minimum
    valid bid for a bid, withdrawal when asked to choose, a plan otherwise."""

    def do_POST(self) -> None:
        body = self.read_body()
        guided = body.get("structured_outputs") or {}
        if "json" in guided:
            text = json.dumps({"remaining_budget": 0, "total_profits": {}, "winning_bids": {}})
        elif "choice" in guided:
            text = "I'm out!" if "I'm out!" in guided["choice"] else guided["choice"][0]
        elif "regex" in guided:
            text = f"I bid ${MIN_BID.findall(body['messages'][-1]['content'])[-1]}!"
        else:
            text = "A plan: bid on the cheap items."
        self.reply_text(text)


def followed_llm_plays_as_in_process(capsys: pytest.CaptureFixture[str], out: Path, game: str,
                                     model: type[JsonHandler], agent: str, others: str, episodes: int) -> list[str]:
    """The LLM agent ``agent`` on the scripted ``model``, served with follow=1 and in-process beside ``others``:
    the comparable lines of the served run, which must equal the in-process ones."""
    pytest.importorskip("llm_policies.backends.openai_http")
    with chat_server(model) as chat:
        llm = f"vllm:m@http://127.0.0.1:{chat.server_port}/v1?agent={agent}"
        with served(game, llm) as service:
            label = f"agent:{service.url}?follow=1"
            status, err = arena_run(capsys, game, f"{label},{others}", out / "http", episodes)
            assert status == 0, err
        assert arena_run(capsys, game, f"{llm},{others}", out / "local", episodes)[0] == 0
    played = comparable(out / "http", {label: llm})
    assert played == comparable(out / "local", {})
    return played


def test_a_served_aucarena_bidder_follows_the_auction_and_bids_as_in_process(tmp_path, capsys) -> None:
    """The AucArena bidder reads ``env.game`` and ``env.record`` (its hammer and belief texts)."""
    served_lines = followed_llm_plays_as_in_process(capsys, tmp_path, "auction_v0", BidderHandler, "aucarena",
                                                    "rule,rule", 2)
    bids = [json.loads(line) for line in served_lines if '"policy": "vllm:' in line]
    assert any(str(b["action"]).startswith("I bid $") for b in bids), bids[:3]


# ------------------------------------------------------------------------------------ specs

BAD_SPECS = [
    ("agent:ftp://127.0.0.1:9000", "'ftp://127.0.0.1:9000' is not an http:// or https:// URL"),
    ("agent:http://127.0.0.1:9000?retries=0", "option retries (attempts in all) must be from 1 to 100, got 0"),
    ("agent:http://127.0.0.1:9000?timeout=nan", "option timeout must be a finite number, got 'nan'"),
    ("agent:http://127.0.0.1:9000?timeout=0", "option timeout must be seconds > 0"),
    ("agent:http://127.0.0.1:9000?model=x", "unknown option(s) ['model'] in"),
    ("agent:http://127.0.0.1:9000?token_env=ARENA_TEST_UNSET_TOKEN", "names the environment variable "
                                                                      "'ARENA_TEST_UNSET_TOKEN', which is not set"),
]


@pytest.mark.parametrize("spec, expected", BAD_SPECS, ids=[e[:30] for _, e in BAD_SPECS])
def test_a_bad_agent_spec_is_one_line_before_anything_runs(spec: str, expected: str, tmp_path, capsys) -> None:
    status, err = arena_run(capsys, WIS, f"{spec},rule,{RULES}", tmp_path / "r", 1)
    line = err.splitlines()[0]
    assert status == 2 and line.startswith(f"arena: error: policy spec '{spec}': ") and expected in line, err
    assert "Traceback" not in err and not (tmp_path / "r" / "episodes.jsonl").exists()


def test_a_bare_agent_spec_gets_the_declared_defaults() -> None:
    with served(WIS, "random") as agent:
        policy = make_policy(f"agent:{agent.url}", WIS)
    told = policy.provenance()
    assert (str(told["timeout"]).rstrip("0").rstrip("."), str(told["retries"])) == (
        SPEC_OPTIONS["agent"]["timeout"], SPEC_OPTIONS["agent"]["retries"])
    assert told["agent"]["name"] == "random" and told["url"] == agent.url


# ------------------------------------------------------------------------------------ the service

def test_the_service_checks_what_it_is_sent(tmp_path) -> None:
    with served(WIS, "random") as agent, httpx.Client(base_url=agent.url, timeout=10) as client:
        health = client.get("/health").json()
        assert health["protocol"] == 1 and health["games"] == [WIS] and health["name"] == "random"
        bad = client.post("/act", content=b"<xml/>")
        assert bad.status_code == 400 and bad.json()["error"].startswith("the decision is not JSON")
        start = {"protocol": 1, "session": "s", "game": WIS, "env_kwargs": {}, "seat": "player_0", "seed": 3}
        assert client.post("/start", json={**start, "game": "auction_v0"}).status_code == 400
        wrong = client.post("/start", json={**start, "env_kwargs": {"n_players": 99}})
        assert wrong.status_code == 400 and "cannot build who_is_spy_v0" in wrong.json()["error"]
        assert client.post("/start", json={**start, "env_kwargs": {"__import__": "os"}}).status_code == 400
        lost = client.post("/act", json={"protocol": 1, "session": "nobody", "game": WIS, "seat": "player_0",
                                         "step": 0, "info": {}, "deadline_s": 5})
        assert lost.status_code == 409 and "unknown session" in lost.json()["error"]
        assert client.post("/start", json=start).status_code == 200
        huge = client.post("/act", content=b" " * (17 * 1024 * 1024))
        assert huge.status_code == 413


def test_a_repeated_step_is_a_retry_and_gets_the_same_answer() -> None:
    env = make(WIS)
    env.reset(seed=1)
    seat = env.agent_selection
    observation, _, _, _, info = env.last()
    with served(WIS, "random") as agent, httpx.Client(base_url=agent.url, timeout=10) as client:
        start = {"protocol": 1, "session": "s", "game": WIS, "env_kwargs": {}, "seat": seat, "seed": 3}
        assert client.post("/start", json=start).status_code == 200
        decision = {"protocol": 1, "session": "s", "game": WIS, "seat": seat, "step": 0, "info": jsonable(info),
                    "deadline_s": 5, "text": observation["text"]}
        answers = {client.post("/act", json=decision).content for _ in range(3)}
        assert len(answers) == 1
        assert client.post("/end", json={"protocol": 1, "session": "s", "info": {}}).json() == {
            "worked": False, "trace": None, "reports": None}


def test_a_token_is_asked_and_never_written_to_the_results(tmp_path, capsys, monkeypatch) -> None:
    token = "s3cret-token-123"
    with served(WIS, "random", token=token) as agent:
        status, err = arena_run(capsys, WIS, f"agent:{agent.url},rule,{RULES}", tmp_path / "no", 1)
        assert status == 2 and "HTTP 401" in err and "missing or wrong bearer token" in err, err
        monkeypatch.setenv("WIS_TOKEN", token)
        spec = f"agent:{agent.url}?token_env=WIS_TOKEN"
        status, err = arena_run(capsys, WIS, f"{spec},rule,{RULES}", tmp_path / "yes", 1)
        assert status == 0, err
    assert not any(token in path.read_text(encoding="utf-8") for path in (tmp_path / "yes").rglob("*.json*"))


@pytest.mark.parametrize("args, expected", [
    (["nogame", "rule"], "unknown game 'nogame'"),
    ([WIS, "nosuch"], "unknown policy 'nosuch' for who_is_spy_v0"),
    ([WIS, "rule", "--port", "70000"], "--port must be from 0 to 65535"),
    ([WIS, "rule", "--token-env", "ARENA_TEST_UNSET_TOKEN"], "--token-env names 'ARENA_TEST_UNSET_TOKEN'"),
], ids=["game", "spec", "port", "token"])
def test_serve_agent_refuses_bad_arguments_in_one_line(args: list[str], expected: str, capsys) -> None:
    assert main(["serve-agent", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("arena serve-agent: error: ") and expected in err, err


# ------------------------------------------------------------------------------------ served processes

def test_serve_agent_processes_in_two_seats_play_the_in_process_results(tmp_path) -> None:
    """The must-show: ``arena serve-agent`` processes, ``arena run`` with ``agent:`` specs in a process."""
    def command(players: str, out: Path) -> list[str]:
        return [sys.executable, "-m", "arena_envs.cli", "run", WIS, "--players", players, "--episodes", "6",
                "--seed", "11", "--concurrency", "2", "--out", str(out), "--no-progress", "--no-plots"]

    with serve_agent_process(WIS, "random") as (_, a), serve_agent_process(WIS, "consensus") as (_, b):
        http = run_child(command(f"agent:{a},agent:{b},{RULES}", tmp_path / "http"))
    assert http.returncode == 0, http.stderr
    local = run_child(command(f"random,consensus,{RULES}", tmp_path / "local"))
    assert local.returncode == 0, local.stderr
    labels = {f"agent:{a}": "random", f"agent:{b}": "consensus"}
    assert comparable(tmp_path / "http", labels) == comparable(tmp_path / "local", {})


class SeededChat(JsonHandler):
    """A deterministic model: its answer is the enumerated value of the request's JSON schema picked by the
    request's seed (so it shows the constraint and the seed it got); it keeps the schemas in ``SCHEMAS``."""

    SCHEMAS: list[object] = []

    def do_POST(self) -> None:
        body = self.read_body()
        schema = body["structured_outputs"]["json"]
        self.SCHEMAS.append(schema)
        key, spec = next(iter(schema["properties"].items()))
        self.reply_text(json.dumps({key: spec["enum"][body["seed"] % len(spec["enum"])]}))


def test_a_served_llm_policy_gets_the_decisions_constraint_and_seed(tmp_path, capsys) -> None:
    pytest.importorskip("llm_policies.backends.openai_http")
    schemas = SeededChat.SCHEMAS
    schemas.clear()
    with chat_server(SeededChat) as chat:
        llm = f"vllm:m@http://127.0.0.1:{chat.server_port}/v1?temperature=1"
        extra = ("--env-arg", "n_players=3")
        with served("el_farol_v0", llm) as agent:
            status, err = arena_run(capsys, "el_farol_v0", f"agent:{agent.url},always_go,always_stay",
                                    tmp_path / "http", 2, *extra)
            assert status == 0, err
        served_schemas = list(schemas)
        assert arena_run(capsys, "el_farol_v0", f"{llm},always_go,always_stay", tmp_path / "local", 2, *extra)[0] == 0
    local_schemas = schemas[len(served_schemas):]
    assert served_schemas and sorted(map(json.dumps, served_schemas)) == sorted(map(json.dumps, local_schemas))
    assert comparable(tmp_path / "http", {f"agent:{agent.url}": llm}) == comparable(tmp_path / "local", {})


def test_a_long_spec_is_served_under_a_name_the_protocol_accepts(tmp_path, capsys) -> None:
    spec = "random:p_abstain=0." + "0" * 250
    with served(WIS, spec) as agent:
        told = make_policy(f"agent:{agent.url}", WIS).provenance()["agent"]
        status, err = arena_run(capsys, WIS, f"agent:{agent.url},rule,{RULES}", tmp_path / "r", 1)
    assert len(told["name"]) == 200 and told["name"].endswith("...") and status == 0, err


@pytest.mark.llm
@pytest.mark.slow
@OWN_ENGINE
def test_a_served_transformers_model_plays_as_in_process(tmp_path, capsys) -> None:
    """``hf:`` (SmolLM2 on transformers, in this process) behind the agent protocol: the same prompts,
    constraints and call seeds give the same answers."""
    from llm_policies.local_stack import smollm2_dir

    spec = f"hf:{smollm2_dir()}?dtype=float32&temperature=0.7"
    extra = ("--env-arg", "n_players=3", "--env-arg", "n_rounds=4")
    with served("el_farol_v0", spec) as agent:
        label = f"agent:{agent.url}"
        status, err = arena_run(capsys, "el_farol_v0", f"{label},always_go,always_stay", tmp_path / "http", 1, *extra)
        assert status == 0, err
    assert arena_run(capsys, "el_farol_v0", f"{spec},always_go,always_stay", tmp_path / "local", 1, *extra)[0] == 0
    played = comparable(tmp_path / "http", {label: spec})
    assert played == comparable(tmp_path / "local", {}) and len(played) > 8


def test_arena_eval_grades_an_agent_as_the_same_policy_in_process(tmp_path, capsys) -> None:
    """``arena eval agent:URL``: the report card of a served policy is the one of the policy in-process."""
    with served("el_farol_v0", "random") as agent:
        capsys.readouterr()
        assert main(["eval", f"agent:{agent.url}", "--games", "el_farol_v0", "--quick", "--out",
                     str(tmp_path / "http"), "--no-progress"]) == 0
    assert main(["eval", "random", "--games", "el_farol_v0", "--quick", "--out", str(tmp_path / "local"),
                 "--no-progress"]) == 0
    cards = [json.loads((tmp_path / name / "card.json").read_text()) for name in ("http", "local")]
    assert cards[0]["games"] == cards[1]["games"] and cards[0]["games"]["el_farol_v0"]
    assert cards[0]["provenance"]["games"]["el_farol_v0"]["model"]["backend"] == "agent"


class TraderChat(JsonHandler):
    """A scripted model of the trading agents' role calls: a choice picked by the prompt's length, a fixed
    JSON object, else an analysis that ends in a decision (BUY 0.5 or SELL, by the prompt's length)."""

    def do_POST(self) -> None:
        body = self.read_body()
        guided = body.get("structured_outputs") or {}
        last = body["messages"][-1]["content"]
        if "choice" in guided:
            text = guided["choice"][len(last) % len(guided["choice"])]
        elif "json" in guided:
            text = json.dumps({"decision": "BUY", "action": "BUY", "size": 0.5, "reasoning": "up"})
        else:
            text = "Analysis: prices rise. DECISION: " + ("BUY 0.5" if len(last) % 3 else "SELL")
        self.reply_text(text)


# the hedge fund and TradeAgent architectures read the snapshot the same way, with many more calls a day
# (5,145 for this episode's hedge fund: 112 s)
@pytest.mark.parametrize("architecture", ["investor", "deepfund"])
def test_a_served_trading_agent_follows_the_market_and_trades_as_in_process(architecture: str, tmp_path,
                                                                            capsys) -> None:
    """The trading architectures read ``info["snapshot"]``: served, they follow the game."""
    played = followed_llm_plays_as_in_process(capsys, tmp_path, "trading_v0", TraderChat, architecture,
                                              "buy_and_hold,cash,momentum", 1)
    assert any('"policy": "vllm:' in line and "DECISION:" in line for line in played)
