"""Each environment's spec (``arena_envs.registration``) agrees with its class and entry module."""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
import tomllib

from arena_envs.registration import ENVIRONMENTS, EnvSpec, env_spec

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_each_spec_matches_its_class_and_entry_module(name):
    spec = ENVIRONMENTS[name]
    assert spec.name == name
    cls = spec.game_class()
    assert cls.metadata["name"] == name
    assert cls.metadata["is_parallelizable"] == spec.parallel
    module = spec.entry_module()
    assert module.__name__ == spec.module
    assert callable(module.env) and callable(module.raw_env)
    assert hasattr(module, "parallel_env") == spec.parallel
    assert type(module.raw_env()) is cls


def test_extras_are_pip_extras_and_ratings_are_known():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for spec in ENVIRONMENTS.values():
        assert set(spec.extras) <= set(extras), spec.name
        assert spec.leaderboard_metrics is None or spec.leaderboard_metrics
    with pytest.raises(ValueError, match=r"^el_farol_v0 rating must be one of trueskill, wis, got 'elo'$"):
        EnvSpec("el_farol_v0", "arena_envs.gamma.el_farol:ElFarolEnv", True, rating="elo")


def test_an_unknown_name_is_one_line():
    with pytest.raises(KeyError, match="unknown environment 'tetris_v0'; known: auction_v0, "):
        env_spec("tetris_v0")


def test_reading_the_specs_imports_no_game():
    code = ("import sys\nfrom arena_envs.registration import ENVIRONMENTS\n"
            "[(s.game, s.variants, s.rating) for s in ENVIRONMENTS.values()]\n"
            "games = [m for m in sys.modules if m.startswith('arena_envs.') and m.count('.') > 1\n"
            "         and m.split('.')[1] not in ('core',)]\n"
            "assert not games, games\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def specs_table() -> str:
    """The Markdown table of every spec, as docs/conformance.md shows it."""
    def code(items: Iterable[str]) -> str:
        return ", ".join(f"`{item}`" for item in items) or "none"
    rows = ["| environment | class | parallel | rating | leaderboard columns | extras | variants |",
            "|---|---|---|---|---|---|---|"]
    for name, spec in ENVIRONMENTS.items():
        metrics = "all" if spec.leaderboard_metrics is None else code(["score", *spec.leaderboard_metrics])
        rows.append(f"| `{name}` | `{spec.game.rpartition(':')[2]}` | {'yes' if spec.parallel else 'no'} "
                    f"| {spec.rating or 'mean score'} | {metrics} | {code(spec.extras)} | {code(spec.variants)} |")
    return "\n".join(rows)


def test_the_docs_table_is_the_specs():
    page = (ROOT / "docs" / "conformance.md").read_text()
    start = page.index("-->\n", page.index("<!-- the specs' table")) + 4
    end = page.index("\n<!-- end of the specs' table -->")
    assert page[start:end] == specs_table(), "regenerate it with tests/test_registration.py's specs_table()"
