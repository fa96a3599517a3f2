"""``arena eval --quick`` of SmolLM2 on the session's vLLM test server over all twelve games, its
report checked against the results folders and the specs' tables; card.json gives beside every
figure its validity and the LLM calls' telemetry, eval.json the served model as its server lists it.

The evaluation is the real command; only the games' lengths are cut with ``--env-arg`` (three
players and two rounds of each γ-Bench game, one auction item, two rounds of tank battle and of Who
is Spy, four trading days) so that it fits the suite's time. The report says so in its header.
"""
from __future__ import annotations

import json

import pytest

from arena_envs.cli import main
from arena_envs.evaluation.settings import SETTINGS, SUBJECTS, load_episodes, read_manifest
from arena_envs.gamma.history import GAMES as GAMMA_GAMES
from tests.eval_helpers import check_report
from tests.llm_helpers import MODEL_NAME

pytestmark = [pytest.mark.llm, pytest.mark.slow]

ITEMS = [{"name": "Widget A", "desc": "w", "start_price": 1000, "true_value": 2000}]
SHORT = {
    **{g: {"n_players": 3, "n_rounds": 2} for g in GAMMA_GAMES if g not in ("battle_royale_v0", "pirate_game_v0")},
    "battle_royale_v0": {"n_players": 3, "max_turns": 3},
    "pirate_game_v0": {"n_players": 3},
    "auction_v0": {"items": ITEMS},
    "tank_battle_v0": {"max_rounds": 2},
    "who_is_spy_v0": {"max_rounds": 2},
    "trading_v0": {"trade_start": "2018-09-24", "eval_start": "2018-09-24"},
}


def test_quick_report_card_of_smollm2_over_all_twelve_games(vllm_server, tmp_path, capsys):
    out = tmp_path / "eval"
    spec = f"vllm:{MODEL_NAME}@{vllm_server.url}?cot=0"
    overrides = [f"--env-arg={game}.{key}={json.dumps(value)}" for game, kwargs in SHORT.items()
                 for key, value in kwargs.items()]
    assert main(["eval", spec, "--quick", "--out", str(out), "--concurrency", "8", "--no-progress",
                 *overrides]) == 0
    manifest = read_manifest(out)
    assert manifest["model"] == spec and manifest["quick"] and manifest["games"] == list(SETTINGS)
    for game, setting in SETTINGS.items():
        for subject in SUBJECTS:
            episodes = load_episodes(out, game, subject)
            assert {p: len(e) for p, e in episodes.items()} == {p.name: 1 for p in setting.parts}, (game, subject)
        # the model played its seats: its label is the spec (with the game's agent option)
        for part, (entry,) in load_episodes(out, game, "model").items():
            assert spec.split("?")[0] in " ".join(entry["seats"].values()), (game, part)
    _, overview, checked = check_report(out, list(SETTINGS))
    assert checked > 300  # the papers' 264 figures and the evaluation's own cells
    text = (out / "report.md").read_text("utf-8")
    assert "| settings changed (`--env-arg`) |" in text and "| status | complete |" in text
    for game, setting in SETTINGS.items():
        assert (out / f"report_{game}.png").stat().st_size > 0
        assert overview[setting.label][3] != "–" and "missing" not in overview[setting.label][3], game
    # beside every figure, how much of it is the model's own play, and what its calls cost
    card = json.loads((out / "card.json").read_text("utf-8"))
    for game, entry in card["games"].items():
        model = entry["subjects"]["model"]
        assert model["decisions"]["total"] > 0 and 0 <= model["fallback_share"] <= 1, game
        assert model["valid_share"] == pytest.approx(1 - model["fallback_share"])
        assert model["flagged"] == (model["fallback_share"] > 0.1) and (game in card["flagged"]) == model["flagged"]
        calls = model["telemetry"]
        assert calls["calls"] >= calls["decisions"] > 0 and calls["tokens_per_decision"] > 0, game
        assert 0 <= calls["cached_tokens"] <= calls["prompt_tokens"], game  # the test server reports its cache
        assert 0 < calls["latency_p50_s"] <= calls["latency_p95_s"], game
        assert entry["subjects"]["random"]["telemetry"] is None
    told = manifest["provenance"]["games"]
    assert all(told[game]["model"]["served_model"] == MODEL_NAME for game in SETTINGS)
    assert all(told[game]["model"]["server_reports"]["id"] == MODEL_NAME for game in SETTINGS)
