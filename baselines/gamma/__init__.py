"""γ-Bench baselines: fixed answers (:mod:`.fixed`), equilibrium players (:mod:`.equilibrium`),
history-driven players (:mod:`.adaptive`) and the Battle Royale and Pirate Game players (:mod:`.sequential`)."""
