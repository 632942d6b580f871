"""The built book in a real browser: every page opened in headless Chromium, and checked.

``make book-test`` builds the book from ``make test``'s quick notebooks and points
``HETERO_TUTORIAL_BOOK`` at it (without the variable, ``build/book/html/`` is used when it
exists). Each page is served from the loopback address by a thread of this process, in a
browser that resolves no other host name, as on a machine offline; a request that leaves
the loopback address is an error, so a page that needs a CDN fails here. Per page: it
loaded, no console error, uncaught exception or failed request, every image loaded
(natural width > 0), every internal link leads to a page and an anchor that exist, a
notebook page shows at least one figure, no Markdown table is left as text, and no
absolute path of this machine is in its text, no printed output is wider than its column,
no en dash stands where a command had ``--``, and a book without a GPU story shows no GPU
paragraph's source. A screenshot of each page goes to
``build/book-shots/``.

The browser (with Playwright's driver) never outlives the walk: it is closed in a
``finally``, and any process it left is ended by its id and reported, also after a
failure or Ctrl-C. Without Chromium the tests are skipped, saying how to install it.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest

from hetero_tutorial.core.paths import private_paths
from hetero_tutorial.notebook.prose import gpu_story_here
from hetero_tutorial.profiling.browser import BROWSERS, child_processes, headless_chromium
from tools.docs.book import GPU_CELL

if TYPE_CHECKING:  # Playwright is in the extra [book]; without it the tests skip
    from playwright.sync_api import Browser, ConsoleMessage, Request

ROOT = Path(__file__).resolve().parents[1]
BOOK_ENV = "HETERO_TUTORIAL_BOOK"
DEFAULT_BOOK = ROOT / "build" / "book" / "html"
SHOTS = ROOT / "build" / "book-shots"
PAGE_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def chromium_path() -> str:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        pytest.skip(
            "no Chromium on this machine (looked for chromium, chromium-browser, google-chrome "
            "on PATH): `make setup-browser` installs Debian's chromium package"
        )
    pytest.importorskip("playwright", reason="Playwright is in the extra [book]: make book")
    return found


@pytest.fixture(scope="module")
def book_dir() -> Path:
    given = os.environ.get(BOOK_ENV)
    directory = Path(given) if given else DEFAULT_BOOK
    if not (directory / "index.html").is_file():
        if given:
            pytest.fail(f"{BOOK_ENV}={given} holds no built book (no index.html)")
        pytest.skip("no built book in build/book/html/: run `make book` first")
    return directory


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on the loopback address from a thread; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


IMAGES_JS = """async () => {
    const images = Array.from(document.images);
    images.forEach((image) => { image.loading = "eager"; });
    await Promise.all(images.map((image) => image.decode().catch(() => null)));
    return images.map((image) => [image.getAttribute("src"), image.naturalWidth]);
}"""
FIGURES_JS = """() => Array.from(document.querySelectorAll(".cell_output img, .cell_output svg"))
    .filter((figure) => (figure.naturalWidth ?? figure.getBoundingClientRect().width) > 0)
    .length"""
PROSE_JS = """() => {
    const prose = document.body.cloneNode(true);
    prose.querySelectorAll("pre, code, script, style").forEach((e) => e.remove());
    return prose.textContent;
}"""
"""The page's text outside code: where a Markdown table left unrendered would show."""
UNRENDERED_TABLE = re.compile(r"\|\s*(-{3,}|—)\s*\|")
"""A Markdown table's delimiter row (``|---|``; ``|—|`` once typography made a dash of it)."""
WIDE_JS = """() => Array.from(document.querySelectorAll(".cell_output pre"))
    .filter((output) => output.scrollWidth > output.clientWidth + 1)
    .map((output) => output.textContent.trim().slice(0, 80))"""
"""The printed outputs wider than their column: a reader would scroll sideways for them."""
OVERFLOW_JS = """() => Array.from(document.querySelectorAll("table"))
    .filter((table) => table.parentElement.scrollWidth > table.parentElement.clientWidth + 2
        || table.getBoundingClientRect().right > document.documentElement.clientWidth)
    .map((table) => table.textContent.trim().replace(/\\s+/g, " ").slice(0, 80))"""
"""The tables wider than their column (their wrapper scrolls, or would) or than the window:
a reader would scroll sideways for a column of them."""
SMART_DASH = re.compile(r"\s–[a-z]")
"""An en dash where a command's ``--`` was (``ledger –readme``): typography broke a command."""
LINKS_JS = """() => [
    Array.from(document.querySelectorAll("a[href]")).map((a) => a.href),
    Array.from(document.querySelectorAll("[id], a[name]")).map((e) => e.id || e.name),
    Array.from(document.querySelectorAll("[src], [href]"))
        .map((e) => e.getAttribute("src") || e.getAttribute("href")),
]"""


@dataclass
class Visit:
    """What one page showed the browser."""

    page: str
    status: int | None = None
    errors: list[str] = field(default_factory=list)
    """Console errors, uncaught exceptions and refused or failed requests."""
    images: list[tuple[str, int]] = field(default_factory=list)
    figures: int = 0
    links: list[str] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    addresses: list[str] = field(default_factory=list)
    """Every ``src`` and ``href`` as written in the page."""
    text: str = ""
    prose: str = ""
    """The text outside code blocks."""
    wide: list[str] = field(default_factory=list)
    """The start of each printed output wider than its column."""
    overflowing: list[str] = field(default_factory=list)
    """Tables wider than the content column."""
    shot: Path | None = None


def _visit(browser: Browser, base: str, page_path: str, shots: Path) -> Visit:
    visit = Visit(page_path)

    def request(request: Request) -> None:
        if urllib.parse.urlsplit(request.url).hostname != "127.0.0.1":
            visit.errors.append(f"a request off this machine: {request.url}")

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            visit.errors.append(f"console error: {message.text}")

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.on("request", request)
        page.on("console", console)
        page.on("pageerror", lambda error: visit.errors.append(f"uncaught exception: {error}"))
        page.on("requestfailed", lambda failed: visit.errors.append(f"failed: {failed.url}"))
        page.on(
            "response",
            lambda answer: (
                answer.status >= 400 and visit.errors.append(f"HTTP {answer.status}: {answer.url}")
            ),
        )
        response = page.goto(base + page_path, wait_until="load", timeout=PAGE_TIMEOUT_MS)
        visit.status = response.status if response is not None else None
        visit.images = [tuple(image) for image in page.evaluate(IMAGES_JS)]
        visit.figures = page.evaluate(FIGURES_JS)
        links, ids, visit.addresses = page.evaluate(LINKS_JS)
        visit.links, visit.ids = links, set(ids)
        visit.text = page.inner_text("body")
        visit.prose = page.evaluate(PROSE_JS)
        visit.wide = page.evaluate(WIDE_JS)
        visit.overflowing = page.evaluate(OVERFLOW_JS)
        shots.mkdir(parents=True, exist_ok=True)
        visit.shot = shots / (page_path.removesuffix(".html").replace("/", "-") + ".png")
        page.screenshot(path=str(visit.shot), full_page=True)
    finally:
        page.close()
    return visit


def walk(executable: str, directory: Path, shots: Path, leftovers: list[str]) -> list[Visit]:
    """Open every HTML page under ``directory`` in one headless Chromium."""
    pages = sorted(path.relative_to(directory).as_posix() for path in directory.rglob("*.html"))
    with serve(directory) as base, headless_chromium(executable, leftovers) as browser:
        return [_visit(browser, base, page, shots) for page in pages]


def broken_links(visits: list[Visit], directory: Path) -> list[str]:
    """Internal links to a file that does not exist, or to an anchor its page lacks."""
    ids = {visit.page: visit.ids for visit in visits}
    problems = []
    for visit in visits:
        for link in visit.links:
            parts = urllib.parse.urlsplit(link)
            if parts.hostname != "127.0.0.1":
                continue  # an external link: not fetched, and not this book's to break
            target = urllib.parse.unquote(parts.path).lstrip("/") or "index.html"
            if target.endswith("/"):
                target += "index.html"
            if not (directory / target).is_file():
                problems.append(f"{visit.page}: a link to {target}, which does not exist")
            elif parts.fragment and parts.fragment not in ids.get(target, {parts.fragment}):
                problems.append(f"{visit.page}: a link to {target}#{parts.fragment}: no anchor")
    return problems


def problems_of(visits: list[Visit], directory: Path) -> dict[str, list[str]]:
    """Every check on every visit, by check: empty lists where the book is right."""
    private = private_paths()
    found: dict[str, list[str]] = {
        "loaded": [f"{v.page}: HTTP {v.status}" for v in visits if v.status != 200],
        "errors": [f"{v.page}: {error}" for v in visits for error in v.errors],
        "images": [
            f"{v.page}: the image {src} did not load"
            for v in visits
            for src, width in v.images
            if width <= 0
        ],
        "links": broken_links(visits, directory),
        "tables": [
            f"{v.page}: a Markdown table shown as text: {found.group(0)!r}"
            for v in visits
            if (found := UNRENDERED_TABLE.search(v.prose))
        ],
        "figures": [
            f"{v.page}: a notebook page with no figure"
            for v in visits
            if v.page.startswith("notebooks/") and v.figures == 0
        ],
        "wide": [f"{v.page}: an output wider than the page: {w!r}" for v in visits for w in v.wide],
        "overflowing tables": [
            f"{v.page}: a table wider than the page: {t!r}" for v in visits for t in v.overflowing
        ],
        "dashes": [
            f"{v.page}: an en dash in a command: {found.group(0)!r}"
            for v in visits
            if (found := SMART_DASH.search(v.text))
        ],
        "gpu prose": [
            f"{v.page}: a GPU paragraph's source on a book without a GPU story"
            for v in visits
            if not gpu_story_here() and GPU_CELL in v.text
        ],
        "paths": [
            f"{v.page}: the path {path}"
            for v in visits
            for path in private
            if path in v.text or any(path in a or a.startswith("file:") for a in v.addresses)
        ],
    }
    return found


@pytest.fixture(scope="module")
def walked(chromium_path, book_dir) -> tuple[list[Visit], list[str]]:
    shutil.rmtree(SHOTS, ignore_errors=True)
    leftovers: list[str] = []
    visits = walk(chromium_path, book_dir, SHOTS, leftovers)
    return visits, leftovers


def test_every_page_of_the_book_passes_every_check(walked, book_dir):
    visits, _ = walked
    pages = {visit.page for visit in visits}
    assert "index.html" in pages
    assert sum(page.startswith("notebooks/") for page in pages) == len(
        list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    ), "one page per notebook"
    assert any(page.startswith("ledger/") for page in pages), "a page per reference machine"
    assert pages >= {
        f"docs/{name}.html" for name in ("glossary", "workshop", "questions", "hardware")
    }
    failed = {check: found for check, found in problems_of(visits, book_dir).items() if found}
    assert not failed, "\n".join(f"{check}:\n  " + "\n  ".join(f) for check, f in failed.items())


def test_a_screenshot_of_every_page(walked):
    visits, _ = walked
    for visit in visits:
        assert visit.shot is not None and visit.shot.stat().st_size > 0, visit.page


def test_no_browser_process_outlives_the_walk(walked):
    _, leftovers = walked
    assert not leftovers, f"processes left running after the browser closed: {leftovers}"


def test_the_checks_see_every_kind_of_broken_page(chromium_path, tmp_path):
    """A page with each fault the book must not have: each check must name it."""
    site = tmp_path / "site"
    (site / "notebooks").mkdir(parents=True)
    (site / "index.html").write_text(
        '<html><head><meta charset="utf-8"></head><body><p>built in '
        + str(ROOT)
        + "</p><p>| a | b | |---|---| | 1 | 2 |</p>"
        '<img src="missing.png"><a href="gone.html">gone</a><a href="index.html#nowhere">x</a>'
        '<script>console.error("boom")</script><script src="https://cdn.invalid/x.js"></script>'
        '<div class="cell_output"><pre style="width: 100px">' + "a finding " * 40 + "</pre></div>"
        "<p>python -m hetero_tutorial ledger –readme</p><pre>gpu_paragraph(</pre>"
        '<article style="width: 300px"><div><table><tr><td style="white-space: nowrap">'
        + "a wide cell " * 30
        + "</td></tr></table></div></article></body></html>"
    )
    (site / "notebooks" / "00.html").write_text("<html><body><p>no figure</p></body></html>")
    leftovers: list[str] = []
    visits = walk(chromium_path, site, tmp_path / "shots", leftovers)
    found = problems_of(visits, site)
    assert any("missing.png" in p for p in found["images"])
    assert any("gone.html" in p for p in found["links"])
    assert any("#nowhere" in p for p in found["links"])
    assert any("boom" in p for p in found["errors"])
    assert any("off this machine: https://cdn.invalid/x.js" in p for p in found["errors"])
    assert found["figures"] == ["notebooks/00.html: a notebook page with no figure"]
    assert found["tables"] == ["index.html: a Markdown table shown as text: '|---|'"]
    assert any(str(ROOT) in p for p in found["paths"])
    assert len(found["wide"]) == 1 and "a finding a finding" in found["wide"][0]
    assert len(found["overflowing tables"]) == 1 and "a wide cell" in found["overflowing tables"][0]
    assert found["dashes"] == ["index.html: an en dash in a command: ' –r'"]
    if not gpu_story_here():
        assert len(found["gpu prose"]) == 1
    assert not leftovers


def test_no_browser_process_outlives_ctrl_c(chromium_path):
    """Ctrl-C in a terminal, while a page is open: SIGINT to the process running the walk
    (a shell's background job ignores SIGINT, so the child restores Python's handler)."""
    script = textwrap.dedent(
        f"""
        import signal, sys, time
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_book_browser import headless_chromium
        with headless_chromium({chromium_path!r}, []) as browser:
            browser.new_page()
            print("ready", flush=True)
            time.sleep(120)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    spawned: list[psutil.Process] = []
    try:
        assert child.stdout.readline().strip() == "ready"
        spawned = psutil.Process(child.pid).children(recursive=True)
        assert any("chrom" in process.name() for process in spawned)
        child.send_signal(signal.SIGINT)
        assert child.wait(timeout=60) != 0  # interrupted, not finished
    finally:
        if child.poll() is None:
            child.kill()
        _, alive = psutil.wait_procs(spawned, timeout=10)
        for process in alive:  # ended by their ids, so that a failure here leaves none
            process.kill()
    assert not alive, f"left running after Ctrl-C: {[p.name() for p in alive]}"


def test_the_browser_is_gone_after_a_failure_inside_the_walk(chromium_path):
    leftovers: list[str] = []
    before = set(child_processes())
    with pytest.raises(RuntimeError), headless_chromium(chromium_path, leftovers):
        raise RuntimeError("a check failed mid-walk")
    assert set(child_processes()) <= before
    assert not leftovers
