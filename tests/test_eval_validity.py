"""A report card never passes fallbacks off as the model's play: ``arena eval`` against a real local
HTTP server that serves the model but answers nonsense (a stdlib server on 127.0.0.1) flags every
game, in report.md, in card.json (no NaN anywhere) and in its last line; the baselines are never flagged."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena_envs.evaluation.card import read_card
from arena_envs.evaluation.cli import main as eval_main
from arena_envs.evaluation.formatting import FLAG
from arena_envs.evaluation.settings import SETTINGS, load_episodes
from arena_envs.runner.validity import FLAG_FALLBACK_SHARE, Validity, of_seats
from tests.chat_servers import JsonHandler, chat_server

MODEL = "nonsense-model"
#: Shorter games than the papers' (the flags do not depend on the length): two rounds, five tank rounds
SHORTER = [f"{game}.n_rounds=2" for game in ("guess_two_thirds_v0", "el_farol_v0", "divide_dollar_v0",
                                             "public_goods_v0", "diners_dilemma_v0", "sealed_bid_auction_v0")]
SHORTER.append("tank_battle_v0.max_rounds=5")
NONSENSE = "Turtles all the way down."


class Nonsense(JsonHandler):
    """An OpenAI-compatible server that lists ``MODEL`` and answers every chat request with ``NONSENSE``."""

    def do_POST(self) -> None:
        self.read_body()
        self.reply_text(NONSENSE, prompt_tokens=10, completion_tokens=6)


@pytest.fixture
def nonsense_url() -> Iterator[str]:
    with chat_server(Nonsense, MODEL) as server:
        yield f"http://127.0.0.1:{server.server_port}/v1"


def _no_nan(path: Path) -> None:
    text = path.read_text("utf-8")
    assert not re.search(r"\bNaN\b|\bInfinity\b", text), path
    json.loads(text)


def test_a_model_that_answers_nonsense_is_flagged_in_every_game(nonsense_url, tmp_path, capsys):
    out = tmp_path / "eval"
    shorter = [arg for game in SHORTER for arg in ("--env-arg", game)]
    assert eval_main([f"vllm:{MODEL}@{nonsense_url}", "--quick", *shorter, "--out", str(out), "--no-progress"]) == 0
    _check_provenance(out, nonsense_url)
    warning = capsys.readouterr().err.strip().splitlines()[-1]
    assert warning.startswith("arena: warning: not the model's play in ")
    assert set(warning.split(" in ", 1)[1].split(":")[0].split(", ")) == set(SETTINGS)

    card = json.loads((out / "card.json").read_text("utf-8"))
    assert card["flagged"] == list(SETTINGS)
    for game, entry in card["games"].items():
        model = entry["subjects"]["model"]
        assert model["flagged"] and model["fallback_share"] > FLAG_FALLBACK_SHARE, game
        assert model["valid_share"] == pytest.approx(1 - model["fallback_share"])
        # the counts are those of the evaluated seats in the results folders
        episodes = load_episodes(out, game, "model")
        seats = SETTINGS[game].evaluated(episodes)
        total = sum((of_seats(episodes[part], agents) for part, agents in seats.items()),
                    start=Validity())
        assert model["decisions"] == {"total": total.decisions, "retried": total.retried, "fallback": total.fallback}
        for baseline in ("random", "rule"):  # they answer natively: their own play
            assert entry["subjects"][baseline]["fallback_share"] == 0 and not entry["subjects"][baseline]["flagged"]
            assert entry["subjects"][baseline]["telemetry"] is None  # and make no calls
        calls = model["telemetry"]  # every call of the server: 10 prompt and 6 completion tokens
        assert calls["calls"] >= calls["decisions"] > 0 and calls["requests"] == calls["calls"]
        assert calls["tokens_per_decision"] == pytest.approx(16 * calls["calls"] / calls["decisions"])
        assert calls["cached_tokens"] is None and 0 <= calls["latency_p50_s"] <= calls["latency_p95_s"]

    report = (out / "report.md").read_text("utf-8")
    overview = [line for line in report.splitlines() if line.startswith("| [")]
    assert len(overview) == len(SETTINGS) and all(line.rstrip(" |").endswith(FLAG) for line in overview)
    assert f"{FLAG} not the model's play in " in report
    assert report.count("| LLM calls | decisions | calls | requests |") == len(SETTINGS)
    for path in [out / "card.json", out / "eval.json", *out.glob("*/*/*/*.json"), *out.glob("*/*/*/episodes.jsonl")]:
        _no_nan(path)
    assert all(g.results["model"].validity.flagged for g in read_card(out).games)


def _check_provenance(out: Path, url: str) -> None:
    """eval.json and every run.json say which code, prompts, server and model the figures come from."""
    told = json.loads((out / "eval.json").read_text("utf-8"))["provenance"]
    assert told["package"] and set(told["games"]) == set(SETTINGS)
    for game, entry in told["games"].items():
        assert re.fullmatch(r"[0-9a-f]{64}", entry["prompt_sha256"]), game
        model = entry["model"]
        assert model["backend"] == f"vllm:{MODEL}@{url}" and model["served_model"] == MODEL, game
        assert model["server_reports"] == {"id": MODEL} and model["grammar_engine"] == "the server's structured outputs"
        assert model["guided"] is True and "temperature" in model["sampling"]
    for run_file in out.glob("*/model/*/run.json"):
        (session,) = json.loads(run_file.read_text("utf-8"))["sessions"]
        described = [d for label, d in session["players"].items() if label.startswith("vllm:")]
        assert described and all(d["served_model"] == MODEL for d in described), run_file
        assert session["prompt_sha256"] and session["package"] == told["package"]
    header = (out / "report.md").read_text("utf-8").split("## Overview")[0]
    assert f"served_model: {MODEL}" in header and "| prompts (SHA-256) |" in header
