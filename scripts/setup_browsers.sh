#!/usr/bin/env bash
# The browsers the viewer's tests drive: Debian's chromium (Playwright for Python launches it) and
# firefox-esr (run headless on the static export), installed with apt when missing and this shell
# may (root, apt-get present). Anywhere else it says what to do in one line; those tests then skip
# (or fail under CI). ARENA_CHROMIUM and ARENA_FIREFOX name other executables.
set -euo pipefail
need=()
if [[ -n "${ARENA_CHROMIUM:-}" ]] || command -v chromium > /dev/null; then
    echo "[setup_browsers] chromium at ${ARENA_CHROMIUM:-$(command -v chromium)} (skipped)"
else
    need+=(chromium)
fi
if [[ -n "${ARENA_FIREFOX:-}" ]] || command -v firefox-esr > /dev/null || command -v firefox > /dev/null; then
    echo "[setup_browsers] firefox at ${ARENA_FIREFOX:-$(command -v firefox-esr || command -v firefox)} (skipped)"
else
    need+=(firefox-esr)
fi
if ((${#need[@]} == 0)); then
    exit 0
elif [[ $(id -u) == 0 ]] && command -v apt-get > /dev/null; then
    start=$(date +%s)
    # the package lists of a fresh image may be stale or absent: refresh them once if the first try fails
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" > /dev/null \
        || { apt-get update -q > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" > /dev/null; }
    echo "[setup_browsers] ${need[*]} installed with apt in $(( $(date +%s) - start ))s"
else
    echo "[setup_browsers] no ${need[*]}: install Debian's packages (apt-get install ${need[*]}) or set ARENA_CHROMIUM / ARENA_FIREFOX"
fi
