"""The game views (issue 35): ``arena_envs.view.game_data.view_data`` for the twelve games, from real
short runs, and the scripts of ``arena_envs/view/static/games`` drawing it in a real browser.

The unit tests check each view's data against an independent source: the decision lines (the
simultaneous γ-Bench choices), the record's own events (auction prices, Who is Spy's words and
votes, trading's equity, Battle Royale's "correct" flags), and for the tank battle the environment
itself, stepped here with the logged actions, round by round. The browser tests load registry.js,
kit.js and the view scripts into a page of their own (``harness``) with an embedded payload.
"""
from __future__ import annotations

import base64
import io
import json
import math
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import arena_envs.tank_battle_v0 as tank_battle_v0
from arena_envs.registration import ENVIRONMENTS
from arena_envs.runner import RunConfig, run
from arena_envs.runner.results import read_config, read_episodes, read_record, read_steps
from arena_envs.view.game_data import view_data

STATIC = Path(__file__).resolve().parents[1] / "arena_envs" / "view" / "static" / "games"
GAMMA_SMALL = {"n_players": 3, "n_rounds": 3}
#: every game of ``arena list``: (players, env args), kept tiny
RUNS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "auction_v0": (("rule", "rule", "random"), {}),
    "trading_v0": (("rule", "random", "rule", "random"), {}),
    "who_is_spy_v0": (("rule",) * 3 + ("random",) * 3, {}),
    "tank_battle_v0": (("rule", "random"), {"stage": 4}),
    "guess_two_thirds_v0": (("random",) * 3, GAMMA_SMALL),
    "el_farol_v0": (("random",) * 3, GAMMA_SMALL),
    "divide_dollar_v0": (("random",) * 3, GAMMA_SMALL),
    "public_goods_v0": (("random",) * 3, GAMMA_SMALL),
    "diners_dilemma_v0": (("random",) * 3, GAMMA_SMALL),
    "sealed_bid_auction_v0": (("random",) * 3, GAMMA_SMALL),
    "battle_royale_v0": (("random",) * 3, {"n_players": 3}),
    "pirate_game_v0": (("random",) * 3, {"n_players": 3}),
}
#: markup that would run (the script; the image's handler under innerHTML) or make an element if it were parsed
XSS = '<script>window.pwned=1</script><b>x</b><img src=x onerror="window.pwned=2">'


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One episode of every game, in a results folder each."""
    root = tmp_path_factory.mktemp("view-games")
    out = {env: root / env for env in RUNS}

    def play() -> None:
        for env, (players, kwargs) in RUNS.items():
            run(RunConfig(env, players, episodes=1, seed=0, env_kwargs=kwargs), out[env], plots=False)

    # in a thread of its own: the runner's asyncio.run cannot start inside Playwright's running event loop
    with ThreadPoolExecutor(1) as pool:
        pool.submit(play).result()
    return out


def payload(folder: Path) -> dict[str, Any]:
    """The episode payload of the contract, as the server builds it (episode 0)."""
    config = read_config(folder)
    entry = read_episodes(folder / "episodes.jsonl")[0]
    steps, record = read_steps(folder, 0), read_record(folder, 0)
    return {"env": config["env"], "env_kwargs": config["env_kwargs"], "episode": 0, "entry": entry,
            "steps": steps, "record": record,
            "game": view_data(config["env"], config["env_kwargs"], entry, steps, record)}


def test_every_listed_game_has_a_view() -> None:
    assert set(RUNS) == set(ENVIRONMENTS)
    scripts = " ".join(p.read_text() for p in STATIC.glob("*.js"))
    for env in ENVIRONMENTS:
        assert f'"{env}"' in scripts, f"no script registers {env}"


def test_scripts_never_parse_data_as_markup() -> None:
    """Every view sets text with textContent and builds elements with createElement: no script of
    static/games holds an HTML-parsing or code-running sink."""
    sinks = ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout(\"")
    for script in STATIC.glob("*.js"):
        code = re.sub(r"^\s*//.*$", "", script.read_text(), flags=re.MULTILINE)  # comments may name them
        assert not [s for s in sinks if s in code], script.name


@pytest.mark.parametrize("env", sorted(RUNS))
def test_view_data_is_bounded_json_and_quick(env: str, folders: dict[str, Path]) -> None:
    data = payload(folders[env])
    args = (data["env"], data["env_kwargs"], data["entry"], data["steps"], data["record"])
    view_data(*args)  # imports and caches warm
    timings = []
    for _ in range(3):  # the best of three: other tests share the cores
        started = time.perf_counter()
        game = view_data(*args)
        timings.append(time.perf_counter() - started)
    elapsed = min(timings)
    assert isinstance(game, dict) and "error" not in game, game
    text = json.dumps(game, allow_nan=False)
    assert len(text) < 200_000
    assert elapsed <= 0.3, f"view_data({env}) took {elapsed:.3f} s"


def _decisions(folder: Path) -> list[dict[str, Any]]:
    return [line for line in read_steps(folder, 0) if not line.get("finish")]


@pytest.mark.parametrize("env, key", [("guess_two_thirds_v0", "choices"), ("divide_dollar_v0", "bids"),
                                      ("public_goods_v0", "contributions")])
def test_gamma_numbers_are_the_logged_choices(env: str, key: str, folders: dict[str, Path]) -> None:
    game = payload(folders[env])["game"]
    parsed = [line["parsed"] for line in _decisions(folders[env])]
    assert [r[key] for r in game["rounds"]] == [parsed[k:k + 3] for k in range(0, 9, 3)]
    assert [r["round"] for r in game["rounds"]] == [1, 2, 3]


def test_gamma_equilibria(folders: dict[str, Path]) -> None:
    views = {env: payload(folders[env])["game"] for env in RUNS if env in
             ("guess_two_thirds_v0", "el_farol_v0", "divide_dollar_v0", "public_goods_v0", "diners_dilemma_v0",
              "sealed_bid_auction_v0")}
    assert views["guess_two_thirds_v0"]["equilibrium"]["choice"] == 0  # R = 2/3 < 1: MIN
    assert views["el_farol_v0"]["equilibrium"]["capacity"] == 1  # floor(0.6 x 3)
    assert views["divide_dollar_v0"]["equilibrium"]["total"] == 100
    assert views["public_goods_v0"]["equilibrium"]["contribution"] == 0
    assert views["diners_dilemma_v0"]["equilibrium"]["n_costly"] == 3
    assert views["sealed_bid_auction_v0"]["equilibrium"]["bid_share"] == pytest.approx(2 / 3)
    farol = views["el_farol_v0"]["rounds"]
    assert all(r["attendance"] == sum(g is True for g in r["go"]) for r in farol)
    diners = views["diners_dilemma_v0"]["rounds"]
    assert all(r["n_costly"] == r["orders"].count("costly") for r in diners)


def test_battle_royale_and_pirate(folders: dict[str, Path]) -> None:
    royale = payload(folders["battle_royale_v0"])
    turns = [e for e in royale["record"]["events"] if e["type"] == "turn"]
    assert [t["strongest"] for t in royale["game"]["rounds"]] == [t["correct"] for t in turns]
    assert [t["shooter"] for t in royale["game"]["rounds"]] == [t["shooter"] for t in turns]
    pirate = payload(folders["pirate_game_v0"])["game"]
    first = pirate["rounds"][0]
    assert first["proposer"] == 0 and first["ne_proposal"] == [99, 0, 1]  # G - 1, and 1 coin two places behind
    offered = first["proposal"]
    assert first["ne_votes"][1] == (offered[1] >= 2)  # an odd distance: 2 coins or more
    assert first["ne_votes"][2] == (offered[2] >= 1)  # an even distance: 1 coin is enough


def test_auction_items_prices_and_money(folders: dict[str, Path]) -> None:
    data = payload(folders["auction_v0"])
    game, record = data["game"], data["record"]
    hammers = [e for e in record["events"] if e["type"] in ("hammer", "unsold")]
    assert [i["name"] for i in game["items"]] == [e["name"] for e in hammers]
    assert [i["result"].get("price") for i in game["items"]] == [e.get("price") for e in hammers]
    money_left = {a: m["money_left"] for a, m in data["entry"]["metrics"]["agents"].items()}
    assert game["items"][-1]["left"] == money_left
    assert game["bidders"] == ["bidder_1", "bidder_2", "bidder_3"]
    first = game["items"][0]["rounds"][0]["bids"]
    logged = [line["parsed"] for line in _decisions(folders["auction_v0"])[:3]]
    assert [first[b] for b in game["bidders"]] == [None if p == -1 else p for p in logged]


def test_who_is_spy_speeches_votes_and_spy(folders: dict[str, Path]) -> None:
    data = payload(folders["who_is_spy_v0"])
    game, told = data["game"], data["record"]["game"]
    said = [line["parsed"][1] for line in _decisions(folders["who_is_spy_v0"]) if line["parsed"][0] == "describe"]
    assert [s["text"] for r in game["rounds"] for s in r["speeches"]] == said
    assert game["spies"] == [told["player_names"][s] for s in told["spy_seats"]]
    votes = [(v["voter"], v["target"]) for r in told["rounds"] for v in r["votes"]]
    assert [(v["voter"], v["target"]) for r in game["rounds"] for v in r["votes"]] == votes
    assert game["winner"] == told["outcome"]["winner"]


def test_trading_series(folders: dict[str, Path]) -> None:
    data = payload(folders["trading_v0"])
    game = data["game"]
    days = [e for e in data["record"]["events"] if e["type"] == "day"]
    assert len(game["dates"]) == len(days) + 1 == len(game["closes"])
    assert game["dates"][1:] == [d["next_date"] for d in days]
    for trader in game["traders"]:
        assert game["equity"][trader][1:] == [d["equity"][trader] for d in days]
        assert game["exposure"][trader] == [d["decisions"][trader]["exposure"] for d in days]
        assert game["equity"][trader][0] == data["record"]["config"]["initial_capital"]


def test_tank_states_are_the_environments(folders: dict[str, Path]) -> None:
    """Each picture's tanks, bullets and bases are the world of the environment stepped here with the
    logged actions; the targets, eliminations and destroyed bases are what the record says."""
    data = payload(folders["tank_battle_v0"])
    game, record = data["game"], data["record"]
    frames = game["frames"]
    assert len(frames) == 81 and game["mismatch"] == []
    env = tank_battle_v0.env(**data["env_kwargs"])
    env.reset(seed=data["entry"]["seed"])
    world = env.unwrapped.world
    seen = [_world_state(env.unwrapped)]
    decisions = iter(_decisions(folders["tank_battle_v0"]))
    for agent in env.agent_iter():
        done = env.terminations[agent] or env.truncations[agent]
        frame_before = env.unwrapped.frame_id
        env.step(None if done else next(decisions)["action"])
        if env.unwrapped.frame_id != frame_before:
            seen.append(_world_state(env.unwrapped))
    env.close()
    assert len(seen) == len(frames)
    for k, (state, frame) in enumerate(zip(seen, frames, strict=True)):
        assert [(t["id"], t["x"], t["y"], t["dir"], t["hp"]) for t in frame["tanks"]] == state["tanks"], k
        assert frame["bullets"] == state["bullets"] and frame["bases"] == state["bases"], k
    rounds = [e for e in record["events"] if e["type"] == "round"]
    assert len(rounds) == len(frames) - 1
    for k, logged in enumerate(rounds):
        frame = frames[k + 1]
        assert frame["targets"] == {p: t for p, t in logged["targets"].items()}
        alive = {t["id"] for t in frame["tanks"]}
        assert not set(logged["eliminated"]) & alive
        assert not set(logged["bases_destroyed"]) & set(frame["bases"])
    # the bricks: the first picture's map with every change applied is the world's last map
    bricks = np.array([[c == "1" for c in row] for row in game["bricks"]])
    for frame in frames:
        for r, c, on in frame["bricks"]:
            bricks[r, c] = on
    assert (bricks == world.bricks).all()


def _world_state(raw: Any) -> dict[str, Any]:
    world = raw.world
    return {"tanks": [(t.id, t.x, t.y, t.facing, t.health) for t in world.tanks],
            "bullets": [[b.x, b.y] for b in world.bullets], "bases": sorted(world.bases)}


def test_tank_cooperation_messages_are_shown_as_text(page: Any, tmp_path: Path) -> None:
    """A stage-3 game of three rounds in which tank 0 asks tank 1 for help with markup in its message:
    the view's pictures carry the messages the environment delivered, and the page shows them as text."""
    kwargs = {"stage": 3, "max_rounds": 3}
    env = tank_battle_v0.env(**kwargs)
    env.reset(seed=5)
    steps = []
    for agent in env.agent_iter():
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        coop = "#Request_coop# 1: " + XSS if agent == "tank_0" else "#No_coop#"
        action = "#Attack operation: Target -1: #Shoot#\n#Cooperation operation: " + coop
        steps.append({"episode": 0, "step": len(steps), "agent": agent, "action": action})
        env.step(action)
    record = env.unwrapped.episode_record()
    env.close()
    delivered = [request for e in record["events"] if e["type"] == "round" for request in e["requests"]]
    assert delivered and "<script>" in delivered[0][2]
    game = view_data("tank_battle_v0", kwargs, {"episode": 0, "seed": 5}, steps, json.loads(json.dumps(record)))
    assert game is not None and "error" not in game and game["mismatch"] == []
    assert [m for frame in game["frames"] for m in frame["messages"]] == [list(r) for r in delivered]
    page.goto(harness(tmp_path, [{"env": "tank_battle_v0", "game": game}]))
    page.locator("input.seek[type=range]").fill(str(len(game["frames"]) - 1))
    assert page.locator(".tank-message").count() == len(delivered)
    assert XSS in page.locator(".tank-message").first.inner_text()
    assert page.evaluate("() => window.pwned") is None


def test_tank_log_that_does_not_fit_is_named(folders: dict[str, Path]) -> None:
    """A record that disagrees with the re-played game is flagged by round; a log the environment does not
    accept (another agent to move, a decision missing) is an error with the pictures up to it."""
    data = payload(folders["tank_battle_v0"])
    args = (data["env"], data["env_kwargs"], data["entry"])
    record = json.loads(json.dumps(data["record"]))
    rounds = [e for e in record["events"] if e["type"] == "round"]
    rounds[5]["targets"] = {"0": 999, "1": 999}
    rounds[9]["eliminated"] = [0]
    assert view_data(*args, data["steps"], record)["mismatch"] == [5, 9]  # type: ignore[index]
    steps = [dict(line) for line in data["steps"]]
    steps[20]["agent"] = "tank_7"
    wrong = view_data(*args, steps, data["record"])
    assert wrong is not None and "decision 20: the log has tank_7 to move" in wrong["error"]
    assert len(wrong["frames"]) == 11  # the reset, then rounds 1-10 (decisions 0-19)
    short = view_data(*args, data["steps"][:-1], data["record"])
    assert short is not None and "the log ends after 159 decisions" in short["error"]


def test_tank_view_takes_under_0_3_s_for_80_rounds(folders: dict[str, Path]) -> None:
    data = payload(folders["tank_battle_v0"])
    assert data["entry"]["metrics"]["game"]["rounds"] == 80
    args = (data["env"], data["env_kwargs"], data["entry"], data["steps"], data["record"])
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        view_data(*args)
        timings.append(time.perf_counter() - started)
    assert min(timings) <= 0.3, timings


def test_unregistered_names_are_never_built() -> None:
    name = "tests_view_games_not_a_module:env"
    assert view_data(name, {}, {"seed": 1}, [], {}) is None
    assert "tests_view_games_not_a_module" not in sys.modules
    assert view_data("os:system", {}, {}, [], None) is None
    assert view_data(None, {}, {}, [], None) is None  # type: ignore[arg-type]


HOSTILE_RECORDS: list[Any] = [
    None, 3, "x", [], {}, {"events": "x"}, {"events": [None, 1, "x", {"type": None}]},
    {"events": [{"type": "round", "round": "1", "choices": "abc", "go": {"a": 1}, "bids": [None, "x", math.inf]},
                {"type": "turn", "shooter": 99, "target": -4, "alive_before": [99, "a"]},
                {"type": "item_open", "name": {"x": 1}}, {"type": "round_end", "decisions": [1, 2]},
                {"type": "hammer", "winner": 5, "price": "100"}, {"type": "setup", "budgets": "x"},
                {"type": "start", "dates": 5, "assets": [None]}, {"type": "day", "decisions": [], "closes": None}],
     "config": {"n_players": "3", "hit_rates": "x", "golds": -1, "ratio": "abc"}, "metrics": 5,
     "game": {"rounds": [None, {"descriptions": "x", "votes": [None], "tally": []}], "spy_seats": [99, "a"]}},
]


@pytest.mark.parametrize("env", sorted(RUNS))
def test_hostile_records_give_data_not_exceptions(env: str) -> None:
    for record in HOSTILE_RECORDS:
        for entry in ({}, {"seed": "x", "seats": 5}, {"seed": 3, "seats": {"a": 1}}):
            steps: Any = [None, {"agent": "tank_0", "action": "#Move_up#"}, {"finish": True}]
            game = view_data(env, {"stage": 4} if env == "tank_battle_v0" else {}, entry, steps, record)
            assert isinstance(game, dict)
            json.dumps(game, allow_nan=False)
    bad = view_data("tank_battle_v0", {"stage": "nine"}, {"seed": 1}, [], None)
    assert bad is not None and "error" in bad


# ------------------------------------------------------------------------------------------ browser

def harness(tmp_path: Path, payloads: list[dict[str, Any]]) -> str:
    """A test page: registry.js, then every other view script, then one ``#game-view`` root per
    payload, each rendered from its embedded JSON (``<``, ``>``, ``&`` escaped as the contract says)."""
    scripts = ["registry.js"] + sorted(p.name for p in STATIC.glob("*.js") if p.name != "registry.js")
    tags = "".join(f'<script src="{(STATIC / name).as_uri()}"></script>' for name in scripts)
    roots = ""
    for k, data in enumerate(payloads):
        text = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        roots += (f'<div id="game-view-{k}" class="root" data-env="{data["env"]}"></div>'
                  f'<script type="application/json" id="episode-data-{k}">{text}</script>')
    page = tmp_path / "harness.html"
    page.write_text(f"""<!doctype html><html><head><meta charset="utf-8">{tags}</head><body>{roots}
<script>
document.querySelectorAll(".root").forEach((root, k) => {{
  const data = JSON.parse(document.getElementById("episode-data-" + k).textContent);
  window.ArenaGames.render(data.env, root, data);
}});
</script></body></html>""", encoding="utf-8")
    return page.as_uri()


def _canvas_colours(page: Any, selector: str) -> list[int]:
    """Per canvas under ``selector``: how many distinct colours it shows (1: blank)."""
    return page.evaluate("""(sel) => [...document.querySelectorAll(sel + " canvas")].map((c) => {
        const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, seen = new Set();
        for (let i = 0; i < d.length; i += 4 * 7) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        return seen.size; })""", selector)


#: per game, texts its view must show (from the view data, so they follow the run)
def _expected_texts(env: str, game: dict[str, Any]) -> list[str]:
    if env == "auction_v0":
        item = game["items"][0]
        return [item["name"], f"sold to {item['result']['winner']} for ${item['result']['price']:,}", "withdraw"]
    if env == "who_is_spy_v0":
        speech = game["rounds"][0]["speeches"][0]
        vote = game["rounds"][0]["votes"][0]
        return [speech["text"], f"{vote['voter']} → {vote['target']}", f"The spy was {game['spies'][0]}",
                game["spy_word"]]
    if env == "trading_v0":
        return ["Prices", "Equity", "Position in SPX", game["dates"][-1]]
    if env == "tank_battle_v0":
        return ["picture"]
    return ["Equilibrium: " + game["equilibrium"]["text"]]


@pytest.mark.parametrize("env", sorted(RUNS))
def test_each_view_draws_in_the_browser(env: str, folders: dict[str, Path], page: Any, tmp_path: Path) -> None:
    data = payload(folders[env])
    page.goto(harness(tmp_path, [data]))
    root = page.locator("#game-view-0")
    assert root.get_attribute("data-game-view") == env
    assert page.locator(".game-error, .game-error-note").count() == 0
    colours = _canvas_colours(page, "#game-view-0")
    assert colours and min(colours) > 2, colours
    shown = root.inner_text()
    for text in _expected_texts(env, data["game"]):
        assert text in shown, (text, shown[:2000])
    if env.startswith(("guess", "el_farol", "divide", "public", "diners", "sealed", "battle", "pirate")):
        assert root.locator("table tbody tr").count() >= len(data["game"]["rounds"])


def test_tank_controls_step_back_seek_play(folders: dict[str, Path], page: Any, tmp_path: Path) -> None:
    data = payload(folders["tank_battle_v0"])
    frames = data["game"]["frames"]
    page.goto(harness(tmp_path, [data]))

    def shown() -> tuple[int, dict[str, str]]:
        index = int(page.locator("[data-frame]").inner_text())
        tanks = {el.get_attribute("data-tank"): el.inner_text() for el in page.locator("[data-tank]").all()}
        return index, tanks

    def expect(k: int) -> None:
        index, tanks = shown()
        assert index == k
        assert set(tanks) == {str(t["id"]) for t in frames[k]["tanks"]}
        for tank in frames[k]["tanks"]:
            assert f"{tank['x']},{tank['y']}" in tanks[str(tank["id"])]

    expect(0)
    before = page.locator("canvas").first.screenshot()
    for _ in range(3):
        page.click('[data-action="step"]')
    expect(3)
    page.click('[data-action="back"]')
    expect(2)
    page.locator("input.seek[type=range]").fill(str(len(frames) - 1))
    expect(len(frames) - 1)
    assert page.locator("canvas").first.screenshot() != before
    assert "GAME OVER" not in page.locator("[data-game-view]").inner_text()  # drawn on the canvas, not as text
    page.locator("input.seek[type=range]").fill("40")
    expect(40)
    page.click('[data-action="play"]')
    page.wait_for_function("() => Number(document.querySelector('[data-frame]').textContent) >= 42")
    page.click('[data-action="pause"]')
    paused = shown()[0]
    page.wait_for_timeout(600)
    assert shown()[0] == paused
    expect(paused)


def test_tank_canvas_is_the_pygame_picture(folders: dict[str, Path], page: Any, tmp_path: Path) -> None:
    """The canvas at a picture and the replay's pygame frame of it agree pixel by pixel on the field
    (text antialiasing aside: under 1 % of its pixels differ), and the panel has text on the same lines."""
    pytest.importorskip("pygame")
    from PIL import Image

    from arena_envs.runner.replay import episode_frames

    folder = folders["tank_battle_v0"]
    wanted = {30, 80}
    reference = {k: frame for k, frame in enumerate(episode_frames(folder, 0)) if k in wanted}
    page.goto(harness(tmp_path, [payload(folder)]))
    for k in sorted(wanted):
        page.locator("input.seek[type=range]").fill(str(k))
        url = page.evaluate("() => document.querySelector('canvas.tank-canvas').toDataURL('image/png')")
        drawn = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")).astype(int)
        ref = reference[k].astype(int)
        assert drawn.shape == ref.shape == (576, 832, 3)
        field = (slice(32, 544), slice(32, 544))
        differ = (np.abs(drawn[field] - ref[field]).sum(axis=2) > 60).mean()
        assert differ < 0.01, (k, differ)
        assert _inked_lines(drawn) == _inked_lines(ref), k


def _inked_lines(image: np.ndarray) -> list[bool]:
    """Per 16-px line of the side panel: whether it holds any text."""
    panel = image[32:544, 586:816].max(axis=2) > 60
    return [bool(panel[16 * k + 2:16 * k + 14].any()) for k in range(32)]


def _poisoned(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with XSS in every string the views show: names, speeches, words, panel lines."""
    game = json.loads(json.dumps(data["game"]))
    env = data["env"]
    if env == "auction_v0":
        game["items"][0]["name"] = XSS
        game["bidders"][0] = XSS
    elif env == "who_is_spy_v0":
        game["rounds"][0]["speeches"][0]["text"] = XSS
        game["spy_word"] = XSS
        game["spies"] = [XSS]
    elif env == "trading_v0":
        game["assets"] = [XSS]
        game["traders"][0] = XSS
    elif env == "tank_battle_v0":
        game["frames"][0]["panel"][0] = [XSS, XSS]
        game["frames"][0]["messages"] = [[0, 1, XSS]]
        game["frames"][0]["tanks"][0]["dir"] = XSS
        game["bases"][0]["letter"] = XSS
    else:
        game["players"][0] = XSS
        game["equilibrium"]["text"] = XSS
        game["label"] = XSS
    game.setdefault("seats", {})
    if isinstance(game["seats"], dict):
        game["seats"] = {**game["seats"], XSS: XSS}
    return {**data, "game": game}


def test_markup_in_a_payload_is_text(folders: dict[str, Path], page: Any, tmp_path: Path) -> None:
    payloads = [_poisoned(payload(folders[env])) for env in sorted(RUNS)]
    page.goto(harness(tmp_path, payloads))
    assert page.evaluate("() => window.pwned") is None
    page.wait_for_timeout(100)  # an image's error handler would have run by now
    assert page.evaluate("() => window.pwned") is None
    assert page.locator(".root b, .root script, .root img").count() == 0
    shown = page.locator("body").inner_text()
    assert shown.count(XSS) >= len(RUNS) - 1  # the tank's markup is drawn on the canvas, and in its tank list
    assert page.locator(".game-error").count() == 0


HOSTILE_GAMES: list[Any] = [
    None, 5, "x", [], {}, {"error": XSS},
    {"frames": [None, 1, {"tanks": "x", "panel": [1, None, ["a"]], "bricks": [[1], "x", [99, 99, 1]]},
                {"tanks": [None, {"id": XSS, "x": "1"}], "bullets": [[None, 1]], "messages": [5, [1]]}],
     "bricks": [5], "steel": "x", "water": [[1]], "bases": [None, {"x": 1}], "teams": [], "mismatch": "x"},
    {"items": [None, {"rounds": [None, {"bids": [1]}], "result": 5, "left": []}], "bidders": [1, None],
     "rounds": [None, {"speeches": [None, {"text": 5}], "votes": "x", "tally": [1]}], "players": "x",
     "dates": [1, None], "closes": [None, [1, "x"]], "equity": [], "assets": [None],
     "game": "sealed_bid_auction_v0", "equilibrium": [], "traders": [5]},
]


@pytest.mark.parametrize("game_name", ["sealed_bid_auction_v0", "battle_royale_v0", "pirate_game_v0",
                                       "guess_two_thirds_v0", "el_farol_v0", "diners_dilemma_v0",
                                       "divide_dollar_v0", "public_goods_v0"])
def test_gamma_view_of_odd_rounds_draws_without_errors(game_name: str, page: Any, tmp_path: Path) -> None:
    odd = {"kind": "gamma", "game": game_name, "players": ["p0", 5, None],
           "rounds": [None, {"round": "x", "choices": [1, None, "a"], "valuations": "x", "bids": [math.pi],
                             "proposal": [1], "votes": [True, 1], "alive_after": "x", "shooter": 7,
                             "target": None, "winners": [8], "orders": ["costly", 4], "go": [True, "x"]}],
           "equilibrium": {"text": 5, "choice": "x", "bid_share": None}, "params": {"hit_rates": "x"}}
    page.goto(harness(tmp_path, [{"env": game_name, "game": odd}]))
    assert page.locator(".game-error").count() == 0


def test_hostile_payloads_draw_what_they_can(page: Any, tmp_path: Path) -> None:
    payloads = [{"env": env, "game": game} for env in sorted(RUNS) for game in HOSTILE_GAMES]
    payloads.append({"env": "auction_v0"})
    page.goto(harness(tmp_path, payloads))
    assert page.locator("[data-game-view]").count() == len(payloads)
    assert page.locator(".game-error").count() == 0
    assert page.evaluate("() => window.pwned") is None


def test_a_long_series_draws(page: Any, tmp_path: Path) -> None:
    """A chart of 150,000 points draws (no spread of the whole series into one call)."""
    long = {"assets": ["A"], "traders": [], "dates": [], "closes": [[k % 97] for k in range(150_000)]}
    page.goto(harness(tmp_path, [{"env": "trading_v0", "game": long}]))
    assert page.locator(".game-error").count() == 0
    assert min(_canvas_colours(page, "#game-view-0")) > 2


def test_every_game_in_the_viewer_shows_its_transcript_and_its_view(folders: dict[str, Path], page: Any) -> None:
    """Through the real app (uvicorn on 127.0.0.1): each of the twelve games' run page leads to its
    episode, whose page holds one transcript entry per decision line and the game's own drawing; the
    tank's animation steps to the positions of the re-stepped world."""
    from arena_envs.view.catalog import folder_id
    from tests.view_helpers import element_screenshot, viewer_at

    pictured = {"tank_battle_v0": "tank", "auction_v0": "auction", "who_is_spy_v0": "who_is_spy",
                "trading_v0": "trading", "el_farol_v0": "el_farol"}

    with viewer_at(*folders.values()) as url:
        for env, folder in sorted(folders.items()):
            page.goto(f"{url.rstrip('/')}/run/{folder_id(folder)}")
            page.locator('a[href$="/episode/0"]').first.click()
            page.wait_for_selector(f'#game-view[data-game-view="{env}"]')
            decisions = [line for line in read_steps(folder, 0) if not line.get("finish")]
            assert page.locator(".decision").count() == len(decisions), env
            shown = page.locator(".decision").all()
            assert [d.get_attribute("data-agent") for d in shown] == [line["agent"] for line in decisions], env
            assert page.locator("#game-view canvas, #game-view table").count() > 0, env
            if env in pictured and env != "tank_battle_v0":
                element_screenshot(page, "#game-view", f"game_{pictured[env]}")
            if env == "tank_battle_v0":
                frames = view_data(env, read_config(folder)["env_kwargs"], read_episodes(folder / "episodes.jsonl")[0],
                                   read_steps(folder, 0), read_record(folder, 0))["frames"]  # type: ignore[index]
                page.click('[data-action="step"]')
                page.click('[data-action="step"]')
                assert page.locator("[data-frame]").inner_text() == "2"
                for tank in frames[2]["tanks"]:
                    assert f"{tank['x']},{tank['y']}" in page.locator(f'[data-tank="{tank["id"]}"]').inner_text()
                page.locator("input.seek[type=range]").fill("30")
                element_screenshot(page, "#game-view", "game_tank")
