"""``arena eval``: the paper settings' lineups, their metrics on hand-made entries, a real small
evaluation, resuming after SIGINT and kill -9, and bad input (issue 18)."""
from __future__ import annotations

import json
import math
import re
import signal
import sys
from pathlib import Path

import pytest
import trueskill

from arena_envs.cli import main
from arena_envs.evaluation.evaluate import evaluate
from arena_envs.evaluation.settings import SETTINGS, SUBJECTS, load_episodes, read_manifest, with_agent
from arena_envs.evaluation.tank_layouts import env as tank_layout_env
from arena_envs.gamma.history import GAMES as GAMMA_GAMES
from arena_envs.registration import make
from arena_envs.runner.results import iter_log, read_episodes
from arena_envs.runner.seeding import episode_seeds
from tests.chat_servers import JsonHandler, chat_server
from tests.process_helpers import finished_count, kill_during_run, run_in_repo, signal_during_run

LLM = "vllm:M@http://127.0.0.1:8000/v1"


# --- lineups ------------------------------------------------------------------------------------

def test_twelve_games_in_the_report_order():
    assert list(SETTINGS) == [*GAMMA_GAMES, "auction_v0", "tank_battle_v0", "who_is_spy_v0", "trading_v0"]
    assert SUBJECTS == ("model", "random", "rule")


@pytest.mark.parametrize("game", list(SETTINGS))
def test_every_part_fills_the_environment_seats_and_plays_its_subjects(game):
    setting = SETTINGS[game]
    for part in setting.parts:
        env_name, kwargs = setting.run_env(part, seed=3)
        env = tank_layout_env(**kwargs) if game == "tank_battle_v0" else make(env_name, **kwargs)
        assert len(env.unwrapped.possible_agents) == part.n_seats
        env.close()
        for subject, me in (("model", LLM if setting.agent is None else f"{LLM}?agent={setting.agent}"),
                            ("random", "random"), ("rule", setting.rule)):
            players = setting.players(part, LLM, subject)
            seats = range(part.n_seats) if part.subject_seats is None else part.subject_seats
            assert all(p == part.opponent for i, p in enumerate(players) if i not in seats)
            assert all(players[i] == me for i in seats), (part.name, subject)
            if me != part.opponent:
                assert [i for i, p in enumerate(players) if p == me] == list(seats)
        assert part.quick_episodes == 1


def test_gamma_ten_seats_all_the_subject_five_runs():
    for game in GAMMA_GAMES:
        (part,) = SETTINGS[game].parts
        assert (part.name, part.episodes, dict(part.env_kwargs)) == ("main", 5, {})
        assert SETTINGS[game].players(part, "random", "model") == ("random",) * 10
        assert SETTINGS[game].players(part, "rule", "model") == ("equilibrium",) * 10  # the γ games' rule
        assert SETTINGS[game].players(part, "random", "model", n_seats=3) == ("random",) * 3  # n_players=3
        assert SETTINGS[game].metric == "Score (0-100)"


def test_auction_challenger_in_seat_3_against_two_rule_bidders_in_six_settings():
    setting = SETTINGS["auction_v0"]
    assert [(dict(p.env_kwargs)["budgets"], dict(p.env_kwargs)["item_order"], p.episodes) for p in setting.parts] == [
        (b, o, 10) for b in (20000, 40000) for o in ("random", "ascending", "descending")]
    assert setting.players(setting.parts[0], LLM, "model") == ("rule", "rule", f"{LLM}?agent=aucarena")
    assert setting.players(setting.parts[0], f"{LLM}?agent=generic", "model")[2] == f"{LLM}?agent=generic"


def test_tank_primary_seats_per_stage_and_the_paper_layouts_per_episode():
    setting = SETTINGS["tank_battle_v0"]
    primary = {p.name: p.subject_seats for p in setting.parts}
    assert primary == {"stage1": (0,), "stage2": (0,), "stage3": (0, 1), "stage4": (0,), "stage5": (0, 2),
                       "stage6": (0,), "stage7": (0, 3)}
    assert setting.players(setting.part("stage7"), "x", "model") == ("x", "rule", "rule", "x", "rule", "rule")
    assert {p.episodes for p in setting.parts} == {5}
    env = tank_layout_env(stage=1, run_seed=7)
    layouts = []
    for k in range(6):
        env.reset(seed=episode_seeds(7, k, 1).env)
        layouts.append(env.unwrapped.config()["layout_seed"])
    assert layouts == [1, 2, 3, 4, 5, 1]
    assert (env.unwrapped.world.players[0].x, env.unwrapped.world.players[0].y) == (32, 320)  # layout 1 (spec §2.5)
    with pytest.raises(ValueError, match="is not the environment seed"):
        env.episode_of(-1)  # type: ignore[attr-defined]


def test_who_is_spy_the_subject_is_the_spy_then_a_civilian():
    setting = SETTINGS["who_is_spy_v0"]
    spy, civilian = setting.parts
    assert (spy.name, spy.episodes, civilian.name, civilian.episodes) == ("spy", 15, "civilian", 75)
    for part, is_spy in ((spy, True), (civilian, False)):
        (seat,) = part.subject_seats
        env = make("who_is_spy_v0", **part.env_kwargs)
        for seed in range(4):
            env.reset(seed=seed)
            assert (seat in env.unwrapped.game.spy_seats) is is_spy
        env.close()


def test_trading_one_trader_investor_agent_for_an_llm():
    setting = SETTINGS["trading_v0"]
    (part,) = setting.parts
    assert setting.players(part, LLM, "model") == (f"{LLM}?agent=investor",)
    assert setting.players(part, "x", "rule") == ("rule",)
    assert setting.metric == "CR (%)" and setting.secondary == ("AR (%)", "AV (%)", "SR", "MDD (%)")


def test_with_agent_adds_the_option_only_to_llm_specs_without_one():
    assert with_agent("vllm:M@http://h:1/v1", "aucarena") == "vllm:M@http://h:1/v1?agent=aucarena"
    assert with_agent("vllm:M?temperature=0.5", "investor") == "vllm:M?temperature=0.5&agent=investor"
    assert with_agent("hf:/models/x?agent=generic", "investor") == "hf:/models/x?agent=generic"
    assert with_agent("vllm-local:/m", "aucarena") == "vllm-local:/m?agent=aucarena"
    assert with_agent("random", "aucarena") == "random"


# --- metrics on hand-made entries -----------------------------------------------------------------

def _entry(k, agents, game=None):
    """An episodes.jsonl entry: ``agents`` maps agent -> (label, per-agent metrics)."""
    return {"episode": k, "seats": {a: label for a, (label, _) in agents.items()},
            "metrics": {"agents": {a: m for a, (_, m) in agents.items()}, "game": game or {}}}


def test_gamma_headline_is_the_mean_game_score():
    entries = [_entry(k, {f"player_{i}": ("random", {"score": 1.0}) for i in range(10)}, {"score": s})
               for k, s in enumerate((40.0, 70.0))]
    assert SETTINGS["el_farol_v0"].headline({"main": entries}) == 55.0
    assert SETTINGS["el_farol_v0"].metrics({"main": entries}) == {"Score (0-100)": 55.0}
    assert math.isnan(SETTINGS["el_farol_v0"].headline({"main": []}))


def _bidders(k, profits, extra):
    labels = ("rule#1", "rule#2", "me")
    return _entry(k, {f"bidder_{i + 1}": (labels[i], {"score": p, "profit": p, **extra[i]})
                      for i, p in enumerate(profits)})


def test_auction_trueskill_of_the_challenger_and_pooled_rates():
    zero = {"items_won": 0, "failed_bids": 0, "accepted_decisions": 5, "belief_errors": 0, "belief_checks": 0}
    mine = [{"items_won": 3, "failed_bids": 1, "accepted_decisions": 9, "belief_errors": 1, "belief_checks": 4},
            {"items_won": 1, "failed_bids": 0, "accepted_decisions": 10, "belief_errors": 0, "belief_checks": 4}]
    part_a = [_bidders(0, (500, 800, 0), [zero, zero, mine[0]]), _bidders(1, (100, 100, 900), [zero, zero, mine[1]])]
    part_b = [_bidders(0, (0, 0, 300), [zero, zero, mine[1]])]
    # the paper's TrueSkill by hand with the trueskill package: one environment per setting
    ts = trueskill.TrueSkill()
    r = [ts.create_rating() for _ in range(3)]
    r = [g[0] for g in ts.rate([(x,) for x in r], ranks=[1, 0, 2])]
    r = [g[0] for g in ts.rate([(x,) for x in r], ranks=[1, 1, 0])]
    mu_a = r[2].mu
    mu_b = ts.rate([(ts.create_rating(),)] * 3, ranks=[1, 1, 0])[2][0].mu
    setting = SETTINGS["auction_v0"]
    episodes = {setting.parts[0].name: part_a, setting.parts[3].name: part_b}
    metrics = setting.metrics(episodes)
    assert metrics["TrueSkill μ"] == pytest.approx((mu_a + mu_b) / 2, abs=1e-4)
    assert metrics["Profit ($)"] == pytest.approx(1200 / 3)
    assert metrics["Items won"] == pytest.approx(5 / 3)
    assert metrics["Failed-bid rate (%)"] == pytest.approx(100 * 1 / (1 + 29))
    assert metrics["Belief-error rate (%)"] == pytest.approx(100 * 1 / 12)
    assert setting.headline(episodes) == metrics["TrueSkill μ"]
    # a resampled list (the bootstrap's) counts a repeated episode twice
    assert setting.metrics({setting.parts[0].name: [part_a[0], part_a[0]]})["TrueSkill μ"] != pytest.approx(
        setting.metrics({setting.parts[0].name: [part_a[0]]})["TrueSkill μ"])


def _tanks(k, rows):
    return _entry(k, {f"tank_{i}": (f"p{i}", row) for i, row in enumerate(rows)})


def test_tank_score_of_the_primary_team_fdis_facc_macc():
    def row(score=0.0, facc=1.0, macc=0.5, fdis=None):
        return {"score": score, "facc": facc, "macc": macc, **({} if fdis is None else {"fdis": fdis})}

    episodes = {
        "stage1": [_tanks(0, [row(fdis=10.0, macc=1.0)]), _tanks(1, [row(fdis=6.0, macc=0.0)])],
        "stage2": [_tanks(0, [row(fdis=-1.0)])],
        # stage 3: both tanks primary, Score = their sum
        "stage3": [_tanks(0, [row(2.0), row(3.0, facc=0.5)]), _tanks(1, [row(1.0), row(0.0)])],
        # stage 5: tank_0 and tank_2 primary; tank_1, tank_3 (the other team) must not count
        "stage5": [_tanks(0, [row(1.0), row(50.0), row(6.0), row(50.0)])],
    }
    metrics = SETTINGS["tank_battle_v0"].metrics(episodes)
    assert metrics["S1 FDis"] == 8.0 and metrics["S2 FDis"] == -1.0
    assert metrics["Avg.Dis (stages 1-2)"] == 3.5
    assert metrics["S3 Score"] == 3.0 and metrics["S5 Score"] == 7.0
    assert math.isnan(metrics["S4 Score"])
    assert metrics["Avg. Score (stages 3-7)"] == 5.0  # the stages played
    # stage means over runs of the primary agents' mean FAcc: 1, 1, (0.75 + 1) / 2, 1
    assert metrics["FAcc"] == pytest.approx((1 + 1 + 0.875 + 1) / 4)
    assert metrics["MAcc"] == pytest.approx((0.5 + 0.5 + 0.5 + 0.5) / 4)


def _wis(k, seat, metrics):
    return _entry(k, {f"player_{i}": (f"p{i}", metrics if i == seat else {}) for i in range(6)})


def test_who_is_spy_role_weighted_score_rating_and_vote_accuracy():
    spy = [_wis(0, 0, {"score": 12.0, "spy_win": 1.0}), _wis(1, 0, {"score": -3.0, "spy_win": 0.0})]
    civ = [_wis(0, 1, {"score": 2.4, "civilian_win": 1.0, "civilian_votes": 2.0, "votes_for_spy": 2.0}),
           _wis(1, 1, {"score": 0.0, "civilian_win": 0.0, "civilian_votes": 3.0, "votes_for_spy": 0.0}),
           _wis(2, 1, {"score": 4.0, "civilian_win": 1.0, "civilian_votes": None, "votes_for_spy": None})]
    metrics = SETTINGS["who_is_spy_v0"].metrics({"spy": spy, "civilian": civ})
    score = 4.5 / 6 + (6.4 / 3) * 5 / 6
    assert metrics["Avg. score"] == pytest.approx(score)
    assert metrics["WiS rating (90 games)"] == pytest.approx(100 + 90 * (score - 1))
    assert metrics["Spy win rate (%)"] == 50.0 and metrics["Civilian win rate (%)"] == pytest.approx(200 / 3)
    assert metrics["Win rate (%)"] == pytest.approx(50 / 6 + 200 / 3 * 5 / 6)
    assert metrics["Avg. score as spy"] == 4.5 and metrics["Vote accuracy (%)"] == 40.0


def test_trading_five_metrics_in_percent():
    entries = [_entry(k, {"trader_0": ("me", {"cr": cr, "ar": 0.5, "av": 0.2, "sr": sr, "mdd": 0.1})})
               for k, (cr, sr) in enumerate(((0.1, 2.0), (0.3, float("nan"))))]
    metrics = SETTINGS["trading_v0"].metrics({"main": entries})
    assert metrics == pytest.approx({"CR (%)": 20.0, "AR (%)": 50.0, "AV (%)": 20.0, "SR": 2.0, "MDD (%)": 10.0})


# --- a real evaluation ----------------------------------------------------------------------------

SHORT = {"guess_two_thirds_v0": {"n_rounds": 3}, "tank_battle_v0": {"max_rounds": 6}}


def test_a_small_real_evaluation(tmp_path):
    out = tmp_path / "eval"
    report = evaluate("random", out, games=["guess_two_thirds_v0", "tank_battle_v0", "who_is_spy_v0"], episodes=1,
                      env_overrides=SHORT)
    assert report == out / "report.md" and report.exists()
    manifest = read_manifest(out)
    assert manifest["model"] == "random" and manifest["games"] == ["guess_two_thirds_v0", "tank_battle_v0",
                                                                   "who_is_spy_v0"]
    assert manifest["episodes"]["tank_battle_v0"] == {f"stage{k}": 1 for k in range(1, 8)}
    assert manifest["env_args"] == SHORT
    run = json.loads((out / "tank_battle_v0" / "rule" / "stage5" / "run.json").read_text())["config"]
    assert run["players"] == ["rule"] * 4 and run["env_kwargs"]["max_rounds"] == 6
    for game in manifest["games"]:
        setting = SETTINGS[game]
        episodes = {s: load_episodes(out, game, s) for s in SUBJECTS}
        assert all(len(entries) == 1 for subject in episodes.values() for entries in subject.values())
        # the model here is `random`: same lineups, same seeds, so the same episodes as the random subject
        assert episodes["model"] == episodes["random"]
        assert math.isfinite(setting.headline(episodes["rule"]))
    assert main(["leaderboard", str(out / "who_is_spy_v0" / "model" / "spy")]) == 0


def test_episodes_do_not_depend_on_the_concurrency(tmp_path):
    games = ["guess_two_thirds_v0", "who_is_spy_v0"]
    for name, concurrency in (("one", 1), ("four", 4)):
        evaluate("random", tmp_path / name, games=games, episodes=3, concurrency=concurrency,
                 env_overrides={"guess_two_thirds_v0": {"n_rounds": 2}})
    for game in games:
        for subject in SUBJECTS:
            assert load_episodes(tmp_path / "one", game, subject) == load_episodes(tmp_path / "four", game, subject)


def _eval_command(out: Path) -> list[str]:
    return [sys.executable, "-m", "arena_envs.cli", "eval", "random", "--games",
            "guess_two_thirds_v0,el_farol_v0", "--episodes", "12", "--out", str(out), "--no-progress"]


def _runs(out: Path) -> dict[str, tuple[list[dict], list[tuple], list[int]]]:
    """Run folder -> (its entries by id, its committed log blocks by episode, the episode of every
    record line in its log file)."""
    found = {}
    for path in sorted(out.rglob("episodes.jsonl")):
        folder = path.parent
        entries = sorted(read_episodes(path), key=lambda e: e["episode"])
        blocks = sorted((b.episode, b.steps, b.record) for b in iter_log(folder))
        records = sorted(int(m[1]) for m in re.finditer(rb'^\{"episode": (\d+), "record": ',
                                                         (folder / "log.jsonl").read_bytes(), re.M))
        found[str(folder.relative_to(out))] = (entries, blocks, records)
    return found


def _without_times(report: Path) -> str:
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d( UTC)?", "TIME", report.read_text())


def test_interrupted_twice_the_evaluation_resumes_with_nothing_played_twice(tmp_path):
    out, whole = tmp_path / "interrupted", tmp_path / "whole"
    status, err = signal_during_run(_eval_command(out), out, at_least=10, sig=signal.SIGINT)
    assert status == 130 and "run the same command again to resume" in err
    first = finished_count(out)
    assert 10 <= first < 72
    kill_during_run(_eval_command(out), out, at_least=first + 10, total=72)  # kill -9
    assert run_in_repo(_eval_command(out), timeout=120).returncode == 0
    assert run_in_repo(_eval_command(whole), timeout=120).returncode == 0
    resumed, uninterrupted = _runs(out), _runs(whole)
    assert len(resumed) == 6
    for folder, (entries, blocks, records) in resumed.items():
        assert [e["episode"] for e in entries] == list(range(12)), folder  # each episode exactly once
        assert [block[0] for block in blocks] == records == list(range(12)), folder
    assert resumed == uninterrupted
    assert _without_times(out / "report.md") == _without_times(whole / "report.md")


# --- bad input --------------------------------------------------------------------------------------

def _one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("arena: error: ")
    return err


def test_an_unknown_game_is_one_line_listing_the_known(tmp_path, capsys):
    err = _one_line_error(capsys, ["eval", "random", "--games", "chess_v0", "--out", str(tmp_path / "o")])
    assert "unknown game 'chess_v0'" in err and "tank_battle_v0" in err and "who_is_spy_v0" in err
    assert not (tmp_path / "o").exists()


def test_another_models_folder_is_refused(tmp_path, capsys):
    out = tmp_path / "o"
    args = ["--games", "guess_two_thirds_v0", "--episodes", "1", "--env-arg", "guess_two_thirds_v0.n_rounds=2",
            "--out", str(out), "--no-progress"]
    assert main(["eval", "random", *args]) == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    err = _one_line_error(capsys, ["eval", "rule", *args])
    assert "holds the evaluation of model 'random'" in err and "asks for model 'rule'" in err
    err = _one_line_error(capsys, ["eval", "random", "--seed", "2", *args])
    assert "seed 0" in err and "seed 2" in err
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    # the same evaluation may grow by games; a game already there must keep its episodes
    grow = ["eval", "random", "--games", "el_farol_v0", "--episodes", "1", "--out", str(out), "--no-progress"]
    assert main(grow) == 0
    assert read_manifest(out)["games"] == ["guess_two_thirds_v0", "el_farol_v0"]
    err = _one_line_error(capsys, ["eval", "random", "--games", "el_farol_v0", "--episodes", "2", "--out", str(out)])
    assert "played el_farol_v0 with episodes per part {'main': 1}" in err


def test_an_unreachable_server_stops_before_any_game(tmp_path, capsys):
    out = tmp_path / "o"
    err = _one_line_error(capsys, ["eval", "vllm:x@http://127.0.0.1:9/v1", "--out", str(out)])
    assert "http://127.0.0.1:9/v1" in err and "cannot reach" in err
    assert not out.exists()


def test_a_server_without_the_model_stops_before_any_game(tmp_path, capsys):
    with chat_server(JsonHandler, "other-model") as server:  # it lists another model only
        out = tmp_path / "o"
        err = _one_line_error(capsys, ["eval", f"vllm:x@http://127.0.0.1:{server.server_port}/v1", "--out", str(out)])
        assert "does not serve model 'x'" in err and "other-model" in err
        assert not out.exists()


@pytest.mark.parametrize("argv, message", [
    (["eval"], "give the SPEC"),
    (["eval", "random", "--env-arg", "n_rounds=2"], "--env-arg expects GAME.KEY=VALUE"),
    (["eval", "random", "--games", "el_farol_v0", "--env-arg", "trading_v0.end=2018-09-01"],
     "does not play"),
    (["eval", "random", "--episodes", "0"], "episodes must be an integer in 1..1000000"),
    (["eval", "--compare", "a"], "two or more"),
    (["eval", "random", "--compare", "a", "b"], "--compare takes evaluation folders and --out only"),
])
def test_usage_errors_are_one_line(tmp_path, capsys, argv, message):
    assert message in _one_line_error(capsys, [*argv, "--out", str(tmp_path / "o")] if "--compare" not in argv
                                      else argv)
    assert not (tmp_path / "o").exists()
