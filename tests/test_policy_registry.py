"""Policy kinds come from entry points: a package the project has never heard of adds a policy."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PLUGIN = '''
from arena_envs.core import Policy

class Always(Policy):
    def __init__(self, value: int = 1):
        self.value = value

    def act(self, observation, info):
        return self.value
'''


def _install_plugin(root: Path) -> None:
    """A minimal installed distribution: a module plus its dist-info with one entry point."""
    (root / "arena_demo_plugin.py").write_text(PLUGIN)
    info = root / "arena_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: arena-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[arena_envs.policies]\nel_farol_v0/always = arena_demo_plugin:Always\n")


def test_a_third_party_entry_point_is_a_policy_the_runner_can_seat(tmp_path):
    _install_plugin(tmp_path)
    code = (
        "from arena_envs.runner.policy_specs import make_policy\n"
        "from arena_envs.runner import policy_registry as r\n"
        "p = make_policy('always:value=0', 'el_farol_v0')\n"
        "print(type(p).__module__, p.value, 'always' in r.policy_names('el_farol_v0'),"
        " 'always' in r.policy_names('auction_v0'))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["arena_demo_plugin", "0", "True", "False"]


def test_the_projects_own_policies_are_declared_as_entry_points():
    from arena_envs.runner import policy_registry as registry

    assert registry.lookup("auction_v0", "rule") == "baselines.auction.rule:RuleBidder"
    assert registry.lookup("el_farol_v0", "random") == "baselines.random_policy:RandomPolicy"
    assert registry.PREFIXES["vllm"] == "llm_policies.specs:policy_from_spec"
    assert registry.COMMANDS["serve"] == "llm_policies.serve:main"
