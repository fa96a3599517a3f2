"""``arena view --export SITE/``: the viewer's pages as a static site that opens from ``file://``.

Contract: SITE holds ``index.html``, ``run-<id>[-p<page>].html`` (every page of every run),
``episode-<id>-<k>.html`` (every committed episode, its payload and observation texts embedded),
``eval-<id>.html``, ``card-<id>.html``, ``figures/`` (the cards' PNG files, copied) and ``static/``
(the scripts and styles, copied); every link is relative and nothing is fetched, so the folder can
be zipped and shared. SITE must be absent, empty or an earlier export (its marker file
:data:`MARKER`), and may not lie inside a catalogued run or evaluation: the folders are only read.
A live run is exported as it is at that moment.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from arena_envs.view.app import static_files
from arena_envs.view.pages import PAGE_SIZE, Viewer

MARKER = ".arena-view-export"


def _check_site(viewer: Viewer, site: Path) -> None:
    if site.exists() and not site.is_dir():
        raise ValueError(f"--export {site}: is a file, not a folder")
    if site.is_dir() and any(site.iterdir()) and not (site / MARKER).exists():
        raise ValueError(f"--export {site}: the folder is not empty and holds no earlier export; give a new folder")
    target = site.resolve()
    catalog = viewer.catalog
    for folder in [r.path for r in catalog.runs.values()] + [e.path for e in catalog.evaluations.values()]:
        if target.is_relative_to(folder.resolve()):
            raise ValueError(f"--export {site}: lies inside {folder}, which the viewer only reads; give a folder "
                             "outside the results")


def export_site(viewer: Viewer, site: Path) -> int:
    """Write ``viewer``'s pages into ``site`` (its links must be the export's, ``Links(export=True)``); the
    number of pages."""
    if not viewer.links.export:
        raise TypeError("export_site needs a Viewer made with Links(export=True)")
    _check_site(viewer, site)
    site.mkdir(parents=True, exist_ok=True)
    (site / MARKER).write_text("written by arena view --export\n", encoding="utf-8")
    links = viewer.links
    catalog = viewer.catalog
    written = 0

    def write(name: str, html: str) -> None:
        nonlocal written
        (site / name).write_text(html, encoding="utf-8")
        written += 1

    write(links.index(), viewer.index_page())
    for run in catalog.runs.values():
        files = viewer.files(run)
        count = len(files.episodes)
        for page in range(max(1, -(-count // PAGE_SIZE))):
            write(links.run(run.id, page), viewer.run_page(run.id, page))
        for line in files.episodes.lines(0, count):
            if line.episode is not None:
                write(links.episode(run.id, line.episode), viewer.episode_page(run.id, line.episode))
    for evaluation in catalog.evaluations:
        write(links.evaluation(evaluation), viewer.evaluation_page(evaluation))
    for card in catalog.cards.values():
        write(links.card(card.id), viewer.card_page(card.id))
        for number, figure in enumerate(card.figures):
            target = site / links.figure(card.id, number)
            target.parent.mkdir(exist_ok=True)
            shutil.copyfile(figure, target)
    for name, path in static_files().items():
        target = site / links.static(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return written
