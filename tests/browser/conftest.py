"""Serve the built site on 127.0.0.1 and visit every page once in headless Debian Chromium.

Run with ``nox -s browser`` after ``nox -s docs``; see ``browsing.py`` for the settings.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest
from browsing import (
    CHROMIUM,
    FLAGS,
    NARROW,
    SITE,
    NarrowVisit,
    QuietHandler,
    Visit,
    visit_narrow,
    visit_page,
)


@pytest.fixture(scope="session")
def server():
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site at {SITE}: run `nox -s docs` first")
    handler = functools.partial(QuietHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: apt-get install chromium (see .ci/run)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def browser_context(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.rstrip("/"))
    yield context
    context.close()


@pytest.fixture(scope="session")
def narrow_visits(browser, server):
    """Visit each page once (lazily) at a phone's width, 390 px."""
    context = browser.new_context(viewport=NARROW)
    cache: dict[str, NarrowVisit] = {}

    def visit(rel: str) -> NarrowVisit:
        if rel not in cache:
            cache[rel] = visit_narrow(context, server, rel)
        return cache[rel]

    yield visit
    context.close()


@pytest.fixture(scope="session")
def visits(browser_context, server):
    """Visit each page once (lazily) and remember what it showed."""
    cache: dict[str, Visit] = {}

    def visit(rel: str) -> Visit:
        if rel not in cache:
            cache[rel] = visit_page(browser_context, server, rel)
        return cache[rel]

    return visit

