"""The question-and-answer pages (docs/questions/): short entries, each headed by a question as
readers put it, answered in two to five sentences, shown by a live cell that checks itself, and
linked to the page that teaches the idea."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted((DOCS / "questions").glob("*.md"))
_NEXT = r"^\([A-Za-z0-9_-]+\)=\s*\n## |^## |^# |\Z"  # the next entry, section or page
_ENTRY = re.compile(r"^\(([A-Za-z0-9_-]+)\)=\s*\n## (.+?)\n(.*?)(?=" + _NEXT + ")",
                    re.MULTILINE | re.DOTALL)
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
_TAGS = re.compile(r"^:tags:\s*\[([^\]]*)\]", re.MULTILINE)
_TEACHING = re.compile(r"\]\((\.\./(?:guide|tutorial|reference)/[a-z0-9-]+\.md)(#[a-z0-9_-]+)?\)")
SCREEN_LINES = 34  # an entry's source, heading to the next: one screen at 1280 x 800
CODE_WIDTH = 80


def entries() -> list[tuple[str, str, str, str]]:
    """(page, label, heading, body) of every entry."""
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in _ENTRY.finditer(text):
            out.append((page.stem, m.group(1), m.group(2).strip(), m.group(3)))
    return out


ENTRIES = entries()


def _visible_code(body: str) -> list[str]:
    cells = []
    for m in _CELL.finditer(body):
        source = m.group(1)
        tags = _TAGS.search(source)
        if tags and ({"remove-cell", "remove-input"} & {t.strip() for t in tags.group(1).split(",")}):
            continue
        cells.append(_TAGS.sub("", source))
    return cells


def _sentences(prose: str) -> int:
    text = re.sub(r"`[^`]*`", "x", prose)                 # inline code
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their words
    text = re.sub(r"\b(e\.g|i\.e|etc|vs)\.", "x", text)
    return len(re.findall(r"[.!?](?=\s|$)", text.strip()))


def test_enough_entries_and_unique_labels():
    labels = [label for _, label, _, _ in ENTRIES]
    assert len(ENTRIES) >= 150
    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize(("page", "label", "heading", "body"), ENTRIES,
                         ids=[f"{p}#{lab}" for p, lab, _, _ in ENTRIES])
def test_entry_shape(page, label, heading, body):
    assert heading.endswith("?"), "an entry is headed by the question"
    prose = _CELL.split(body)[0].strip()
    prose = "\n".join(line for line in prose.splitlines() if not line.startswith("```"))
    n = _sentences(prose)
    assert 2 <= n <= 5, f"{n} sentences before the cell: two to five"
    assert _TEACHING.search(body), "links to the page that teaches the idea"
    code = _visible_code(body)
    assert code, "a live cell a reader can run"
    joined = "\n".join(code)
    assert "assert" in joined or ("except" in joined and "print" in joined), (
        "the cell checks itself: an assert, or the exception torch raises, printed")
    assert len(body.strip().splitlines()) + 2 <= SCREEN_LINES, "fits one screen"
    for line in joined.splitlines():
        assert len(line) <= CODE_WIDTH, f"code line wider than the code box: {line!r}"


def test_every_question_page_is_linked_from_a_teaching_page():
    teaching = "\n".join(p.read_text(encoding="utf-8")
                         for p in [*(DOCS / "guide").glob("*.md"), *(DOCS / "tutorial").glob("*.md")])
    for page in PAGES:
        assert f"questions/{page.name}" in teaching, f"no guide or tutorial page links to {page.name}"
