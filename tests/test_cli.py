"""The ``arena`` command through real subprocesses (``python -m arena_envs.cli``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena_envs.runner.policy_specs import env_args
from arena_envs.runner.results import read_steps

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def arena(*args: str, cwd: Path = REPO, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena_envs.cli", *args], cwd=cwd, env=ENV,
                          input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)


def assert_user_error(result: subprocess.CompletedProcess[str], pattern: str, code: int = 2) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    assert pattern in result.stderr


def test_list_names_environments_with_their_docstring_summary_as_plain_text():
    """One line per environment: the docstring's whole first paragraph (the trading one spans two
    lines), with no reST markup left."""
    result = arena("list")
    assert result.returncode == 0, result.stderr
    import arena_envs.auction_v0 as auction
    from arena_envs.registration import ENVIRONMENTS
    lines = result.stdout.splitlines()
    assert len(lines) == len(ENVIRONMENTS)
    first = auction.__doc__.strip().splitlines()[0]
    assert any(line.startswith("auction_v0") and line.endswith(first) for line in lines)
    assert not [line for line in lines if "`" in line or ":class:" in line]
    trading = next(line for line in lines if line.startswith("trading_v0"))
    assert trading.endswith("env(), raw_env() and parallel_env() (one step per decision day).")


def test_plain_text_drops_rest_markup_and_joins_lines():
    from arena_envs.cli import plain_text
    assert plain_text("``env()`` of\n:class:`arena_envs.x.Env`, `name`") == "env() of arena_envs.x.Env, name"


def test_policies_lists_generic_and_env_specific_names():
    result = arena("policies", "auction_v0")
    assert result.returncode == 0, result.stderr
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert {"random", "human", "rule", "vllm:..."} <= set(names)


def test_run_prints_results_and_leaderboard_then_resumes_by_default_folder(tmp_path):
    args = ("run", "auction_v0", "--players", "rule,rule:K=2,random", "--episodes", "4", "--seed", "5",
            "--concurrency", "2", "--env-arg", "max_retries=1")
    first = arena(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    name = Path("results") / "auction_v0-max_retries=1-rule,rule-K=2,random-4ep-seed5"  # the configuration's
    out = tmp_path / name
    assert first.stdout.splitlines()[0] == f"results folder: {name}"  # first, before the run
    assert f"results: {name} (4 episodes played, 0 already there" in first.stdout
    table = first.stdout.splitlines()[2:]
    assert table[0].split()[:5] == ["#", "policy", "mu", "sigma", "games"]
    assert {line.split()[1] for line in table[2:-1]} == {"rule", "rule:K=2", "random"}
    assert table[-1].startswith("game means: ")  # the auction's episode-level metrics
    config = json.loads((out / "run.json").read_text())["config"]
    assert config["env_kwargs"] == {"max_retries": 1} and config["players"] == ["rule", "rule:K=2", "random"]
    assert json.loads((out / "leaderboard.json").read_text())["episodes"] == 4
    assert (out / "leaderboard.md").read_text().count("\n| ") == 4  # header + 3 rows

    again = arena(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "(0 episodes played, 4 already there, 4/4 finished)" in again.stdout
    reprint = arena("leaderboard", str(out))
    assert reprint.returncode == 0
    assert reprint.stdout.splitlines() == table


def test_user_errors_are_one_clean_line(tmp_path):
    out = str(tmp_path / "r")
    assert_user_error(arena("run", "nope_v0", "--players", "random", "--episodes", "1"),
                      "unknown environment 'nope_v0'")
    bad_policy = arena("run", "auction_v0", "--players", "rule,rule,bogus", "--episodes", "1", "--out", out)
    assert_user_error(bad_policy, "unknown policy 'bogus' for auction_v0; available:")
    assert "random" in bad_policy.stderr and "rule" in bad_policy.stderr
    assert_user_error(arena("run", "auction_v0", "--players", "rule,rule:K=-1,random", "--episodes", "1", "--out", out),
                      "K must be >= 0")
    assert_user_error(arena("run", "auction_v0", "--players", "rule,rule", "--episodes", "1", "--out", out),
                      "has 3 seats")
    assert_user_error(arena("run", "auction_v0", "--players", "rule,rule,rule", "--episodes", "1", "--out", out,
                            "--env-arg", "no_such_argument=3"), "bad --env-arg")
    assert_user_error(arena("run", "auction_v0", "--players", "rule,rule,rule", "--episodes", "1", "--out", out,
                            "--env-arg", "oops"), "--env-arg expects key=value")
    assert_user_error(arena("leaderboard", str(tmp_path / "missing")), "not a results folder")
    assert arena("run", "auction_v0", "--players", "rule,rule,rule", "--episodes", "2", "--out", out).returncode == 0
    assert_user_error(arena("run", "auction_v0", "--players", "rule,rule,random", "--episodes", "2", "--out", out),
                      "another configuration (players:")
    assert arena("run", "auction_v0").returncode == 2  # argparse usage error


def test_failing_policy_stops_the_run_with_status_1(tmp_path):
    out = tmp_path / "r"
    result = arena("run", "auction_v0", "--players", "rule,rule,human", "--episodes", "3", "--out", str(out))
    assert_user_error(result, "run stopped: policy 'human' raised in episode 0", code=1)
    assert "HumanInputClosed" in result.stderr and "run the same command again to resume" in result.stderr
    assert (out / "episodes.jsonl").read_bytes() == b"" and (out / "log.jsonl").read_bytes() == b""


def test_human_plays_through_stdin(tmp_path):
    """A human seat fed by a real pipe: every answer is read, logged as text and parsed by the env."""
    answers = "".join(f"{i % 5}\n" for i in range(200))
    out = tmp_path / "r"
    result = arena("run", "tests._tiny_game:env", "--players", "human,random,random", "--episodes", "2",
                   "--out", str(out), stdin=answers)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("Answer one digit 0-4.") >= 8  # 4 rounds x 2 episodes, retries excepted
    steps = [step for k in range(2) for step in read_steps(out, k)]
    human = [s for s in steps if s["policy"] == "human"]
    assert len(human) >= 8 and all(isinstance(s["action"], str) for s in human)
    assert [s["action"] for s in human] == [str(i % 5) for i in range(len(human))]


@pytest.mark.parametrize("items, expected", [
    (["n=5", "order=[3, 1]", "name=ascending", "flag=true", "x=1.5"],
     {"n": 5, "order": [3, 1], "name": "ascending", "flag": True, "x": 1.5}),
    (["text=a=b", "empty="], {"text": "a=b", "empty": ""}),
])
def test_env_args_are_json_when_they_parse(items, expected):
    assert env_args(items) == expected


def test_unreachable_llm_server_stops_the_run_cleanly(tmp_path):
    """A real HTTP policy against a closed local port: the run stops with status 1 and a clear line."""
    pytest.importorskip("llm_policies.specs")
    spec = "vllm:some-model@http://127.0.0.1:9/v1?retries=1&timeout=2"
    result = arena("run", "auction_v0", "--players", f"{spec},rule,rule", "--episodes", "2",
                   "--out", str(tmp_path / "r"))
    assert_user_error(result, f"run stopped: policy '{spec}' raised in episode 0", code=1)


def test_serve_is_a_subcommand_and_refuses_a_missing_model_folder(tmp_path):
    helped = arena("serve", "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: arena serve")
    assert "--detach" in helped.stdout and "serve" in arena("--help").stdout
    missing = tmp_path / "no-model"
    assert_user_error(arena("serve", str(missing), "--port", "8123"), f"model folder {missing} does not exist")


def test_version_prints_the_installed_distribution_version():
    from importlib.metadata import version
    result = arena("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"arena_envs {version('arena_envs')}\n"


@pytest.fixture
def servers_dir(tmp_path, monkeypatch):
    """An empty cache folder for server records (ARENA_CACHE_DIR), so no real record is touched."""
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "servers"


def serve(argv, capsys):
    """``arena serve ARGV`` in-process: (status, stdout, stderr)."""
    pytest.importorskip("llm_policies.serve")
    from arena_envs.cli import main
    capsys.readouterr()
    status = main(["serve", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_server_record_is_written_and_read_back_under_the_cache_dir(servers_dir):
    records = pytest.importorskip("llm_policies.server_records")
    path = records.record_path("127.0.0.1", 8123)
    assert path == servers_dir / "127.0.0.1-8123.json"
    record = records.ServerRecord(pid=4321, url="http://127.0.0.1:8123/v1", model="/m/smollm2", name="smollm2",
                                  log="/tmp/vllm.log", started="12345")
    records.write_record(path, record)
    assert records.read_record(path) == record
    assert json.loads(path.read_text())["pid"] == 4321
    assert records.recorded_text().startswith("recorded: 127.0.0.1:8123 ")


def test_serve_stop_without_a_record_is_one_line(servers_dir, capsys):
    status, out, err = serve(["--stop", "--port", "8123"], capsys)
    assert status == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "no server is recorded at 127.0.0.1:8123" in err and "--detach records one" in err


def test_serve_stop_of_a_gone_server_removes_its_record(servers_dir, capsys):
    records = pytest.importorskip("llm_policies.server_records")
    gone = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    gone.wait()
    path = records.record_path("127.0.0.1", 8124)
    records.write_record(path, records.ServerRecord(gone.pid, "http://127.0.0.1:8124/v1", "m", "m"))
    status, out, err = serve(["--stop", "--port", "8124"], capsys)
    assert status == 2 and out == "" and len(err.splitlines()) == 1, err
    assert f"(pid {gone.pid}) is no longer running" in err and not path.exists()


def test_serve_stop_ends_the_recorded_process_group(servers_dir, capsys):
    """A stand-in server (a sleeping python leading its own process group, with a server's flags) is
    stopped by SIGTERM to its group, and its record removed."""
    import signal
    import threading
    records = pytest.importorskip("llm_policies.server_records")
    stand_in = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "--served-model-name", "m",
                                 "--host", "127.0.0.1", "--port", "8125"], start_new_session=True)
    threading.Thread(target=stand_in.wait, daemon=True).start()  # reap it, as init reaps a detached server
    path = records.record_path("127.0.0.1", 8125)
    records.write_record(path, records.server_record(stand_in.pid, "http://127.0.0.1:8125/v1", "m", "m", None))
    status, out, err = serve(["--stop", "--port", "8125"], capsys)
    assert status == 0, err
    assert out == f"stopped the vLLM server at http://127.0.0.1:8125/v1 (pid {stand_in.pid})\n"
    assert stand_in.wait(10) == -signal.SIGTERM and not path.exists()


STAND_IN_SERVER = """\
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
args = sys.argv[1:]
name, port = args[args.index("--served-model-name") + 1], int(args[args.index("--port") + 1])
class Models(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": name}]}).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
HTTPServer(("127.0.0.1", port), Models).serve_forever()
"""


def test_serve_detach_records_the_server_and_stop_ends_it(servers_dir, tmp_path, capsys):
    """``arena serve --detach`` with a stand-in for vLLM's python (an HTTP server that lists the model):
    the record names the server, and ``arena serve --stop`` ends it and removes the record."""
    import signal
    import socket
    import time
    records = pytest.importorskip("llm_policies.server_records")
    script = tmp_path / "stand_in_server.py"
    script.write_text(STAND_IN_SERVER)
    python = tmp_path / "python"  # takes vLLM's command line: python -m vllm.entrypoints... --port P
    python.write_text(f"#!/bin/sh\nshift 2\nexec {sys.executable} {script} \"$@\"\n")
    python.chmod(0o755)
    (tmp_path / "model").mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    status, out, err = serve([str(tmp_path / "model"), "--port", str(port), "--name", "tiny", "--python", str(python),
                              "--detach", "--timeout", "60"], capsys)
    assert status == 0, err
    record = records.read_record(records.record_path("127.0.0.1", port))
    assert (record.url, record.name, record.model) == (f"http://127.0.0.1:{port}/v1", "tiny", str(tmp_path / "model"))
    assert f"(pid {record.pid}," in out and record.started == records.process_of(record.pid).started
    status, out, err = serve(["--stop", "--port", str(port)], capsys)
    assert status == 0 and out == f"stopped the vLLM server at {record.url} (pid {record.pid})\n", err
    assert not records.record_path("127.0.0.1", port).exists()
    for _ in range(100):  # the stand-in is this process's child (serve ran in-process): reap it
        reaped, how = os.waitpid(record.pid, os.WNOHANG)
        if reaped:
            break
        time.sleep(0.1)
    assert reaped and os.WIFSIGNALED(how) and os.WTERMSIG(how) == signal.SIGTERM


@pytest.mark.skipif(sys.platform != "linux", reason="start times are read from /proc")
def test_serve_stop_leaves_a_later_process_with_the_recorded_pid_alone(servers_dir, capsys):
    """A record whose pid now belongs to a process that started at another time is stale: removed,
    and that process is not signalled."""
    records = pytest.importorskip("llm_policies.server_records")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        path = records.record_path("127.0.0.1", 8126)
        records.write_record(path, records.ServerRecord(other.pid, "http://127.0.0.1:8126/v1", "m", "m", started="1"))
        status, _out, err = serve(["--stop", "--port", "8126"], capsys)
        assert status == 2 and "is no longer running" in err and not path.exists(), err
        assert other.poll() is None  # still running
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize("argv, expected", [
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["m", "--port", "abc"], "invalid int value: 'abc'"),
    (["m", "--port", "70000"], "must be in 1..65535, got 70000"),
    ([], "required: MODEL_PATH (or --stop)"),
    (["--stop", "m"], "--stop takes only --host and --port, got m"),
])
def test_serve_argument_errors_are_one_line(argv, expected, capsys):
    with pytest.raises(SystemExit) as exit_:
        serve(argv, capsys)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.splitlines()) == 1 and expected in err, err
