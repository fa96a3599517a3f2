"""Who is Spy baselines: rule players (:mod:`.agents`) built from describers (:mod:`.describers`),
voters (:mod:`.voters`) and a seat's view (:mod:`.seat`); the paper's attack, defense and reasoning
wrappers (:mod:`.wrappers`)."""
