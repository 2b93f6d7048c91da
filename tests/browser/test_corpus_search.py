"""Every question of the corpus (tests/questions/corpus.json) that names its answering entry:
its keywords, typed into the site's search in Chromium, put that entry among the first three
results (the entry itself, page and anchor, not just its page)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browsing import Visit, _open

CORPUS = Path(__file__).resolve().parents[1] / "questions" / "corpus.json"
RECORDS = [r for r in json.loads(CORPUS.read_text())["records"] if r["anchor"]]
TOP = 3


def query_of(record: dict) -> str:
    """What the asker would type: their keywords, one after the other."""
    return " ".join(record["keywords"])


@pytest.fixture(scope="module")
def rankings(browser_context, server):
    visit = Visit(url=server + "search.html")
    page = _open(browser_context, server, "search.html", visit)
    page.wait_for_function("() => typeof GradargSearch !== 'undefined' && Search._index")
    found = page.evaluate(
        "qs => qs.map(q => GradargSearch.search(q).slice(0, 5)"
        ".map(r => r.docname + r.anchor))",
        [query_of(r) for r in RECORDS])
    assert visit.console_errors == [] and visit.failed_requests == []
    page.close()
    return dict(zip([r["id"] for r in RECORDS], found, strict=True))


def test_the_corpus_is_searched():
    assert len(RECORDS) >= 200


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_keywords_find_the_entry(rankings, record):
    got = rankings[record["id"]]
    assert record["anchor"] in got[:TOP], f"{query_of(record)!r} -> {got[:TOP]}"
