#!/usr/bin/env bash
# Start a vLLM OpenAI server on 127.0.0.1 for a model folder and wait until it is ready.
#   scripts/start_vllm.sh [MODEL_DIR] [--port 8000] [--detach] [-- extra vllm args]
# MODEL_DIR defaults to the SmolLM2 folder made by scripts/setup_llm.sh.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL="${1:-${ARENA_SMOLLM2_DIR:-${ARENA_CACHE_DIR:-$HOME/.cache/arena_envs}/smollm2-135m-instruct}}"
[[ $# -gt 0 ]] && shift
cd "$REPO"
exec "${PYTHON:-python3}" -m llm_policies.serve "$MODEL" "$@"
