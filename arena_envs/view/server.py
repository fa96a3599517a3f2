"""Serving the viewer: a socket bound before uvicorn starts (so a port in use is one line, and port
0 gives a free port whose URL is printed), uvicorn on it, and ``--open``.

Contract: :func:`bind` returns a listening socket on ``host``:``port`` or raises :class:`PortInUse`
(a :class:`ValueError`, reported as a user error); :func:`serve` runs until Ctrl-C; :func:`running`
serves in a thread for as long as its block runs (tests, benchmarks) and stops within its deadline.
"""
from __future__ import annotations

import errno
import socket
import threading
import time
import webbrowser
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

DEFAULT_HOST = "127.0.0.1"
START_SECONDS = 10.0


class PortInUse(ValueError):
    """The address asked for is taken, or cannot be bound."""


def bind(host: str = DEFAULT_HOST, port: int = 0) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: a free port the OS picks)."""
    if not 0 <= port <= 65535:
        raise PortInUse(f"--port {port} is not a TCP port (0 to 65535; 0 or none: a free one)")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as err:
        raise PortInUse(f"cannot listen on {host!r}: {err.strerror}; give --host an address of this machine") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise PortInUse(f"port {port} on {host} is in use; give another --port, or leave it out for a free one") \
                from None
        raise PortInUse(f"cannot listen on {host} port {port}: {err.strerror}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    """The http URL of a bound socket."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def _server(app: Any) -> uvicorn.Server:
    return uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))


def serve(app: Any, sock: socket.socket, open_browser: bool = False) -> None:
    """Serve ``app`` on ``sock`` until interrupted; print the URL first (and open it with ``open_browser``)."""
    url = url_of(sock)
    print(f"arena view: {url} (Ctrl-C to stop)", flush=True)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, (url,)).start()
    _server(app).run(sockets=[sock])


@contextmanager
def running(app: Any, host: str = DEFAULT_HOST) -> Iterator[str]:
    """Serve ``app`` on a free port of ``host`` in a thread while the block runs; yields its URL."""
    sock = bind(host, 0)
    server = _server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="arena-view")
    thread.start()
    deadline = time.monotonic() + START_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError("the viewer's server did not start")
        time.sleep(0.01)
    try:
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(START_SECONDS)
        sock.close()
