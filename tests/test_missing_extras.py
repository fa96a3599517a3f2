"""Without its extra, every feature that needs one is refused in one line naming the pip command.

The real ``arena`` command runs in a child process whose import system hides every package the extras
install (a base install: ``pip install -e .``); each command must exit with status 2 and one stderr
line ``arena: error: FEATURE needs the EXTRA extra (MODULE is not installed): pip install
'arena-envs[EXTRA]'``, with no traceback and no results folder. The modules of the Python API fail the
same way, with :class:`~arena_envs.core.extras.MissingExtra`, and the packages themselves still import.
All cases run in one child process, so the whole check takes about a second.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from arena_envs.cli import main
from tests.process_helpers import run_in_repo

#: Top-level modules of the extras llm, vllm, rl, ray, render and agents: what a base install lacks.
HIDDEN = ("httpx", "starlette", "uvicorn", "openai", "transformers", "torch", "gguf", "accelerate", "safetensors",
          "xgrammar", "vllm", "stable_baselines3", "sb3_contrib", "tensorboard", "ray", "imageio", "imageio_ffmpeg")

#: Run as ``python -c BOOTSTRAP JSON``: hides HIDDEN, runs each command line through ``arena``'s
#: ``main`` and imports each module, then prints every outcome as JSON.
BOOTSTRAP = r'''
import contextlib, importlib, io, json, sys, traceback
from importlib.abc import MetaPathFinder


class AbsentPackages(MetaPathFinder):
    """A stand-in for packages that are not installed. First on sys.meta_path, it answers for the
    hidden top-level packages and their submodules as the import system does for a package it cannot
    find: ModuleNotFoundError naming the module. Every other module is left to the real finders."""

    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


hidden, commands, modules = json.loads(sys.argv[1])
assert not set(hidden) & set(sys.modules), "a hidden package was imported before the finder was installed"
sys.meta_path.insert(0, AbsentPackages(hidden))
from arena_envs.cli import main

outcomes = []
for argv in commands:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as stop:
            status = stop.code
        except BaseException:
            status = None
            traceback.print_exc()
    outcomes.append([status, err.getvalue()])
for module in modules:
    try:
        importlib.import_module(module)
        outcomes.append(["imported", ""])
    except BaseException as error:
        outcomes.append([type(error).__name__, str(error)])
print(json.dumps(outcomes))
'''

VLLM = "vllm:m@http://127.0.0.1:9/v1"


def commands(out: Path, tank: Path) -> list[tuple[list[str], str, str]]:
    """(arguments of ``arena``, the feature its error names, the extra) for each extra's features."""
    def run(players: str, *more: str, env: str = "auction_v0", name: str = "run") -> list[str]:
        return ["run", env, "--players", players, "--episodes", "1", "--out", str(out / name), *more]

    return [
        (run(f"{VLLM},rule,rule"), "the vllm: player", "llm"),
        (run("hf:org/model,rule,rule"), "the hf: player", "llm"),
        (["eval", VLLM, "--out", str(out / "eval")], "the vllm: player", "llm"),
        (["serve", str(out / "model")], "arena serve", "llm"),
        (run("agent:http://127.0.0.1:9,rule,rule"), "the agent: player", "agents"),
        (["serve-agent", "auction_v0", "rule"], "arena serve-agent", "agents"),
        (run("vllm-local:org/model,rule,rule"), "the vllm-local: player", "vllm"),
        (run("sb3:/nonexistent.zip,rule,rule"), "the sb3: player", "rl"),
        (["train", "auction_v0", "--opponents", "rule*2", "--steps", "8", "--out", str(out / "train")],
         "arena train", "rl"),
        (run("rule,rule,rule", "--ray"), "arena run --ray", "ray"),
        (run("rllib:/nonexistent,rule,rule"), "the rllib: player", "ray"),
        (["train-rllib", "auction_v0", "--out", str(out / "rllib")], "arena train-rllib", "ray"),
        (run("rule", "--record", str(out / "videos"), env="tank_battle_v0"), "arena run --record", "render"),
        (["replay", str(tank), "--episode", "0", "--out", str(out / "episode.gif")], "a replay video", "render"),
    ]


#: Python API: module -> the extra its MissingExtra names, or None: it imports without any extra.
MODULES: dict[str, str | None] = {
    "llm_policies": None, "llm_policies.specs": None, "baselines.rl.envs": None,
    "llm_policies.backends.openai_http": "llm", "llm_policies.serve": "llm", "baselines.rl.train": "rl",
    "baselines.rl.sb3_policy": "rl", "baselines.rllib.train": "ray", "baselines.rllib.policy": "ray",
    "agent_service.protocol": None, "agent_service.openapi": None, "agent_service.serve_agent": None,
    "agent_service.transport": "agents", "agent_service.specs": "agents", "agent_service.server": "agents",
}


@pytest.fixture(scope="module")
def tank_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tank battle episode (a game that draws), for the replay."""
    folder = tmp_path_factory.mktemp("tank") / "results"
    args = ["run", "tank_battle_v0", "--players", "rule", "--episodes", "1", "--out", str(folder), "--no-progress",
            "--no-plots"]
    assert main(args) == 0
    return folder


def test_each_feature_without_its_extra_is_one_line_naming_the_pip_command(tmp_path: Path,
                                                                           tank_results: Path) -> None:
    out = tmp_path / "out"
    cases = commands(out, tank_results)
    done = run_in_repo([sys.executable, "-c", BOOTSTRAP,
                        json.dumps([HIDDEN, [argv for argv, _, _ in cases], list(MODULES)])], timeout=120)
    assert done.returncode == 0, done.stderr
    outcomes = json.loads(done.stdout.splitlines()[-1])
    assert len(outcomes) == len(cases) + len(MODULES)
    for (argv, feature, extra), (status, stderr) in zip(cases, outcomes):
        assert "Traceback" not in stderr and status == 2, (argv, status, stderr)
        [line] = stderr.splitlines()
        assert line.startswith(f"arena: error: {feature} needs the {extra} extra ("), (argv, line)
        assert line.endswith(f" is not installed): pip install 'arena-envs[{extra}]'"), (argv, line)
        assert line[len(f"arena: error: {feature} needs the {extra} extra ("):].split()[0] in HIDDEN, line
    for (module, needed), (kind, message) in zip(MODULES.items(), outcomes[len(cases):]):
        if needed is None:
            assert kind == "imported", (module, kind, message)
        else:
            assert kind == "MissingExtra", (module, kind, message)
            assert message.startswith(f"{module} needs the {needed} extra (") and message.endswith(
                f"): pip install 'arena-envs[{needed}]'"), message
    assert not out.exists()  # every command stopped before writing anything
    assert not (tank_results / "replays").exists()


def test_arena_serve_with_no_vllm_venv_needs_the_vllm_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("llm_policies.serve")  # the llm extra is installed: the check is vLLM's
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path))  # no venv of scripts/setup_llm.sh: this python serves
    monkeypatch.delenv("ARENA_VLLM_VENV", raising=False)
    monkeypatch.setitem(sys.modules, "vllm", None)  # and vLLM is not importable here
    assert main(["serve", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("arena: error: arena serve needs the vllm extra (vllm is not installed): "
                                       "pip install 'arena-envs[vllm]'\n")
