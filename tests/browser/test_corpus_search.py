"""Every question of the corpus (tests/questions/corpus.json) whose answering entry is known:
its keywords, typed into the site's search in Chromium, put that entry among the first three
results (the entry itself, page and anchor, not just its page).

The entry is the record's ``anchor``; for a question of a blind round (rounds 7 on: graded
before its entry was written, ``anchor`` null) it is where the last reader who graded it found
it ANSWERED (``grade_roundN_after``'s page and anchor, on the page that label is on now).  Where
that entry was not in the first three, a second reader graded the first three results and that
entry one by one (tests/questions/answered_by.json): any entry graded ANSWERED there counts, and
one graded only PARTLY or NO no longer does.  Left out: the first held-out third
(``grade_before``), whose keywords whoever tunes the search never reads, and the questions no
reader found answered in full.  Measured when the blind rounds joined this test (site at
87b099a): 402 of their 439 questions had their named entry in the first three; with the
second reading and the search's section-level words for narrative pages, 418 of 433 (the
other 6: no entry answers them in full); with the askers' words in 14 of the 15 entries'
headings and text and one new entry, 433 of 433: every one is required now (the 15 were marked as
expected failures until then)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from browsing import Visit, _open

CORPUS = Path(__file__).resolve().parents[1] / "questions" / "corpus.json"
DOCS = Path(__file__).resolve().parents[2] / "docs"
TOP = 3
_GRADE = re.compile(r"grade_round(\d+)(_after)?$")


def _label_pages() -> dict[str, str]:
    """The page each MyST label ``(label)=`` of the docs is on now (labels are global: an entry
    keeps its label when it moves to another page)."""
    pages = {}
    for md in DOCS.rglob("*.md"):
        if "_build" in md.parts:
            continue
        for label in re.findall(r"^\(([\w-]+)\)=\s*$", md.read_text(), flags=re.MULTILINE):
            pages[label] = md.relative_to(DOCS).with_suffix("").as_posix()
    return pages


LABEL_PAGES = _label_pages()


SECOND = json.loads((CORPUS.parent / "answered_by.json").read_text())["judged"]

def answering_entries(record: dict) -> set[str]:
    """The ``page#label`` of every entry known to answer ``record`` (see the module's
    docstring); empty: none known."""
    named = _named_entry(record)
    second = SECOND.get(record["id"], {})
    found = {e for e, g in second.items() if g["grade"] == "ANSWERED"}
    if named and (named not in second or second[named]["grade"] == "ANSWERED"):
        found.add(named)
    return found


def _named_entry(record: dict) -> str | None:
    """``page#label`` of the entry the record names, or the last reader who graded it found
    ANSWERED (None: none)."""
    if record["anchor"]:
        return record["anchor"]
    if record.get("grade_before"):  # the first held-out third
        return None
    rounds = [(int(m[1]), bool(m[2]), key) for key in record
              if (m := _GRADE.match(key))]
    if not rounds:
        return None
    last = record[max(rounds)[2]]
    if isinstance(last, dict) and last.get("grade") == "ANSWERED" and last.get("anchor"):
        # the page the entry is on now (the reader's, where the entry has not moved since)
        return f"{LABEL_PAGES.get(last['anchor'], last['page'])}#{last['anchor']}"
    return None


RECORDS = [(r, sorted(e)) for r in json.loads(CORPUS.read_text())["records"]
           if (e := answering_entries(r))]


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
        [query_of(r) for r, _ in RECORDS])
    assert visit.console_errors == [] and visit.failed_requests == []
    page.close()
    return dict(zip([r["id"] for r, _ in RECORDS], found, strict=True))


def test_the_corpus_is_searched():
    assert len(RECORDS) >= 900
    assert sum(not r["anchor"] for r, _ in RECORDS) >= 400  # the blind rounds' questions


def test_the_second_reading_is_of_records_of_the_corpus():
    ids = {r["id"] for r in json.loads(CORPUS.read_text())["records"]}
    assert set(SECOND) <= ids


@pytest.mark.parametrize(("record", "entries"),
                         [pytest.param(r, e, id=r["id"]) for r, e in RECORDS])
def test_keywords_find_the_entry(rankings, record, entries):
    got = rankings[record["id"]]
    assert set(entries) & set(got[:TOP]), f"{query_of(record)!r} -> {entries} not in {got[:TOP]}"
