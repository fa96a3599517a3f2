"""BattleAgentBench's tank battle (``docs/envs/tank_battle.md``): the pure simulation (:mod:`.maps`,
:mod:`.records`, :mod:`.world` and its speed shortcuts :mod:`.shortcuts`), the stages (:mod:`.stages`),
the env's options (:mod:`.config`), what a tank sees and says (:mod:`.text`, :mod:`.parser`,
:mod:`.coop`), the paper's metrics (:mod:`.metrics`), the numeric observation (:mod:`.grid`), the
drawing (:mod:`.render`) and the PettingZoo adapter (:mod:`.env`)."""
