"""``arena eval --compare DIR DIR ...``: several evaluation folders' report cards in one table
(``compare.md``) and one chart (``compare.png``).

The folders must be evaluations of different models on the same games in the same settings (the
paper settings, changed by the same ``--env-arg`` values as ``eval.json`` records them); anything
else is refused in one line. Episode counts and seeds may differ: each figure carries its own interval.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from arena_envs.evaluation.card import Card, flagged_games, prompt_hashes, read_card
from arena_envs.evaluation.formatting import CI, FLAG, VALIDITY_NOTE, headline_cell, point_cell, validity_cell
from arena_envs.evaluation.plots import write_compare_plot
from arena_envs.evaluation.settings import read_manifest


def check_comparable(folders: Sequence[Path]) -> None:
    """ValueError (one line) unless ``folders`` are two or more evaluations of different models on
    the same games and settings."""
    if len(folders) < 2:
        raise ValueError(f"--compare needs two or more evaluation folders, got {len(folders)}")
    manifests = [read_manifest(f) for f in folders]
    seen: dict[str, Path] = {}
    for folder, manifest in zip(folders, manifests):
        model = str(manifest["model"])
        if model in seen:
            raise ValueError(f"{seen[model]} and {folder} are evaluations of the same model {model!r}; "
                             f"--compare takes one folder per model")
        seen[model] = folder
    first, games = folders[0], list(manifests[0]["games"])
    for folder, manifest in zip(folders[1:], manifests[1:]):
        if list(manifest["games"]) != games:
            raise ValueError(f"{folder} evaluated games {', '.join(manifest['games'])} but {first} evaluated "
                             f"{', '.join(games)}; --compare needs the same games")
        for game in games:
            ours, theirs = manifests[0].get("env_args", {}).get(game, {}), manifest.get("env_args", {}).get(game, {})
            if ours != theirs:
                raise ValueError(f"{folder} played {game} with --env-arg {theirs} but {first} with {ours}; "
                                 f"--compare needs the same settings")


def _mode(card: Card, subject: str) -> str:
    """``"quick, 12"``: the mode and the subject's episodes over all games (played/expected while unfinished)."""
    played = sum(sum(g.results[subject].played.values()) for g in card.games if subject in g.results)
    expected = sum(sum(g.results[subject].expected.values()) for g in card.games if subject in g.results)
    count = str(played) if played >= expected else f"{played}/{expected}"
    return f"{'quick' if card.quick else 'full'}, {count}"


def _flagged(cell: str, flagged: bool) -> str:
    return f"{cell} {FLAG}" if flagged else cell


def format_compare(cards: Sequence[Card]) -> str:
    games = cards[0].games
    header = ["Model", "Mode, episodes"]
    for g in games:
        header += [f"{g.setting.label}: {g.setting.metric} [{CI}]", f"{g.setting.label}: valid · re-asked · fallback"]
    rows = []
    for card in cards:
        cells = []
        for g in card.games:
            model = g.results.get("model")
            cells += [_flagged(headline_cell(model), model.validity.flagged), validity_cell(model.validity)] \
                if model else ["–", "–"]
        rows.append([f"`{card.model}`", _mode(card, "model"), *cells])
    for subject in ("random", "rule"):
        if all(subject in g.results for g in games):
            cells = []
            for g in games:
                result = g.results[subject]
                cells += [_flagged(point_cell(result), result.validity.flagged), validity_cell(result.validity)]
            rows.append([f"{subject} (baseline, {cards[0].folder.name})", _mode(cards[0], subject), *cells])
    lines = ["# Report cards compared", "",
             "One row per evaluated model (headline metric per game with its 95 % bootstrap interval), "
             "recomputed from each folder's results; the baselines' rows are those of the first folder.", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", VALIDITY_NOTE]
    flagged = [f"`{card.model}` in {', '.join(g.setting.label for g in games_flagged)}" for card in cards
               if (games_flagged := flagged_games(card))]
    if flagged:
        lines += ["", f"{FLAG} Not the model's play (more than a tenth of its decisions fell back): "
                  + "; ".join(flagged) + "."]
    first = prompt_hashes(cards[0])
    for card in cards[1:]:
        differ = [game for game, digest in prompt_hashes(card).items() if digest != first.get(game)]
        if differ:
            lines += ["", f"{FLAG} `{card.model}` and `{cards[0].model}` were played with different prompts in "
                      f"{', '.join(differ)} (another version of the games, or one not recorded): those figures do "
                      "not compare."]
    lines += ["", "Folders: " + ", ".join(f"`{c.folder}`" for c in cards), "", "![Compared](compare.png)", ""]
    return "\n".join(lines)


def compare(folders: Sequence[str | Path], out: str | Path | None = None) -> Path:
    """Write ``compare.md`` and ``compare.png`` into ``out`` (default ``results/compare`` under the
    current directory) for evaluation folders ``folders``; returns the path of ``compare.md``."""
    paths = [Path(f) for f in folders]
    check_comparable(paths)
    cards = [read_card(p) for p in paths]
    target = Path(out) if out is not None else Path.cwd() / "results" / "compare"
    target.mkdir(parents=True, exist_ok=True)
    write_compare_plot(cards, target / "compare.png")
    path = target / "compare.md"
    path.write_text(format_compare(cards), "utf-8")
    return path
