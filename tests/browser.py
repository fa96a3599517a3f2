"""The viewer's pages in a real browser: Playwright for Python driving Debian's ``chromium`` package
(scripts/setup_test_tools.sh installs it; ``ARENA_CHROMIUM`` names another Chromium executable), and
Firefox's own headless screenshots (``firefox_screenshot``; ``ARENA_FIREFOX`` names another executable).

``chromium_browser`` is one headless browser per test process; ``page`` a fresh context and tab per
test. Without the browser or Playwright a test skips with one fixed reason (under ``CI``: fails).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MISSING = ("no Chromium for the browser tests: apt-get install chromium (scripts/setup_test_tools.sh) "
           "or set ARENA_CHROMIUM, and pip install playwright")


def chromium_path() -> str | None:
    """The Chromium executable the tests launch, or None."""
    return os.environ.get("ARENA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def chromium_browser() -> Iterator[Any]:
    """One browser per test module: Playwright's sync API keeps an asyncio loop running in this thread
    while it is started, and ``asyncio.run`` (the runner, ``arena eval``, ``arena play``) refuses to start
    inside one, so it stops when the module's tests are done (a module that plays runs after its first
    browser test plays them in a thread of its own)."""
    executable = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ModuleNotFoundError:
        executable = None
    if executable is None:
        pytest.skip(MISSING)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def page(chromium_browser: Any) -> Iterator[Any]:
    """A new tab in a new context (no shared cookies or storage); console errors fail the test."""
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda err: errors.append(str(err)))
    tab.set_default_timeout(10_000)
    yield tab
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


FIREFOX_MISSING = ("no Firefox for the browser tests: apt-get install firefox-esr (scripts/setup_test_tools.sh) "
                   "or set ARENA_FIREFOX")


def firefox_screenshot(url: str, out: Path, home: Path, size: tuple[int, int] = (1280, 1000)) -> None:
    """Load ``url`` in a headless Firefox of its own (profile under ``home``) and save the window as a
    PNG at ``out`` once the page has loaded (its scripts have run); skips without Firefox."""
    executable = os.environ.get("ARENA_FIREFOX") or shutil.which("firefox-esr") or shutil.which("firefox")
    if executable is None:
        pytest.skip(FIREFOX_MISSING)
    home.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([executable, "--headless", "--no-remote", "--window-size", f"{size[0]},{size[1]}",
                           "--screenshot", str(out), url], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(home), "MOZ_HEADLESS": "1"})
    assert out.is_file(), f"Firefox wrote no screenshot (status {done.returncode}): {done.stderr[-2000:]}"
