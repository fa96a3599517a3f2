"""In-process ``vllm.LLM``: the requests of concurrent episodes go to one batched ``llm.chat``."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from arena_envs.core.extras import needs_extra
from llm_policies.backends.microbatch import MicroBatcher
from llm_policies.cpu_cores import share_all_cores
from llm_policies.cpu_dtype import resolve_dtype
from llm_policies.types import ChatRequest, ChatResponse, weights_description


def _import_vllm() -> Any:
    with needs_extra("vllm", "the vllm-local: player"):
        import vllm
    return vllm


class VLLMLocalBackend:
    """Loads ``model`` (a path or name) into ``vllm.LLM`` once; ``engine_kwargs`` go to ``LLM``.

    Concurrent :meth:`generate` calls are micro-batched (``max_batch`` requests or ``window``
    seconds) into one ``llm.chat`` call with one ``SamplingParams`` per request.
    """

    def __init__(self, model: str, *, max_batch: int = 64, window: float = 0.02, guided: bool = True,
                 **engine_kwargs: Any):
        vllm = _import_vllm()
        self.model = model
        self.guided = guided
        self.label = f"vllm-local:{model}"
        engine_kwargs.setdefault("max_model_len", 8192)
        engine_kwargs["dtype"] = resolve_dtype(engine_kwargs.get("dtype", "auto"))
        share_all_cores(os.environ)  # read by the engine process that vllm.LLM starts
        self.llm = vllm.LLM(model=model, **engine_kwargs)
        self._batcher: MicroBatcher[ChatRequest, ChatResponse] = MicroBatcher(self._run_batch, max_batch=max_batch,
                                                                              window=window)

    def describe(self) -> dict[str, Any]:
        """The weights, the hash of their ``config.json`` and the grammar engine (vLLM's own)."""
        return {**weights_description(self.model), "grammar_engine": "vLLM structured outputs"}

    @property
    def batch_sizes(self) -> list[int]:
        return self._batcher.batch_sizes

    async def generate(self, request: ChatRequest) -> ChatResponse:
        return await self._batcher.submit(request)

    def sampling_params(self, request: ChatRequest) -> Any:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        from llm_policies.backends.openai_http import structured_outputs

        s = request.sampling
        structured = None
        if self.guided and request.constraint is not None:
            structured = StructuredOutputsParams(**structured_outputs(request.constraint))
        return SamplingParams(temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens, seed=s.seed,
                              structured_outputs=structured)

    def _run_batch(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
        outputs = self.llm.chat([list(r.messages) for r in requests], [self.sampling_params(r) for r in requests],
                                use_tqdm=False)
        responses = []
        for out in outputs:
            completion = out.outputs[0]
            responses.append(ChatResponse(text=completion.text, prompt_tokens=len(out.prompt_token_ids or ()),
                                          completion_tokens=len(completion.token_ids),
                                          finish_reason=completion.finish_reason or "stop",
                                          cached_tokens=getattr(out, "num_cached_tokens", None)))
        return responses

    def close(self) -> None:
        self.llm = None
