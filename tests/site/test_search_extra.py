"""What the search page knows besides Sphinx's index (docs/tools/search_extra.py): here, the own
words of each section of a narrative page (``pagesections``), which the search scores a page's
sections by (tests/browser/test_search.py checks the ranking)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "tools"))
import search_extra

PAGE = """<html><body><main>
<section id="the-title">
<h1>The title<a class="headerlink" href="#the-title">#</a></h1>
<p>Intro words.</p>
<section id="first">
<span id="first-label"></span><h2>First part</h2>
<p>Alpha &amp; beta.</p>
<div class="cell_output"><pre>printed gamma</pre></div>
<section id="first-sub">
<h3>A subsection</h3>
<p>Delta only here.</p>
</section>
</section>
<section id="second">
<h2>Second part</h2>
<p>Epsilon.</p>
</section>
</section>
</main>
<footer>Footer words</footer></body></html>"""


def test_each_section_keeps_its_own_words_up_to_its_first_subsection():
    got = search_extra.page_sections(PAGE)
    assert set(got) == {"", "first", "first-sub", "second"}  # the title's section is ""
    assert got[""] == "Intro words."
    assert got["first"] == "Alpha & beta. printed gamma"  # prose and outputs, unescaped
    assert "Delta" not in got["first"] and got["first-sub"] == "Delta only here."
    assert got["second"] == "Epsilon."
    assert not any("Footer" in text for text in got.values())
