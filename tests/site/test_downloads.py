"""The page's download: a valid notebook of its prose and visible code whose code runs top to
bottom in a fresh interpreter with only the package and its documentation dependencies
(``reader.page_run``; the same cells also run in a Jupyter kernel in the build), and that needs
none of the site's own plumbing (``pagekit``, glue)."""

from __future__ import annotations

import pytest
from reader import PAGES, ROOT, page_run, visible_code


def ids(pages):
    return [p.relative_to(ROOT / "docs").as_posix() for p in pages]


@pytest.mark.parametrize("page", PAGES, ids=ids(PAGES))
def test_download_holds_no_plumbing(page):
    nb = visible_code.notebook(page)
    code = "\n".join(c["source"] for c in nb["cells"] if c["cell_type"] == "code")
    for plumbing in ("pagekit", "sparsekit", "compilekit", "opsupport", "myst_nb", "glue("):
        assert plumbing not in code
    assert any(c["cell_type"] == "markdown" and c["source"].startswith("# ")
               for c in nb["cells"][:2]), "the title is in the notebook"


@pytest.mark.pages
@pytest.mark.parametrize("page", PAGES, ids=ids(PAGES))
def test_download_runs_top_to_bottom(page):
    run = page_run(page)
    assert run["error"] is None, run["error"]
    outputs = [o for c in run["notebook"]["cells"] if c["cell_type"] == "code"
               for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
