"""The suite's wait for a quiet network (browsing.quiet) waits on the requests still open and,
when one never ends, fails naming it instead of waiting without a word."""

from __future__ import annotations

import pytest
from browsing import Visit, _open, quiet


def test_quiet_names_the_request_it_waits_on(browser_context, server):
    visit = Visit(url=server + "index.html")
    page = _open(browser_context, server, "index.html", visit)
    held = []
    page.route("**/never-answered.txt", lambda route: held.append(route))  # never continued
    page.evaluate("() => { fetch('never-answered.txt'); }")
    with pytest.raises(TimeoutError, match=r"never-answered\.txt"):
        quiet(page, timeout=2.0)
    for route in held:
        route.abort()
    quiet(page, timeout=10.0)  # once it ends, the page is quiet again
    page.close()
