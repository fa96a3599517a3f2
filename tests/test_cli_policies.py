"""``arena policies ENV``: every policy with its options and their defaults, read from the real classes
(named policies) and from the options the prefix factories declare (``vllm:``, ``hf:``, ``sb3:``...),
without importing torch or Ray."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena_envs.cli import main
from arena_envs.runner import policy_registry as registry
from arena_envs.runner.policy_specs import load_object, policy_options

REPO = Path(__file__).resolve().parents[1]


def listing(env: str, capsys: pytest.CaptureFixture[str]) -> dict[str, list[str]]:
    """``arena policies ENV`` in-process: name -> [target, options]."""
    capsys.readouterr()
    assert main(["policies", env]) == 0
    rows = {}
    for line in capsys.readouterr().out.splitlines():
        name, target, options = line.split(maxsplit=2)
        rows[name] = [target, options]
    return rows


def first_word(declared: str) -> str:
    return declared.split()[0]


def test_named_policies_show_the_defaults_of_their_classes(capsys: pytest.CaptureFixture[str]) -> None:
    rows = listing("auction_v0", capsys)
    assert set(rows) == set(registry.policy_names("auction_v0"))
    for name in ("rule", "random_valid"):
        target = registry.lookup("auction_v0", name)
        assert target is not None and rows[name][0] == target
        params = inspect.signature(load_object(target)).parameters.values()
        shown = [f"{p.name}={p.default!r}" for p in params if p.default is not p.empty]
        assert shown and rows[name][1] == ", ".join(shown)  # K=4 for the rule bidder, q=0.3 for random_valid
    assert rows["always_withdraw"][1] == "no options"
    assert "k=1" in listing("guess_two_thirds_v0", capsys)["level_k"][1]


def test_prefix_kinds_show_their_declared_options(capsys: pytest.CaptureFixture[str]) -> None:
    rows = listing("guess_two_thirds_v0", capsys)
    for prefix in registry.PREFIXES:
        assert rows[f"{prefix}:..."][0] == registry.PREFIXES[prefix]
    assert rows["vllm:..."][1].startswith("agent=generic, temperature=0.0")
    assert "timeout=120, retries=4" in rows["vllm:..."][1] and "device=cpu" in rows["hf:..."][1]
    assert "device=" not in rows["vllm:..."][1]  # each kind shows its own backend's options
    if "sb3" in registry.PREFIXES:
        assert rows["sb3:..."][1].startswith("deterministic=true")
    if "rllib" in registry.PREFIXES:
        assert rows["rllib:..."][1].startswith("deterministic=0")


def test_declared_llm_defaults_are_the_ones_a_spec_gets() -> None:
    """The listed defaults of ``vllm:`` are those of a policy built from a bare spec (no server needed)."""
    specs = pytest.importorskip("llm_policies.specs")
    declared = registry.prefix_options("vllm")
    assert declared is not None
    policy = specs.policy_from_spec("vllm:m@http://127.0.0.1:9/v1", "guess_two_thirds_v0")
    built = {"temperature": policy.temperature, "max_tokens": policy.max_tokens, "guided": policy.guided,
             "cot": policy.cot, "cot_max_tokens": policy.cot_max_tokens, "timeout": policy.backend.timeout,
             "retries": policy.backend.backoff.attempts}
    for key, value in built.items():
        assert float(first_word(declared[key])) == float(value), key
    from llm_policies.trading import AGENTS
    for agent, key in (("investor", "top_k"), ("tradeagent", "debate_rounds"), ("tradeagent", "risk_rounds"),
                       ("hedgefund", "functional_mode"), ("deepfund", "max_position_ratio")):
        assert first_word(declared[key]) == str(inspect.signature(AGENTS[agent]).parameters[key].default), key


def test_sb3_refuses_an_option_it_does_not_declare() -> None:
    sb3 = pytest.importorskip("baselines.rl.sb3_policy")
    with pytest.raises(ValueError, match="unknown argument 'colour'; accepted: deterministic"):
        sb3.policy_from_spec("sb3:/nowhere+colour=1", "auction_v0")


def test_listing_imports_neither_torch_nor_ray() -> None:
    code = ("import sys; from arena_envs.cli import main; main(['policies', 'auction_v0']); "
            "print('heavy:', sorted({'torch', 'ray', 'stable_baselines3'} & set(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "heavy: []"


def test_a_missing_extra_is_a_note_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.PREFIX_NEEDS, "sb3", registry.Needs("rl", ("no_such_module_of_the_rl_extra",)))
    monkeypatch.setitem(registry.PREFIXES, "sb3", "baselines.rl.sb3_policy:policy_from_spec")
    assert policy_options("auction_v0", "sb3:...") == (
        "deterministic=true (not installed: pip install 'arena-envs[rl]')")


def test_a_prefix_that_declares_no_options_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.PREFIXES, "tiny", "tests._tiny_game:env")
    assert policy_options("auction_v0", "tiny:...") == "options not declared (no arena_envs.policy_options entry)"


def test_unknown_environment_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policies", "nosuch_v0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1
    assert "unknown environment 'nosuch_v0'; known: " in captured.err and "auction_v0" in captured.err
