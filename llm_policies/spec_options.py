"""The options of the LLM spec kinds (``vllm:``, ``vllm-local:``, ``hf:``) and their defaults, as
text: ``"*"`` holds those of every kind. Declared here once, in a module that imports nothing, so
that ``arena policies`` lists them (through the ``arena_envs.policy_options`` entry points) without
torch or vLLM; :mod:`llm_policies.specs` reads the same table to accept or refuse an option, and a
test checks that a bare spec's policy gets these defaults.
"""
from __future__ import annotations

SPEC_OPTIONS: dict[str, dict[str, str]] = {
    "*": {"agent": "generic", "temperature": "0.0 (trading agents: 0.5)", "max_tokens": "256 (trading agents: 64)",
          "guided": "1 (or 0, check)", "cot": "0 (aucarena: 1)", "cot_max_tokens": "512 (aucarena: 384)",
          "system": "the generic prompt", "persona": "none", "plan": "adaptive (aucarena)",
          "desire": "none (aucarena)", "belief": "1 (aucarena)", "max_retries": "3 (trading agents)",
          "seeded": "1 (trading agents)", "top_k": "5 (investor)", "debate_rounds": "1 (tradeagent)",
          "risk_rounds": "1 (tradeagent)", "functional_mode": "rule (hedgefund)",
          "max_position_ratio": "1.0 (deepfund)"},
    "vllm": {"timeout": "120", "retries": "4", "servers": "none", "failover": "1", "probe": "60"},
    "vllm-local": {"max_batch": "64", "window": "0.02", "max_model_len": "8192", "enforce_eager": "0"},
    "hf": {"device": "cpu", "dtype": "auto", "max_batch": "16", "window": "0.02",
           "threads": "one per usable core (OMP_NUM_THREADS if fewer)"},
}
