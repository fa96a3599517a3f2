"""The ``hf:`` backend's grammar-guided answers on the real SmolLM2-135M-Instruct, under the venv of
scripts/setup_llm.sh (``xgrammar`` comes with vLLM there): a ``regex`` or ``json`` constraint holds
on the first attempt for a prompt the model would answer otherwise, in a batch where an unguided
row reads as it does alone."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

from llm_policies.local_stack import REPO_ROOT, smollm2_dir, venv_env, vllm_python
from tests.llm_helpers import OWN_ENGINE

# without the stack of scripts/setup_llm.sh these skip, or fail under CI (tests/conftest.py)
pytestmark = [pytest.mark.llm, pytest.mark.slow, OWN_ENGINE]

BID = r"I'm out!|I bid \$[1-9][0-9]{0,3}!"
ACTION = {"type": "object", "properties": {"action": {"enum": ["BUY", "SELL", "HOLD"]}}, "required": ["action"],
          "additionalProperties": False}

#: Run by the venv's python: one batch of a regex row, a json row and an unguided row, then the
#: unguided row alone; prints what the test checks as one JSON line.
SCRIPT = f"""
import json, sys
from arena_envs.core.answers import AnswerConstraint
from llm_policies.backends.hf_transformers import TransformersBackend
from llm_policies.types import ChatRequest, Sampling

backend = TransformersBackend(sys.argv[1], dtype="float32")
story = ({{"role": "user", "content": "Tell me a short story about a cat."}},)
bid = AnswerConstraint("regex", "a bid", pattern={BID!r})
action = AnswerConstraint("json", "an action", schema={ACTION!r})
batch = backend.generate_batch([ChatRequest(story, Sampling(max_tokens=12), bid),
                                ChatRequest(story, Sampling(max_tokens=16), action),
                                ChatRequest(story, Sampling(max_tokens=10))])
alone = backend.generate_batch([ChatRequest(story, Sampling(max_tokens=10))])
print(json.dumps({{"engine": backend.grammar_guided,
                  "batch": [[r.text, r.extra.get("attempts"), r.extra.get("raw")] for r in batch],
                  "alone": alone[0].text}}))
"""


def test_regex_and_json_answers_are_decoded_under_their_grammar():
    done = subprocess.run([str(vllm_python()), "-c", SCRIPT, str(smollm2_dir())], cwd=REPO_ROOT,
                          env=venv_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["engine"], "xgrammar (a dependency of vLLM) is missing from the venv"
    (bid, bid_attempts, bid_raw), (action, action_attempts, _), (free, _, _) = result["batch"]
    assert re.fullmatch(BID, bid) and bid_raw == bid and bid_attempts == 1  # no retry, nothing cut away
    assert json.loads(action)["action"] in ("BUY", "SELL", "HOLD") and action_attempts == 1
    assert free == result["alone"] and not re.fullmatch(BID, free)  # the unguided row is left alone
