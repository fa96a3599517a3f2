"""The layers of ``arena_envs`` point one way (``docs/design.md``, "Layers").

Every module's imports are read with ``ast`` (none is executed), lazy ones inside functions and
``TYPE_CHECKING`` blocks included, and checked against these rules:

* layers, lowest first: ``core`` < games (the game packages, the ``<name>_v0`` entry modules,
  ``registration`` and the package itself) < ``analysis`` < ``runner`` < ``evaluation`` (``arena
  eval``: paper settings played through the runner, the report card) < ``rl`` (the learner's
  view, which seeds episodes as the runner does) < ``view`` (``arena view``: pages over results
  folders) < ``cli`` (``arena_envs.cli``); a module
  imports nothing from a higher layer;
* a game package imports no other game package;
* nothing in ``arena_envs`` imports ``baselines`` or ``llm_policies`` (they depend on
  ``arena_envs``, never the reverse);
* ``core`` and the games import no heavy library (torch, matplotlib, pygame...) when they are
  imported: only inside the function that needs it;
* the modules of ``arena_envs`` import one another without cycles.
"""
from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import arena_envs

PACKAGE = "arena_envs"
LAYERS = ("core", "games", "analysis", "runner", "evaluation", "rl", "view", "cli")
NOT_GAMES = {"core", "analysis", "runner", "evaluation", "rl", "view"}
FORBIDDEN = ("baselines", "llm_policies", "agent_service")
HEAVY = ("torch", "matplotlib", "pygame", "vllm", "transformers", "stable_baselines3", "tensorflow", "pandas", "arch",
         "scipy")


@dataclass(frozen=True)
class Import:
    source: str  #: the importing module
    target: str  #: the imported module (a module of the package when it is one, else the name as written)
    line: int
    at_import_time: bool  #: executed when ``source`` is imported (not in a function or TYPE_CHECKING block)


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Dotted name -> file of every module under ``root`` (the package's folder)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _resolve(name: str, modules: dict[str, Path]) -> str:
    """The longest prefix of ``name`` that is a module of the package, else ``name`` itself."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return name


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    is_package = path.name == "__init__.py"

    def visit(node: ast.AST, eager: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield Import(module, _resolve(alias.name, modules), child.lineno, eager)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = module.split(".") if is_package else module.split(".")[:-1]
                    anchor = anchor[: len(anchor) - child.level + 1]
                    base = ".".join(anchor + ([child.module] if child.module else []))
                for alias in child.names:
                    yield Import(module, _resolve(f"{base}.{alias.name}", modules), child.lineno, eager)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from visit(child, False)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for part in child.body:
                    yield from visit(ast.Module(body=[part], type_ignores=[]), False)
                for part in child.orelse:
                    yield from visit(ast.Module(body=[part], type_ignores=[]), eager)
            else:
                yield from visit(child, eager)

    yield from visit(ast.parse(path.read_text("utf-8"), str(path)), True)


def layer_of(module: str, package: str) -> str:
    parts = module.split(".")
    if parts[0] != package:
        raise ValueError(f"{module} is not in {package}")
    if len(parts) > 1 and parts[1] == "core":
        return "core"
    if len(parts) > 1 and parts[1] in ("analysis", "runner", "evaluation", "rl", "view", "cli"):
        return parts[1]
    return "games"


def game_package(module: str, modules: dict[str, Path], package: str) -> str | None:
    """The game package ``module`` lies in (``auction``), else None (entry modules, registration)."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] in NOT_GAMES or modules[f"{package}.{parts[1]}"].name != "__init__.py":
        return None
    return parts[1]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules that has one (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in edges.get(node, ()):
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def violations(root: Path, package: str = PACKAGE) -> list[str]:
    """Every broken rule of the module docstring, one line each, for the package in ``root``."""
    modules = module_names(root, package)
    problems: list[str] = []
    edges: dict[str, set[str]] = {}
    for module, path in modules.items():
        layer = LAYERS.index(layer_of(module, package))
        own_game = game_package(module, modules, package)
        for imp in imports_of(module, path, modules):
            where = f"{module}:{imp.line} imports {imp.target}"
            top = imp.target.split(".")[0]
            if top in FORBIDDEN:
                problems.append(f"{where}: {top} depends on {package}, never the reverse")
            if top in HEAVY and imp.at_import_time and LAYERS.index("games") >= layer:
                problems.append(f"{where} at import time: import it inside the function that needs it")
            if imp.target not in modules:
                continue
            edges.setdefault(module, set()).add(imp.target)
            target_layer = LAYERS.index(layer_of(imp.target, package))
            if target_layer > layer:
                problems.append(f"{where}: layer {LAYERS[layer]} may not import layer {LAYERS[target_layer]}")
            other_game = game_package(imp.target, modules, package)
            if own_game and other_game and other_game != own_game:
                problems.append(f"{where}: game package {own_game} may not import game package {other_game}")
    for group in cycles(edges):
        problems.append(f"import cycle among {', '.join(group)}")
    return list(dict.fromkeys(problems))  # one line per import statement, not per imported name


def test_arena_envs_layers_point_one_way():
    root = Path(arena_envs.__file__).parent
    assert len(module_names(root, PACKAGE)) > 40  # the walk found the package
    assert violations(root) == []


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), "utf-8")
    return root


def test_a_broken_package_is_caught(tmp_path):
    root = _write(tmp_path / "pkg", {
        "__init__.py": "",
        "core/__init__.py": "from pkg.runner.runner import run\n",
        "runner/__init__.py": "",
        "runner/runner.py": "from pkg.core import x\n",
        "cli.py": "import llm_policies.serve\nimport matplotlib\n",
        "game/__init__.py": "",
        "game/env.py": ("import pygame\nfrom typing import TYPE_CHECKING\nfrom pkg.game import text\n"
                        "if TYPE_CHECKING:\n    import torch\n"
                        "def render():\n    import pygame.display\n    from baselines import registry\n"),
        "game/text.py": "from . import env\nfrom ..other import rules\n",
        "other/__init__.py": "",
        "other/rules.py": "from pkg.analysis import plots\n",
        "analysis/__init__.py": "",
        "analysis/plots.py": "import matplotlib.pyplot\nfrom pkg.runner import runner\n",
        "fine_v0.py": "from pkg.game.env import render\n",
    })
    assert sorted(violations(root, "pkg")) == sorted([
        "pkg.core:1 imports pkg.runner.runner: layer core may not import layer runner",
        "pkg.cli:1 imports llm_policies.serve: llm_policies depends on pkg, never the reverse",
        "pkg.game.env:1 imports pygame at import time: import it inside the function that needs it",
        "pkg.game.env:8 imports baselines.registry: baselines depends on pkg, never the reverse",
        "pkg.game.text:2 imports pkg.other.rules: game package game may not import game package other",
        "pkg.other.rules:1 imports pkg.analysis.plots: layer games may not import layer analysis",
        "pkg.analysis.plots:2 imports pkg.runner.runner: layer analysis may not import layer runner",
        "import cycle among pkg.core, pkg.runner.runner",
        "import cycle among pkg.game.env, pkg.game.text",
    ])
