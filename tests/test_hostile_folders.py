"""Hostile folders through the real ``arena`` command: one writer per folder (an OS lock naming its
holder), OS errors (a full disk, a read-only folder) in one line with exit status 1 and an exact
resume, a corrupt ``episodes.jsonl`` line, ``arena rescore`` without logs and a blank ``--out``.

The command runs in a child process where a second process or a resource limit is the point, and
in-process (``main``) otherwise; each case asserts one line on stderr and no traceback."""
from __future__ import annotations

import errno
import io
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arena_envs.cli import main
from arena_envs.runner import results
from arena_envs.runner.results import LOCK_FILE, ResultsFolder, WriterLock, read_episodes
from arena_envs.runner.run_config import RunConfig
from tests.process_helpers import wait_until

REPO = Path(__file__).resolve().parents[1]
CHILD_ENV = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
TINY = "tests._tiny_game:env"  # "guess the die": a fast game, one digit per answer
EPISODES = 40
ANSWERS = "".join(f"{i % 5}\n" for i in range(400))  # a human seat's answers, enough for two episodes
_RECORD_LINE = re.compile(rb'\{"episode": \d+, "record": ')


def run_args(out: Path, players: str = "random,random,random", episodes: int = EPISODES) -> list[str]:
    return ["run", TINY, "--players", players, "--episodes", str(episodes), "--seed", "3", "--out", str(out),
            "--no-progress"]


def child(args: list[str], prefix: tuple[str, ...] = ()) -> list[str]:
    return [*prefix, sys.executable, "-m", "arena_envs.cli", *args]


def run_child(args: list[str], prefix: tuple[str, ...] = (),
              preexec_fn: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(child(args, prefix), cwd=REPO, env=CHILD_ENV, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120, preexec_fn=preexec_fn)


def one_line(stderr: str) -> str:
    """The one line of ``stderr`` (no traceback, nothing else)."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def cli(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    """``arena ARGS`` in this process: the exit status, stdout and stderr."""
    capsys.readouterr()
    try:
        status = main(args)
    except SystemExit as exit_:  # argparse errors leave through SystemExit
        status = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def lock_pid(folder: Path) -> int | None:
    """The pid the folder's lock file names (None before a writer has written it)."""
    try:
        text = (folder / LOCK_FILE).read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None


def content(folder: Path) -> dict[str, bytes]:
    """What a resume must reproduce: the committed episodes and their log blocks, as bytes."""
    return {name: (folder / name).read_bytes() for name in ("episodes.jsonl", "log.jsonl")}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != LOCK_FILE}


def cut(folder: Path, keep: int) -> None:
    """Leave the first ``keep`` committed episodes of a one-worker run's folder (a run that stopped)."""
    lines = (folder / "episodes.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "episodes.jsonl").write_bytes(b"".join(lines[:keep]))
    log = (folder / "log.jsonl").read_bytes().splitlines(keepends=True)
    ends = [i for i, line in enumerate(log) if _RECORD_LINE.match(line)]
    (folder / "log.jsonl").write_bytes(b"".join(log[:ends[keep - 1] + 1]))


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_DEBUG", raising=False)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run of the tiny game: what every resume below must equal."""
    out = tmp_path_factory.mktemp("clean") / "r"
    assert main(run_args(out)) == 0
    return out


# --- one writer per folder ------------------------------------------------------------------------

def test_a_second_run_is_refused_while_the_first_finishes(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The first run waits on its human seat, holding the folder; a second ``arena run`` is refused
    in one line naming the first's pid, the leaderboard reads the folder meanwhile, the first
    finishes, and the folder is valid: the same command finds nothing to play."""
    out = tmp_path / "r"
    args = run_args(out, "human,random,random", episodes=2)
    with subprocess.Popen(child(args), cwd=REPO, env=CHILD_ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as first:
        assert wait_until(lambda: lock_pid(out) == first.pid or first.poll() is not None, 60, 0.01)
        assert first.poll() is None, first.communicate()[1]
        second = run_child(args)
        assert second.returncode == 2
        line = one_line(second.stderr)
        assert f"pid {first.pid}" in line and str(out) in line and "--out" in line
        status, table, err = cli(capsys, ["leaderboard", str(out)])  # a reader during the run
        assert status == 0 and "policy" in table, err
        _, err = first.communicate(ANSWERS, timeout=120)
    assert first.returncode == 0, err
    assert sorted(e["episode"] for e in read_episodes(out / "episodes.jsonl")) == [0, 1]
    status, said, err = cli(capsys, args)
    assert status == 0 and "0 episodes played, 2 already there" in said, err
    status, table, err = cli(capsys, ["leaderboard", str(out)])
    assert status == 0 and "human" in table, err


def test_a_killed_writer_never_blocks_the_next(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``kill -9`` of a run holding the folder: the OS drops its lock, and the same command plays it."""
    out = tmp_path / "r"
    args = run_args(out, "human,random,random", episodes=2)
    with subprocess.Popen(child(args), cwd=REPO, env=CHILD_ENV, stdin=subprocess.PIPE,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as first:
        assert wait_until(lambda: lock_pid(out) == first.pid and (out / "log.jsonl").exists(), 60, 0.01)
        first.send_signal(signal.SIGKILL)
    assert first.returncode == -signal.SIGKILL
    monkeypatch.setattr(sys, "stdin", io.StringIO(ANSWERS))
    status, said, err = cli(capsys, args)
    assert status == 0 and "2 episodes played" in said, err
    assert lock_pid(out) == os.getpid()  # the pid of the last writer stays; the lock itself is gone


def test_a_folder_whose_creation_was_killed_is_started_afresh(tmp_path: Path, clean: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A run killed while writing ``run.json`` leaves the lock file and a temporary file: the same
    command starts the run there (it holds no data)."""
    out = tmp_path / "r"
    out.mkdir()
    (out / LOCK_FILE).write_text("12345\n")
    (out / "run.json.tmp").write_text('{"format": 2, "con')
    status, _, err = cli(capsys, run_args(out))
    assert status == 0, err
    assert content(out) == content(clean) and not (out / "run.json.tmp").exists()


WRITERS = {
    "run into a new folder": (["run", TINY, "--players", "random*3", "--episodes", "2", "--out", "{dir}"], ""),
    "run resuming a folder": (run_args(Path("{dir}")), "clean"),
    "eval": (["eval", "random", "--games", "guess_two_thirds_v0", "--episodes", "1", "--env-arg",
              "guess_two_thirds_v0.n_rounds=2", "--no-progress", "--out", "{dir}"], ""),
    "run gamma": (["run", "gamma", "--players", "random", "--games", "guess_two_thirds_v0", "--runs", "1",
                   "--env-arg", "n_rounds=2", "--no-plots", "--no-progress", "--out", "{parent}"],
                  "guess_two_thirds_v0"),
}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_writer_is_refused_a_folder_another_process_holds(writer: str, tmp_path: Path, clean: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """This process holds the lock (a second open of the lock file conflicts as another process's
    would): every writing command is refused in one line naming this pid, the folder untouched."""
    argv, held = WRITERS[writer]
    parent = tmp_path / "out"
    folder = parent / held if held not in ("", "clean") else parent
    if held == "clean":
        shutil.copytree(clean, folder)
    folder.mkdir(parents=True, exist_ok=True)
    before = snapshot(parent)
    with WriterLock(folder):
        status, _, err = cli(capsys, [a.format(dir=folder, parent=parent) for a in argv])
    assert status == 2
    line = one_line(err)
    assert f"pid {os.getpid()}" in line and str(folder) in line
    assert snapshot(parent) == before


@pytest.mark.parametrize("stale", [False, True], ids=["stored leaderboard", "recomputed leaderboard"])
def test_the_leaderboard_reads_a_folder_while_a_run_holds_it(stale: bool, tmp_path: Path, clean: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "r"
    shutil.copytree(clean, folder)
    if stale:
        cut(folder, 30)
    before = snapshot(folder)
    with WriterLock(folder):
        status, table, err = cli(capsys, ["leaderboard", str(folder)])
    assert status == 0 and err == "" and "random#1" in table
    assert snapshot(folder) == before  # the writer's files are left to the writer


def test_a_results_folder_has_one_writer_in_the_api_too(tmp_path: Path) -> None:
    config = RunConfig(TINY, ("random",) * 3, episodes=1, seed=3).to_dict()
    first = ResultsFolder(tmp_path / "r", config)
    with pytest.raises(results.FolderBusy, match=f"pid {os.getpid()}"):
        ResultsFolder(tmp_path / "r", config)
    first.close()
    with pytest.raises(results.ResultsError, match="another configuration"):  # a refusal releases the lock
        ResultsFolder(tmp_path / "r", {**config, "seed": 4})
    ResultsFolder(tmp_path / "r", config).close()


# --- OS errors: one line, status 1, the resume is exact -------------------------------------------

def test_a_full_disk_stops_the_run_in_one_line_and_the_resume_is_exact(tmp_path: Path, clean: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """RLIMIT_FSIZE in the child: a write past the limit fails with EFBIG (Python ignores SIGXFSZ,
    so it is an OSError, not a signal)."""
    out = tmp_path / "r"
    limit = (clean / "log.jsonl").stat().st_size // 2

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = run_child(run_args(out), preexec_fn=small_files)
    assert result.returncode == 1, result.stderr
    line = one_line(result.stderr)
    assert f"{str(out / 'log.jsonl')!r}: File too large (a file reached the size limit" in line
    assert (out / "log.jsonl").stat().st_size <= limit
    status, _, err = cli(capsys, run_args(out))
    assert status == 0, err
    assert content(out) == content(clean)


def _failing_writes(budget: int, code: int) -> Callable[[int, bytes], None]:
    """``results._write_all`` on a disk that fails with ``code`` after ``budget`` bytes (the write
    that crosses it is partial, as a real one is)."""
    real = results._write_all
    left = [budget]

    def write_all(fd: int, data: bytes) -> None:
        if len(data) <= left[0]:
            left[0] -= len(data)
            return real(fd, data)
        real(fd, data[:left[0]])
        left[0] = 0
        raise OSError(code, os.strerror(code))

    return write_all


@pytest.mark.parametrize(("code", "said"), [
    (errno.ENOSPC, "No space left on device (the disk is full)"),
    (errno.EDQUOT, "Disk quota exceeded (the disk quota is used up)"),
    (errno.EROFS, "Read-only file system"),
    (errno.EIO, "Input/output error"),
], ids=["ENOSPC", "EDQUOT", "EROFS", "EIO"])
def test_a_failed_write_is_one_line_and_the_resume_is_exact(code: int, said: str, tmp_path: Path, clean: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "r"
    with monkeypatch.context() as patch:
        patch.setattr(results, "_write_all", _failing_writes((clean / "log.jsonl").stat().st_size // 3, code))
        status, _, err = cli(capsys, run_args(out))
    assert status == 1
    line = one_line(err)
    assert re.search(rf"'{re.escape(str(out))}/(log|episodes)\.jsonl': {re.escape(said)}; ", line), line
    assert "run the command again to resume" in line
    status, _, err = cli(capsys, run_args(out))
    assert status == 0, err
    assert content(out) == content(clean)


def test_a_full_disk_while_creating_a_folder_leaves_it_usable(tmp_path: Path, clean: Path,
                                                              capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """run.json cannot be written: one line naming it; no temporary file stays behind, so the same
    command starts the run once there is room."""
    out = tmp_path / "r"

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", full)
        status, _, err = cli(capsys, run_args(out))
    assert status == 1
    assert f"{str(out / 'run.json')!r}: No space left on device" in one_line(err)
    assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]
    status, _, err = cli(capsys, run_args(out))
    assert status == 0, err
    assert content(out) == content(clean)


def _probe(prefix: tuple[str, ...], folder: Path) -> bool:
    """Whether a child runs under ``prefix`` and cannot create a file in ``folder``."""
    probe = subprocess.run([*prefix, "sh", "-c", 'if (: > "$0/probe") 2>/dev/null; then echo writable; '
                            'else echo read-only; fi', str(folder)], capture_output=True, text=True)
    (folder / "probe").unlink(missing_ok=True)
    return probe.stdout == "read-only\n"


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Callable[[Path], tuple[tuple[str, ...], str]]]:
    """``read_only(folder)``: the command prefix under which ``folder`` is read-only for a child, and
    the cause its line names. ``chmod -R a-w``; as root (whom modes do not stop) the child also
    loses the capability to override them (``setpriv``), else a read-only bind mount of its own
    (``unshare``). The modes are restored afterwards."""
    made: list[Path] = []

    def make(folder: Path) -> tuple[tuple[str, ...], str]:
        made.append(folder)
        subprocess.run(["chmod", "-R", "a-w", str(folder)], check=True)
        ways: list[tuple[tuple[str, ...], str]] = [((), "Permission denied")]
        if os.geteuid() == 0:
            ways = [(("setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"), "Permission denied"),
                    (("unshare", "--mount", "--", "sh", "-c",
                      'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"', str(folder)),
                     "Read-only file system")]
        for prefix, cause in ways:
            if (not prefix or shutil.which(prefix[0])) and _probe(prefix, folder):
                return prefix, cause
        pytest.skip("no way to make a folder read-only for a child here (root, without setpriv or unshare)")

    yield make
    for folder in made:
        subprocess.run(["chmod", "-R", "u+w", str(folder)], check=True)


def test_a_read_only_folder_is_one_line_and_resumes_once_writable(
        tmp_path: Path, clean: Path, read_only: Callable[[Path], tuple[tuple[str, ...], str]],
        capsys: pytest.CaptureFixture[str]) -> None:
    """A run stopped after 25 episodes, its folder made read-only: resuming it is one line naming
    the path and the cause, status 1; the leaderboard still prints; writable again, the same command
    finishes it as an uninterrupted run."""
    out = tmp_path / "r"
    shutil.copytree(clean, out)
    cut(out, 25)
    prefix, cause = read_only(out)
    result = run_child(run_args(out), prefix)
    assert result.returncode == 1, result.stderr
    line = one_line(result.stderr)
    assert re.search(rf"'{re.escape(str(out))}/[^']+': {cause}; ", line), line
    board = run_child(["leaderboard", str(out)], prefix)
    assert board.returncode == 0 and board.stderr == "" and "random#1" in board.stdout, board.stderr
    subprocess.run(["chmod", "-R", "u+w", str(out)], check=True)
    status, said, err = cli(capsys, run_args(out))
    assert status == 0 and f"{EPISODES - 25} episodes played, 25 already there" in said, err
    assert content(out) == content(clean)


# --- a corrupt episodes.jsonl line ----------------------------------------------------------------

BAD_LINES = [b"[1,2]", b'"an episode"', b"3", b"null", b'{"episode": "0"}', b'{"episode": true}', b"{}",
             b'{"episode": [1]}', b'{"episode": 1.0}']


@pytest.mark.parametrize("command", ["leaderboard", "run"])
@pytest.mark.parametrize("bad", BAD_LINES, ids=[line.decode() for line in BAD_LINES])
def test_a_line_that_is_no_episode_entry_is_one_line_naming_file_and_line(
        bad: bytes, command: str, tmp_path: Path, clean: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "r"
    shutil.copytree(clean, folder)
    lines = (folder / "episodes.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "episodes.jsonl").write_bytes(b"".join([lines[0], bad + b"\n", *lines[1:]]))
    before = snapshot(folder)
    status, _, err = cli(capsys, ["leaderboard", str(folder)] if command == "leaderboard" else run_args(folder))
    assert status == 2
    line = one_line(err)
    assert f"{folder / 'episodes.jsonl'}: line 2 is {bad.decode()!r}, not an episode entry" in line
    assert snapshot(folder) == before  # nothing repaired away


# --- arena rescore without logs, a blank --out ----------------------------------------------------

@pytest.mark.parametrize("files", [{}, {"notes.txt": "a note"}, {"guessing_game/broken.json": "{"}],
                         ids=["empty folder", "no .json file", "no importable .json file"])
def test_rescore_of_a_folder_without_logs_is_an_error(files: dict[str, str], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    status, out, err = cli(capsys, ["rescore", str(tmp_path)])
    assert status == 2 and out == ""
    lines = err.strip().splitlines()
    assert "Traceback" not in err and len(lines) == 1 + sum(name.endswith(".json") for name in files)
    assert lines[-1].startswith(f"arena rescore: error: no γ-Bench log in {str(tmp_path)!r} (")


BLANK_OUT = {
    "run": ["run", TINY, "--players", "random*3", "--episodes", "1", "--out", "{value}"],
    "replay": ["replay", "{clean}", "--episode", "0", "--out", "{value}"],
    "eval": ["eval", "random", "--out", "{value}"],
    "eval --compare": ["eval", "--compare", "{value}", "{clean}"],
    "run gamma": ["run", "gamma", "--players", "random", "--out", "{value}"],
}


@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
@pytest.mark.parametrize("command", list(BLANK_OUT))
def test_a_blank_path_option_is_refused_in_one_line(command: str, value: str, clean: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # nothing may be written here (the default folders are relative)
    status, _, err = cli(capsys, [a.format(value=value, clean=clean) for a in BLANK_OUT[command]])
    assert status == 2
    line = one_line(err)
    option = "--compare" if command == "eval --compare" else "--out"
    assert f"argument {option}: expects a path, got {value!r}" in line
    assert list(tmp_path.iterdir()) == []
