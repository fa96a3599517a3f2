"""Agent Market Arena (AMA, 2025): daily BUY / SELL / HOLD trading of stocks and crypto on replayed
market data, each agent on its own account, measured with the paper's five metrics. Rules,
accounting, metrics and data sources in pure modules beside the PettingZoo adapter."""
