"""Connect to a Ray cluster, or start a private one on 127.0.0.1, for the length of a ``with`` block.

Ray is an optional extra (``pip install 'arena-envs[ray]'``) and is imported here only when a session
starts. A local cluster never reaches another address: its node binds 127.0.0.1, it has no
dashboard, Ray's usage statistics are off (``RAY_USAGE_STATS_ENABLED=0``), ``RAY_ADDRESS`` from
the environment is ignored (``ray.init`` would otherwise join whatever cluster it names), its object
store is capped (Ray's default takes 30 % of the machine's memory), and it is shut down, with its
temporary folder removed, when the block ends. A cluster that is already initialised in this
process is used as it is and left running.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_envs.core.extras import needs_extra

LOOPBACK = "127.0.0.1"
DEFAULT_OBJECT_STORE_MB = 256
LOCAL = "local"


@dataclass(frozen=True)
class RaySession:
    """``address``: the cluster's GCS address; ``started``: whether this session started it
    (then it is local, on 127.0.0.1, and shut down when the session ends)."""

    address: str
    started: bool


def import_ray() -> Any:
    """The ``ray`` module, or :class:`~arena_envs.core.extras.MissingExtra` with the install line."""
    with needs_extra("ray", "arena run --ray"):
        import ray
    return ray


def worker_pythonpath() -> str:
    """``PYTHONPATH`` for local workers: this process's import path, so that modules importable here
    (a checkout, ``tests``) are importable in the workers too."""
    entries = [str(Path(entry).resolve()) for entry in sys.path if entry and Path(entry).is_dir()]
    return os.pathsep.join(dict.fromkeys([str(Path.cwd().resolve()), *entries]))


@contextmanager
def ray_session(address: str | None = None, *, num_cpus: int | None = None,
                object_store_mb: int = DEFAULT_OBJECT_STORE_MB) -> Iterator[RaySession]:
    """Ray for the block: ``address`` None or ``"local"`` starts a local cluster of ``num_cpus``
    CPUs (default: this machine's) on 127.0.0.1; any other address (``HOST:PORT``, ``ray://...``,
    ``auto``) connects to that running cluster, and the block's end only disconnects."""
    ray = import_ray()
    if ray.is_initialized():
        yield RaySession(ray.get_runtime_context().gcs_address, started=False)
        return
    if num_cpus is not None and num_cpus < 1:
        raise ValueError(f"num_cpus must be >= 1, got {num_cpus}")
    if address not in (None, LOCAL):
        _connect(ray, address)
        try:
            yield RaySession(ray.get_runtime_context().gcs_address, started=False)
        finally:
            ray.shutdown()
        return
    os.environ.pop("RAY_ADDRESS", None)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # Ray turns a node address of 127.0.0.1 into the machine's outward address unless "clusters"
    # are off (its OSX/Windows default), a flag it reads from the environment when imported; that
    # flag changes only node-address resolution (and the `ray start` command), so switch it off.
    constants = ray._private.ray_constants
    clusters, constants.ENABLE_RAY_CLUSTER = constants.ENABLE_RAY_CLUSTER, False
    # a short path: Ray's AF_UNIX sockets live under it and such paths are limited to 107 bytes
    temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp" if os.path.isdir("/tmp") else None)
    # the workers get the user's proxy settings back (they may call LLM servers on other hosts)
    user_proxies = {name: os.environ.get(name, "") for name in _PROXY_VARIABLES}
    try:
        with _node_process_environment():
            start_local(ray, num_cpus=num_cpus, include_dashboard=False, _node_ip_address=LOOPBACK,
                        _temp_dir=temp_dir, object_store_memory=object_store_mb * 1024 * 1024,
                        log_to_driver=False, logging_level="WARNING",
                        runtime_env={"env_vars": {"PYTHONPATH": worker_pythonpath(), "RAY_USAGE_STATS_ENABLED": "0",
                                                  **user_proxies}})
        try:
            yield RaySession(ray.get_runtime_context().gcs_address, started=True)
        finally:
            ray.shutdown()
    finally:
        constants.ENABLE_RAY_CLUSTER = clusters
        shutil.rmtree(temp_dir, ignore_errors=True)


#: Starts of a local cluster: Ray gives its raylet a fixed 30 s to register, which a loaded small
#: machine can overrun; the start is then tried again, from scratch.
LOCAL_STARTS = 3
#: The words of Ray's exception for that overrun.
STARTUP_TIMEOUT = "timed out during startup"


def start_local(ray: Any, **options: Any) -> None:
    """``ray.init(address="local", **options)``, tried up to ``LOCAL_STARTS`` times when the node
    times out registering; any other failure, or the last timeout, is raised."""
    for attempt in range(1, LOCAL_STARTS + 1):
        try:
            ray.init(address=LOCAL, **options)
            return
        except Exception as err:
            if STARTUP_TIMEOUT not in str(err) or attempt == LOCAL_STARTS:
                raise
            ray.shutdown()


_CLUSTERS_VARIABLE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY")
#: A closed loopback port: the proxy of the local cluster's own processes (see _node_process_environment).
_NOWHERE = "http://127.0.0.1:9"


def _connect(ray: Any, address: str) -> None:
    """Join a running cluster. One on this machine's loopback (``ray start --head
    --node-ip-address=127.0.0.1``, or another process's local cluster) is reached there: by default
    Ray swaps a loopback address for the machine's outward one, where such a cluster does not listen."""
    from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available

    # a cluster started by Ray >= 2.5x on this machine requires the token it saved (~/.ray/auth_token):
    # send it, as `ray start` and a local ray.init() do, unless RAY_AUTH_MODE says otherwise
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    host = address.rpartition(":")[0].strip("[]")
    loopback = host in ("localhost", "::1") or host.startswith("127.")
    constants = ray._private.ray_constants
    clusters = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = clusters and not loopback
    try:
        ray.init(address=address, logging_level="WARNING", log_to_driver=False,
                 **({"_node_ip_address": LOOPBACK} if loopback else {}))
    except ConnectionError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"cannot join the Ray cluster at {address}: {first}") from err
    finally:
        constants.ENABLE_RAY_CLUSTER = clusters


@contextmanager
def _node_process_environment() -> Iterator[None]:
    """The environment the local cluster's processes (GCS, raylet, agents) inherit from ``ray.init``.

    With usage statistics off, Ray's head still asks the cloud metadata addresses
    (169.254.169.254, metadata.google.internal) which cloud it runs on, and its agents look up
    the node address by routing towards a public DNS server. Here the first goes to a closed
    loopback proxy (every loopback address is exempt, so Ray's own connections are direct) and
    the second is off, so that a local cluster reaches no other address.
    """
    saved = {name: os.environ.get(name) for name in (*_PROXY_VARIABLES, _CLUSTERS_VARIABLE)}
    os.environ.update({"http_proxy": _NOWHERE, "HTTP_PROXY": _NOWHERE, "https_proxy": _NOWHERE,
                       "HTTPS_PROXY": _NOWHERE, "no_proxy": "127.0.0.1,localhost",
                       "NO_PROXY": "127.0.0.1,localhost", _CLUSTERS_VARIABLE: "0"})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
