"""Where a test session's time went, for the lines its terminal summary ends with: the machine's CPU
use over the session (a suite whose cores are busy all along is made faster only by spending less
CPU; one with idle cores, by running more at once) and the wall time of each xdist group, whose
tests run one after the other on one worker (the longest bounds the session)."""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

#: The xdist groups listed, longest first.
GROUPS_LISTED = 6


def machine_cpu() -> tuple[float, float] | None:
    """(busy, elapsed) CPU seconds of all the machine's cores since boot, from ``/proc/stat``; None
    where there is none."""
    try:
        first = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    ticks = [int(field) for field in first[1:9]]  # user nice system idle iowait irq softirq steal
    per_second = os.sysconf("SC_CLK_TCK")
    idle = ticks[3] + ticks[4]
    return (sum(ticks) - idle) / per_second, sum(ticks) / per_second


def machine_line(start: tuple[float, float], end: tuple[float, float]) -> str:
    busy, elapsed = end[0] - start[0], end[1] - start[1]
    share = busy / elapsed if elapsed > 0 else 0.0
    return (f"machine: {os.cpu_count()} cores busy {share:.0%} of the session "
            f"({busy:,.0f} of {elapsed:,.0f} CPU seconds)")


def groups_line(spent: Iterable[tuple[str, float]]) -> str | None:
    """The longest xdist groups by the wall time of their tests (setup, call and teardown), from
    (group, seconds) pairs of the session's reports."""
    totals: Counter[str] = Counter()
    for group, seconds in spent:
        totals[group] += seconds
    if not totals:
        return None
    listed = ", ".join(f"{group} {seconds:,.0f} s" for group, seconds in totals.most_common(GROUPS_LISTED))
    return f"longest xdist groups (wall time, one test after another): {listed}"
