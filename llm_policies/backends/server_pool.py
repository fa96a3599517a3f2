"""Several OpenAI-compatible servers of one model behind one backend (``vllm:MODEL@URL1@URL2``).

Placement: the first request of an episode (its key from
:func:`arena_envs.core.episode_context.current_episode`) goes to the healthy server with the
fewest requests in flight (ties: fewest live episodes, fewest episodes placed so far, then the
server order rotated by the process's ``rank``). The episode stays there, so its growing prompts
keep hitting that server's prefix cache; its placement is remembered in a bounded LRU after its
scope ends (:class:`arena_envs.rl.LearnerEnv` opens one per step). A request without a key goes
to the least loaded server.

Failover: a server that stays unreachable, answers 5xx, misses its deadline or replies malformed
through the retries (:class:`~llm_policies.backends.openai_http.ServerDown`) is marked down with one
stderr line; its live episodes move to the other servers and the request is sent again there (with
its seed, so the same answer). With no server left, or ``failover=False``, it raises
:class:`BackendUnavailable` naming every server's state in one line. A down server is probed
(``GET /models``) ``probe_after`` seconds later and takes new episodes once it answers.
"""
from __future__ import annotations

import math
import sys
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from arena_envs.core.episode_context import current_episode, on_episode_end
from llm_policies.backends.openai_http import DEFAULT_BACKOFF, OpenAIHTTPBackend, ServerDown, one_line
from llm_policies.retry import Backoff
from llm_policies.types import BackendUnavailable, ChatRequest, ChatResponse

#: Episode placements remembered (least recently used dropped first).
REMEMBERED = 65536
#: Entries of :attr:`ServerPool.history` kept (oldest dropped first); it is for tests and benchmarks.
HISTORY = 100_000


class ServerPool:
    """``model`` served at each of ``urls`` (two or more); the :class:`~llm_policies.types.Backend`
    interface, see the module docstring. ``timeout`` and ``backoff`` apply to each server as in
    :class:`OpenAIHTTPBackend`; ``clock`` is for tests."""

    def __init__(self, model: str, urls: Sequence[str], *, timeout: float = 120.0,
                 backoff: Backoff = DEFAULT_BACKOFF, failover: bool = True, probe_after: float = 60.0,
                 rank: int = 0, clock: Callable[[], float] = time.monotonic):
        servers = [OpenAIHTTPBackend(model, url, timeout=timeout, backoff=backoff) for url in urls]
        names = [server.base_url for server in servers]
        if len(servers) < 2 or len(set(names)) != len(names):
            raise ValueError(f"a server pool needs two or more distinct URLs, got {list(urls)}")
        if not 0 < probe_after < math.inf:
            raise ValueError(f"probe_after must be a finite number of seconds > 0, got {probe_after}")
        self.model = model
        self.servers = servers
        self.urls = names
        self.failover = failover
        self.probe_after = probe_after
        self.label = f"vllm:{model}@pool({len(servers)})"
        #: episode key -> the URLs its requests went to, in order (one unless it failed over)
        self.history: OrderedDict[Hashable, list[str]] = OrderedDict()
        #: URL -> requests answered there
        self.requests: Counter[str] = Counter()
        self._rank = rank
        self._clock = clock
        self._in_flight = [0] * len(servers)
        self._episodes = [0] * len(servers)  # episodes ever placed: episodes played one at a time take turns
        self._live: list[set[Hashable]] = [set() for _ in servers]
        self._placed: OrderedDict[Hashable, int] = OrderedDict()
        self._down: dict[int, str] = {}  # server index -> why it is down
        self._probe_at: dict[int, float] = {}  # server index -> when to try it again
        self._forget = on_episode_end(self._episode_ended)

    async def generate(self, request: ChatRequest) -> ChatResponse:
        key = current_episode()
        while True:
            await self._probe_due()
            index = self._server_for(key)
            self._in_flight[index] += 1
            try:
                response = await self.servers[index].generate(request)
            except ServerDown as err:
                self._mark_down(index, err.reason)
                if not self.failover:
                    raise BackendUnavailable(f"LLM server {self.urls[index]} of model {self.model!r} is down "
                                             f"and failover=0: {self._states()}") from None
                continue  # the key was moved: send the request again
            finally:
                self._in_flight[index] -= 1
            self.requests[self.urls[index]] += 1
            return response

    def preflight(self, timeout: float = 10.0) -> None:
        """``GET /models`` on every server: fine while one serves the model; the others are marked
        down (one stderr line each) until their probe; none up raises one line naming them all."""
        for index, server in enumerate(self.servers):
            try:
                server.preflight(timeout)
            except BackendUnavailable as err:
                self._mark_down(index, one_line(str(err)))
        if len(self._down) == len(self.servers):
            raise BackendUnavailable(self._all_down())

    def describe(self) -> dict[str, Any]:
        """Each server's description (:meth:`OpenAIHTTPBackend.describe`)."""
        return {"served_model": self.model, "servers": [server.describe() for server in self.servers],
                "grammar_engine": "the servers' structured outputs"}

    def close(self) -> None:
        self._forget()
        for server in self.servers:
            server.close()

    # ------------------------------------------------------------------ placement

    def _server_for(self, key: Hashable | None) -> int:
        """The server this request goes to (placing ``key`` on first sight)."""
        healthy = [i for i in range(len(self.servers)) if i not in self._down]
        if not healthy:
            raise BackendUnavailable(self._all_down())
        if key is None:
            return self._least_loaded(healthy)
        index = self._placed.get(key)
        if index is None or index in self._down:
            index = self._place(key, self._least_loaded(healthy))
        else:
            self._placed.move_to_end(key)
        self._live[index].add(key)
        return index

    def _least_loaded(self, candidates: list[int]) -> int:
        n = len(self.servers)
        return min(candidates, key=lambda i: (self._in_flight[i], len(self._live[i]), self._episodes[i],
                                              (i - self._rank) % n))

    def _place(self, key: Hashable, index: int) -> int:
        self._placed[key] = index
        self._episodes[index] += 1
        self._placed.move_to_end(key)
        if len(self._placed) > REMEMBERED:
            old, where = self._placed.popitem(last=False)
            self._live[where].discard(old)
        self.history.setdefault(key, []).append(self.urls[index])
        if len(self.history) > HISTORY:
            self.history.popitem(last=False)
        return index

    def _episode_ended(self, key: Hashable) -> None:
        index = self._placed.get(key)
        if index is not None:
            self._live[index].discard(key)

    # ------------------------------------------------------------------ failures

    def _mark_down(self, index: int, reason: str) -> None:
        """Take server ``index`` out (once: concurrent failures of the same server say nothing more)
        and move its live episodes to the least loaded other servers."""
        if index in self._down:
            return
        self._down[index] = reason
        self._probe_at[index] = self._clock() + self.probe_after
        moving = sorted(self._live[index], key=repr)
        self._live[index] = set()
        for key in [k for k, where in self._placed.items() if where == index]:
            del self._placed[key]
        healthy = [i for i in range(len(self.servers)) if i not in self._down]
        if not healthy or not self.failover:
            return  # the request's error names every server: the run stops with that one line
        for key in moving:
            self._live[self._place(key, self._least_loaded(healthy))].add(key)
        episodes = "1 episode moves" if len(moving) == 1 else f"{len(moving)} episodes move"
        print(f"arena: LLM server {self.urls[index]} is down ({reason}); its {episodes} to the other "
              f"{len(healthy)} server{'s' if len(healthy) > 1 else ''}; it is tried again in {self.probe_after:g}s",
              file=sys.stderr, flush=True)

    async def _probe_due(self) -> None:
        """Ask each down server whose time has come for its models; one that answers is back."""
        now = self._clock()
        for index in [i for i, when in self._probe_at.items() if when <= now]:
            self._probe_at[index] = now + self.probe_after  # one probe at a time per server
            if await self.servers[index].serving(min(10.0, self.servers[index].timeout)):
                del self._down[index], self._probe_at[index]
                print(f"arena: LLM server {self.urls[index]} answers again; new episodes may go to it",
                      file=sys.stderr, flush=True)

    def _states(self) -> str:
        return "; ".join(f"{url} ({self._down.get(i, 'up')})" for i, url in enumerate(self.urls))

    def _all_down(self) -> str:
        return f"all {len(self.servers)} servers of model {self.model!r} are down: {self._states()}"
