"""The results folder: configuration check, crash states, group commit, resume after an interruption and kill -9."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from arena_envs.runner import RunConfig, run
from arena_envs.runner.results import HELD_BYTES, ResultsError, ResultsFolder, read_episodes, read_steps
from tests.process_helpers import arena_command, kill_during_run, run_in_repo
from tests.results_helpers import folder_content as canonical

TINY = "tests._tiny_game:env"
TINY_CONFIG = RunConfig(TINY, ("random", "random", "random"), episodes=6, seed=4)


def episode_ids(folder: Path) -> list[int]:
    return [json.loads(line)["episode"] for line in (folder / "episodes.jsonl").read_text().splitlines()]


def log_lines(folder: Path) -> list[str]:
    return (folder / "log.jsonl").read_text().splitlines(keepends=True)


def test_other_configuration_is_refused_same_resumes(tmp_path):
    out = tmp_path / "r"
    run(TINY_CONFIG, out)
    stored = json.loads((out / "run.json").read_text())
    assert stored["format"] == 2 and stored["config"] == {"env": TINY, "env_kwargs": {}, "players": ["random"] * 3,
                                                          "seed": 4, "episodes": 6}
    (first,) = stored["sessions"]  # the provenance of the session that played it
    assert set(first) == {"started", "package", "commit", "prompt_sha256", "players"}
    assert list(first["players"]) == ["random#1", "random#2", "random#3"]
    for other in (RunConfig(TINY, ("random",) * 3, episodes=6, seed=5),
                  RunConfig(TINY, ("random",) * 3, episodes=7, seed=4),
                  RunConfig(TINY, ("random", "random", "human"), episodes=6, seed=4),
                  RunConfig(TINY, ("random",) * 3, episodes=6, seed=4, env_kwargs={"rounds": 2})):
        with pytest.raises(ResultsError, match="another configuration"):
            run(other, out)
    before = canonical(out)
    summary = run(TINY_CONFIG, out)
    assert (summary.played, summary.resumed) == (0, 6)
    assert canonical(out) == before
    resumed = json.loads((out / "run.json").read_text())  # the resuming session joins the first, the refused did not
    assert resumed["config"] == stored["config"] and resumed["sessions"][0] == first and len(resumed["sessions"]) == 2


def test_non_empty_folder_without_run_json_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ResultsError, match="not empty"):
        run(TINY_CONFIG, tmp_path)


def test_crash_states_are_repaired_on_resume(tmp_path):
    """Rebuild what a kill -9 or a power loss can leave, from a finished run, then resume it."""
    full = tmp_path / "full"
    run(TINY_CONFIG, full)
    lines = (full / "episodes.jsonl").read_text().splitlines(keepends=True)
    blocks = canonical(full)["log"]
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    shutil.copy(full / "run.json", crashed / "run.json")
    # episodes 0-2 committed; 3 appended to the log but its line torn (a kill during the group's
    # write); 4 half appended; then garbage (unsynced blocks after a power loss)
    (crashed / "episodes.jsonl").write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])
    (crashed / "log.jsonl").write_text("".join(blocks[k] for k in range(4)) + blocks[4][: len(blocks[4]) // 2]
                                       + "\0" * 100)

    folder = ResultsFolder(crashed, TINY_CONFIG.to_dict())
    folder.close()
    assert folder.finished == {0, 1, 2}
    assert (crashed / "episodes.jsonl").read_text() == "".join(lines[:3])  # torn tail cut off
    assert (crashed / "log.jsonl").read_text() == "".join(blocks[k] for k in range(3))  # uncommitted tail cut

    summary = run(TINY_CONFIG, crashed)
    assert (summary.played, summary.resumed) == (3, 3)
    assert canonical(crashed) == canonical(full)
    assert (crashed / "log.jsonl").read_bytes() == (full / "log.jsonl").read_bytes()  # one worker: same order


def test_a_log_that_lacks_a_committed_episode_is_corrupt(tmp_path):
    full = tmp_path / "full"
    run(TINY_CONFIG, full)
    blocks = canonical(full)["log"]
    lines = (full / "episodes.jsonl").read_text().splitlines(keepends=True)
    # all six committed but 5's block lost; 0-4 committed and 5's uncommitted block before 2, 3, 4
    for committed, order, missing in ((6, [0, 1, 2, 3, 4], "[5]"), (5, [0, 1, 5, 2, 3, 4], "[2, 3, 4]")):
        broken = tmp_path / f"broken{committed}"
        broken.mkdir()
        shutil.copy(full / "run.json", broken / "run.json")
        (broken / "episodes.jsonl").write_text("".join(lines[:committed]))
        (broken / "log.jsonl").write_text("".join(blocks[k] for k in order))
        with pytest.raises(ResultsError, match=re.escape(f"committed episodes {missing} have no complete block")):
            ResultsFolder(broken, TINY_CONFIG.to_dict())


def test_group_commit_holds_lines_until_the_log_is_synced(tmp_path):
    """Within a group the blocks and the lines are held back; a sync writes the blocks, then the lines.
    Held blocks past ``HELD_BYTES`` go to the log early, their lines still held."""
    folder = ResultsFolder(tmp_path / "r", TINY_CONFIG.to_dict(), sync_interval=3600)
    block = b'{"episode": 0, "step": 0, "agent": "a"}\n{"episode": 0, "record": null}\n'
    folder.commit(b'{"episode": 0}\n', block)
    folder.commit(b'{"episode": 1}\n', block.replace(b": 0,", b": 1,"))
    assert (tmp_path / "r" / "log.jsonl").read_bytes() == b""
    assert (tmp_path / "r" / "episodes.jsonl").read_bytes() == b""
    big = b'{"episode": 2, "record": "' + b"x" * HELD_BYTES + b'"}\n'
    folder.commit(b'{"episode": 2}\n', big)
    assert (tmp_path / "r" / "log.jsonl").read_bytes() == block + block.replace(b": 0,", b": 1,") + big
    assert (tmp_path / "r" / "episodes.jsonl").read_bytes() == b""
    folder.sync()
    assert episode_ids(tmp_path / "r") == [0, 1, 2]
    assert read_steps(tmp_path / "r", 1) == [{"episode": 1, "step": 1, "agent": "a"}]
    folder.close()
    every = ResultsFolder(tmp_path / "r0", TINY_CONFIG.to_dict(), sync_interval=0)
    every.commit(b'{"episode": 0}\n', block)
    assert episode_ids(tmp_path / "r0") == [0]  # 0: each episode is committed on its own
    every.close()
    with pytest.raises(ValueError, match="sync_interval must be >= 0 seconds, got -1"):
        ResultsFolder(tmp_path / "r1", TINY_CONFIG.to_dict(), sync_interval=-1)


def test_a_folder_of_the_old_format_is_a_clear_error(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"format": 1, "config": TINY_CONFIG.to_dict()}))
    with pytest.raises(ResultsError, match="results format 1 cannot be read or resumed by this version"):
        run(TINY_CONFIG, tmp_path)


def test_corrupt_middle_line_and_duplicates_are_errors(tmp_path):
    path = tmp_path / "episodes.jsonl"
    path.write_text('{"episode": 0}\nnot json\n{"episode": 2}\n')
    with pytest.raises(ResultsError, match="line 2"):
        read_episodes(path)
    path.write_text('{"episode": 0}\n{"episode": 0}\n')
    with pytest.raises(ResultsError, match="twice"):
        read_episodes(path)
    path.write_text('{"episode": 0}\n{"episode": 1}\n{"epis')
    assert [e["episode"] for e in read_episodes(path)] == [0, 1]
    assert path.read_text().endswith('{"epis')  # reading without repair leaves the file alone


def check_complete(out: Path, total: int) -> None:
    ids = episode_ids(out)
    assert len(ids) == total and sorted(ids) == list(range(total))  # none lost, none twice
    records = [json.loads(line)["episode"] for line in log_lines(out) if '"record": ' in line[:30]]
    assert records == ids  # one block per episode, in commit order


def resume_matches_clean(command: list[str], out: Path, config: RunConfig, clean: Path,
                         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``command`` again, which resumes ``out``: it ends with status 0, every episode of
    ``config`` is there once, and ``out`` holds what an uninterrupted run of ``config`` writes
    (into ``clean``). Returns the resumed run."""
    done = run_in_repo(command, timeout)
    assert done.returncode == 0, done.stderr
    check_complete(out, config.episodes)
    run(config, clean, plots=False)
    assert canonical(out) == canonical(clean)
    return done


def test_kill_9_mid_run_then_resume_auction(tmp_path):
    total = 120  # group commits come every 0.2 s (about 30 auction episodes)
    out = tmp_path / "killed"
    command = arena_command("auction_v0", "rule,rule,random", total, out)
    killed_at = kill_during_run(command, out, at_least=3, total=total)
    config = RunConfig("auction_v0", ("rule", "rule", "random"), episodes=total, seed=9)
    done = resume_matches_clean(command, out, config, tmp_path / "clean")
    assert f"({total - killed_at} episodes played, {killed_at} already there, {total}/{total} finished)" in done.stdout


def test_kill_9_repeatedly_tiny_game(tmp_path):
    """Several kills at different points of the same run; the tiny game plays an episode in about a
    millisecond, so a group commit holds a few hundred and a kill lands while blocks are appended."""
    total = 3000
    out = tmp_path / "killed"
    command = arena_command(TINY, "random,random,random", total, out)
    reached = 0
    for target in (5, 800, 1600):
        reached = kill_during_run(command, out, at_least=max(target, reached + 1), total=total)
    resume_matches_clean(command, out, RunConfig(TINY, ("random",) * 3, episodes=total, seed=9), tmp_path / "clean")
