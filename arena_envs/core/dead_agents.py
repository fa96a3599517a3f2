"""PettingZoo's dead-agent protocol and reward accumulation, without a scan of every agent per step.

Contract: an environment whose class puts :class:`CountedDeadAgents` before ``pettingzoo.AECEnv``
selects the same agents and holds the same rewards, cumulative rewards and dicts as with
``AECEnv``'s own ``_deads_step_first``, ``_was_dead_step`` and ``_accumulate_rewards``
(tests/test_shortcuts.py plays every game both ways). The environment keeps ``_done_count``, the
number of terminated or truncated flags still in its dicts, up to date after ``reset`` and each live
step; the dead steps here keep it after theirs. Stock PettingZoo scans every agent at the end of
every step for a dead one and adds every agent's reward, most of them zero; those scans were a
twentieth of a γ-Bench decision (``benchmarks/bench_env_steps.py``).
"""
from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv


class CountedDeadAgents(AECEnv):  # type: ignore[misc]
    agent_selection: str
    #: terminated and truncated flags still in the dicts (kept by the environment and the dead steps)
    _done_count = 0
    #: the live agent to return to once the dead ones have stepped (PettingZoo's name and default)
    _skip_agent_selection: str | None = None

    def _deads_step_first(self) -> str:
        """PettingZoo's: the first dead agent steps next; nothing to look for when none is dead."""
        if not self._done_count:
            return self.agent_selection
        first: str = super()._deads_step_first()
        return first

    def _was_dead_step(self, action: Any) -> None:
        """PettingZoo's: remove the dead agent that steps, then select the next dead one or return to
        the live agent that was selected."""
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        self._done_count -= self.terminations.pop(agent) + self.truncations.pop(agent)
        del self.rewards[agent], self._cumulative_rewards[agent], self.infos[agent]
        self.agents.remove(agent)
        if self._done_count:
            if self._skip_agent_selection is None:
                self._skip_agent_selection = agent
            self.agent_selection = next(a for a in self.agents if self.terminations[a] or self.truncations[a])
        else:
            if self._skip_agent_selection is not None:
                self.agent_selection = self._skip_agent_selection
            self._skip_agent_selection = None
        self._clear_rewards()

    def _accumulate_rewards(self) -> None:
        """PettingZoo's; a step whose rewards are all zero adds nothing, so it skips the loop."""
        if any(self.rewards.values()):
            super()._accumulate_rewards()
