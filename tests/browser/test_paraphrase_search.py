"""The site's search on words its pages were not written from.  The corpus's keywords are the
askers' own words, and the entries were written from them, so test_corpus_search cannot tell
whether the search finds an answer for a reader who puts the same problem otherwise.  Here
every open record of the corpus (not the held-out third) was put in other words by a helper
that saw only the record's question, keywords and error, never the site or its entries
(tests/questions/paraphrases.json: for each record a short query of 3-7 words and a sentence
of 10-25 words, as another practitioner would search).  Measured at this test's writing
(Chromium, the built site): the answering entry in the first five results for 83.7 % of the
short queries and 85.7 % of the sentences (first three: 77.3 % / 78.7 %); often the others
land on a sibling entry of the same question.  After the search's changes at stop 98 (words of
asking count as nothing, "vs" as "difference", a page's title weighs less in one of its
sections, ties go to the heading the query covers most): 86.6 % and 89.0 % in the first five
(first three: 80.4 % / 84.1 %); the same changes left the held-out third's figure where it was
(its named entry in the first three for 70 of 115 before and after, graded by a helper).  This
test keeps that from falling: at least 85 % in the first five for each kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browsing import Visit, _open

HERE = Path(__file__).resolve().parents[1] / "questions"
ANCHORS = {r["id"]: r["anchor"] for r in json.loads((HERE / "corpus.json").read_text())["records"]
           if r["anchor"] and not r.get("held_out")}
PARAPHRASES = json.loads((HERE / "paraphrases.json").read_text())
FLOOR = 0.85


@pytest.fixture(scope="module")
def ranks(browser_context, server):
    visit = Visit(url=server + "search.html")
    page = _open(browser_context, server, "search.html", visit)
    page.wait_for_function("() => typeof GradargSearch !== 'undefined' && Search._index")
    queries = [p[kind] for p in PARAPHRASES for kind in ("short", "sentence")]
    found = page.evaluate(
        "qs => qs.map(q => GradargSearch.search(q).slice(0, 5).map(r => r.docname + r.anchor))",
        queries)
    assert visit.console_errors == [] and visit.failed_requests == []
    page.close()
    out: dict[str, list[bool]] = {"short": [], "sentence": []}
    pairs = [(p["id"], kind) for p in PARAPHRASES for kind in ("short", "sentence")]
    for (rid, kind), got in zip(pairs, found, strict=True):
        out[kind].append(ANCHORS[rid] in got)
    return out


def test_every_open_record_is_paraphrased():
    assert [p["id"] for p in PARAPHRASES] == list(ANCHORS)
    assert all(p["short"].strip() and p["sentence"].strip() for p in PARAPHRASES)


@pytest.mark.parametrize("kind", ["short", "sentence"])
def test_other_words_still_find_the_entry(ranks, kind):
    hits = ranks[kind]
    share = sum(hits) / len(hits)
    assert share >= FLOOR, f"{kind}: the answering entry in the top 5 for {share:.1%}"
