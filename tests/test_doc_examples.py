"""Every fenced shell and Python example of README.md and docs/ runs (the LLM ones against the test
server), so a documented command that breaks fails CI. What a block may not do here, and how the
test stands in for it, is listed in tests/doc_examples.py."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_examples import (
    RAW_RESULTS,
    RAY_ADDRESS,
    ROOT,
    RUN_LANGS,
    SHOWN_LANGS,
    SYNTAX_ONLY,
    Example,
    all_examples,
    console_commands,
    console_output,
    installed_extras,
    localize,
    pip_extras,
    scaled,
    unused_scalings,
)
from tests.llm_helpers import free_port, one_core
from tests.outside_data import REFERENCE_DATA, require
from tests.process_helpers import child_env

EXAMPLES = all_examples()
RUNNABLE = [e for e in EXAMPLES if e.lang in RUN_LANGS]
_workdirs: dict[str, Path] = {}
TIMEOUT = 600


def test_every_fence_names_a_known_language():
    unknown = [f"{e.id} ({e.lang or 'no language'})" for e in EXAMPLES if e.lang not in RUN_LANGS | SHOWN_LANGS]
    assert not unknown, f"fenced blocks must be one of {sorted(RUN_LANGS | SHOWN_LANGS)}: {unknown}"


def test_scalings_and_syntax_only_entries_still_match_a_block():
    assert not unused_scalings(EXAMPLES)
    firsts = {(e.path, e.code.splitlines()[0]) for e in RUNNABLE if e.code}
    assert not [(path, line) for path, line, _ in SYNTAX_ONLY if (path, line) not in firsts]


def test_pip_lines_name_extras_that_exist():
    extras = {extra for e in RUNNABLE for extra in pip_extras(e.code)}
    assert extras, "the docs show how to install the extras"
    assert extras <= installed_extras(), sorted(extras - installed_extras())


#: documentation files with a block that needs the LLM stack or Ray: all their blocks run in the serial part
SERIAL_FILES = frozenset(e.path for e in RUNNABLE if e.needs_llm or e.needs_ray)
#: documentation files with a block that joins the suite's Ray cluster (``ray_local``, one per process)
CLUSTER_FILES = frozenset(e.path for e in RUNNABLE if RAY_ADDRESS.search(e.code))


def _marks(example: Example) -> list[pytest.MarkDecorator]:
    """``llm`` / ``ray`` for what the block needs; ``serial`` for every block of a file that has such a
    block (its blocks read what earlier ones wrote, so they run in one process, in order); the blocks of
    one file share an xdist group, so a parallel run keeps them on one worker, in order. In a file that
    joins the suite's Ray cluster, the blocks that use Ray run in the ``ray`` group of the Ray tests
    instead, so that one cluster runs (they read nothing the file's other blocks write: those run
    beside them, on another worker)."""
    cluster = example.path in CLUSTER_FILES and example.needs_ray
    marks = [pytest.mark.xdist_group("ray" if cluster else example.path)]
    marks += [pytest.mark.llm] if example.needs_llm else []
    marks += [pytest.mark.ray] if example.needs_ray else []
    return marks + ([pytest.mark.serial] if example.path in SERIAL_FILES else [])


def _workdir(example: Example, factory: pytest.TempPathFactory) -> Path:
    """One folder per documentation file: its blocks run in order and later ones read what earlier
    ones wrote (``results/...``); the repository's examples/ and scripts/ are linked in."""
    if example.path not in _workdirs:
        folder = factory.mktemp(Path(example.path).stem)
        for name in ("examples", "scripts", ".ci"):
            (folder / name).symlink_to(ROOT / name)
        _workdirs[example.path] = folder
    return _workdirs[example.path]


def _command(example: Example, code: str, folder: Path) -> list[str]:
    if example.lang == "python":
        script = folder / f"example_{example.line}.py"
        script.write_text(code + "\n")
        return [sys.executable, str(script)]
    if example.lang == "console":
        code = console_commands(code)
    return ["bash", "-c", "set -eo pipefail\n" + code]


def _run(command: list[str], folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run in its own process group, which is killed whole if it overruns (a timeout that killed
    only the shell would leave its children holding the output pipes)."""
    with subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          stdin=subprocess.DEVNULL, start_new_session=True) as process:
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            pytest.fail(f"did not finish within {TIMEOUT}s:\n{stdout[-2000:]}\n{stderr[-2000:]}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


@pytest.mark.parametrize("example", [pytest.param(e, id=e.id, marks=_marks(e)) for e in RUNNABLE])
def test_documented_example_runs(example: Example, request: pytest.FixtureRequest,
                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    if example.syntax_only:
        result = subprocess.run(["bash", "-n", "-c", example.code], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return
    raw_results = require(REFERENCE_DATA) / "gamabench" if RAW_RESULTS.search(example.code) else None
    own_port = free_port() if example.starts_server else None
    server_url = None
    if own_port is not None:
        server_url = f"http://127.0.0.1:{own_port}/v1"
    elif example.needs_llm:
        server_url = request.getfixturevalue("vllm_server").url
    from llm_policies.local_stack import smollm2_dir

    folder = _workdir(example, tmp_path_factory)
    ray_address = request.getfixturevalue("ray_local").address if RAY_ADDRESS.search(example.code) else None
    code = localize(scaled(example), server_url=server_url, own_port=own_port, model_dir=str(smollm2_dir()),
                    raw_results=None if raw_results is None else str(raw_results), ray_address=ray_address,
                    free_port=free_port)
    env = dict(child_env(), SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy",
               MPLBACKEND="Agg", PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if server_url is not None:
        env["ARENA_VLLM_URL"] = server_url
    if own_port is not None:
        env.update(VLLM_CPU_KVCACHE_SPACE="1", **one_core(shared=False))
    try:
        result = _run(_command(example, code, folder), folder, env)
    finally:
        if own_port is not None:  # a block that starts a server stops it; this only cleans up after a failure
            subprocess.run([sys.executable, "-m", "arena_envs.cli", "serve", "--stop", "--port", str(own_port)],
                           env=env, capture_output=True)
    assert result.returncode == 0, f"{example.id} failed:\n{code}\n--- stdout\n{result.stdout[-3000:]}\n" \
                                   f"--- stderr\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    if example.lang == "console":
        shown = [line.strip() for line in (result.stdout + result.stderr).splitlines()]
        assert not [line for line in console_output(example.code) if line not in shown], result.stdout[-3000:]
