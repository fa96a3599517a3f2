"""``arena play ENV --web``: the person's seat as a page, served by Starlette on uvicorn, the game
played by the runner in the server's event loop (:mod:`arena_envs.runner.play_game`).

Routes: ``GET /`` the page (``templates/play.html``, Jinja2 with autoescape), ``GET
/static/play.js`` and ``/static/play.css`` (and the viewer's game scripts: the page draws the tank
battle's field at each turn, and every game's view, as ``arena view`` shows it, at its end), ``GET
/api/state`` (:meth:`WebSeat.state`, which the page polls), ``POST /api/answer`` (an answer to the
open question: a JSON object of at most :data:`MAX_BODY` bytes; 400 when it is malformed or does not
fit, and the game never sees it) and ``POST /api/close`` (abandons a game not over, then stops the
server). The server binds ``host`` (127.0.0.1 by default) and answers only requests addressed to it
there (a DNS-rebinding page cannot post answers). Stopping the server (``/api/close``, Ctrl-C,
SIGTERM) abandons a game not over: the runner commits nothing of it, and :func:`play_web` returns a
result without scores.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import threading
import webbrowser
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import jinja2
import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from arena_envs.runner.play_game import PlayResult, PlayRunner, play_game, prepare, start
from arena_envs.runner.results import ResultsError, iter_log, read_episodes
from arena_envs.view.pages import GAME_SCRIPTS
from arena_envs.view.payload import episode_payload
from arena_envs.view.server import bind, url_of
from arena_envs.view.web_seat import BadAnswer, WebSeat, WebSeatPolicy, WebTankSeat

HERE = Path(__file__).parent
#: the most bytes of a posted body
MAX_BODY = 16_384
#: seconds an abandoned game gets to end on its own (an opponent's model answering) before it is cancelled
END_SECONDS = 5.0
#: the viewer's scripts that draw a game (the tank's field at each turn, every game's view at the end)
BOARD_SCRIPTS = ("registry.js", *GAME_SCRIPTS)
STATIC = {"play.js": ("text/javascript", HERE / "static" / "play.js"),
          "play.css": ("text/css", HERE / "static" / "play.css"),
          **{name: ("text/javascript", HERE / "static" / "games" / name) for name in BOARD_SCRIPTS}}
HEADERS = {"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; "
                                      "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}
_templates = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)


def play_app(seat: WebSeat, close: Callable[[], None], hosts: Sequence[str] = ("127.0.0.1", "localhost")) -> Starlette:
    """The page's app over ``seat``; ``close()`` stops the server; ``hosts``: the Host names it answers."""

    async def page(request: Request) -> Response:
        html = _templates.get_template("play.html").render(env=seat.env, me=seat.me, header=seat.header,
                                                            scripts=BOARD_SCRIPTS)
        return HTMLResponse(html, headers=HEADERS)

    async def static(request: Request) -> Response:
        kind, path = STATIC[request.path_params["name"]]
        return FileResponse(path, media_type=kind, headers=HEADERS)

    async def state(request: Request) -> Response:
        return JSONResponse(seat.state(), headers=HEADERS)

    async def answer(request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        try:
            seat.answer(body)
        except BadAnswer as err:
            return _error(400, str(err))
        return JSONResponse({"ok": True}, headers=HEADERS)

    async def close_page(request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        seat.abandon()
        close()
        return JSONResponse({"ok": True}, headers=HEADERS)

    routes = [Route("/", page), Route("/static/{name:str}", static_route(static)), Route("/api/state", state),
              Route("/api/answer", answer, methods=["POST"]), Route("/api/close", close_page, methods=["POST"])]
    return Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))])


def static_route(serve: Callable[[Request], Any]) -> Callable[[Request], Any]:
    """``serve`` for the names of :data:`STATIC` only (404 otherwise: no path from a URL reaches the disk)."""
    async def route(request: Request) -> Response:
        if request.path_params["name"] not in STATIC:
            return _error(404, "not found")
        response: Response = await serve(request)
        return response
    return route


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status, headers=HEADERS)


async def _json_body(request: Request) -> Any:
    """The posted JSON, or the error response: 400 for another content type or bad JSON, 413 past :data:`MAX_BODY`."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return _error(400, "post application/json")
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            return _error(413, f"a body of at most {MAX_BODY} bytes")
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return _error(400, "the body is not JSON")


@contextlib.contextmanager
def _signals_end_the_server() -> Iterator[None]:
    """While serving, uvicorn turns Ctrl-C and SIGTERM into a shutdown and raises them again when
    it is done; here they have done their work then (the game is abandoned, the status is 0)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, lambda signum, frame: None) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def serve_game(seat: WebSeat, runner: PlayRunner, sock: socket.socket, hosts: Sequence[str]) -> PlayResult:
    """Serve the page on ``sock`` while ``runner``'s game plays (:func:`play_game`); when the server
    stops, a game not over is abandoned."""
    server = uvicorn.Server(uvicorn.Config(play_app(seat, lambda: setattr(server, "should_exit", True), hosts),
                                           log_level="warning", access_log=False, lifespan="off"))

    async def played() -> PlayResult:
        try:
            result = await play_game(runner)
        except Exception as err:
            seat.finished(None, str(err))
            raise
        if result.scores is not None:
            seat.show(_episode_view(runner), final=True)
        seat.finished(result.scores)
        return result

    task = asyncio.ensure_future(played())
    with _signals_end_the_server():
        await server.serve(sockets=[sock])
    seat.abandon()
    done, _ = await asyncio.wait({task}, timeout=END_SECONDS)
    if not done:  # an opponent still thinking: stop it (nothing of the game is committed)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return PlayResult(seat.me, None, runner.watched.steps if runner.watched is not None else 0)
    return task.result()


def _episode_view(runner: PlayRunner) -> dict[str, Any] | None:
    """The finished game's view, as ``arena view`` draws its episode (the game is over: nothing in it is
    hidden from the person any more); None when it cannot be made."""
    try:
        folder = runner.folder.path
        entry = read_episodes(folder / "episodes.jsonl")[0]
        block = next(iter_log(folder, (entry["episode"],)))
    except (ResultsError, OSError, IndexError, StopIteration):
        return None
    lines = [*block.steps, *([{"record": block.record}] if block.record is not None else [])]
    payload, _ = episode_payload(runner.config.env, dict(runner.config.env_kwargs), entry, lines)
    game: dict[str, Any] | None = payload["game"]
    return game


def play_web(env_name: str, seat: int = 0, opponents: Sequence[str] = (), seed: int = 0,
             env_kwargs: Mapping[str, Any] | None = None, out: str | Path | None = None, *, host: str = "127.0.0.1",
             port: int = 0, open_browser: bool = False, output: TextIO | None = None) -> PlayResult:
    """``arena play --web``: check the request, bind the port, create the folder, print the folder,
    the game and the URL, then serve until the page closes it or the server is stopped."""
    game = prepare(env_name, seat, list(opponents), seed, dict(env_kwargs or {}), out)
    sock = bind(host, port)
    try:
        web = WebSeat(env_name, game.me, game.header(), str(game.out))
        person = WebTankSeat(web) if env_name == "tank_battle_v0" else WebSeatPolicy(web)
        runner = start(game, person, web)
    except BaseException:
        sock.close()
        raise
    url = url_of(sock)
    hosts = ["*"] if host in ("0.0.0.0", "::", "") else sorted({host, "127.0.0.1", "localhost", "[::1]"})
    print(f"results folder: {game.out}\n{game.header()}\nplay in your browser: {url} (Ctrl-C to stop)",
          file=output, flush=True)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, (url,)).start()
    return asyncio.run(serve_game(web, runner, sock, hosts))
