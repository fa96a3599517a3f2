"""``transformers`` backend (CPU or GPU) with the model's chat template.

Guided answers without a grammar engine: a ``choice`` constraint is met by scoring every choice
(sum of token log-probabilities after the prompt, best one wins); a ``regex``/``json`` constraint
is checked on the generated text (the valid answer in it is kept, see
:func:`llm_policies.extraction.extract_answer`) and otherwise the model is asked again, with the
reason, up to ``constraint_retries`` times.
"""
from __future__ import annotations

import asyncio
import threading
from typing import Any

from llm_policies.cpu_dtype import resolve_dtype
from llm_policies.extraction import extract_answer
from llm_policies.types import ChatRequest, ChatResponse, Message


def _import_stack() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as err:
        raise ImportError("the hf backend needs torch and transformers (pip install 'arena-envs[llm]', or run under "
                          "the venv made by scripts/setup_llm.sh)") from err
    return torch, transformers


class TransformersBackend:
    """Loads ``model`` (a folder or hub name available offline) once; calls run one at a time in a
    worker thread, so the event loop stays free."""

    def __init__(self, model: str, *, device: str = "cpu", dtype: str = "auto", guided: bool = True,
                 constraint_retries: int = 2):
        torch, transformers = _import_stack()
        if constraint_retries < 0:
            raise ValueError(f"constraint_retries must be >= 0, got {constraint_retries}")
        self._torch = torch
        self.model_name = model
        self.device = device
        self.guided = guided
        self.constraint_retries = constraint_retries
        self.label = f"hf:{model}"
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(model)
        dtype = resolve_dtype(dtype, device)
        self.model = transformers.AutoModelForCausalLM.from_pretrained(model, dtype=dtype).to(device).eval()
        self._lock = threading.Lock()

    async def generate(self, request: ChatRequest) -> ChatResponse:
        return await asyncio.to_thread(self.generate_sync, request)

    def generate_sync(self, request: ChatRequest) -> ChatResponse:
        with self._lock, self._torch.inference_mode():
            constraint = request.constraint if self.guided else None
            if constraint is not None and constraint.kind == "choice":
                return self._choose(request, constraint.choices)
            messages = list(request.messages)
            response = self._sample(messages, request)
            if constraint is None:
                return response
            prompt_tokens, completion_tokens = response.prompt_tokens, response.completion_tokens
            answer = extract_answer(response.text, constraint)
            attempts = 1
            while answer is None and attempts <= self.constraint_retries:
                messages += [{"role": "assistant", "content": response.text},
                             {"role": "user", "content": f"That answer does not have the required format "
                                                         f"({constraint.description}). Reply with the answer only."}]
                response = self._sample(messages, request)
                prompt_tokens += response.prompt_tokens
                completion_tokens += response.completion_tokens
                answer = extract_answer(response.text, constraint)
                attempts += 1
            extra = {"attempts": attempts, "constraint_ok": answer is not None, "raw": response.text}
            return ChatResponse(response.text if answer is None else answer, prompt_tokens, completion_tokens,
                                response.finish_reason, extra)

    def _prompt_ids(self, messages: list[Message]) -> Any:
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                                 return_dict=True)["input_ids"]
        return ids.to(self.device)

    def _sample(self, messages: list[Message], request: ChatRequest) -> ChatResponse:
        torch = self._torch
        prompt = self._prompt_ids(messages)
        s = request.sampling
        kwargs: dict[str, Any] = {"max_new_tokens": s.max_tokens, "pad_token_id": self.tokenizer.eos_token_id}
        if s.temperature > 0:
            kwargs.update(do_sample=True, temperature=s.temperature, top_p=s.top_p)
            if s.seed is not None:
                torch.manual_seed(s.seed)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        out = self.model.generate(prompt, attention_mask=torch.ones_like(prompt), **kwargs)[0, prompt.shape[1]:]
        eos = self.tokenizer.eos_token_id
        finished = len(out) < s.max_tokens or (len(out) > 0 and int(out[-1]) == eos)
        text = self.tokenizer.decode(out, skip_special_tokens=True)
        return ChatResponse(text, int(prompt.shape[1]), len(out), "stop" if finished else "length")

    def _choose(self, request: ChatRequest, choices: tuple[str, ...]) -> ChatResponse:
        """The choice with the highest total log-probability as a continuation of the prompt."""
        torch = self._torch
        prompt = self._prompt_ids(list(request.messages))[0]
        scores = []
        for choice in choices:
            cont = torch.tensor(self.tokenizer.encode(choice, add_special_tokens=False), device=self.device)
            ids = torch.cat([prompt, cont]).unsqueeze(0)
            logits = self.model(ids).logits[0, prompt.shape[0] - 1 : -1].float()
            logprobs = torch.log_softmax(logits, dim=-1).gather(1, cont.unsqueeze(1)).sum()
            scores.append(float(logprobs))
        best = max(range(len(choices)), key=scores.__getitem__)
        completion_tokens = len(self.tokenizer.encode(choices[best], add_special_tokens=False))
        return ChatResponse(choices[best], int(prompt.shape[0]), completion_tokens, "stop",
                            {"choice_logprobs": dict(zip(choices, scores))})

    def close(self) -> None:
        self.model = None
