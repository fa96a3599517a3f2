"""Dump what every registered game does, in files that ``diff -r`` compares between two commits.

Usage: ``python scripts/behaviour_dump.py OUT_DIR`` (OUT_DIR must not exist or be empty).

For every environment of ``arena_envs.registration.ENVIRONMENTS`` and every documented variant it
writes ``OUT_DIR/<env>[-<variant>]/``:

* ``runner/``: a seeded run of ``RUNNER_EPISODES`` episodes through :func:`arena_envs.runner.run`
  (the game's ``rule`` players, else its ``equilibrium`` ones, else ``random``; the trading game
  a mix of its rule players, ``MIXED_POLICIES``): the results folder's ``run.json``,
  ``episodes.jsonl``, ``log.jsonl``, ``leaderboard.json`` and ``leaderboard.md``, without what
  depends on the machine or the clock (session start time, package version, git commit);
* ``aec-seed<S>.jsonl``: a direct AEC loop per seed of ``AEC_SEEDS`` with seeded masked random
  actions, one JSON line per step (agent, observation with its text and numbers, reward,
  termination, truncation, info, the action taken), then the episode's metrics and record; arrays
  of more than ``LARGE_ARRAY`` elements (the tank's grids) by the SHA-256 of their bytes; for the
  games of ``TEXT_ANSWERS`` also ``aec-text-seed<S>.jsonl``, where most decisions are texts.

``EXTRA_VARIANTS`` adds configurations (``<env>-x_<label>/``) for settings no variant covers.

Long games would be shortened by the same keyword arguments every time (``SHORTER``; none needs
it today: the whole dump takes about 30 s). Two dumps of one commit are identical. The code dumped
is the ``arena_envs`` that Python imports (stderr names it), so ``PYTHONPATH`` picks a tree.
To check that a change keeps behaviour, dump before and after it, e.g.::

    mkdir -p /tmp/before && git archive BASE | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before python scripts/behaviour_dump.py /tmp/dump-before
    python scripts/behaviour_dump.py /tmp/dump-after
    diff -r /tmp/dump-before /tmp/dump-after     # empty: the same behaviour
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import enum
import hashlib
import json
import math
import re
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

RUNNER_EPISODES = 2
RUNNER_SEED = 0
AEC_SEEDS = (0, 1)
#: agent_iter bound of one AEC episode (every game ends far sooner, with SHORTER)
MAX_ITERATIONS = 20_000

#: keyword arguments added to every variant of a long game (a variant's own value wins)
SHORTER: dict[str, dict[str, Any]] = {}

_SYNTHETIC = {"data": "synthetic", "history_start": "2025-04-01", "trade_start": "2025-05-01",
              "eval_start": "2025-06-02", "end": "2025-06-30"}
#: configurations dumped beside the registered variants (folder ``<env>-x_<label>``): settings the
#: variants leave out
EXTRA_VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "trading_v0": {
        "excess_two_assets": {**_SYNTHETIC, "assets": ["SYA", "SYB"], "reward_type": "excess_return", "n_agents": 3},
        "pnl_ruin": {**_SYNTHETIC, "reward_type": "pnl", "cost_bps": 6000.0, "n_agents": 3, "max_retries": 0},
        "ladder_half": {**_SYNTHETIC, "position_rule": "ladder", "default_size": 0.5, "cost_bps": 25.0,
                        "max_retries": 1},
        "shared_drift_impact": {**_SYNTHETIC, "assets": {"SYS": "stock", "SYC": "crypto"}, "book_mode": "shared",
                                "exposure_drift": True, "price_impact": 0.5, "action_mode": "weights",
                                "allow_short": False, "max_gross_exposure": 0.8, "reward_type": "log_return",
                                "max_exposure": 0.7},
    },
    # re-asks where the default asks no more (tank, Who is Spy) or falls back only after five (γ-Bench)
    "tank_battle_v0": {"retries": {"stage": 5, "max_retries": 1}},
    "who_is_spy_v0": {"retries": {"max_retries": 1}},
    "el_farol_v0": {"retries": {"max_retries": 1}},
    "pirate_game_v0": {"retries": {"max_retries": 1}},
    "battle_royale_v0": {"retries": {"max_retries": 1}},
}

#: text answers that a second AEC loop (``aec-text-seed<S>.jsonl``) gives instead of a native action
#: at about two decisions in three, drawn with the seed: the parser, re-asks and fallbacks
TEXT_ANSWERS: dict[str, tuple[str, ...]] = {
    "trading_v0": ("BUY", "SELL 0.5", "HOLD", "no idea", '{"decision": "SELL"}', "TARGET -0.3", "buy buy sell",
                   '{"SYA": "BUY", "SYB": "TARGET 0.25"}', "SYA: SELL, SYB: BUY 0.4", "DECISION: HOLD"),
    "auction_v0": ("I'm out!", "I bid $1200!", "I bid $5000!", "I bid $30!", "I bid $99999!", "pass",
                   "I'll bid $2500, final.", "I bid $"),
    "tank_battle_v0": ("#Operation: #Move_up#", "#Operation: #Shoot#", "Move_left", "I refuse to play",
                       "#Attack operation: Target 101: #Shoot#\n#Cooperation operation: #No_coop#",
                       "#Attack operation: Target -1: #Move_down#\n#Cooperation operation: #Keep_coop#",
                       "#Attack operation: Target 999: #Shoot#",
                       "#Request_coop# 1: cover me\n#Attack operation: Target 200: #Move_right#",
                       "Reply_message 1: yes\n#Operation: #Move_left#"),
    "who_is_spy_v0": ("It is sweet.", "Round and often red.", "", "player_2", "player_1", "abstain",
                      "I vote for player_3", "我喜欢喝茶"),
    "el_farol_v0": ('{"decision": "go"}', '{"decision": "stay"}', "go to the bar", "maybe", '{"decision": "dance"}'),
    "pirate_game_v0": ('{"proposal": {"1": 96, "2": 0, "3": 1, "4": 0, "5": 1, "6": 0, "7": 1, "8": 0, "9": 1, '
                       '"10": 0}}',
                       '{"proposal": {"2": 100}}', '{"decision": "accept"}', '{"decision": "reject"}', "I accept",
                       "no"),
    "battle_royale_v0": ('{"action": "shoot", "target": "player_1"}', '{"action": "miss", "target": null}',
                         '{"action": "shoot", "target": "player_9"}', "shoot", '{"action": "shoot"}'),
}

#: policy names tried in order for the runner's seats; the first the game has is used
PREFERRED_POLICIES = ("rule", "equilibrium", "random")
#: a mix of rule policies per seat where the game has several (seat k plays entry k mod len)
MIXED_POLICIES: dict[str, tuple[str, ...]] = {
    "trading_v0": ("rule", "momentum", "short_and_hold", "mean_reversion", "buy_and_hold", "cash"),
}

#: run.json session fields that depend on the clock, the installation or the checkout
VOLATILE_SESSION_KEYS = frozenset({"started", "package", "commit"})
#: results files copied (the figures are images, and ``.lock`` holds a process id)
RESULT_FILES = ("run.json", "episodes.jsonl", "log.jsonl", "leaderboard.json", "leaderboard.md")

#: arrays with more elements are written as the SHA-256 of their bytes (the tank's grids)
LARGE_ARRAY = 512

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def variants() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(environment, folder name, constructor keyword arguments) of every default and variant."""
    from arena_envs.registration import ENVIRONMENTS

    for name, entry in ENVIRONMENTS.items():
        extra = {f"x_{label}": kwargs for label, kwargs in EXTRA_VARIANTS.get(name, {}).items()}
        for label, kwargs in {"default": {}, **entry.variants, **extra}.items():
            folder = name if label == "default" else f"{name}-{label}"
            yield name, folder, {**SHORTER.get(name, {}), **kwargs}


def plain(value: Any) -> Any:
    """``value`` as JSON data, the same for equal values in any process: arrays with their dtype
    and shape (large ones by a hash of their bytes), numpy scalars as Python numbers, sets sorted,
    non-finite floats as strings, other objects by their repr without memory addresses."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, np.ndarray):
        if value.size > LARGE_ARRAY:
            digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
            return {"ndarray": str(value.dtype), "shape": list(value.shape), "sha256": digest}
        return {"ndarray": str(value.dtype), "shape": list(value.shape), "data": plain(value.tolist())}
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(item) for item in value), key=repr)
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {type(value).__name__: plain(dataclasses.asdict(value))}
    return _ADDRESS.sub("", repr(value))


def line(value: Any) -> str:
    return json.dumps(plain(value), ensure_ascii=False) + "\n"


# ------------------------------------------------------------------------------------ the runner

def players(name: str, seats: int) -> tuple[str, ...]:
    from arena_envs.runner.policy_registry import POLICIES

    names = {policy for (scope, policy) in POLICIES if scope in (name, "*")}
    if name in MIXED_POLICIES:
        mix = [policy for policy in MIXED_POLICIES[name] if policy in names]
        return tuple(mix[k % len(mix)] for k in range(seats))
    chosen = next(policy for policy in PREFERRED_POLICIES if policy in names)
    return (chosen,) * seats


def canonical_results(folder: Path, out: Path, replace: Mapping[str, str]) -> None:
    """Copy the results ``folder``'s files into ``out``: JSON re-written in key order as stored,
    episodes sorted by id, session fields of the clock and the checkout dropped, the given
    absolute paths replaced by placeholders."""
    out.mkdir(parents=True)

    def unpath(text: str) -> str:
        for path, placeholder in replace.items():
            text = text.replace(path, placeholder)
        return text

    for file in RESULT_FILES:
        source = folder / file
        if not source.exists():
            continue
        text = unpath(source.read_text(encoding="utf-8"))
        if file == "run.json":
            run = json.loads(text)
            run["sessions"] = [{key: value for key, value in session.items() if key not in VOLATILE_SESSION_KEYS}
                               for session in run.get("sessions", [])]
            text = json.dumps(run, indent=1, ensure_ascii=False) + "\n"
        elif file.endswith(".jsonl"):
            rows = [json.loads(row) for row in text.splitlines() if row.strip()]
            # episodes finish in any order with concurrency; within one, lines keep their order
            rows.sort(key=lambda row: row["episode"])
            text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        elif file.endswith(".json"):
            text = json.dumps(json.loads(text), indent=1, ensure_ascii=False) + "\n"
        (out / file).write_text(text, encoding="utf-8")


def dump_run(name: str, kwargs: dict[str, Any], out: Path, scratch: Path) -> None:
    from arena_envs.registration import make
    from arena_envs.runner import RunConfig, run

    env = make(name, **kwargs)
    seats = len(env.possible_agents)
    env.close()
    folder = scratch / out.parent.name
    config = RunConfig(name, players(name, seats), RUNNER_EPISODES, seed=RUNNER_SEED, env_kwargs=kwargs)
    run(config, folder, plots=False)
    root = str(Path(sys.modules["arena_envs"].__file__ or "").resolve().parents[1])
    canonical_results(folder, out, {str(folder): "<RESULTS>", str(scratch): "<SCRATCH>", root: "<ROOT>"})


# ---------------------------------------------------------------------------------- the AEC loop

def dump_aec(name: str, kwargs: dict[str, Any], seed: int, out: Path, texts: tuple[str, ...] = ()) -> None:
    """One episode of seeded masked random play, every step written as a JSON line; with
    ``texts``, about two decisions in three answer one of them instead."""
    from arena_envs.registration import make

    env = make(name, **kwargs)
    try:
        env.reset(seed=seed)
        sampled = {agent: copy.deepcopy(env.action_space(agent)) for agent in env.possible_agents}
        for k, agent in enumerate(env.possible_agents):
            sampled[agent].seed(seed * 1000 + k)
        rng = np.random.default_rng(seed)
        with out.open("w", encoding="utf-8") as file:
            for step, agent in enumerate(env.agent_iter(MAX_ITERATIONS)):
                observation, reward, termination, truncation, info = env.last()
                if termination or truncation:
                    action = None
                else:
                    mask = observation.get("action_mask") if isinstance(observation, dict) else None
                    action = sampled[agent].sample(mask=mask)
                    if texts and rng.random() < 2 / 3:
                        action = texts[int(rng.integers(len(texts)))]
                file.write(line({"step": step, "agent": agent, "observation": observation, "reward": reward,
                                 "termination": termination, "truncation": truncation, "info": info,
                                 "action": action}))
                env.step(action)
            raw = env.unwrapped
            end: dict[str, Any] = {"end": True, "agents_left": list(env.agents)}
            for method in ("episode_metrics", "episode_record"):
                if hasattr(raw, method):
                    end[method] = getattr(raw, method)()
            file.write(line(end))
    finally:
        env.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="folder to write (absent or empty)")
    parser.add_argument("--only", default=None, help="dump only the environments whose folder name starts so")
    args = parser.parse_args(argv)
    import arena_envs  # noqa: F401  (named on stderr below)

    out: Path = args.out
    if out.exists() and any(out.iterdir()):
        parser.error(f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    print(f"dumping {Path(sys.modules['arena_envs'].__file__ or '').parent}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="behaviour-dump-") as scratch:
        for name, folder, kwargs in variants():
            if args.only and not folder.startswith(args.only):
                continue
            started = time.perf_counter()
            target = out / folder
            target.mkdir()
            (target / "kwargs.json").write_text(line(kwargs), encoding="utf-8")
            dump_run(name, kwargs, target / "runner", Path(scratch))
            for seed in AEC_SEEDS:
                dump_aec(name, kwargs, seed, target / f"aec-seed{seed}.jsonl")
                if name in TEXT_ANSWERS:
                    dump_aec(name, kwargs, seed, target / f"aec-text-seed{seed}.jsonl", TEXT_ANSWERS[name])
            print(f"{folder} {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
