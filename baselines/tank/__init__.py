"""Tank battle baselines: random (:mod:`.random_policy`), rule (:mod:`.rule`), the reference NPC
(:mod:`.npc`), the keyboard (:mod:`.keyboard`) and their shared answer helpers (:mod:`.answer`)."""
