"""What the OpenAI-compatible HTTP backend checks before any request, without importing httpx (the
spec parser checks the same): the server URL's form and the request deadline's range."""
from __future__ import annotations

from urllib.parse import urlsplit

from arena_envs.core.answers import excerpt

#: The longest request deadline (the ``timeout`` option) accepted, in seconds: one day.
MAX_TIMEOUT = 86400.0
#: The longest host name of a server URL (the DNS limit).
MAX_HOST_CHARS = 253
#: The accepted server URL form, as error messages state it.
URL_FORM = "http(s)://HOST[:PORT][/PATH] with a port from 1 to 65535, no query and no #fragment"


def server_url(url: str) -> str:
    """``url`` without trailing slashes; ``ValueError`` (one line) unless it is an ``http``/``https``
    URL with a host, a port from 1 to 65535 when one is given, and no query, fragment or whitespace."""
    problem = _url_problem(url)
    if problem:
        raise ValueError(f"server URL {excerpt(url)} {problem}; expected {URL_FORM}")
    return url.rstrip("/")


def check_timeout(seconds: float, name: str = "timeout") -> float:
    """``seconds`` when it is a number of seconds > 0 and at most :data:`MAX_TIMEOUT`, else ``ValueError``
    naming the setting ``name`` and the limit (NaN and infinities are refused)."""
    if not 0 < seconds <= MAX_TIMEOUT:
        raise ValueError(f"{name} must be seconds > 0 and at most {MAX_TIMEOUT:g} (one day), got {seconds!r}")
    return float(seconds)


def _url_problem(url: str) -> str | None:
    """What is wrong with ``url`` in a few words (``None``: nothing)."""
    if not url.isprintable() or any(c.isspace() for c in url):
        return "holds whitespace or control characters"
    try:
        parts = urlsplit(url)
    except ValueError:  # a broken [IPv6] host
        return "has a malformed host"
    try:
        port = parts.port
    except ValueError:  # out of 0-65535 or not a number
        port = 0
    if parts.scheme not in ("http", "https"):
        return "is not an http:// or https:// URL"
    if not parts.hostname:
        return "names no host"
    if len(parts.hostname) > MAX_HOST_CHARS:
        return f"has a host longer than {MAX_HOST_CHARS} characters"
    if port == 0:
        return "has a port that is not a number from 1 to 65535"
    if "#" in url:
        return "has a #fragment"
    if "?" in url:
        return "has a query"
    return None
