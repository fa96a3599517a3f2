#!/usr/bin/env bash
# The programs some tests drive, from Debian's packages: chromium (the viewer's pages, through
# Playwright for Python), firefox-esr (the viewer's static export, headless) and nodejs (the Node
# example agent, examples/agents/wis_agent.js). The missing ones are installed with apt in one call
# when this shell may (root, apt-get present); anywhere else it says what to do in one line, and those
# tests skip (or fail under CI). ARENA_CHROMIUM and ARENA_FIREFOX name other executables.
set -euo pipefail
need=()
have() {  # have PACKAGE VARIABLE COMMAND...: PACKAGE is needed unless VARIABLE is set or a COMMAND exists
    local package=$1 variable=$2 found=${!2:-}
    shift 2
    for command in "$@"; do
        found=${found:-$(command -v "$command" || true)}
    done
    if [[ -n $found ]]; then
        echo "[setup_test_tools] $package: $found (skipped)"
    else
        need+=("$package")
    fi
}
have chromium ARENA_CHROMIUM chromium
have firefox-esr ARENA_FIREFOX firefox-esr firefox
have nodejs NODE node
if ((${#need[@]} == 0)); then
    exit 0
elif [[ $(id -u) == 0 ]] && command -v apt-get > /dev/null; then
    start=$(date +%s)
    # the package lists of a fresh image may be stale or absent: refresh them once if the first try fails
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" > /dev/null \
        || { apt-get update -q > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" > /dev/null; }
    echo "[setup_test_tools] ${need[*]} installed with apt in $(( $(date +%s) - start ))s"
else
    echo "[setup_test_tools] missing ${need[*]}: apt-get install ${need[*]} (Debian), or set ARENA_CHROMIUM / ARENA_FIREFOX"
fi
