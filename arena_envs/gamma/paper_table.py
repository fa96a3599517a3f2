"""The γ-Bench paper's Table 1: each model's score (0-100, mean±std of its 5 runs) per game, in the
paper's default ten-player setting, as the paper prints it.

Kept with the games so that both the suite's plots (:mod:`arena_envs.analysis.gamma_plots`) and the
report card (:mod:`arena_envs.evaluation.paper_figures`) read the one copy.
"""
from __future__ import annotations

#: the Table's row -> registry name, in the paper's order
TABLE_1_GAMES = {
    "Guess 2/3": "guess_two_thirds_v0", "El Farol": "el_farol_v0", "Divide $": "divide_dollar_v0",
    "Public Goods": "public_goods_v0", "Diner": "diners_dilemma_v0", "SBA": "sealed_bid_auction_v0",
    "Battle Royale": "battle_royale_v0", "Pirate": "pirate_game_v0",
}
#: model -> one "mean±std" per game of :data:`TABLE_1_GAMES`, in that order
TABLE_1 = {
    "GPT-3.5-0613": "41.4±0.5 74.8±4.5 42.4±7.7 17.8±1.7 67.0±4.9 4.2±0.3 19.5±7.7 68.4±19.9",
    "GPT-3.5-1106": "68.5±0.5 64.3±3.1 70.3±3.3 43.5±12.6 1.4±1.3 3.4±1.0 35.7±6.9 69.5±14.6",
    "GPT-3.5-0125": "63.4±3.4 68.7±2.7 68.6±2.4 38.8±8.1 2.8±2.8 5.5±1.0 28.6±11.0 71.6±7.7",
    "GPT-4-0125": "91.6±0.6 23.0±8.1 98.1±1.9 89.2±1.8 0.9±0.7 8.7±0.7 86.8±9.7 85.4±8.7",
    "Gemini-1.0-Pro": "77.3±6.2 33.5±10.3 77.6±3.6 68.5±7.6 3.1±1.5 14.9±6.6 16.5±6.9 57.4±14.3",
    "Gemini-1.5-Pro": "95.4±0.5 37.2±4.2 93.8±0.3 100.0±0.0 35.9±5.3 13.3±4.6 81.3±7.7 87.9±5.6",
    "LLaMA-3.1-8B": "85.5±3.0 75.7±2.2 56.4±8.4 19.6±1.0 59.3±2.4 16.9±1.8 35.9±12.1 78.3±10.0",
    "LLaMA-3.1-70B": "84.0±1.7 59.7±3.5 87.0±4.1 90.6±3.6 48.1±5.7 4.5±0.7 77.7±26.0 64.0±15.5",
    "LLaMA-3.1-405B": "94.3±0.6 20.5±24.2 94.9±1.0 96.9±0.8 14.4±4.5 4.2±1.2 92.7±10.1 65.6±22.3",
    "Mixtral-8x7B": "91.8±0.4 66.8±5.8 1.2±2.8 27.7±11.7 76.4±7.1 0.8±0.4 12.6±9.5 67.3±7.6",
    "Mixtral-8x22B": "83.6±4.6 39.3±12.2 79.0±9.6 83.7±3.5 79.9±5.8 5.2±1.8 36.0±21.0 84.3±8.8",
    "Qwen-2-72B": "93.2±1.3 17.0±25.5 91.9±2.4 81.3±5.9 0.0±0.0 0.9±0.2 81.7±9.6 86.1±6.4",
}

#: model -> its Overall "mean±std" (the paper's mean of the eight game scores, per run)
TABLE_1_OVERALL = {
    "GPT-3.5-0613": "41.9±2.0", "GPT-3.5-1106": "44.6±1.5", "GPT-3.5-0125": "43.5±2.1", "GPT-4-0125": "60.5±2.7",
    "Gemini-1.0-Pro": "43.6±3.1", "Gemini-1.5-Pro": "68.1±1.5", "LLaMA-3.1-8B": "53.4±3.1",
    "LLaMA-3.1-70B": "64.5±3.4", "LLaMA-3.1-405B": "60.4±4.4", "Mixtral-8x7B": "43.1±2.3",
    "Mixtral-8x22B": "61.4±2.0", "Qwen-2-72B": "56.5±3.4",
}


def table_1_cell(model: str, game: str) -> tuple[float, float]:
    """(mean, std) of ``model``'s score in ``game`` (a registry name) in Table 1."""
    mean, std = TABLE_1[model].split()[list(TABLE_1_GAMES.values()).index(game)].split("±")
    return float(mean), float(std)


def table_1_scores(game: str) -> list[tuple[str, float]]:
    """(model, mean score) of every model of Table 1 in ``game`` (a registry name, or ``"overall"``)."""
    if game == "overall":
        return [(model, float(cell.split("±")[0])) for model, cell in TABLE_1_OVERALL.items()]
    return [(model, table_1_cell(model, game)[0]) for model in TABLE_1]
