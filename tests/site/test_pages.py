"""Every page as a reader sees its source: no plumbing in visible cells, code that fits the
code box, a 'What to remember' section and a link to the next page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(
    p for p in DOCS.rglob("*.md") if "_build" not in p.parts and p.parent.name != "_pages"
)
EXECUTED = [p for p in PAGES if "file_format: mystnb" in p.read_text(encoding="utf-8")]
TUTORIAL = sorted((DOCS / "tutorial").glob("*.md"))
MAX_COLUMNS = 80
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)
HIDDEN = ("remove-cell", "remove-input")


def ids(paths):
    return [str(p.relative_to(DOCS)) for p in paths]


def visible_cells(page: Path) -> list[str]:
    cells = []
    for body in CELL.findall(page.read_text(encoding="utf-8")):
        tags = re.search(r"^:tags: \[(.*)\]$", body, re.MULTILINE)
        if tags and any(t.strip() in HIDDEN for t in tags.group(1).split(",")):
            continue
        cells.append(body)
    return cells


@pytest.mark.parametrize("page", EXECUTED, ids=ids(EXECUTED))
def test_no_plumbing_in_visible_cells(page):
    for cell in visible_cells(page):
        for plumbing in ("myst_nb", "IPython", "gradarg.fmt\n", "= gradarg.fmt", "pagekit",
                         "compilekit", "opsupport", "sys.path", "markdown_table("):
            assert plumbing not in cell, f"{plumbing!r} in a visible cell:\n{cell}"


# an exception printed under a name typed by hand: `except RuntimeError as err: print(f"RuntimeError:
# {err}")` labels a NotImplementedError (a subclass) "RuntimeError" (torch.unique's backward did)
_TYPED_NAME = re.compile(r'print\(f?"[A-Z][A-Za-z]*(Error|Exception|Warning):[ "]')


@pytest.mark.parametrize("page", EXECUTED, ids=ids(EXECUTED))
def test_printed_exceptions_are_named_by_their_type(page):
    for cell in visible_cells(page):
        for line in cell.splitlines():
            assert not _TYPED_NAME.search(line), (
                f"print the type torch raised, type(err).__name__, not a name typed: {line}")


@pytest.mark.parametrize("page", EXECUTED, ids=ids(EXECUTED))
def test_visible_code_fits_the_code_box(page):
    for cell in visible_cells(page):
        for line in cell.splitlines():
            assert len(line) <= MAX_COLUMNS, f"{len(line)} columns: {line}"


def test_example_scripts_fit_the_code_box():
    scripts = [*(ROOT / "examples").glob("*.py"), *(DOCS / "guide" / "scripts").glob("*.py")]
    assert len(scripts) > 5
    for script in scripts:
        for n, line in enumerate(script.read_text(encoding="utf-8").splitlines(), 1):
            assert len(line) <= MAX_COLUMNS, f"{script.name}:{n}: {len(line)} columns"


@pytest.mark.parametrize("page", PAGES, ids=ids(PAGES))
def test_page_ends_with_what_to_remember_and_a_next_link(page):
    text = page.read_text(encoding="utf-8")
    assert "\n## What to remember\n" in text
    remember = text.split("\n## What to remember\n", 1)[1].split("\n## ", 1)[0]
    bullets = re.findall(r"^- ", remember, re.MULTILINE)
    assert 3 <= len(bullets) <= 4, f"{len(bullets)} bullets"
    if page.name != "api.md":                  # the last page of the reading order
        assert re.search(r"^\*\*Next:\*\*[^*]{0,200}?\]\(", text, re.MULTILINE), "no next link"


@pytest.mark.parametrize("page", TUTORIAL, ids=ids(TUTORIAL))
def test_tutorial_page_ends_with_exercises_in_closed_answer_dropdowns(page):
    text = page.read_text(encoding="utf-8")
    assert "\n## Try it yourself\n" in text
    exercises = text.split("\n## Try it yourself\n", 1)[1]
    answers = re.findall(r":::\{dropdown\} Answer\n(\s*:[^\n]+\n)+", exercises)
    assert 2 <= len(answers) <= 3
    assert exercises.count(":class-container: answer") == len(answers)
    assert ":open:" not in exercises
    assert "{glue:text}" in exercises            # the answers come from the run


@pytest.mark.parametrize("page", PAGES, ids=ids(PAGES))
def test_no_project_history_words(page):
    text = page.read_text(encoding="utf-8").lower()
    text = re.sub(r"random seed|manual_seed|seed=|seed\)|\bseeded random", "", text)
    for word in ("seed", "popular post"):
        assert word not in text, word


def reading_order() -> list[Path]:
    """The landing page, then every page in the order of the navigation's toctrees."""
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    order = [DOCS / "index.md"]
    for block in re.findall(r"^```\{toctree\}\n(.*?)^```$", index, re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            if line.strip() and not line.startswith(":"):
                order.append(DOCS / f"{line.strip()}.md")
    return order


ORDER = reading_order()


def test_navigation_lists_every_page_once():
    assert sorted(ORDER) == PAGES


@pytest.mark.parametrize("page", ORDER[:-1], ids=ids(ORDER[:-1]))
def test_next_link_follows_the_navigation(page):
    text = page.read_text(encoding="utf-8")
    nxt = re.search(r"^\*\*Next:\*\*.*?\]\(([^)#]+)", text, re.MULTILINE | re.DOTALL)
    assert nxt, f"{page.name}: no **Next:** link"
    target = (page.parent / nxt.group(1)).resolve()
    expected = ORDER[ORDER.index(page) + 1]
    assert target == expected.resolve(), f"{page.name} -> {nxt.group(1)}, expected {expected}"
