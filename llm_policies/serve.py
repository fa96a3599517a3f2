"""Start a local vLLM OpenAI-compatible server on 127.0.0.1 and wait until it answers; stop a detached one.

    arena serve MODEL_PATH [--port 8000] [--host 127.0.0.1] [--name NAME] [--detach] [-- VLLM ARGS...]
    arena serve --stop [--port 8000] [--host 127.0.0.1]

The server runs ``python -m vllm.entrypoints.openai.api_server`` with the python of the venv made
by ``scripts/setup_llm.sh`` (``--python`` to choose another). Without ``--detach`` it stays in the
foreground until interrupted; with it, the command returns once ``/v1/models`` lists the model,
prints the server's process id and records the server (pid, URL, model, served name, log) in
``<cache_dir>/servers/<host>-<port>.json`` (:func:`llm_policies.local_stack.cache_dir`,
``ARENA_CACHE_DIR``). ``arena serve --stop`` stops the recorded server at that host and port (its
whole process group) and removes the record, and only a server ``arena serve`` started: a record naming
another process is refused (:mod:`llm_policies.server_records`); ``kill -- -PID`` with the printed pid
works too.
Errors are one line on stderr with exit status 2 (a server that fails to start: status 1).
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from arena_envs.core.extras import needs_extra, require

with needs_extra("llm", __name__):
    import httpx

from arena_envs.core.cli_parser import OneLineParser
from llm_policies.backends.openai_http import listed_models
from llm_policies.cpu_cores import share_all_cores
from llm_policies.cpu_dtype import resolve_dtype
from llm_policies.local_stack import smollm2_dir, vllm_python
from llm_policies.server_records import NoServer, record_path, server_record, stop_recorded, write_record

#: vLLM's CPU KV cache size (GiB) unless ``VLLM_CPU_KVCACHE_SPACE`` is already set: room for 32
#: concurrent ~1k-token float32 SmolLM2 sequences and their cached prefixes (with 2 GiB, half of
#: the prompt tokens of a 32-episode auction run missed the prefix cache).
DEFAULT_KV_CACHE_GIB = "4"
#: KV-cache block size in tokens unless the caller passes ``--block-size`` (see ``VLLMServer``).
DEFAULT_BLOCK_SIZE = 32


class ServerError(RuntimeError):
    """The server process exited or did not become ready in time."""


class VLLMServer:
    """One ``vllm`` API server process (with its engine children, in their own process group).

    ``env`` is set for the server's process over the caller's environment, e.g.
    ``{"VLLM_CPU_KVCACHE_SPACE": "1"}`` for a 1 GiB KV cache instead of :data:`DEFAULT_KV_CACHE_GIB`."""

    def __init__(self, model: str, *, port: int = 8000, host: str = "127.0.0.1", name: str | None = None,
                 python: str | Path | None = None, log_path: str | Path | None = None,
                 max_model_len: int = 8192, extra_args: list[str] | None = None,
                 env: Mapping[str, str] | None = None):
        if not 0 < port < 65536:
            raise ValueError(f"port must be in 1..65535, got {port}")
        self.model = model
        self.host = host
        self.port = port
        self.name = name or Path(model).name
        self.python = str(python or (vllm_python() if vllm_python().exists() else sys.executable))
        self.log_path = Path(log_path) if log_path else None
        self.env = dict(env or {})
        extra_args = list(extra_args or [])
        whole_prompts = ("--enable-chunked-prefill", "--no-enable-chunked-prefill", "--max-num-batched-tokens")
        if not any(arg.startswith(whole_prompts) for arg in extra_args):
            # vllm-cpu 0.32's engine dies ("CPU Generator does not use offset") when a seeded request
            # with temperature > 0 has its prompt split over scheduler steps: whole prompts only
            extra_args += ["--no-enable-chunked-prefill", "--max-num-batched-tokens", str(max_model_len)]
        if not any(arg == "--block-size" or arg.startswith("--block-size=") for arg in extra_args):
            # the prefix cache reuses a prompt up to the last full block before it changes: 32-token
            # blocks leave 16 tokens of it unused on average, vllm-cpu's default 128-token ones 64
            extra_args += ["--block-size", str(DEFAULT_BLOCK_SIZE)]
        if "--enable-prompt-tokens-details" not in extra_args:
            extra_args.append("--enable-prompt-tokens-details")  # each answer's usage: its prompt tokens cached
        if not any(arg == "--dtype" or arg.startswith("--dtype=") for arg in extra_args):
            extra_args += ["--dtype", resolve_dtype()]  # float32 on a CPU without bf16 (cpu_dtype)
        self.command = [self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", model,
                        "--served-model-name", self.name, "--host", host, "--port", str(port),
                        "--max-model-len", str(max_model_len), *extra_args]
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self, timeout: float = 900.0) -> VLLMServer:
        """Launch the server and block until ``/v1/models`` lists the model; a start that fails or is
        interrupted (Ctrl-C) stops what it launched."""
        env = {**os.environ, **self.env}
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", DEFAULT_KV_CACHE_GIB)
        share_all_cores(env)
        with contextlib.ExitStack() as stack:  # the child keeps its own handle of the log
            log = stack.enter_context(open(self.log_path, "ab")) if self.log_path else subprocess.DEVNULL
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True)
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise ServerError(f"vLLM server for {self.model} exited with code {self.process.returncode} "
                                  f"before it was ready; see {self.log_path or 'its output'}")
            if self.serves_model():
                return
            time.sleep(1.0)
        raise ServerError(f"vLLM server at {self.url} did not list model {self.name!r} within {timeout:g}s")

    def serves_model(self) -> bool:
        try:
            return self.name in (listed_models(httpx.get(f"{self.url}/models", timeout=2.0)) or [])
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        """SIGKILL the whole process group at once (a crash, for fault tests)."""
        self._signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait()

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM the process group, then SIGKILL whatever is left after ``grace`` seconds."""
        if self.process is None or self.process.poll() is not None:
            self._signal(signal.SIGKILL)  # orphaned engine children, if any
            return
        self._signal(signal.SIGTERM)
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            pass
        self._signal(signal.SIGKILL)
        self.process.wait()

    def _signal(self, sig: signal.Signals) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> VLLMServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def smollm2_server(name: str = "smollm2-135m-instruct", log_path: str | Path | None = None,
                   env: Mapping[str, str] | None = None) -> VLLMServer:
    """The suite's small local model (SmolLM2 of ``scripts/setup_llm.sh``) as ``name`` on a free port of
    127.0.0.1, not started yet; eager mode (no torch.compile at start-up: vllm-cpu cannot reload its
    cache); ``env`` as for :class:`VLLMServer`."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return VLLMServer(str(smollm2_dir()), port=port, name=name, log_path=log_path, extra_args=["--enforce-eager"],
                      env=env)


def looks_like_path(model: str) -> bool:
    """A folder rather than a hub id such as ``Qwen/Qwen2.5-7B-Instruct`` (which vLLM downloads)."""
    return model.startswith(("/", ".", "~")) or model.count("/") > 1


def parser() -> OneLineParser:
    """The options of ``arena serve``; an error is one line with exit status 2."""
    p = OneLineParser(prog="arena serve", description=__doc__.splitlines()[0])
    p.add_argument("model", nargs="?", metavar="MODEL_PATH",
                   help="model folder (or name available offline); not with --stop")
    p.add_argument("--port", type=int, default=8000, help="port to serve on, or of the server to stop (default 8000)")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on, or of the server to stop (default "
                   "127.0.0.1)")
    p.add_argument("--name", help="served model name (default: the folder's name)")
    p.add_argument("--python", help="python that has vLLM (default: the venv of scripts/setup_llm.sh)")
    p.add_argument("--log", help="file for the server's output")
    p.add_argument("--max-model-len", type=int, default=8192)
    p.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for readiness")
    p.add_argument("--detach", action="store_true",
                   help="return once ready, leaving the server running (recorded for --stop)")
    p.add_argument("--stop", action="store_true",
                   help="stop the server that --detach left at --host and --port, and remove its record")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    options = parser()
    args = options.parse_args(argv)
    if not 0 < args.port < 65536:
        options.error(f"argument --port: must be in 1..65535, got {args.port}")
    if args.stop:
        if args.model or extra:
            options.error(f"--stop takes only --host and --port, got {' '.join([args.model or '', *extra]).strip()}")
        return stop(args.host, args.port)
    if args.model is None:
        options.error("the following arguments are required: MODEL_PATH (or --stop)")
    if looks_like_path(args.model) and not Path(args.model).expanduser().is_dir():
        print(f"arena serve: error: model folder {args.model} does not exist (make SmolLM2's with "
              "scripts/setup_llm.sh)", file=sys.stderr)
        return 2
    server = VLLMServer(args.model, port=args.port, host=args.host, name=args.name, python=args.python,
                        log_path=args.log, max_model_len=args.max_model_len, extra_args=extra)
    if server.python == sys.executable:  # no venv of scripts/setup_llm.sh, no --python: vLLM must be here
        require("vllm", "arena serve", "vllm")
    started = time.perf_counter()
    try:
        server.start(args.timeout)
    except ServerError as err:
        print(f"arena serve: error: {err}", file=sys.stderr)
        return 1
    process = server.process
    assert process is not None  # start() returned: the server runs
    print(f"vLLM ready at {server.url} serving {server.name!r} (pid {process.pid}, "
          f"{time.perf_counter() - started:.0f}s)", flush=True)
    if args.detach:
        log = str(Path(args.log).resolve()) if args.log else None
        write_record(record_path(args.host, args.port),
                     server_record(process.pid, server.url, args.model, server.name, log))
        print(f"stop it with: arena serve --stop --host {args.host} --port {args.port}", flush=True)
        return 0
    try:
        process.wait()
    except KeyboardInterrupt:
        server.stop()
    return process.returncode or 0


def stop(host: str, port: int) -> int:
    """``arena serve --stop``: stop the recorded server at ``host:port``; exit status 0, or 2 with one line."""
    try:
        record = stop_recorded(host, port)
    except NoServer as err:
        print(f"arena serve: error: {err}", file=sys.stderr)
        return 2
    print(f"stopped the vLLM server at {record.url} (pid {record.pid})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
