"""What a run wrote that must be reproducible, read from a results folder for comparisons."""
from __future__ import annotations

import json
from pathlib import Path


def folder_content(folder: Path) -> dict[str, object]:
    """The ``episodes.jsonl`` lines sorted by episode id, and each episode's ``log.jsonl`` block as
    written (bytes as text): equal for two folders when their episodes are byte-identical, whatever
    order concurrent workers finished them in."""
    episodes = (folder / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    blocks: dict[int, str] = {}
    for line in (folder / "log.jsonl").read_text(encoding="utf-8").splitlines(keepends=True):
        episode = json.loads(line)["episode"]
        blocks[episode] = blocks.get(episode, "") + line
    return {"episodes": sorted(episodes, key=lambda line: json.loads(line)["episode"]),
            "log": dict(sorted(blocks.items()))}
