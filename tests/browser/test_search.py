"""The site's search, in Chromium on the built site: what readers type finds the page that
answers it (the pairs of search_pairs.py, each in the first three results), through the theme's
search box, offline and without console errors."""

from __future__ import annotations

import json
import random
from pathlib import Path
from urllib.parse import urlparse

import pytest
from browsing import SITE, Visit, _open, quiet
from search_pairs import PAIRS, PENDING

TOP = 3


def _expected(pages: str | tuple[str, ...]) -> tuple[str, ...]:
    return (pages,) if isinstance(pages, str) else pages


def _id(pair) -> str:
    return pair[0][:60]


@pytest.fixture(scope="module")
def search_page(browser_context, server):
    """search.html with its index loaded, and what it logged (console errors, requests that
    failed or left localhost), as the other pages' visits record them."""
    visit = Visit(url=server + "search.html")
    page = _open(browser_context, server, "search.html", visit)
    page.wait_for_function("() => typeof GradargSearch !== 'undefined' && Search._index")
    yield page, visit
    page.close()


def ranked(page, query: str) -> list[str]:
    """Page names in the order the search page lists them (one result per page)."""
    return page.evaluate("q => GradargSearch.search(q).map(r => r.docname)", query)


def _check(search_page, query, pages):
    page, visit = search_page
    results = ranked(page, query)
    wanted = _expected(pages)
    assert any(p in results[:TOP] for p in wanted), (
        f"{' or '.join(wanted)} not in the first {TOP}: {results[:5]}")
    assert visit.console_errors == [] and visit.failed_requests == []


@pytest.mark.parametrize(("query", "pages"), PAIRS, ids=[_id(p) for p in PAIRS])
def test_reader_query_finds_its_page(search_page, query, pages):
    _check(search_page, query, pages)


@pytest.mark.parametrize(("query", "pages"), PENDING, ids=[_id(p) for p in PENDING])
def test_reader_query_finds_its_new_page(search_page, query, pages):
    missing = [p for p in _expected(pages) if not (SITE / f"{p}.html").exists()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not in this build yet")
    _check(search_page, query, pages)


def test_enough_pairs():
    assert len(PAIRS) >= 40
    assert len({q for q, _ in PAIRS + PENDING}) == len(PAIRS + PENDING), "a query is repeated"


def test_every_expected_page_exists():
    """A pair names a built page (or a pending one): a renamed page fails here, not silently."""
    pending = {p for _, pages in PENDING for p in _expected(pages)}
    for _, pages in PAIRS:
        for p in _expected(pages):
            assert (SITE / f"{p}.html").exists() or p in pending, p


def test_a_word_no_page_uses_does_not_empty_the_results(search_page):
    """Sphinx's own search dropped every page missing one word of the query."""
    page, _ = search_page
    message = "grad can be implicitly created only for scalar outputs"
    first = ranked(page, message)[:1]
    assert ranked(page, f"xqzwv {message}")[:1] == first
    assert first[0] in ("guide/errors", "questions/backward-gradient")


def test_more_matching_words_rank_higher(search_page):
    """Pages holding some of the words are listed too (Sphinx's own search listed only pages
    holding all of them), below the page that holds more of them."""
    page, _ = search_page
    names = ranked(page, "wirtinger holomorphic conjugate xqzwv")
    assert names[0] == "guide/complex"
    assert len(names) > 1, "pages with 'conjugate' alone are listed too"


def test_titles_weigh_more_than_body_text(search_page):
    """A word in a page's title outranks the same word in other pages' prose."""
    page, _ = search_page
    assert ranked(page, "cheat sheet")[0] == "reference/cheatsheet"
    assert ranked(page, "accumulation")[0] == "guide/accumulation"


def test_search_box_shows_ranked_results(browser_context, server):
    """The theme's search box: type a pasted error message, press Enter; search.html lists
    the page that raises it first, links to its section, nothing leaves localhost and the
    console stays clean."""
    visit = Visit(url=server + "guide/five-ways.html")
    page = _open(browser_context, server, "guide/five-ways.html", visit)
    page.keyboard.press("Control+k")  # the theme's shortcut opens its search dialog
    box = page.locator("form.bd-search input[name=q]:visible").first
    box.fill("RuntimeError: element 0 of tensors does not require grad and does not have a "
             "grad_fn")
    with page.expect_navigation():
        box.press("Enter")
    assert urlparse(page.url).path.endswith("/search.html")
    first = page.locator("#search-results ul.search li a").first
    first.wait_for()
    href = first.get_attribute("href")
    # the guide section, or the question entry that quotes the same message
    assert href.startswith(("guide/errors.html#", "questions/missing-gradients.html#")), href
    page.wait_for_function(
        "() => document.querySelector('#search-results .search-summary') && "
        "/found/.test(document.querySelector('#search-results .search-summary').textContent)")
    assert page.locator("#search-results ul.search li").count() >= TOP
    quiet(page)
    assert visit.console_errors == [] and visit.failed_requests == []
    assert visit.foreign_requests == []
    page.close()


def _search_small_index(page, index: dict, extra: dict, query: str) -> list[str]:
    """``page + anchor`` of each result of the site's ranking (gradarg-search.js, loaded
    afresh) for ``query`` over a small hand-made ``index`` and ``extra`` (searchextra.js's
    data); the page's own index and data are put back afterwards."""
    source = (SITE / "_static" / "gradarg-search.js").read_text()
    source = source.replace("const GradargSearch = (() => {", "window.GSTest = (() => {")
    source = source.replace('if (typeof Search !== "undefined") Search.query = query;', "")
    got = page.evaluate(
        """([index, extra, source, query]) => {
             const saved = [Search._index, window.GRADARG_SEARCH_EXTRA];
             Search._index = index; window.GRADARG_SEARCH_EXTRA = extra;
             try { eval(source); return GSTest.search(query); }
             finally { [Search._index, window.GRADARG_SEARCH_EXTRA] = saved; }
           }""", [index, extra, source, query])
    return [r["docname"] + r["anchor"] for r in got]


def test_a_page_is_scored_as_its_best_section(search_page):
    """A page's query words spread over several of its headings do not weigh as one heading:
    on a small index, a question entry whose heading holds three of the query's four words
    (the fourth in its text) outranks a page with each of the four in a heading of its own;
    the page still outranks one with the words in its body only, and links to the section
    whose heading holds a query word."""
    page, _ = search_page
    words = ["alphaz", "betaz", "gammaz", "deltaz"]
    index = {
        "docnames": ["guide/long", "questions/q", "guide/body"],
        "filenames": ["guide/long.md", "questions/q.md", "guide/body.md"],
        "titles": ["Long page", "Questions", "Body page"],
        "terms": {w: [0, 2] for w in words} | {"deltaz": [0, 1, 2]},
        "titleterms": {},
        "alltitles": {f"{w} things": [[0, f"{w}-things"]] for w in words},
    }
    extra = {"synonyms": {}, "messages": {}, "sections": {"questions/q": [
        {"anchor": "q-entry", "heading": "alphaz betaz gammaz?", "text": "deltaz here",
         "messages": []}]}}
    order = _search_small_index(page, index, extra, "alphaz betaz gammaz deltaz")
    assert order[0] == "questions/q#q-entry", order
    assert order.index("guide/long#alphaz-things") < order.index("guide/body"), order


def test_a_page_title_lifts_no_section_above_the_entry_that_answers(search_page):
    """A word of a page's title weighs the title's full weight for the page itself, and for
    one of its sections only what another heading of the page weighs: on a small index, the
    entry whose heading holds both query words outranks a section whose heading holds one and
    whose page's title the other (with the full title weight in every section it did not),
    and the section still outranks a page with both words in its body only."""
    page, _ = search_page
    index = {
        "docnames": ["guide/t", "questions/q", "guide/body"],
        "filenames": ["guide/t.md", "questions/q.md", "guide/body.md"],
        "titles": ["Alphaz things", "Questions", "Body page"],
        "terms": {"alphaz": [0, 1, 2], "betaz": [0, 1, 2]},
        "titleterms": {"alphaz": 0},
        "alltitles": {"Betaz part": [[0, "betaz-part"]], "Other": [[0, "other"]],
                      "alphaz and betaz?": [[1, "q-entry"]]},
    }
    extra = {"synonyms": {}, "messages": {}, "sections": {"questions/q": [
        {"anchor": "q-entry", "heading": "alphaz and betaz?", "text": "", "messages": []}]}}
    order = _search_small_index(page, index, extra, "alphaz betaz")
    assert order[:3] == ["questions/q#q-entry", "guide/t#betaz-part", "guide/body"], order


def test_a_tie_goes_to_the_heading_about_just_that(search_page):
    """Two entries holding the query's words in the same fields score alike: the one whose
    heading the query covers most comes first (it sorted by title before, so the long
    heading that only mentions the words came first here)."""
    page, _ = search_page
    index = {
        "docnames": ["questions/q"], "filenames": ["questions/q.md"], "titles": ["Questions"],
        "terms": {"alphaz": 0, "betaz": 0}, "titleterms": {},
        "alltitles": {"Alphaz betaz among gammaz deltaz epsilonz?": [[0, "long"]],
                      "Betaz of alphaz?": [[0, "short"]]},
    }
    extra = {"synonyms": {}, "messages": {}, "sections": {"questions/q": [
        {"anchor": "long", "heading": "Alphaz betaz among gammaz deltaz epsilonz?",
         "text": "", "messages": []},
        {"anchor": "short", "heading": "Betaz of alphaz?", "text": "", "messages": []}]}}
    order = _search_small_index(page, index, extra, "alphaz betaz")
    assert order == ["questions/q#short", "questions/q#long"], order


def test_a_tie_goes_to_the_page_about_the_query(search_page):
    """Two entries that match alike, on two question pages: the one on the page whose title
    holds the query's words comes first (a bare error message finds the page about that error
    before an entry elsewhere that also quotes it: before, the order of the pages decided)."""
    page, _ = search_page
    index = {
        "docnames": ["questions/a", "questions/b"],
        "filenames": ["questions/a.md", "questions/b.md"],
        "titles": ["Questions: kappaz", "Questions: omegaz psiz"],
        "terms": {"omegaz": [0, 1], "psiz": [0, 1]}, "titleterms": {},
        "alltitles": {"Omegaz psiz under kappaz?": [[0, "ea"]],
                      "Omegaz psiz under lambdaz?": [[1, "eb"]]},
    }
    extra = {"synonyms": {}, "messages": {}, "sections": {
        "questions/a": [{"anchor": "ea", "heading": "Omegaz psiz under kappaz?", "text": "",
                         "messages": []}],
        "questions/b": [{"anchor": "eb", "heading": "Omegaz psiz under lambdaz?", "text": "",
                         "messages": []}]}}
    order = _search_small_index(page, index, extra, "omegaz psiz")
    assert order[:2] == ["questions/b#eb", "questions/a#ea"], order


def test_a_narrative_page_links_to_the_section_whose_own_words_match(search_page):
    """A page with its sections' own words (searchextra.js ``pagesections``) is scored section
    by section: where no heading holds a query word, it links to the section whose text holds
    them (without those words: to the page, as before), and a page whose words are spread over
    two sections ranks below one that holds them all in one (without: a tie)."""
    page, _ = search_page
    index = {
        "docnames": ["guide/a", "guide/b", "guide/c", "guide/d"],
        "filenames": ["guide/a.md", "guide/b.md", "guide/c.md", "guide/d.md"],
        "titles": ["Page a", "Page b", "Page c", "Page d"],
        "terms": {"zetaz": [0, 1, 2, 3], "etaz": [0, 1], "thetaz": [0, 1]},
        "titleterms": {},
        "alltitles": {"Intro part": [[0, "intro-part"]], "Other part": [[0, "other-part"]],
                      "First half": [[1, "first-half"]], "Second half": [[1, "second-half"]]},
    }
    sections = {
        "guide/a": {"": "", "intro-part": "zetaz", "other-part": "zetaz etaz thetaz"},
        "guide/b": {"": "", "first-half": "zetaz etaz", "second-half": "thetaz"},
    }
    def order(extra):
        return _search_small_index(page, index, extra, "zetaz etaz thetaz")

    with_words = order({"synonyms": {}, "messages": {}, "sections": {},
                        "pagesections": sections})
    assert with_words[:2] == ["guide/a#other-part", "guide/b#first-half"], with_words
    without = order({"synonyms": {}, "messages": {}, "sections": {}})
    assert without[:2] == ["guide/a", "guide/b"], without


# words of asking, not of a topic, and the ways a comparison is asked (gradarg-search.js)
ASKING = ("problem", "issue", "help", "please", "anyone", "question")
COMPARED = ("{a} vs {b}", "{a} versus {b}", "difference between {a} and {b}")


def _open_queries(n: int, seed: int) -> list[list[str]]:
    """The keywords of ``n`` open questions of the corpus (never the held-out third's), drawn
    at random with ``seed``."""
    corpus = Path(__file__).resolve().parents[1] / "questions" / "corpus.json"
    records = [r for r in json.loads(corpus.read_text())["records"]
               if r["anchor"] and not r.get("held_out")]
    return [r["keywords"] for r in random.Random(seed).sample(records, n)]


def _results(page, queries: list[str]) -> list[list]:
    return page.evaluate(
        "qs => qs.map(q => GradargSearch.search(q).slice(0, 10)"
        ".map(r => [r.docname + r.anchor, r.score]))", queries)


def test_a_word_of_asking_changes_no_ranking(search_page):
    """Words of asking ("problem", "help", "issue" ...) are rare on the site (so their idf was
    high) and name no topic: one of them before or after a reader's query (not inside a quoted
    error message, whose run of words it would break) leaves the ranking as it was (it used to
    lift whichever entry's heading happened to hold the word: "why does ... help" ranked first
    for any query with "help")."""
    page, _ = search_page
    rng = random.Random(7)
    plain, padded = [], []
    for keywords in _open_queries(60, seed=1):
        words = " ".join(keywords).split()
        at = rng.choice((0, len(words)))
        plain.append(" ".join(words))
        padded.append(" ".join([*words[:at], rng.choice(ASKING), *words[at:]]))
    for q, before, after in zip(padded, _results(page, plain), _results(page, padded),
                                strict=True):
        assert after == before, q


def test_a_comparison_ranks_alike_however_it_is_asked(search_page):
    """A comparison asked as "detach vs no_grad", "detach versus no_grad" or "difference
    between detach and no_grad" is one question: the same ranking, over pairs of words drawn
    from the corpus's keywords (the entries say "difference" where askers type "vs")."""
    page, _ = search_page
    rng = random.Random(3)
    pairs = [rng.sample(" ".join(k).split(), 2) for k in _open_queries(40, seed=2)
             if len(" ".join(k).split()) >= 2]
    for a, b in pairs:
        forms = [f.format(a=a, b=b) for f in COMPARED]
        first, *others = _results(page, forms)
        for form, got in zip(forms[1:], others, strict=True):
            assert got == first, (forms[0], form)
    names = [r[0] for r in _results(page, ["detach vs no_grad"])[0][:3]]
    assert "questions/missing-gradients#nograd-detach-vs-no-grad" in names
