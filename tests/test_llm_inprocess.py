"""The in-process LLM backends on a real model: SmolLM2-135M-Instruct through ``vllm-local:``
(``vllm.LLM``) and ``hf:`` (transformers), each playing a full auction_v0 episode against two rule
bidders with the real ``arena run`` under the venv of scripts/setup_llm.sh."""
from __future__ import annotations

import subprocess

import pytest

from llm_policies.local_stack import REPO_ROOT, smollm2_dir, venv_env, vllm_python
from tests.llm_helpers import OWN_ENGINE, check_llm_episodes, one_core

# without the stack of scripts/setup_llm.sh these skip, or fail under CI (tests/conftest.py)
pytestmark = [pytest.mark.llm, pytest.mark.slow, OWN_ENGINE]


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("prefix, options", [("vllm-local", "enforce_eager=1&max_model_len=4096"),
                                             ("hf", "max_tokens=16")])  # answers are short; CPU decoding is slow
def test_same_episode_in_process_backends(prefix, options, tmp_path):
    """The episode of the generic test (seed 7, episode 0) through in-process vLLM / transformers,
    run by the real CLI under the venv's python."""
    players = f"{prefix}:{smollm2_dir()}" + (f"?{options}" if options else "") + ",rule,rule"
    out = tmp_path / "run"
    command = [str(vllm_python()), "-m", "arena_envs.cli", "run", "auction_v0", "--players", players,
               "--episodes", "1", "--seed", "7", "--out", str(out), "--no-progress"]
    env = venv_env({"VLLM_CPU_KVCACHE_SPACE": "1", **one_core(shared=False)})
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    check_llm_episodes(out, 1)
