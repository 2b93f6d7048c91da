"""How the site's search ranks the pairs of search_pairs.py, against Sphinx's own search.

    GRADARG_SITE=docs/_build/html python tests/browser/search_eval.py [-v]

Prints, for Sphinx's built-in ranking (searchtools.js, as the search page ran it before
gradarg-search.js) and for the site's ranking, how many expected pages come first and how many
among the first three (one result per page, in the order shown), the time per query in
Chromium, and the size of what the search page downloads. ``-v`` lists every query's top 3.
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from browsing import CHROMIUM, FLAGS, SITE, QuietHandler
from search_pairs import PAIRS, PENDING

# Sphinx's own ranking, one entry per page in display order (searchtools.js's query()).
SPHINX_RANKED = """q => {
  const [query, terms, excluded, highlight, objects] = Search._parseQuery(q);
  const seen = [];
  for (const r of Search._performSearch(query, terms, excluded, highlight, objects))
    if (!seen.includes(r[0])) seen.push(r[0]);
  return seen;
}"""
OURS_RANKED = "q => GradargSearch.search(q).map(r => r.docname)"
TIMED = """([q, n]) => { const t0 = performance.now();
  for (let i = 0; i < n; i++) GradargSearch.search(q);
  return (performance.now() - t0) / n; }"""


def main(verbose: bool) -> None:
    from playwright.sync_api import sync_playwright

    handler = functools.partial(QuietHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    server = f"http://127.0.0.1:{httpd.server_address[1]}/"
    pairs = [(q, (e,) if isinstance(e, str) else e) for q, e in PAIRS]
    pairs += [(q, (e,) if isinstance(e, str) else e) for q, e in PENDING
              if all((SITE / f"{p}.html").exists() for p in ((e,) if isinstance(e, str) else e))]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        t0 = time.perf_counter()
        page.goto(server + "search.html", wait_until="load")
        page.wait_for_function("() => typeof GradargSearch !== 'undefined' && Search._index")
        page.evaluate("() => GradargSearch.search('warm up')")
        print(f"search.html loaded and index prepared: {time.perf_counter() - t0:.2f} s")
        for name, script in (("sphinx", SPHINX_RANKED), ("gradarg", OURS_RANKED)):
            top1 = top3 = 0
            misses = []
            for query, wanted in pairs:
                got = page.evaluate(script, query)
                top1 += bool(got) and got[0] in wanted
                hit = any(p in got[:3] for p in wanted)
                top3 += hit
                if verbose or not hit:
                    misses.append(f"  {'ok ' if hit else 'MISS'} {query[:70]!r} -> {got[:3]} "
                                  f"(want {' or '.join(wanted)})")
            print(f"{name}: top 1 {top1}/{len(pairs)}, top 3 {top3}/{len(pairs)}")
            print("\n".join(misses))
        per_query = [page.evaluate(TIMED, [q, 20]) for q, _ in pairs]
        per_query.sort()
        print(f"query time: median {per_query[len(per_query) // 2]:.2f} ms, "
              f"max {per_query[-1]:.2f} ms over {len(pairs)} queries")
        browser.close()
    httpd.shutdown()
    for f in ("searchindex.js", "_static/searchextra.js", "_static/gradarg-search.js",
              "_static/searchtools.js", "_static/language_data.js"):
        path = SITE / f
        if path.exists():
            print(f"{f}: {path.stat().st_size / 1024:.1f} KiB")


if __name__ == "__main__":
    main("-v" in sys.argv)
