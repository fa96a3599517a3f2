"""``LLMPolicy``: plays any game of the suite from ``observation["text"]`` alone."""
from __future__ import annotations

from typing import Any

from llm_policies.base import LLMPolicyBase
from llm_policies.extraction import ANSWER_MARKER
from llm_policies.types import Backend, Message

DEFAULT_SYSTEM_PROMPT = ("You are a player in a game. The user message describes the game, your role, the state "
                         "and exactly how to answer. Play to win and answer in the requested format.")
COT_INSTRUCTION = ("\n\nFirst think step by step about your decision. Then write a last line that starts with "
                   f"'{ANSWER_MARKER}' followed by your answer in the required format.")


class LLMPolicy(LLMPolicyBase):
    """A generic LLM player.

    * ``guided``: send the environment's answer constraint to the backend (vLLM structured outputs),
      so the answer always parses.
    * ``cot``: a free reasoning call first; the answer is read from it, and when it holds no valid
      answer a second, guided call asks for the answer alone (:meth:`think_then_answer`).
    * ``system_prompt`` / ``persona``: the system message and an optional persona line.
    """

    name = "llm"

    def __init__(self, backend: Backend, *, system_prompt: str = DEFAULT_SYSTEM_PROMPT, persona: str | None = None,
                 cot: bool = False, temperature: float = 0.0, max_tokens: int = 256, cot_max_tokens: int = 512,
                 guided: bool = True):
        super().__init__(backend, temperature=temperature, max_tokens=max_tokens, guided=guided)
        if cot_max_tokens < 1:
            raise ValueError(f"cot_max_tokens must be >= 1, got {cot_max_tokens}")
        self.system_prompt = system_prompt
        self.persona = persona
        self.cot = cot
        self.cot_max_tokens = cot_max_tokens

    def system_messages(self) -> list[Message]:
        text = self.system_prompt
        if self.persona:
            text = f"{text}\nYour persona: {self.persona}"
        return [{"role": "system", "content": text}] if text else []

    async def aact(self, observation: Any, info: dict[str, Any]) -> str:
        self.start_decision()
        text = observation["text"] if isinstance(observation, dict) else str(observation)
        constraint = self.constraint()
        if not self.cot:
            return await self.ask(self.system_messages() + [{"role": "user", "content": text}], constraint)
        messages = self.system_messages() + [{"role": "user", "content": text + COT_INSTRUCTION}]
        return await self.think_then_answer(messages, constraint, purpose="answer", think_tokens=self.cot_max_tokens)
