"""LLM policies for the arena_envs games: backends (OpenAI-compatible HTTP for ``vllm serve``,
in-process ``vllm.LLM``, ``transformers``), the generic :class:`LLMPolicy`, the AucArena bidder,
and policy spec strings (``vllm:MODEL@URL``, ``vllm-local:PATH``, ``hf:PATH``).

Importing this package needs neither vLLM nor torch: each backend imports them when it is built.
"""
from llm_policies.policy import LLMPolicy
from llm_policies.specs import policy_from_spec
from llm_policies.types import Backend, BackendError, BackendUnavailable, ChatRequest, ChatResponse, Sampling

__all__ = ["Backend", "BackendError", "BackendUnavailable", "ChatRequest", "ChatResponse", "LLMPolicy", "Sampling",
           "policy_from_spec"]
