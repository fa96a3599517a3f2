"""Trading arena baselines (:mod:`.rules`): cash, buy and hold, moving averages, momentum, random."""
