"""``arena view`` refuses, in one line on stderr with exit status 2, a folder that holds no results, a
folder it cannot read and a port in use; it prints its URL, serves on 127.0.0.1 by default, and
``--export`` writes a site."""
from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the view extra is not installed: pip install -e '.[view]'")

from tests.process_helpers import REPO
from tests.view_helpers import child_env, random_run

VIEW = [sys.executable, "-m", "arena_envs.cli", "view"]
#: as root, whom file modes do not stop, the child loses the capabilities that override them
NO_OVERRIDE = ("setpriv", "--bounding-set=-dac_override,-dac_read_search", "--")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("view-cli") / "results"
    random_run(root / "run", episodes=1)
    return root


def one_line_error(command: list[str]) -> str:
    """The stderr line of ``command``, which must exit 2 with exactly one line."""
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=child_env(), timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), done.stderr
    return lines[0]


def test_a_folder_without_results_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "episodes.jsonl").write_text("{}\n")  # no run.json: not a run
    line = one_line_error(VIEW + [str(tmp_path)])
    assert "holds no results folder" in line and str(tmp_path) in line


def test_an_unreadable_folder_is_one_line(tmp_path: Path, results: Path) -> None:
    locked = tmp_path / "locked"
    shutil.copytree(results, locked)
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:
        if shutil.which(NO_OVERRIDE[0]) is None:
            pytest.skip("running as root without setpriv: no way to make a folder unreadable")
        prefix = NO_OVERRIDE
    locked.chmod(0)
    try:
        line = one_line_error([*prefix, *VIEW, str(locked)])
    finally:
        locked.chmod(0o755)
    assert "permission denied" in line and str(locked) in line


def test_a_port_in_use_is_one_line(results: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        line = one_line_error(VIEW + [str(results), "--port", str(port)])
    assert f"port {port} on 127.0.0.1 is in use" in line


def test_it_prints_its_url_on_127_0_0_1_and_serves_the_index(results: Path) -> None:
    child = subprocess.Popen(VIEW + [str(results)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=REPO, env=child_env())
    try:
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], 60)
        assert ready, "arena view printed no URL within 60 s"
        first = child.stdout.readline()
        assert first.startswith("arena view: http://127.0.0.1:"), first
        url = first.split()[2]
        with urllib.request.urlopen(url, timeout=30) as answer:
            assert answer.status == 200 and "guess_two_thirds_v0" in answer.read().decode()
    finally:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=30)


def test_export_writes_a_site_and_refuses_a_folder_inside_a_run(results: Path, tmp_path: Path) -> None:
    done = subprocess.run(VIEW + [str(results), "--export", str(tmp_path / "site")], capture_output=True, text=True,
                          cwd=REPO, env=child_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "index.html").exists() and (tmp_path / "site" / "static" / "view.js").exists()
    line = one_line_error(VIEW + [str(results), "--export", str(results / "run" / "site")])
    assert "only reads" in line
    assert not (results / "run" / "site").exists()


def test_without_the_view_extra_it_is_one_line_naming_the_pip_command(results: Path) -> None:
    hide = ("import sys; sys.modules['starlette'] = None; from arena_envs.cli import main; "
            f"sys.exit(main(['view', {str(results)!r}]))")
    line = one_line_error([sys.executable, "-c", hide])
    assert line.startswith("arena: error: arena view needs the view extra (starlette")
    assert line.endswith(" is not installed): pip install 'arena-envs[view]'")
