"""A table of bad inputs walked through the real ``arena`` command (in-process): each one gives exactly
one line on stderr that names the bad value, exit status 2 and no traceback, and a results folder it
points at is left byte for byte as it was."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arena_envs.cli import main
from arena_envs.runner import policy_registry as registry

RULES = "rule,rule,rule"  # auction_v0 has three seats

#: (arguments, texts the one error line must hold); {ok}: a finished results folder, {corrupt}: one
#: whose run.json is not JSON, {file}: a plain file, {tmp}: an empty scratch folder.
TABLE: list[tuple[list[str], list[str]]] = [
    (["run", "auction_v0", "--players", "rule:K=abc,rule,rule", "--episodes", "1", "--out", "{tmp}/a"],
     ["K='abc'", "a number"]),
    (["run", "auction_v0", "--players", "rule:Q=1,rule,rule", "--episodes", "1", "--out", "{tmp}/a"],
     ["Q=1", "accepted: K=4"]),
    (["run", "auction_v0", "--players", RULES, "--episodes", "1", "--env-arg", "budgets=abc", "--out", "{tmp}/a"],
     ["budgets='abc'", "a number"]),
    (["run", "auction_v0", "--players", RULES, "--episodes", "1", "--env-arg", "colour=1", "--out", "{tmp}/a"],
     ["colour=1", "accepted: ", "budgets="]),
    (["run", "el_farol_v0", "--players", "random", "--episodes", "1", "--env-arg", "colour=1", "--out", "{tmp}/a"],
     ["colour=1", "accepted: ", "n_rounds=20"]),  # a γ-Bench class passes **kwargs on to its base: read both
    (["run", "auction_v0", "--players", RULES, "--episodes", "1", "--env-arg", "budgets", "--out", "{tmp}/a"],
     ["'budgets'", "key=value"]),
    (["run", "auction_v0", "--players", RULES, "--episodes", "1", "--out", "{file}/sub"], ["{file}/sub"]),
    (["run", "auction_v0", "--players", RULES, "--episodes", "1", "--out", "{file}"], ["{file}", "is a file"]),
    (["run", "auction_v0", "--players", "hf:/nonexistent,rule,rule", "--episodes", "1", "--out", "{tmp}/a"],
     ["'/nonexistent'", "Hugging Face model id"]),
    (["run", "auction_v0", "--players", "vllm-local:/nonexistent,rule,rule", "--episodes", "1", "--out", "{tmp}/a"],
     ["'/nonexistent'", "Hugging Face model id"]),  # checked before vLLM is imported
    (["run", "auction_v0", "--players", "hf:/tmp?max_batch=x,rule,rule", "--episodes", "1", "--out", "{tmp}/a"],
     ["max_batch", "'x'"]),
    (["run", "auction_v0", "--players", RULES, "--episodes", "1", "--out", "{corrupt}"], ["{corrupt}/run.json"]),
    (["run", "auction_v0", "--players", RULES, "--episodes", "1", "--seed", "5", "--out", "{ok}"],
     ["seed: folder has 0, this run has 5"]),
    (["run", "nosuch_v0", "--players", RULES, "--episodes", "1", "--out", "{tmp}/a"], ["'nosuch_v0'", "auction_v0"]),
    (["run", "auction_v0", "--players", RULES, "--episodes", "0", "--out", "{tmp}/a"], ["got 0"]),
    (["run", "auction_v0", "--players", RULES, "--episodes", "x"], ["'x'"]),
    (["run", "auction_v0", "--players", "rule,rule", "--episodes", "1", "--out", "{tmp}/a"], ["3 seats", "lists 2"]),
    (["leaderboard", "{tmp}/missing"], ["{tmp}/missing"]),
    (["leaderboard", "{corrupt}"], ["{corrupt}/run.json"]),
    (["replay", "{corrupt}", "--episode", "0"], ["{corrupt}/run.json"]),
    (["replay", "{ok}", "--episode", "7"], ["episode 7"]),
    (["replay", "{ok}", "--episode", "abc"], ["'abc'"]),
    (["rescore", "{tmp}/missing"], ["{tmp}/missing"]),
    (["rescore", "{tmp}", "--colour", "red"], ["unrecognized arguments: --colour red"]),
    (["eval", "random:x=1", "--out", "{tmp}/e"], ["x=1"]),
    (["eval", "random", "--out", "{file}/sub"], ["{file}/sub"]),
    (["eval", "--compare", "{tmp}/missing", "{ok}"], ["{tmp}/missing"]),
    (["run", "gamma", "--players", "random", "--episodes", "1"], ["--episodes 1"]),
    (["run", "gamma", "--players", "random:x=1", "--out", "{tmp}/g"], ["x=1"]),
    (["policies", "nosuch_v0"], ["'nosuch_v0'"]),
    (["nosuchcmd"], ["'nosuchcmd'"]),
]
if "serve" in registry.COMMANDS:  # port 1: no server is ever recorded there
    TABLE += [(["serve", "{tmp}/model", "--colour", "red"], ["unrecognized arguments: --colour red"]),
              (["serve", "{tmp}/model", "--port", "abc"], ["--port", "'abc'"]),
              (["serve", "--stop", "--port", "1"], ["no server is recorded at 127.0.0.1:1"])]
if "train" in registry.COMMANDS:
    TABLE += [(["train", "nosuch_v0", "--out", "{tmp}/t"], ["'nosuch_v0'"]),
              (["train", "auction_v0", "--opponents", "rule*2", "--out", "{file}/sub"], ["{file}/sub"]),
              (["train", "auction_v0", "--opponents", "rule*2", "--steps", "many", "--out", "{tmp}/t"], ["'many'"])]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("bad_inputs")
    ok = base / "ok"
    assert main(["run", "auction_v0", "--players", "rule*3", "--episodes", "1", "--out", str(ok), "--no-plots"]) == 0
    corrupt = base / "corrupt"
    corrupt.mkdir()
    (corrupt / "run.json").write_text("{not json", encoding="utf-8")
    (base / "afile").write_text("a file, not a folder\n", encoding="utf-8")
    return {"ok": str(ok), "corrupt": str(corrupt), "file": str(base / "afile"), "tmp": str(base / "scratch")}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("argv", "expected"), TABLE, ids=[" ".join(argv)[:60] for argv, _ in TABLE])
def test_bad_input_gives_one_line_and_status_2(argv: list[str], expected: list[str], folders: dict[str, str],
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_DEBUG", raising=False)
    kept = [Path(folders["ok"]), Path(folders["corrupt"])]
    before = [snapshot(folder) for folder in kept]
    capsys.readouterr()
    status: int | str | None
    try:
        status = main([arg.format(**folders) for arg in argv])
    except SystemExit as exit_:  # argparse errors leave through SystemExit
        status = exit_.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for text in expected:
        assert text.format(**folders) in lines[0]
    assert [snapshot(folder) for folder in kept] == before  # nothing already written changed


def test_message_of_a_bad_spec_names_what_is_accepted_for_every_typed_option() -> None:
    """The option check reads the policy class's defaults: a flag option wants true or false."""
    from arena_envs.runner.policy_specs import SpecError, check_keywords

    def policy(level: int = 2, greedy: bool = False, name: str = "x") -> None: ...

    with pytest.raises(SpecError, match=r"greedy='maybe' must be true or false \(default False\)"):
        check_keywords(policy, {"greedy": "maybe"}, "spec")
    with pytest.raises(SpecError, match=r"unknown argument depth=3; accepted: level=2, greedy=False, name='x'"):
        check_keywords(policy, {"depth": 3}, "spec")
    check_keywords(policy, {"level": 3, "greedy": True, "name": "y"}, "spec")  # good values pass


@pytest.mark.skipif(sys.platform != "linux", reason="/proc is Linux's")
def test_out_under_proc_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["run", "auction_v0", "--players", RULES, "--episodes", "1", "--out", "/proc/nope"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1 and "'/proc/nope'" in err, err
