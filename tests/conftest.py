"""Suite-wide hooks: a test marked ``llm`` needs the local model stack of scripts/setup_llm.sh."""
from __future__ import annotations

import pytest

from tests.llm_helpers import require_llm_stack


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before any fixture (the vLLM server) is set up: skip, or under CI fail, without the stack."""
    if item.get_closest_marker("llm") is not None:
        require_llm_stack()
