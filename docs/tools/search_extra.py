"""What the search page knows besides Sphinx's index: each page's synonyms and the error messages
it quotes (docs/_static/gradarg-search.js ranks with them).

Written once the HTML is built, as ``_static/searchextra.js``:

- **synonyms**: the ``search-synonyms`` list of a page's front matter, the words its readers use
  for its topics when the page says them otherwise ("multiple GPUs" for a page that says
  ``DataParallel``)::

      ---
      file_format: mystnb
      search-synonyms: [multiple GPUs, multi-GPU, NoneType]
      ---

- **messages**: what a page quotes verbatim, one sentence a line: every line of its cell outputs
  that reads as a sentence (torch's exception and warning messages, printed diagnoses) and every
  sentence glued into its prose. A reader who pastes one finds the page that shows it.
- **sections**: for the question-and-answer pages (``questions/``), each entry (a level-2
  section) on its own: its anchor, heading, words (prose, code and outputs) and the messages its
  outputs quote (and a message its heading quotes in italics). The search page lists each entry
  as a result of its own, so that a question
  finds its answer, not just the page that holds it.
- **pagesections**: for the other pages (guide, tutorial, reference), each section's own words
  (up to its first subsection), by anchor (``""``: the text above the first section).  The
  search scores such a page as its best section with those words, and links to that section,
  not to the one whose heading happens to hold a word of the query.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

SYNONYMS_KEY = "search-synonyms"
_PRE = re.compile(r"<pre[^>]*>(.*?)</pre>", re.DOTALL)
_PASTED = re.compile(r'<span class="pasted-text">(.*?)</span>', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_SECTION = re.compile(r'<section id="([^"]+)">\s*(?:<span[^>]*></span>)*<h2>(.*?)</h2>', re.DOTALL)
_ENTRY_PAGES = "questions/"
_ANY_SECTION = re.compile(
    r'<section[^>]*\bid="([^"]+)"[^>]*>\s*(?:<span[^>]*></span>\s*)*<h([1-6])>(.*?)</h\2>',
    re.DOTALL)
_EM = re.compile(r"<em>(.*?)</em>", re.DOTALL)
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9']*")
MIN_WORDS = 5  # a line with this many words is a sentence, not a number or a tensor


def synonyms(metadata: dict) -> list[str]:
    """The page's ``search-synonyms``: a YAML list (MyST keeps it as JSON text) or a comma list."""
    value = metadata.get(SYNONYMS_KEY)
    if not value:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            value = value.split(",")
    if isinstance(value, str):
        value = [value]
    return [str(v).strip() for v in value if str(v).strip()]


def _text(fragment: str) -> str:
    return html.unescape(_TAG.sub("", fragment))


def _sentence(line: str) -> bool:
    words = _WORD.findall(line)
    return len(words) >= MIN_WORDS and sum(map(len, words)) >= 0.5 * len(line.strip())


def messages(page_html: str) -> list[str]:
    """The sentences a built page quotes: lines of its cell outputs, glued text; no repeats."""
    found: list[str] = []
    for block in _PRE.finditer(page_html):
        before = page_html[:block.start()]
        if before.rfind('class="cell_output') <= before.rfind('class="cell_input'):
            continue  # code a reader types, not what torch printed
        for line in _text(block.group(1)).splitlines():
            if _sentence(line):
                found.append(" ".join(line.split()))
    for span in _PASTED.findall(page_html):
        text = " ".join(_text(span).split())
        if _sentence(text):
            found.append(text)
    return list(dict.fromkeys(found))


def sections(page_html: str) -> list[dict[str, object]]:
    """The entries of a built question page, its level-2 sections headed by a question:
    ``{"anchor", "heading", "text", "messages"}``."""
    found = list(_SECTION.finditer(page_html))
    out: list[dict[str, object]] = []
    end_of_body = page_html.find('<footer')
    for i, m in enumerate(found):
        if not _text(m.group(2)).replace("#", "").strip().endswith("?"):
            continue  # not an entry: "What to remember"
        stop = found[i + 1].start() if i + 1 < len(found) else (
            end_of_body if end_of_body > m.end() else len(page_html))
        fragment = page_html[m.end():stop]
        heading = " ".join(_text(m.group(2)).replace("#", "").split())
        # a message the heading quotes (in italics), as the asker pasted it
        quoted = [" ".join(_text(q).split()) for q in _EM.findall(m.group(2))]
        out.append({"anchor": m.group(1), "heading": heading,
                    "text": " ".join(_text(fragment).split()),
                    "messages": list(dict.fromkeys(
                        [*messages(fragment), *(q for q in quoted if _sentence(q))]))})
    return out


def page_sections(page_html: str) -> dict[str, str]:
    """A built page's sections, each with its own words (prose, code, outputs) up to its first
    subsection or the next section: ``{anchor: text}``; the page's top section (its title) is
    ``""``."""
    end_of_body = page_html.find("<footer")
    stop_at = end_of_body if end_of_body > 0 else len(page_html)
    found = [m for m in _ANY_SECTION.finditer(page_html) if m.start() < stop_at]
    out: dict[str, str] = {}
    for m in found:
        nxt = page_html.find("<section", m.end(), stop_at)
        fragment = page_html[m.end():nxt if nxt >= 0 else stop_at]
        anchor = "" if m.group(2) == "1" else m.group(1)
        text = " ".join(_text(fragment).split())
        out[anchor] = f"{out[anchor]} {text}".strip() if anchor in out else text
    return out


def write(app, exception) -> None:
    """``build-finished`` handler: write ``searchextra.js`` for the HTML builder."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    data: dict[str, dict[str, object]] = {"synonyms": {}, "messages": {}, "sections": {},
                                          "pagesections": {}}
    for docname in sorted(app.env.found_docs):
        words = synonyms(app.env.metadata.get(docname, {}))
        if words:
            data["synonyms"][docname] = words
        page = out / (docname + app.builder.out_suffix)
        if page.exists():
            page_html = page.read_text(encoding="utf-8")
            found = messages(page_html)
            if found:
                data["messages"][docname] = found
            if docname.startswith(_ENTRY_PAGES):
                data["sections"][docname] = sections(page_html)
            else:
                data["pagesections"][docname] = page_sections(page_html)
    text = json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True)
    (out / "_static" / "searchextra.js").write_text(f"window.GRADARG_SEARCH_EXTRA = {text};\n",
                                        encoding="utf-8")


def add_scripts(app, pagename, templatename, context, doctree) -> None:
    """``html-page-context`` handler: the search page loads the extra data and the ranking, after
    searchtools.js and the index (deferred scripts run once the page is parsed)."""
    if pagename != "search":
        return
    app.add_js_file("searchextra.js", defer="defer")
    app.add_js_file("gradarg-search.js", defer="defer")
