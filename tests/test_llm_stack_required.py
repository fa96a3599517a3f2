"""Without the LLM stack a test marked ``llm`` skips, but fails under CI (``CI`` set): checked on a
tiny test module run by a real pytest subprocess with the suite's hooks and a stack that is absent."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def run_tiny_suite(tmp_path: Path, ci: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_tiny.py").write_text(TINY_MODULE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(PYTHONPATH=str(REPO), ARENA_VLLM_VENV=str(tmp_path / "no-venv"),
               ARENA_SMOLLM2_DIR=str(tmp_path / "no-model"))
    if ci is not None:
        env["CI"] = ci
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-c", str(REPO / "setup.cfg"),
               "--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-rA", *args, str(tmp_path / "test_tiny.py")]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_missing_stack_skips_llm_tests_outside_ci(tmp_path):
    done = run_tiny_suite(tmp_path, None)
    assert done.returncode == 0, done.stdout
    assert "1 passed, 1 skipped" in done.stdout
    assert f"vLLM venv at {tmp_path / 'no-venv'}" in done.stdout and "run bash scripts/setup_llm.sh" in done.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_missing_stack_fails_llm_tests_under_ci(tmp_path, ci):
    done = run_tiny_suite(tmp_path, ci)
    assert done.returncode == 1, done.stdout
    assert "1 passed, 1 error" in done.stdout, done.stdout  # the check fails the test's set-up
    assert "CI is set, so the LLM tests may not be skipped" in done.stdout
    assert "a fixture was set up" not in done.stdout


def test_ci_does_not_fail_a_run_that_deselects_the_llm_tests(tmp_path):
    done = run_tiny_suite(tmp_path, "true", "-m", "not llm")
    assert done.returncode == 0, done.stdout
    assert "1 passed, 1 deselected" in done.stdout
