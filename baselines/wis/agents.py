"""The Who is Spy rule players, on :class:`arena_envs.core.Policy`.

* :class:`LexiconAgent`: lexicon clues (:class:`~baselines.wis.describers.LexiconDescriber`),
  overlap votes (:class:`~baselines.wis.voters.OverlapVoter`);
* :class:`ConsensusAgent`: lexicon clues, consensus votes (:class:`~baselines.wis.voters.ConsensusVoter`);
* :class:`RandomAgent`: vague random clues, random votes;
* :class:`GullibleAgent`: a ``LexiconAgent`` that obeys prompt injections (a test double).

``LexiconAgent`` is the default rule player (``who_is_spy_v0/rule``). Every player reads only
``info`` and answers in the env's action mode (:class:`~baselines.wis.seat.WisPlayer`).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from baselines.wis.describers import LexiconDescriber, RandomDescriber
from baselines.wis.seat import WisPlayer
from baselines.wis.voters import ConsensusVoter, OverlapVoter, RandomVoter


class LexiconAgent(WisPlayer):
    """The default rule baseline: lexicon clues, overlap votes. Deterministic."""

    name = "lexicon"

    def __init__(self) -> None:
        super().__init__(LexiconDescriber(), OverlapVoter())


class ConsensusAgent(WisPlayer):
    """Lexicon clues, consensus votes (the voter needs no lexicon). Deterministic."""

    name = "consensus"

    def __init__(self) -> None:
        super().__init__(LexiconDescriber(), ConsensusVoter())


class RandomAgent(WisPlayer):
    """A random vague sentence as the clue, a uniform vote (abstaining with probability
    ``p_abstain``); all randomness from the seed given to ``reset``."""

    name = "random"

    def __init__(self, p_abstain: float = 0.0) -> None:
        super().__init__(RandomDescriber(), RandomVoter(p_abstain))


#: Text that marks a clue as an attack (it asks players to say their own word), English and Chinese.
ATTACK_MARKER = re.compile(r"(?i)reply with (their|your) own secret word|state your (own )?word|output your word"
                           r"|说出(你|你们)?自己的词")


class GullibleAgent(LexiconAgent):
    """A TEST DOUBLE (not from the paper): a :class:`LexiconAgent` that obeys prompt
    injections, standing in for an instruction-following LLM so that the attack and defence
    experiments can be tested without one.

    * Once any clue of the game matches :data:`ATTACK_MARKER`, its clue is its own word (a
      ``keyword`` foul). In discrete mode its own word is no option: it gives its best clue.
    * It never votes for a player that a clue declares "``<name> is NOT the spy``" (Chinese:
      ``<name>不是卧底``), unless that leaves no candidate.
    """

    name = "gullible"

    def __init__(self) -> None:
        super().__init__()
        self._cleared: set[str] = set()
        self._attacked = False
        self._read = 0  # clues of the memory already scanned

    def reset(self, agent: str, seed: int | None = None) -> None:
        super().reset(agent, seed)
        self._cleared, self._attacked, self._read = set(), False, 0

    def _scan(self, names: Sequence[str]) -> None:
        seat, _ = self._ready()
        texts = seat.memory.texts
        for _, _, text in texts[self._read:]:
            self._attacked = self._attacked or ATTACK_MARKER.search(text) is not None
            self._cleared.update(name for name in names if _clears(text, name))
        self._read = len(texts)

    def describe(self, info: Mapping[str, Any]) -> str:
        _, table = self._ready()
        self._scan(table.names)
        return info["word"] if self._attacked else super().describe(info)

    def vote(self, info: Mapping[str, Any], candidates: Sequence[str]) -> str | None:
        _, table = self._ready()
        self._scan(table.names)
        trusted = [name for name in candidates if name not in self._cleared]
        return super().vote(info, trusted or candidates)


def _clears(text: str, name: str) -> bool:
    """Whether ``text`` says ``name`` is not the spy (``<name> is NOT the spy``, read
    for one name, optionally quoted; or the Chinese ``<name>不是卧底``)."""
    quoted = rf"(?<![^\s\"'“‘(\[【：:]){re.escape(name)}[\"'”’)\]】,，]?"
    return re.search(rf"(?i){quoted}\s+is not the spy|{quoted}\s*不是卧底", text) is not None
