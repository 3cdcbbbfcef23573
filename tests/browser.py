"""The tests' headless Chromium: Debian's (`apt-get install chromium`; `.ci/run` installs it) found or the test
skipped, unless OMEN_REQUIRE_BROWSER is set (as `.ci/run` does), where a missing browser fails; launched the one
way every browser test launches it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: Chromium's flags for a quiet, sandbox-free headless run that fetches nothing of its own.
ARGS = ("--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync", "--disable-quic",
        "--disable-background-networking", "--disable-component-update")


def chromium() -> str:
    """The path of the system's Chromium; the test skipped (or failed, under OMEN_REQUIRE_BROWSER) without it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("OMEN_REQUIRE_BROWSER"):
            pytest.fail("OMEN_REQUIRE_BROWSER is set but Chromium is not installed")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return found


def launch(pw: Any, path: str) -> Any:
    """Headless Chromium at ``path`` from a running Playwright ``pw``, with :data:`ARGS`."""
    return pw.chromium.launch(executable_path=path, args=list(ARGS))


def one_server(where: Path) -> Iterator[Any]:
    """One ``omen serve`` on a free loopback port over a SQLite store in ``where``, stopped after (a module's
    fixture: each test makes a fight of its own)."""
    from tests.server.processes import Server

    made = Server(where)
    try:
        yield made
    finally:
        made.stop()


def one_browser() -> Iterator[Any]:
    """One headless Chromium (:func:`launch`), closed after (a module's fixture)."""
    from playwright.sync_api import sync_playwright

    path = chromium()
    with sync_playwright() as pw:
        launched = launch(pw, path)
        try:
            yield launched
        finally:
            launched.close()
