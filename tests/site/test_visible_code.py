"""Every page runs as shown: its visible code, copied in page order into a fresh interpreter
with an empty working directory and only the package installed, runs without error.

Hidden cells (``remove-cell``, ``remove-input``) may glue numbers, assert and draw, but a
visible cell never uses a name only a hidden cell defines, and never imports the repository's
``examples/`` or ``docs/`` modules. The run itself is shared with ``test_downloads.py``
(``reader.page_run``: each page's visible code as a notebook, its cells run once, in order, in a
fresh interpreter).
"""

from __future__ import annotations

import ast

import pytest
from reader import PAGES, ROOT, page_run, visible_code

LOCAL = {p.stem for p in (ROOT / "examples").glob("*.py")} | {
    p.stem for p in (ROOT / "docs").rglob("*.py") if "_build" not in p.parts}


def ids(pages):
    return [p.relative_to(ROOT / "docs").as_posix() for p in pages]


def test_every_site_page_is_checked():
    assert len(PAGES) >= 18
    assert (ROOT / "docs" / "index.md") in PAGES


@pytest.mark.parametrize("page", PAGES, ids=ids(PAGES))
def test_visible_code_imports_only_what_a_reader_has(page):
    for source in visible_code.visible_cells(page):
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in LOCAL, f"a visible cell imports {name}"


@pytest.mark.pages
@pytest.mark.parametrize("page", PAGES, ids=ids(PAGES))
def test_visible_code_runs_in_a_fresh_interpreter(page):
    run = page_run(page)
    assert run["error"] is None, run["error"]
    code = [c["source"] for c in run["notebook"]["cells"] if c["cell_type"] == "code"]
    assert code == visible_code.visible_cells(page)    # all of it, in page order
    assert run["files"] == [] or all(not f.endswith(".py") for f in run["files"])
