#!/usr/bin/env bash
# Installs what the tests need into the current Python environment (scripts/install_test_stack.sh),
# then runs the test suite; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install_test_stack.sh
python -m pytest "$@"
