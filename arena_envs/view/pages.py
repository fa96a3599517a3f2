"""The viewer's pages as HTML, the same for the server (app.py) and the static export (export.py).

Contract: :class:`Viewer` holds the catalog of the given folders (found again at most every
:data:`CATALOG_TTL` seconds) and each run's byte-offset indexes (paging.py); its ``*_page`` methods
render a Jinja2 template (autoescape on) with links made by a :class:`Links` (server URLs or the
export's relative file names). Every value read from a folder reaches the page as escaped text, or as
JSON inside a ``<script type="application/json">`` element (payload.script_json). A missing id is
:class:`NotFound`; a damaged file shows as a message on its page, never as an exception.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from arena_envs.view import catalog as cat
from arena_envs.view.observations import NotRecovered, recover
from arena_envs.view.paging import EpisodeLine, RunFiles
from arena_envs.view.payload import episode_payload, script_json

PAGE_SIZE = 50
CATALOG_TTL = 2.0
#: episodes.jsonl lines the live API sends at most per answer
API_ROWS = 200


class NotFound(LookupError):
    """No run, episode, evaluation, card or figure of that id in the catalog."""


class Links:
    """The pages' URLs: the server's absolute paths from the site's root, or with ``export`` the static
    site's file names, relative to its folder (every page sits at its top; no API to poll)."""

    def __init__(self, export: bool = False):
        self.export = export
        self.api = not export

    def index(self) -> str:
        return "index.html" if self.export else "/"

    def run(self, run: str, page: int = 0) -> str:
        if self.export:
            return f"run-{run}" + (f"-p{page}" if page else "") + ".html"
        return f"/run/{run}" + (f"?page={page}" if page else "")

    def episode(self, run: str, episode: int) -> str:
        return f"episode-{run}-{episode}.html" if self.export else f"/run/{run}/episode/{episode}"

    def evaluation(self, evaluation: str) -> str:
        return f"eval-{evaluation}.html" if self.export else f"/eval/{evaluation}"

    def card(self, card: str) -> str:
        return f"card-{card}.html" if self.export else f"/card/{card}"

    def figure(self, card: str, number: int) -> str:
        return f"figures/{card}-{number}.png" if self.export else f"/figure/{card}/{number}"

    def static(self, name: str) -> str:
        return f"static/{name}" if self.export else f"/static/{name}"

    def episodes_api(self, run: str) -> str:
        return "" if self.export else f"/api/run/{run}/episodes"


@dataclass
class RunState:
    """A run's progress as the page shows it."""

    committed: int
    planned: int | None
    live: bool

    @property
    def status(self) -> str:
        if self.live:
            return "live"
        if self.planned is not None and self.committed >= self.planned:
            return "finished"
        return "stopped"


def environment() -> jinja2.Environment:
    """The templates of arena_envs/view/templates, autoescaped."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("arena_envs.view", "templates"),
                             autoescape=True)
    env.filters["script_json"] = lambda value: jinja2.utils.markupsafe.Markup(script_json(value))
    env.filters["share"] = _share
    env.filters["number"] = _number
    env.filters["runs_of"] = _runs_of
    return env


def _runs_of(players: Any) -> list[tuple[str, int]]:
    """A run.json players list as (spec, how many in a row): ``random ×9`` for nine seats of it."""
    if not isinstance(players, list):
        return [] if players is None else [(str(players), 1)]
    runs: list[tuple[str, int]] = []
    for spec in map(str, players):
        if runs and runs[-1][0] == spec:
            runs[-1] = (spec, runs[-1][1] + 1)
        else:
            runs.append((spec, 1))
    return runs


def _share(value: Any) -> str:
    return f"{100 * value:.0f} %" if isinstance(value, (int, float)) and not isinstance(value, bool) else "n/a"


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "n/a" if value is None else str(value)
    return f"{value:.3f}" if isinstance(value, float) else str(value)


class Viewer:
    """The catalog of ``roots`` and the pages over it."""

    def __init__(self, roots: Sequence[str | Path], links: Links | None = None):
        self.roots = list(roots)
        self.links = links or Links()
        self.templates = environment()
        self._lock = threading.Lock()
        self._catalog = cat.find(self.roots)  # NotResults, PermissionError: reported before serving
        self._found_at = time.monotonic()
        self._files: dict[str, RunFiles] = {}

    # ------------------------------------------------------------------ data

    @property
    def catalog(self) -> cat.Catalog:
        return self._catalog

    def refresh_catalog(self) -> cat.Catalog:
        """The catalog, found again when older than :data:`CATALOG_TTL` (a folder that became
        unreadable or empty keeps the last one). The index page and a lookup of an unknown id call
        it; the other pages (a live run's page polls every second) do not walk the folders."""
        with self._lock:
            if time.monotonic() - self._found_at > CATALOG_TTL:
                try:
                    self._catalog = cat.find(self.roots)
                except (OSError, ValueError):
                    pass
                self._found_at = time.monotonic()
            return self._catalog

    def _lookup(self, kind: str, key: str) -> Any:
        """The catalogued run, evaluation or card ``key`` (``kind``: the catalog's attribute), the
        catalog found again first when it does not know it."""
        found = getattr(self.catalog, kind).get(key)
        if found is None:
            found = getattr(self.refresh_catalog(), kind).get(key)
        if found is None:
            raise NotFound(f"no {kind.rstrip('s')} {key!r} in this catalog")
        return found

    def run(self, run_id: str) -> cat.Run:
        run: cat.Run = self._lookup("runs", run_id)
        return run

    def files(self, run: cat.Run, log: bool = False) -> RunFiles:
        """The run's indexes, ``episodes.jsonl``'s brought up to date (and ``log.jsonl``'s with ``log``:
        a run page needs only the first)."""
        with self._lock:
            files = self._files.get(run.id)
            if files is None:
                files = self._files[run.id] = RunFiles(run.path)
        if log:
            files.refresh()
        else:
            files.episodes.refresh()
        return files

    def state(self, run: cat.Run, files: RunFiles) -> RunState:
        committed = len(files.episodes)
        return RunState(committed, run.planned, cat.is_live(run, committed))

    def row(self, run: cat.Run, line: EpisodeLine) -> dict[str, Any]:
        """An episode list's row: the episode, its seats and scores, decisions and invalid answers."""
        if line.entry is None:
            return {"line": line.index + 1, "error": line.error}
        entry = line.entry
        seats = _mapping(entry.get("seats"))
        agents = _mapping(_mapping(entry.get("metrics")).get("agents"))
        scores = {agent: _mapping(values).get("score") for agent, values in agents.items()}
        counts = [_mapping(c) for c in _mapping(entry.get("invalid")).values()]
        episode = entry["episode"]
        return {"line": line.index + 1, "episode": episode, "href": self.links.episode(run.id, episode),
                "seats": [[agent, str(label), _number(scores.get(agent))] for agent, label in seats.items()],
                "steps": entry.get("steps"),
                "invalid": sum(_count(c.get("unparseable")) + _count(c.get("illegal")) for c in counts),
                "fallback": sum(_count(c.get("fallback")) for c in counts)}

    def rows_since(self, run_id: str, start: int) -> dict[str, Any]:
        """The live API's answer: the run's state and the rows of lines ``start`` on (at most :data:`API_ROWS`)."""
        run = self.run(run_id)
        files = self.files(run)
        state = self.state(run, files)
        rows = [self.row(run, line) for line in files.episodes.lines(max(start, 0), API_ROWS)]
        return {"committed": state.committed, "planned": state.planned, "status": state.status, "rows": rows}

    # ------------------------------------------------------------------ pages

    def render(self, template: str, **context: Any) -> str:
        return self.templates.get_template(template).render(links=self.links, **context)

    def index_page(self) -> str:
        catalog = self.refresh_catalog()
        runs = []
        for run in sorted(catalog.runs.values(), key=lambda r: r.label):
            files = self.files(run)
            board, _ = cat.read_json(run.path / "leaderboard.json")
            runs.append({"run": run, "state": self.state(run, files), "leader": _leader(board)})
        return self.render("index.html", runs=runs, catalog=catalog,
                           evaluations=sorted(catalog.evaluations.values(), key=lambda e: e.label),
                           cards=sorted(catalog.cards.values(), key=lambda c: c.label))

    def run_page(self, run_id: str, page: int = 0) -> str:
        run = self.run(run_id)
        files = self.files(run)
        state = self.state(run, files)
        pages = max(1, -(-state.committed // PAGE_SIZE))
        page = min(max(page, 0), pages - 1)
        rows = [self.row(run, line) for line in files.episodes.lines(page * PAGE_SIZE, PAGE_SIZE)]
        board, board_error = cat.read_json(run.path / "leaderboard.json")
        if board is not None and not isinstance(board, dict):
            board, board_error = None, "leaderboard.json is not a JSON object"
        evaluation = self.catalog.evaluations.get(run.evaluation) if run.evaluation else None
        return self.render("run.html", run=run, state=state, rows=rows, page=page, pages=pages,
                           page_size=PAGE_SIZE, board=board, board_error=board_error, evaluation=evaluation,
                           first_line=page * PAGE_SIZE, last_page=page == pages - 1,
                           columns=_board_columns(board), rating_kind=_rating_kind(board))

    def episode_page(self, run_id: str, episode: int) -> str:
        run = self.run(run_id)
        files = self.files(run, log=True)
        index = files.episodes.line_of(episode)
        lines = files.episodes.lines(index, 1) if index is not None else []
        if index is None or not lines or lines[0].entry is None:
            raise NotFound(f"episode {episode} is not committed in run {run.label}")
        entry = lines[0].entry
        block = files.log.block(episode)
        payload, game_error = episode_payload(run.env, run.env_kwargs, entry, block)
        try:
            observations: dict[str, Any] = {"texts": recover(run.env, run.env_kwargs, entry.get("seed"),
                                                             payload["steps"])}
        except NotRecovered as err:
            observations = {"error": str(err)}
        neighbours = [files.episodes.lines(index + delta, 1) if index + delta >= 0 else [] for delta in (-1, 1)]
        near = [n[0].episode if n and n[0].entry is not None else None for n in neighbours]
        return self.render("episode.html", run=run, entry=entry, payload=payload, game_error=game_error,
                           observations=observations,
                           block_missing=block is None, previous=near[0], next=near[1],
                           page=index // PAGE_SIZE, seats=list(entry.get("seats", {}) or {}),
                           games=GAME_SCRIPTS)

    def evaluation_page(self, evaluation_id: str) -> str:
        evaluation: cat.Evaluation = self._lookup("evaluations", evaluation_id)
        runs = []
        for run_key in evaluation.runs:
            run = self.catalog.runs.get(run_key)
            if run is None:  # gone since: the catalog was found again meanwhile
                continue
            runs.append({"run": run, "state": self.state(run, self.files(run))})
        card = self.catalog.cards.get(evaluation.card) if evaluation.card else None
        return self.render("eval.html", evaluation=evaluation, runs=runs, card=card)

    def card_page(self, card_id: str) -> str:
        card: cat.Card = self._lookup("cards", card_id)
        report = None
        if card.report is not None:
            try:
                report = card.report.read_text(encoding="utf-8", errors="replace")
            except OSError as err:
                report = f"(report.md cannot be read: {err.strerror})"
        return self.render("card.html", card=card, report=report)

    def figure(self, card_id: str, number: int) -> Path:
        """The path of figure ``number`` of a catalogued card (only files the catalog found)."""
        card: cat.Card = self._lookup("cards", card_id)
        if not 0 <= number < len(card.figures):
            raise NotFound(f"no figure {number} of card {card_id!r}")
        return card.figures[number]


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a damaged entry shows as missing values)."""
    return value if isinstance(value, dict) else {}


def _count(value: Any) -> int:
    return value if type(value) is int else 0


#: the game views' scripts an episode page loads after static/games/registry.js (the package's files)
GAME_SCRIPTS = sorted(p.name for p in (Path(__file__).parent / "static" / "games").glob("*.js")
                      if p.name != "registry.js")


def _leader(board: Any) -> str | None:
    """The first row's player of a leaderboard (None: no leaderboard)."""
    rows = board.get("rows") if isinstance(board, dict) else None
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
        return None
    return str(rows[0].get("policy"))


def _rating_kind(board: Any) -> str | None:
    """The rating columns a leaderboard has: "mu" (TrueSkill's μ and σ), "rating" (another rating), None."""
    if not isinstance(board, dict):
        return None
    rows = board.get("rows")
    first = rows[0] if isinstance(rows, list) and rows and isinstance(rows[0], dict) else {}
    if board.get("rating") == "trueskill" or (board.get("rating") is None and first.get("mu") is not None):
        return "mu"
    return "rating" if board.get("rating") else None


def _board_columns(board: Any) -> list[str]:
    """The metric names of a leaderboard's ``means``, ``score`` first, then as the rows list them."""
    rows = board.get("rows") if isinstance(board, dict) else None
    names: list[str] = []
    for row in rows if isinstance(rows, list) else []:
        means = row.get("means") if isinstance(row, dict) else None
        for name in means if isinstance(means, dict) else {}:
            if name not in names:
                names.append(name)
    return sorted(names, key=lambda name: name != "score")
