"""A human player at the terminal: shows the observation's text and returns the typed line.

The environment parses the line like an LLM answer, so a human plays with the same prompts and
the same corrections. Streams are injectable (pipes, ``io.StringIO``) for tests and front-ends.
"""
from __future__ import annotations

import sys
from typing import Any, TextIO

from arena_envs.core import Policy


class HumanInputClosed(EOFError):
    """The input stream ended while a human answer was awaited."""


class HumanPolicy(Policy):
    """Prints ``observation["text"]`` to ``output`` and reads one answer line from ``input``."""

    name = "human"

    def __init__(self, input: TextIO | None = None, output: TextIO | None = None, prompt: str = "> "):
        self._input = input
        self._output = output
        self.prompt = prompt
        self.agent: str | None = None
        self._last: str | None = None

    def reset(self, agent: str, seed: int | None = None) -> None:
        self.agent = agent
        self._last = None

    def act(self, observation: Any, info: dict[str, Any]) -> str:
        stdin = self._input if self._input is not None else sys.stdin
        stdout = self._output if self._output is not None else sys.stdout
        text = observation.get("text") if isinstance(observation, dict) else None
        stdout.write(f"\n===== {self.agent} =====\n{text if text is not None else observation}\n{self.prompt}")
        stdout.flush()
        line = stdin.readline()
        if not line:
            raise HumanInputClosed(f"input closed (EOF) while waiting for {self.agent}'s answer")
        self._last = line.rstrip("\r\n")
        return self._last

    def trace(self) -> dict[str, Any]:
        return {"text": self._last}
