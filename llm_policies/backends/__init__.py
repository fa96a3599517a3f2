"""LLM backends behind one interface (:class:`llm_policies.types.Backend`).

Each module imports its heavy dependency (vllm, torch, transformers) only when a backend is built,
so that ``llm_policies`` imports without them.
"""
