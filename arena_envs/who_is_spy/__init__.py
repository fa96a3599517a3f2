"""Who is Spy (WiS, Hu et al. 2024): six players, one spy with a related word, description rounds,
fouls, votes and a 12-point pot. Rules in pure modules beside the PettingZoo adapter."""
