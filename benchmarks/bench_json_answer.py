"""CPU time of the JSON answer reader (``arena_envs.core.json_answer``) on the longest answers it reads.

Each text is :data:`~arena_envs.core.json_answer.MAX_ANSWER_CHARS` characters (the reader keeps the
tail of a longer one): a chain of thought of prose with the answer object last, and the shapes that
make a naive scan quadratic (20,000 braces, unclosed nesting, objects that break late, many
``"key":`` pairs). A read is both readings a game may make of an answer, its top-level objects and
its ``"key": value`` pairs (a game reads the pairs only when no object parses: the worst case). The
reference, timed in the same rounds: ``json.loads`` of a valid JSON document of the same length.
Figures: the median over ``--runs`` rounds of the CPU milliseconds per read and of their ratio to
the reference (goal: every read <= 50 ms).

    python benchmarks/bench_json_answer.py [--runs 7] [--repeat 5]
"""
from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections.abc import Callable

from arena_envs.core.json_answer import MAX_ANSWER_CHARS, answer_objects, key_values

N = MAX_ANSWER_CHARS


def texts() -> dict[str, str]:
    prose = ("I weigh the others' likely numbers, say {\"chosen_number\": 50}, and go lower. " * N)[:N - 60]
    return {
        "chain of thought, answer last": prose + '{"explanation": "lower", "chosen_number": 33}',
        "20,000 '{'": "{" * N,
        "unclosed nesting {\"a\":{\"a\":...": ('{"a":' * N)[:N],
        "non-JSON spans {x}{x}...": ("{x}" * N)[:N],
        "late breaks {\"x}{\"x}...": ('{"x}' * N)[:N],
        "broken objects {\"a\": 1,,}...": ('{"a": 1,,}' * N)[:N],
        "20,000 '['": "[" * N,
        "many pairs \"a\": \"a\": ...": ('"a": ' * N)[:N],
    }


def read(text: str) -> tuple[object, object]:
    return answer_objects(text), key_values(text, "a")


def cpu_ms(work: Callable[[], object], repeat: int) -> float:
    start = time.process_time()
    for _ in range(repeat):
        work()
    return (time.process_time() - start) * 1000 / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--repeat", type=int, default=5, help="reads per timing (default 5)")
    args = parser.parse_args()
    document = json.dumps({"items": ["x" * 90] * ((N - 20) // 95)})
    cases = texts()
    times: dict[str, list[float]] = {name: [] for name in cases}
    ratios: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        reference = cpu_ms(lambda: json.loads(document), args.repeat)
        for name, text in cases.items():
            spent = cpu_ms(functools.partial(read, text), args.repeat)
            times[name].append(spent)
            ratios[name].append(spent / reference)
    print(f"reference: json.loads of a {len(document):,}-character JSON document")
    print(f"{'answer of ' + format(N, ',') + ' characters':44} {'ms / read':>10} {'/ reference':>12}")
    for name in cases:
        print(f"{name:44} {statistics.median(times[name]):10.2f} {statistics.median(ratios[name]):12.1f}")


if __name__ == "__main__":
    main()
