"""Non-LLM policies: random, human, the games' rule baselines, RL; ``registry`` names them for specs."""
