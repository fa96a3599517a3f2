"""BattleAgentBench's tank battle (``docs/envs/tank_battle.md``): the pure simulation (:mod:`.maps`,
:mod:`.world`), the stages (:mod:`.stages`), what a tank sees and says (:mod:`.sensing`,
:mod:`.text`, :mod:`.parser`, :mod:`.coop`), the paper's metrics (:mod:`.metrics`), the numeric
observation (:mod:`.grid`), the drawing (:mod:`.render`) and the PettingZoo adapter (:mod:`.env`)."""
