"""γ-Bench (GAMA-Bench, Huang et al., ICLR 2025): eight multi-agent game-theory games.

Shared pieces: :mod:`.answer` (the JSON answer format and parser), :mod:`.base` (text blocks,
transcripts, the simultaneous-round env base), :mod:`.history` (round-record schema) and
:mod:`.scoring` (the paper's scores). Each game keeps its pure rules in ``<game>_rules.py`` and
its PettingZoo adapter in ``<game>.py``; the versioned entry modules are ``arena_envs.<name>_v0``.
"""
