"""Headless Chromium, for pictures of pages served on this machine (snakeviz, the book).

:func:`chromium` finds the browser (Debian's ``chromium`` package: ``make
setup-browser``); :func:`headless_chromium` drives it with Playwright (the extra
``[book]``) and never lets it outlive the block: the browser is closed in a ``finally``,
and any process it started and left behind is ended by its id, also after an error or
Ctrl-C. The flags keep it off the network: it resolves no host but the loopback address.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:  # Playwright is in the extra [book]
    from playwright.sync_api import Browser

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # no host but this one
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Chromium's flags for a machine with no network: without the last three it keeps trying
to reach its own servers."""

MISSING = (
    "no headless Chromium here (looked for chromium, chromium-browser, google-chrome on PATH, "
    "and Playwright from the extra [book]): `make setup-browser` installs Debian's chromium"
)
"""The one line shown instead of a picture where no browser is installed."""


def chromium() -> str | None:
    """The Chromium program, where it and Playwright are installed; else None."""
    if importlib.util.find_spec("playwright") is None:
        return None
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def child_processes() -> dict[int, psutil.Process]:
    """This process's descendants, by id."""
    return {p.pid: p for p in psutil.Process().children(recursive=True)}


@contextmanager
def headless_chromium(executable: str, leftovers: list[str] | None = None) -> Iterator[Browser]:
    """A headless Chromium driven by Playwright; on the way out, however it is left, the
    browser is closed and every process it started and left behind is ended by its id (its
    name goes to ``leftovers``, for the caller to report)."""
    from playwright.sync_api import sync_playwright

    leftovers = [] if leftovers is None else leftovers
    before = child_processes()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
            try:
                yield browser
            finally:
                browser.close()
    finally:
        started = [p for pid, p in child_processes().items() if pid not in before]
        _, alive = psutil.wait_procs(started, timeout=5)
        for process in alive:
            try:
                leftovers.append(process.name())
                process.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(alive, timeout=5)
