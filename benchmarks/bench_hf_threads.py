"""Decoding speed of the ``hf:`` backend on its default threads against one thread, idle and loaded.

    python benchmarks/bench_hf_threads.py [--model PATH] [--rounds 3] [--max-tokens 64]

Loads the model (default: SmolLM2-135M-Instruct of scripts/setup_llm.sh, float32 on a CPU without
bfloat16 instructions) twice in this process, as ``threads`` = the default
(:func:`llm_policies.cpu_cores.default_threads`, printed) and ``threads=1``, and times one greedy,
unguided request of up to ``--max-tokens`` new tokens on each, in interleaved rounds: first on the
machine as it is ("idle": whatever else runs on it), then "loaded", beside one busy-loop process per
usable core that the benchmark starts (and stops). Printed: the median completion tokens per
second of wall time (prompt and generation together) of each setting, default / one, and the
machine's 1-minute load average when each part began (other work on a shared machine shows there).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llm_policies.backends.hf_transformers import TransformersBackend
from llm_policies.cpu_cores import default_threads, usable_cpus
from llm_policies.local_stack import smollm2_dir
from llm_policies.types import ChatRequest, Sampling

PROMPT = "Count from 1 to 100, separated by spaces."


@contextmanager
def busy_cores(n: int) -> Iterator[None]:
    """``n`` processes spinning in a Python loop while the block runs (the load of a shared machine)."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(1.0)  # let them reach the loop
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def tokens_per_second(backend: Any, max_tokens: int) -> float:
    request = ChatRequest(({"role": "user", "content": PROMPT},), Sampling(max_tokens=max_tokens))
    start = time.perf_counter()
    response = backend.generate_sync(request)
    return float(response.completion_tokens) / (time.perf_counter() - start)


def measure(backends: dict[int, Any], rounds: int, max_tokens: int) -> dict[int, float]:
    """Median tokens/s per thread count over ``rounds`` interleaved rounds."""
    speeds: dict[int, list[float]] = {threads: [] for threads in backends}
    for _ in range(rounds):
        for threads, backend in backends.items():
            speeds[threads].append(tokens_per_second(backend, max_tokens))
    return {threads: statistics.median(values) for threads, values in speeds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default=str(smollm2_dir()), help="model folder (default: the SmolLM2 folder)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per machine state (default 3)")
    parser.add_argument("--max-tokens", type=int, default=64, help="new tokens per request (default 64)")
    args = parser.parse_args()
    default = default_threads()
    cores = usable_cpus()
    print(f"usable cores: {cores}; default threads: {default} (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')})")
    backends = {threads: TransformersBackend(args.model, threads=threads) for threads in dict.fromkeys((default, 1))}
    for backend in backends.values():  # the first call of each pays one-time costs
        tokens_per_second(backend, 4)
    results = {"idle": (os.getloadavg()[0], measure(backends, args.rounds, args.max_tokens))}
    with busy_cores(cores):
        results[f"loaded ({cores} busy-loop processes)"] = (os.getloadavg()[0],
                                                            measure(backends, args.rounds, args.max_tokens))
    print(f"{'machine':36} {'load':>5} {'threads':>7} {'tokens/s':>9} {'default / one':>14}")
    for state, (load, speeds) in results.items():
        for threads, speed in speeds.items():
            ratio = f"{speeds[default] / speeds[1]:14.2f}" if threads == default else ""
            print(f"{state:36} {load:5.1f} {threads:7} {speed:9.1f} {ratio}")


if __name__ == "__main__":
    main()
