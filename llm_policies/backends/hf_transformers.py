"""``transformers`` backend (CPU or GPU) with the model's chat template, micro-batched.

Concurrent :meth:`TransformersBackend.generate` calls are gathered by a
:class:`~llm_policies.backends.microbatch.MicroBatcher` (``max_batch`` requests or ``window``
seconds) and generated together: left-padded prompts, each row stopping at its own end token or
``max_tokens``, a sampling row drawing from its own ``torch.Generator`` seeded with the request's
seed (a seeded answer does not depend on its batch).

Guided answers: a ``choice`` constraint scores every choice (sum of token log-probabilities, the
best wins). A ``regex``/``json`` constraint is decoded under its grammar when ``xgrammar`` is
importable (it comes with vLLM), each row masked by its own compiled grammar as vLLM's server does
(JSON without free whitespace); otherwise the constraint is checked on the generated text
(:func:`llm_policies.extraction.extract_answer`). An answer that still misses the form is asked
for again, with the reason, up to ``constraint_retries`` times, a batch's retries together.

Threads: the model computes on ``threads`` threads (default
:func:`~llm_policies.cpu_cores.default_threads`). ``torch.set_num_threads`` reaches a thread only
the first time it computes and batches run in the event loop's worker threads, so the backend
sets it at load and in the generating thread before each batch.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena_envs.core.answers import AnswerConstraint
from arena_envs.core.extras import needs_extra
from llm_policies.backends.microbatch import MicroBatcher
from llm_policies.cpu_cores import check_threads, default_threads
from llm_policies.cpu_dtype import resolve_dtype
from llm_policies.extraction import extract_answer
from llm_policies.types import ChatRequest, ChatResponse, Message, Sampling, weights_description


def _import_stack() -> tuple[Any, Any]:
    with needs_extra("llm", "the hf: player"):
        import torch
        import transformers
    return torch, transformers


class _RowLimits:
    """Stopping criterion: row ``i`` is done once it has ``max_tokens[i]`` new tokens."""

    def __init__(self, torch: Any, prompt_length: int, max_tokens: Sequence[int], device: str):
        self.limits = torch.tensor(max_tokens, device=device) + prompt_length

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        return input_ids.shape[1] >= self.limits


class _RowSampler:
    """Logits processor: rows with ``temperature > 0`` draw their token (temperature, top-p) from
    their own generator and force it; greedy rows are left to the greedy search."""

    def __init__(self, torch: Any, samplings: Sequence[Sampling], device: str):
        self.torch = torch
        self.rows: list[tuple[int, Sampling, Any]] = []
        for row, s in enumerate(samplings):
            if s.temperature > 0:
                generator = torch.Generator(device=device)
                if s.seed is None:
                    generator.seed()
                else:
                    generator.manual_seed(s.seed)
                self.rows.append((row, s, generator))

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch = self.torch
        for row, s, generator in self.rows:
            probs = torch.softmax(scores[row].float() / s.temperature, dim=-1)
            if s.top_p < 1:
                sorted_probs, order = probs.sort(descending=True)
                outside = sorted_probs.cumsum(-1) - sorted_probs >= s.top_p  # keeps at least the top token
                probs = probs.scatter(0, order, sorted_probs.masked_fill(outside, 0.0))
            token = torch.multinomial(probs, 1, generator=generator)
            forced = torch.full_like(scores[row], float("-inf"))
            scores[row] = forced.scatter(0, token, 0.0)
        return scores


class _RowGrammars:
    """Logits processor: a row with a grammar may only take the tokens its ``xgrammar`` matcher
    allows next; rows without one (and rows whose matcher has ended) are left alone."""

    def __init__(self, xgrammar: Any, grammars: Sequence[Any | None], vocab_size: int):
        self.xgr = xgrammar
        self.matchers = [None if g is None else xgrammar.GrammarMatcher(g) for g in grammars]
        self.bitmask = xgrammar.allocate_token_bitmask(len(grammars), vocab_size)
        self.started = False

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.started:  # the token each row took last step
            for row, matcher in enumerate(self.matchers):
                if matcher is not None and not matcher.is_terminated() and not matcher.accept_token(
                        int(input_ids[row, -1])):
                    self.matchers[row] = None  # a finished row is fed padding: nothing left to guide
        self.started = True
        live = []
        for row, matcher in enumerate(self.matchers):
            if matcher is not None and not matcher.is_terminated():
                matcher.fill_next_token_bitmask(self.bitmask, row)
                live.append(row)
        if live:
            self.xgr.apply_token_bitmask_inplace(scores, self.bitmask.to(scores.device), indices=live)
        return scores


class _Grammars:
    """``regex``/``json`` constraints compiled by ``xgrammar`` for the model's tokenizer (each one
    once); :meth:`processor` masks each row of a ``generate`` call by its own grammar."""

    def __init__(self, xgrammar: Any, tokenizer: Any, vocab_size: int):
        self.xgr = xgrammar
        self.vocab_size = vocab_size
        self.compiler = xgrammar.GrammarCompiler(xgrammar.TokenizerInfo.from_huggingface(tokenizer,
                                                                                         vocab_size=vocab_size))
        self.compiled: dict[tuple[str, str], Any] = {}

    def compile(self, constraint: AnswerConstraint | None) -> Any | None:
        """The compiled grammar of ``constraint``; None for no constraint, a choice (scored instead)
        or a pattern ``xgrammar`` cannot compile (then the answer is checked after generation)."""
        if constraint is None or constraint.kind == "choice":
            return None
        key = constraint.pattern if constraint.kind == "regex" else json.dumps(constraint.schema, sort_keys=True)
        if (constraint.kind, key) not in self.compiled:
            try:
                grammar = (self.compiler.compile_regex(key) if constraint.kind == "regex"
                           else self.compiler.compile_json_schema(key, any_whitespace=False))
            except Exception:  # xgrammar's errors share no base class; the answer is checked instead
                grammar = None
            self.compiled[constraint.kind, key] = grammar
        return self.compiled[constraint.kind, key]

    def processor(self, constraints: Sequence[AnswerConstraint | None]) -> _RowGrammars | None:
        """The masking processor of one ``generate`` call; None when no row has a grammar."""
        grammars = [self.compile(c) for c in constraints]
        return None if all(g is None for g in grammars) else _RowGrammars(self.xgr, grammars, self.vocab_size)


def _grammar_engine(tokenizer: Any, vocab_size: int) -> _Grammars | None:
    try:
        import xgrammar
    except ImportError:
        return None
    return _Grammars(xgrammar, tokenizer, vocab_size)


@dataclass
class _Job:
    """One generated request while its constraint is checked and retried."""

    request: ChatRequest
    messages: list[Message]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0
    last: ChatResponse = field(default_factory=lambda: ChatResponse(""))


class TransformersBackend:
    """Loads ``model`` (a folder or hub name available offline) once; batches run one at a time in
    a worker thread, so the event loop stays free."""

    def __init__(self, model: str, *, device: str = "cpu", dtype: str = "auto", guided: bool = True,
                 constraint_retries: int = 2, max_batch: int = 16, window: float = 0.02,
                 threads: int | None = None):
        torch, transformers = _import_stack()
        if constraint_retries < 0:
            raise ValueError(f"constraint_retries must be >= 0, got {constraint_retries}")
        self.threads = default_threads() if threads is None else check_threads(threads)
        self._torch = torch
        self._use_threads()
        self._transformers = transformers
        self.model_name = model
        self.device = device
        self.guided = guided
        self.constraint_retries = constraint_retries
        self.max_batch = max_batch
        self.label = f"hf:{model}"
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(model)
        dtype = resolve_dtype(dtype, device)
        self.model = transformers.AutoModelForCausalLM.from_pretrained(model, dtype=dtype).to(device).eval()
        eos = self.model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
        eos_ids.add(self.tokenizer.eos_token_id)
        self._eos = eos_ids
        pad = self.tokenizer.pad_token_id
        self._pad = self.tokenizer.eos_token_id if pad is None else pad
        self._grammars = _grammar_engine(self.tokenizer, self.model.config.vocab_size) if guided else None
        self._lock = threading.Lock()
        self._batcher: MicroBatcher[ChatRequest, ChatResponse] = MicroBatcher(self.generate_batch,
                                                                              max_batch=max_batch, window=window)

    def describe(self) -> dict[str, Any]:
        """The weights (folder or hub id), the hash of their ``config.json``, device, dtype, threads
        and the grammar engine in effect."""
        return {**weights_description(self.model_name), "device": self.device, "dtype": str(self.model.dtype),
                "threads": self.threads, "grammar_engine": "xgrammar" if self.grammar_guided else
                "none: answers checked after generation (guided=check)" if self.guided else "none"}

    def _use_threads(self) -> None:
        """Make the calling thread compute on ``self.threads`` threads (module docstring)."""
        if self._torch.get_num_threads() != self.threads:
            self._torch.set_num_threads(self.threads)

    @property
    def grammar_guided(self) -> bool:
        """Whether ``regex``/``json`` answers are decoded under their grammar (``xgrammar`` found)."""
        return self._grammars is not None

    @property
    def batch_sizes(self) -> list[int]:
        return self._batcher.batch_sizes

    async def generate(self, request: ChatRequest) -> ChatResponse:
        return await self._batcher.submit(request)

    def generate_sync(self, request: ChatRequest) -> ChatResponse:
        return self.generate_batch([request])[0]

    def generate_batch(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
        """The responses to ``requests`` (same order), generated together."""
        with self._lock, self._torch.inference_mode():
            self._use_threads()
            results: dict[int, ChatResponse] = {}
            guided = [r.constraint if self.guided else None for r in requests]
            chosen = [i for i, c in enumerate(guided) if c is not None and c.kind == "choice"]
            if chosen:
                results.update(zip(chosen, self._choose([requests[i] for i in chosen])))
            pending = {i: _Job(r, list(r.messages)) for i, r in enumerate(requests) if i not in results}
            while pending:
                jobs = list(pending.values())
                outputs = self._sample([job.messages for job in jobs], [job.request.sampling for job in jobs],
                                       [guided[i] for i in pending])
                retry = {}
                for (i, job), out in zip(pending.items(), outputs):
                    job.prompt_tokens += out.prompt_tokens
                    job.completion_tokens += out.completion_tokens
                    job.attempts += 1
                    job.last = out
                    constraint = guided[i]
                    if constraint is None:
                        results[i] = out
                        continue
                    answer = extract_answer(out.text, constraint)
                    if answer is None and job.attempts <= self.constraint_retries:
                        job.messages += [{"role": "assistant", "content": out.text},
                                         {"role": "user", "content": "That answer does not have the required format "
                                                                     f"({constraint.description}). Reply with the "
                                                                     "answer only."}]
                        retry[i] = job
                        continue
                    extra = {"attempts": job.attempts, "constraint_ok": answer is not None, "raw": out.text}
                    results[i] = ChatResponse(out.text if answer is None else answer, job.prompt_tokens,
                                              job.completion_tokens, out.finish_reason, extra)
                pending = retry
            return [results[i] for i in range(len(requests))]

    def _prompt_ids(self, messages: list[Message]) -> list[int]:
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_dict=True)["input_ids"]
        return list(ids)

    def _left_padded(self, rows: Sequence[list[int]]) -> tuple[Any, Any]:
        """``input_ids`` and ``attention_mask`` of ``rows``, left-padded to the longest one."""
        torch = self._torch
        width = max(len(row) for row in rows)
        ids = torch.tensor([[self._pad] * (width - len(row)) + row for row in rows], device=self.device)
        mask = torch.tensor([[0] * (width - len(row)) + [1] * len(row) for row in rows], device=self.device)
        return ids, mask

    def _sample(self, conversations: Sequence[list[Message]], samplings: Sequence[Sampling],
                constraints: Sequence[AnswerConstraint | None]) -> list[ChatResponse]:
        """One batched ``generate`` call: greedy rows by greedy search, the others by :class:`_RowSampler`;
        a row's grammar (when the engine compiles it) masks its logits first."""
        torch = self._torch
        prompts = [self._prompt_ids(messages) for messages in conversations]
        ids, mask = self._left_padded(prompts)
        limits = [s.max_tokens for s in samplings]
        transformers = self._transformers
        masking = None if self._grammars is None else self._grammars.processor(constraints)
        processors = ([] if masking is None else [masking]) + [_RowSampler(torch, samplings, self.device)]
        sequences = self.model.generate(
            ids, attention_mask=mask, max_new_tokens=max(limits), pad_token_id=self._pad, do_sample=False,
            temperature=None, top_p=None, top_k=None,
            logits_processor=transformers.LogitsProcessorList(processors),
            stopping_criteria=transformers.StoppingCriteriaList([_RowLimits(torch, ids.shape[1], limits, self.device)]))
        responses = []
        for prompt, limit, row in zip(prompts, limits, sequences[:, ids.shape[1]:].tolist()):
            out = row[:limit]
            end = next((k for k, token in enumerate(out) if token in self._eos), None)
            finish = "length" if end is None else "stop"
            out = out if end is None else out[: end + 1]
            text = self.tokenizer.decode(out, skip_special_tokens=True)
            responses.append(ChatResponse(text, len(prompt), len(out), finish))
        return responses

    def _choose(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
        """For each request, the choice with the highest total log-probability as a continuation of
        its prompt; every (prompt, choice) pair is scored in left-padded forward passes of up to
        ``max_batch`` rows."""
        torch = self._torch
        pairs = []  # (request index, prompt ids, choice ids)
        prompts = []
        for i, request in enumerate(requests):
            assert request.constraint is not None
            prompt = self._prompt_ids(list(request.messages))
            prompts.append(prompt)
            pairs += [(i, prompt, self.tokenizer.encode(choice, add_special_tokens=False))
                      for choice in request.constraint.choices]
        scores: list[float] = []
        for start in range(0, len(pairs), self.max_batch):
            chunk = pairs[start : start + self.max_batch]
            ids, mask = self._left_padded([prompt + cont for _, prompt, cont in chunk])
            keep = max(len(cont) for _, _, cont in chunk) + 1
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            logits = self.model(ids, attention_mask=mask, position_ids=positions, logits_to_keep=keep).logits.float()
            logprobs = torch.log_softmax(logits, dim=-1)
            for row, (_, _, cont) in enumerate(chunk):
                steps = logprobs[row, keep - 1 - len(cont) : keep - 1]
                scores.append(float(steps.gather(1, torch.tensor(cont, device=self.device).unsqueeze(1)).sum()))
        responses = []
        offset = 0
        for request, prompt in zip(requests, prompts):
            assert request.constraint is not None
            choices = request.constraint.choices
            mine = scores[offset : offset + len(choices)]
            offset += len(choices)
            best = max(range(len(choices)), key=mine.__getitem__)
            completion_tokens = len(self.tokenizer.encode(choices[best], add_special_tokens=False))
            responses.append(ChatResponse(choices[best], len(prompt), completion_tokens, "stop",
                                          {"choice_logprobs": dict(zip(choices, mine))}))
        return responses

    def close(self) -> None:
        self.model = None
