"""γ-Bench (GAMA-Bench, Huang et al., ICLR 2025): eight multi-agent game-theory games.

Shared pieces: :mod:`.base` (``GammaEnv``: the options, history and scores of every game),
:mod:`.simultaneous` (the base of games 1-6) and :mod:`.sequential` (Battle Royale, Pirate),
:mod:`.answer` (the JSON answer format and parser), :mod:`.prompt_variants` (template sets),
:mod:`.history` (round-record schema), :mod:`.scoring` (the paper's scores), :mod:`.transcript`
(each seat's transcript and its text blocks) and :mod:`.prompt_options` (persona, chain of thought,
history window). Each game keeps its pure rules in
``<game>_rules.py`` and its PettingZoo adapter in ``<game>.py``; the versioned entry modules are
``arena_envs.<name>_v0``.
"""
