"""Without the LLM stack a test marked ``llm`` skips, and so does a test that needs a folder the
repository does not ship (tests/outside_data.py), but both fail under CI (``CI`` set): checked on
tiny test modules run by a real pytest subprocess with the suite's hooks, the stack and the folders
absent."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_server import load_summary

REPO = Path(__file__).resolve().parents[1]
TINY_MODULE = '''
import pytest

@pytest.fixture(scope="module")
def server():
    raise AssertionError("a fixture was set up before the stack check")

@pytest.mark.llm
def test_needs_the_model(server):
    pass

def test_plain():
    pass
'''


OUTSIDE_MODULE = '''
from tests.outside_data import REFERENCE_DATA, SPECS, require

def test_specs():
    require(SPECS)

def test_logs_once():
    require(REFERENCE_DATA)

def test_logs_twice():
    require(REFERENCE_DATA)
'''


def run_tiny_suite(tmp_path: Path, ci: str | None, *args: str,
                   module: str = TINY_MODULE) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_tiny.py").write_text(module)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(PYTHONPATH=str(REPO), ARENA_VLLM_VENV=str(tmp_path / "no-venv"),
               ARENA_SMOLLM2_DIR=str(tmp_path / "no-model"), ARENA_SPECS=str(tmp_path / "no-specs"),
               ARENA_REFERENCE_DATA=str(tmp_path / "no-logs"))
    if ci is not None:
        env["CI"] = ci
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-c", str(REPO / "setup.cfg"),
               "--rootdir", str(tmp_path), "-p", "no:cacheprovider", *args, str(tmp_path / "test_tiny.py")]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def outcomes(done: subprocess.CompletedProcess[str]) -> dict[str, int]:
    """The counts of pytest's closing line (``1 passed, 1 error in 1.2s``), warnings left out: a
    dependency's own warnings depend on how it was installed."""
    closing = done.stdout.strip().splitlines()[-1]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", closing.split(" in ")[0])}
    counts.pop("warning", None)
    counts.pop("warnings", None)
    return counts


def test_missing_stack_skips_llm_tests_outside_ci(tmp_path):
    done = run_tiny_suite(tmp_path, None)
    assert done.returncode == 0, done.stdout
    assert outcomes(done) == {"passed": 1, "skipped": 1}
    assert f"vLLM venv at {tmp_path / 'no-venv'}" in done.stdout and "run bash scripts/setup_llm.sh" in done.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_missing_stack_fails_llm_tests_under_ci(tmp_path, ci):
    done = run_tiny_suite(tmp_path, ci)
    assert done.returncode == 1, done.stdout
    assert outcomes(done) == {"passed": 1, "error": 1}, done.stdout  # the check fails the test's set-up
    assert "CI is set, so this test may not skip: LLM stack not installed" in done.stdout
    assert "a fixture was set up" not in done.stdout


def test_ci_does_not_fail_a_run_that_deselects_the_llm_tests(tmp_path):
    done = run_tiny_suite(tmp_path, "true", "-m", "not llm")
    assert done.returncode == 0, done.stdout
    assert outcomes(done) == {"passed": 1, "deselected": 1}


@pytest.mark.parametrize("ci", [None, "false", "0"])
def test_missing_outside_folders_skip_with_one_line_each_outside_ci(tmp_path, ci):
    done = run_tiny_suite(tmp_path, ci, module=OUTSIDE_MODULE)
    assert done.returncode == 0, done.stdout
    assert outcomes(done) == {"skipped": 3}
    lines = done.stdout.splitlines()
    specs = f"1 test skipped: the papers' specs tables not found at {tmp_path / 'no-specs'} (not in the repository; " \
            "set ARENA_SPECS to the folder); set CI to make them required"
    logs = f"2 tests skipped: the papers' published logs not found at {tmp_path / 'no-logs'} (not in the " \
           "repository; set ARENA_REFERENCE_DATA to the folder); set CI to make them required"
    assert specs in lines and logs in lines, done.stdout
    assert not [line for line in lines if line.startswith("SKIPPED")]  # one line per reason, not per test


@pytest.mark.parametrize("ci", ["true", "1"])
def test_missing_outside_folders_fail_under_ci(tmp_path, ci):
    done = run_tiny_suite(tmp_path, ci, module=OUTSIDE_MODULE)
    assert done.returncode == 1, done.stdout
    assert outcomes(done) == {"failed": 3} and "CI is set, so this test may not skip: the papers'" in done.stdout
    assert "tests skipped" not in done.stdout


GROUPED_MODULE = '''
import os
import time

import pytest

from tests.shared_server import FOLDER_VARIABLE

def record_the_server_folder():
    time.sleep(0.2)
    with open(os.path.join(os.path.dirname(__file__), "folders.txt"), "a") as seen:
        seen.write(os.environ[FOLDER_VARIABLE] + "\\n")

@pytest.mark.parametrize("k", range(4))
@pytest.mark.xdist_group("first")
def test_first(k):
    record_the_server_folder()

@pytest.mark.parametrize("k", range(4))
@pytest.mark.xdist_group("second")
def test_second(k):
    record_the_server_folder()
'''


def test_xdist_groups_stay_on_one_worker_and_workers_share_the_server_folder(tmp_path):
    """The serial part relies on both: the blocks of a documentation file run in order on one
    worker (one xdist group), and every worker finds the session's shared server in the folder the
    main process chose (tests/shared_server.py), which is removed at the end."""
    done = run_tiny_suite(tmp_path, None, "-n", "2", "--dist", "loadgroup", "-v", module=GROUPED_MODULE)
    assert done.returncode == 0, done.stdout
    workers: dict[str, set[str]] = {}
    for worker, test in re.findall(r"\[(gw\d)\].*?PASSED test_tiny\.py::test_(first|second)", done.stdout):
        workers.setdefault(test, set()).add(worker)
    assert set(workers) == {"first", "second"} and all(len(w) == 1 for w in workers.values()), done.stdout
    folders = set((tmp_path / "folders.txt").read_text().split())
    assert len(folders) == 1 and not Path(folders.pop()).exists()
    # the summary's accounting: each group's four tests of 0.2 s and more, the machine's CPU use
    groups = re.search(r"^longest xdist groups \(wall time, one test after another\): (\w+) (\d+) s, (\w+) (\d+) s$",
                       done.stdout, re.M)
    assert groups and {groups[1], groups[3]} == {"first", "second"}, done.stdout
    assert min(int(groups[2]), int(groups[4])) >= 1
    assert re.search(r"^machine: \d+ cores busy \d+% of the session \([\d,]+ of [\d,]+ CPU seconds\)$",
                     done.stdout, re.M), done.stdout


def test_the_shared_server_load_is_summed_from_its_stats_lines(tmp_path):
    stats = ("INFO 11-28 08:51:09 [loggers.py:335] Engine 000: Avg prompt throughput: {p} tokens/s, Avg generation "
             "throughput: {g} tokens/s, Running: {r} reqs, Waiting: 0 reqs, CPU KV cache usage: 0.4%")
    log = tmp_path / "server.log"
    log.write_text("\n".join(["starting", stats.format(p=30.0, g=12.0, r=1), stats.format(p=0.0, g=0.0, r=0),
                              stats.format(p=10.0, g=20.0, r=3)]))
    assert load_summary(tmp_path) is None  # no server recorded
    (tmp_path / "server.json").write_text(json.dumps({"log_path": str(log)}))
    assert load_summary(tmp_path) == ("shared LLM server: busy 20 s with 2.0 requests at a time on average; "
                                      f"400 prompt and 320 generated tokens ({log})")
