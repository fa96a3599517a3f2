"""``arena serve-agent ENV SPEC [--host H] [--port P] [--token-env VAR]``: serve a policy spec of game
ENV over the agent protocol (:mod:`agent_service.server`) until Ctrl-C or SIGTERM.

It binds 127.0.0.1 unless ``--host`` says otherwise, and prints one line with its address once it
listens (``--port 0``: a free port). With ``--token-env VAR`` every request must carry
``Authorization: Bearer $VAR``. A bad game, spec or address is one line on stderr, exit status 2.
"""
from __future__ import annotations

import ipaddress
import os
import socket
import sys

from arena_envs.core.answers import excerpt
from arena_envs.core.cli_parser import OneLineParser
from arena_envs.core.extras import needs_extra
from arena_envs.registration import ENVIRONMENTS

LOOPBACK = "127.0.0.1"


def parser() -> OneLineParser:
    p = OneLineParser(prog="arena serve-agent", description="Serve a policy spec over the agent protocol "
                                                            "(docs/agents.md).")
    p.add_argument("env", help="the game (arena list)")
    p.add_argument("spec", help="the policy spec served (rule, random, sb3:PATH, vllm:MODEL@URL, hf:PATH...)")
    p.add_argument("--host", default=LOOPBACK, help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=9000, help="port (0: a free one; default 9000)")
    p.add_argument("--token-env", default=None, metavar="VAR",
                   help="require the bearer token held by environment variable VAR")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        with needs_extra("agents", "arena serve-agent"):
            import uvicorn

            from agent_service.server import AgentService
        from arena_envs.runner.policy_specs import make_policy

        if args.env not in ENVIRONMENTS:
            raise ValueError(f"unknown game {excerpt(args.env)}; known: {', '.join(sorted(ENVIRONMENTS))}")
        if not 0 <= args.port <= 65535:
            raise ValueError(f"--port must be from 0 to 65535, got {args.port}")
        token = None
        if args.token_env is not None:
            token = os.environ.get(args.token_env)
            if not token:
                raise ValueError(f"--token-env names {excerpt(args.token_env)}, which is not set or empty")
        service = AgentService(args.env, args.spec, make_policy, token)
        sock = listen(args.host, args.port)
    except (ValueError, OSError) as err:
        print(f"arena serve-agent: error: {err}", file=sys.stderr)
        return 2
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"arena serve-agent: {args.spec} for {args.env} at http://{shown}:{port} (Ctrl-C stops)", flush=True)
    if not _loopback(host):
        print(f"arena serve-agent: warning: {host} is reachable from other machines; anyone who reaches it sees "
              "the game's observations" + ("" if token else " (no --token-env: no token is asked)"), file=sys.stderr,
              flush=True)
    config = uvicorn.Config(service.app(), log_level="warning", access_log=False, lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        service.close()
        sock.close()
    return 0


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: a free port) whose connections send without delay."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # answers go out at once (connections inherit it): uvicorn writes the head and the body apart, and the
    # body would wait for the client's delayed acknowledgement, about 40 ms a decision
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    sock.listen(512)
    return sock


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
