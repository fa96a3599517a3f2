#!/usr/bin/env bash
# The browser the viewer's tests drive (Playwright for Python, launched on this executable): Debian's
# chromium package, installed with apt when it is missing and this shell may (root, apt-get present).
# Anywhere else it says what to do in one line; the browser tests then skip (or fail under CI).
# ARENA_CHROMIUM names another Chromium executable.
set -euo pipefail
if [[ -n "${ARENA_CHROMIUM:-}" ]] || command -v chromium > /dev/null; then
    echo "[setup_chromium] chromium at ${ARENA_CHROMIUM:-$(command -v chromium)} (skipped)"
elif [[ $(id -u) == 0 ]] && command -v apt-get > /dev/null; then
    start=$(date +%s)
    # the package lists of a fresh image may be stale or absent: refresh them once if the first try fails
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium > /dev/null \
        || { apt-get update -q > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium > /dev/null; }
    echo "[setup_chromium] chromium installed with apt in $(( $(date +%s) - start ))s"
else
    echo "[setup_chromium] no chromium: install Debian's package (apt-get install chromium) or set ARENA_CHROMIUM"
fi
