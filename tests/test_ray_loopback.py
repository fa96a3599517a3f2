"""A local Ray cluster reaches no address but 127.0.0.1: every ``connect`` of the driver, the
cluster's processes and the workers during a ``--ray`` run, traced with strace."""
from __future__ import annotations

import ipaddress
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.process_helpers import REPO, arena_command
from tests.test_results_resume import TINY, check_complete

pytestmark = pytest.mark.ray

#: the address of an IPv4 or IPv6 connect in strace's output
INET = re.compile(r'sa_family=AF_INET6?,.*?(?:inet_addr\(|inet_pton\(AF_INET6, )"([^"]+)"')


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_a_ray_run_on_a_local_cluster_connects_only_to_loopback(tmp_path: Path) -> None:
    trace = tmp_path / "connect.trace"
    out = tmp_path / "run"
    command = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace),
               *arena_command(TINY, "random,random,random", 40, out), "--ray", "--ray-workers", "2"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    check_complete(out, 40)
    lines = trace.read_text().splitlines()
    addresses = [match.group(1) for match in map(INET.search, lines) if match]
    assert "127.0.0.1" in addresses  # the trace saw the cluster's own connections
    assert sorted(address for address in set(addresses) if not loopback(address)) == []


def loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)
