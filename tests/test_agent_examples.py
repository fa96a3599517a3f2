"""The example agents (examples/agents/): a standard-library Python agent and a Node one, each a real
HTTP server on 127.0.0.1, play a Who is Spy tournament against the rule players to its end with valid
answers only. The Node one runs where ``node`` is installed (scripts/install_test_stack.sh adds it)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena_envs.cli import main
from tests.process_helpers import REPO

EXAMPLES = REPO / "examples" / "agents"
RUNTIMES = {"python": [sys.executable, str(EXAMPLES / "wis_agent.py"), "0"],
            "node": ["node", str(EXAMPLES / "wis_agent.js"), "0"]}


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_the_example_agent_plays_a_who_is_spy_tournament_to_the_end(runtime: str, tmp_path: Path, capsys) -> None:
    if shutil.which(RUNTIMES[runtime][0]) is None:
        pytest.skip(f"{runtime} is not installed (scripts/install_test_stack.sh installs Debian's nodejs)")
    with subprocess.Popen(RUNTIMES[runtime], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as agent:
        try:
            assert agent.stdout is not None
            first = agent.stdout.readline()
            assert first.startswith("listening at http://127.0.0.1:"), (first, agent.stderr)
            spec = f"agent:{first.split()[-1]}?timeout=10"
            status = main(["run", "who_is_spy_v0", "--players", f"{spec},rule,rule,rule,rule,rule", "--episodes",
                           "6", "--seed", "4", "--concurrency", "2", "--out", str(tmp_path / "r"), "--no-progress",
                           "--no-plots"])
        finally:
            agent.terminate()
            _, err = agent.communicate(timeout=30)
    assert status == 0, capsys.readouterr().err
    assert err == ""  # the agent never failed a request
    entries = [json.loads(line) for line in (tmp_path / "r" / "episodes.jsonl").read_text().splitlines()]
    seats = [(e, seat) for e in entries for seat, label in e["seats"].items() if label == spec]
    assert len(entries) == 6 and len(seats) == 6
    assert sum(e["validity"][seat]["decisions"] for e, seat in seats) >= 12
    assert all(not any(e["invalid"][seat].values()) for e, seat in seats)
