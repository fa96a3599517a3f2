"""A local Ray cluster whose raylet overruns Ray's fixed 30 s registration wait (a loaded small
machine) is started again, up to ``LOCAL_STARTS`` times; other failures are raised at once. The
overrun cannot be made to happen on demand with a real Ray, so ``StartingRay`` (a fake, named so)
stands in for the ``ray`` module and fails its first starts with Ray's own exception text."""
from __future__ import annotations

from typing import Any

import pytest

from arena_envs.runner.ray_cluster import LOCAL, LOCAL_STARTS, start_local


class StartingRay:
    """Fake ``ray`` module: ``init`` raises ``failures`` times (``message``), then starts."""

    def __init__(self, failures: int, message: str = "The current node timed out during startup. This could "
                                                      "happen because some of the raylet failed to startup."):
        self.failures, self.message = failures, message
        self.calls: list[str] = []

    def init(self, address: str, **options: Any) -> None:
        self.calls.append(f"init {address} {sorted(options)}")
        if self.failures:
            self.failures -= 1
            raise Exception(self.message)

    def shutdown(self) -> None:
        self.calls.append("shutdown")


def test_a_start_that_times_out_is_tried_again_from_scratch():
    ray = StartingRay(failures=LOCAL_STARTS - 1)
    start_local(ray, num_cpus=2)
    init = f"init {LOCAL} ['num_cpus']"
    assert ray.calls == [init, "shutdown"] * (LOCAL_STARTS - 1) + [init]


def test_the_last_timeout_and_any_other_failure_are_raised():
    with pytest.raises(Exception, match="timed out during startup"):
        start_local(StartingRay(failures=LOCAL_STARTS))
    other = StartingRay(failures=1, message="port 6379 is taken")
    with pytest.raises(Exception, match="port 6379 is taken"):
        start_local(other)
    assert other.calls == [f"init {LOCAL} []"]
