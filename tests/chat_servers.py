"""Scripted OpenAI-compatible servers for the tests (Python's ``http.server`` on 127.0.0.1): a handler
base that lists one model and answers JSON, and :func:`chat_server`, which runs a handler class in a
thread for the length of a ``with`` block."""
from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class JsonHandler(http.server.BaseHTTPRequestHandler):
    """Lists the model ``model`` (the server's ``model`` attribute, else ``m``); subclasses answer ``POST``
    with :meth:`reply` or :meth:`reply_text`."""

    disable_nagle_algorithm = True  # the head and the body go out at once, not 40 ms apart

    def do_GET(self) -> None:
        self.reply({"object": "list", "data": [{"id": getattr(self.server, "model", "m"), "object": "model"}]})

    def read_body(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")

    def reply_text(self, text: str, prompt_tokens: int = 5, completion_tokens: int = 3) -> None:
        """A chat completion whose one choice says ``text``."""
        self.reply({"id": "x", "object": "chat.completion", "model": getattr(self.server, "model", "m"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                              "total_tokens": prompt_tokens + completion_tokens}})

    def reply(self, data: object) -> None:
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def chat_server(handler: type[JsonHandler], model: str = "m") -> Iterator[http.server.ThreadingHTTPServer]:
    """A server of ``handler`` listing ``model``, serving in a thread; its URL is
    ``f"http://127.0.0.1:{server.server_port}/v1"``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.model = model  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
