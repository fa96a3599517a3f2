"""The Starlette app of ``arena view``: the pages of pages.py, the live API and the files they use.

Routes::

    /                                  runs, evaluations and report cards
    /run/{run}?page=P                  settings, progress, leaderboard, a page of episodes
    /run/{run}/episode/{k}             transcript and game view of committed episode k
    /eval/{evaluation}   /card/{card}  an evaluation's parts; a report card and its figures
    /figure/{card}/{n}                 figure n of a card (a PNG the catalog found)
    /api/run/{run}/episodes?from=N     the run's state and its episodes.jsonl rows from line N (JSON)
    /static/{name}                     the viewer's own scripts and styles

Contract: every response is read-only over the folders; ids come from the catalog and a URL never
names a path (a file is served only when the catalog or the package's static folder lists it); an
unknown id is 404. Pages carry ``Cache-Control: no-store`` (a live run changes them).
"""
from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from arena_envs.view.pages import NotFound, Viewer

STATIC = Path(__file__).parent / "static"
NO_STORE = {"Cache-Control": "no-store"}
MEDIA_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


def static_files() -> dict[str, Path]:
    """The package's static files by their name under static/ (``games/registry.js``)."""
    return {path.relative_to(STATIC).as_posix(): path for path in STATIC.rglob("*")
            if path.is_file() and path.suffix in MEDIA_TYPES}


def _int(text: str | None, default: int = 0) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


def create_app(viewer: Viewer) -> Starlette:
    """The app serving ``viewer``'s pages."""
    files = static_files()

    def page(html: str) -> HTMLResponse:
        return HTMLResponse(html, headers=NO_STORE)

    def index(request: Request) -> Response:
        return page(viewer.index_page())

    def run(request: Request) -> Response:
        return page(viewer.run_page(request.path_params["run"], _int(request.query_params.get("page"))))

    def episode(request: Request) -> Response:
        return page(viewer.episode_page(request.path_params["run"], request.path_params["episode"]))

    def evaluation(request: Request) -> Response:
        return page(viewer.evaluation_page(request.path_params["evaluation"]))

    def card(request: Request) -> Response:
        return page(viewer.card_page(request.path_params["card"]))

    def figure(request: Request) -> Response:
        return FileResponse(viewer.figure(request.path_params["card"], request.path_params["number"]),
                            media_type="image/png", headers=NO_STORE)

    def episodes_api(request: Request) -> Response:
        start = _int(request.query_params.get("from"))
        return JSONResponse(viewer.rows_since(request.path_params["run"], start), headers=NO_STORE)

    def static(request: Request) -> Response:
        path = files.get(request.path_params["name"])
        if path is None:
            raise NotFound(f"no static file {request.path_params['name']!r}")
        return FileResponse(path, media_type=MEDIA_TYPES[path.suffix])

    async def not_found(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(f"not found: {exc}", status_code=404)

    routes = [
        Route("/", index),
        Route("/run/{run}", run),
        Route("/run/{run}/episode/{episode:int}", episode),
        Route("/eval/{evaluation}", evaluation),
        Route("/card/{card}", card),
        Route("/figure/{card}/{number:int}", figure),
        Route("/api/run/{run}/episodes", episodes_api),
        Route("/static/{name:path}", static),
    ]
    return Starlette(routes=routes, exception_handlers={NotFound: not_found})
