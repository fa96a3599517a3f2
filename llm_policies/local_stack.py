"""Where the local LLM stack made by ``scripts/setup_llm.sh`` lives (venv, converted model).

Every location can be moved with an environment variable: ``ARENA_CACHE_DIR`` (the common root,
default ``~/.cache/arena_envs``), ``ARENA_VLLM_VENV`` and ``ARENA_SMOLLM2_DIR``.
"""
from __future__ import annotations

import os
from pathlib import Path

SETUP_SCRIPT = "scripts/setup_llm.sh"
REPO_ROOT = Path(__file__).resolve().parents[1]


def cache_dir() -> Path:
    return Path(os.environ.get("ARENA_CACHE_DIR", Path.home() / ".cache" / "arena_envs")).expanduser()


def vllm_venv() -> Path:
    return Path(os.environ.get("ARENA_VLLM_VENV", cache_dir() / "vllm-venv")).expanduser()


def vllm_python() -> Path:
    return vllm_venv() / "bin" / "python"


def smollm2_dir() -> Path:
    return Path(os.environ.get("ARENA_SMOLLM2_DIR", cache_dir() / "smollm2-135m-instruct")).expanduser()


def missing_parts() -> list[str]:
    """What of the stack is not installed yet (empty when everything is ready)."""
    missing = []
    if not (vllm_venv() / ".arena-vllm-ready").is_file():
        missing.append(f"vLLM venv at {vllm_venv()}")
    if not (smollm2_dir() / ".arena-converted").is_file():
        missing.append(f"SmolLM2 model at {smollm2_dir()}")
    return missing


def venv_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment variables for running this repository's code with the venv's python."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.update(extra or {})
    return env
