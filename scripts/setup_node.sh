#!/usr/bin/env bash
# The runtime of the Node example agent (examples/agents/wis_agent.js), which a test runs where it is
# installed: Debian's nodejs package, installed with apt when node is missing and this shell may (root,
# apt-get present). Anywhere else it says what to do in one line; that test then skips.
set -euo pipefail
if command -v node > /dev/null; then
    echo "[setup_node] node at $(command -v node) (skipped)"
elif [[ $(id -u) == 0 ]] && command -v apt-get > /dev/null; then
    start=$(date +%s)
    # the package lists of a fresh image may be stale or absent: refresh them once if the first try fails
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs > /dev/null \
        || { apt-get update -q > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs > /dev/null; }
    echo "[setup_node] nodejs installed with apt in $(( $(date +%s) - start ))s"
else
    echo "[setup_node] no node: install Debian's package (apt-get install nodejs) to run the Node example agent's test"
fi
