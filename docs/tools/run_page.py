"""Execute one page's code cells, hidden ones included, in a fresh kernel, as the site build
does (the docs-only helpers of ``docs/_pages`` importable), and report the first failing cell.

    python docs/tools/run_page.py docs/guide/errors.md [--visible]

A quick loop while writing a page, without building the site; ``--visible`` runs only what a
reader sees (what ``nox -s pages`` checks in an empty directory). Exits 1 when a cell fails.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import nbclient
import nbformat

sys.path.insert(0, str(Path(__file__).parent))
import visible_code

DOCS = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    page = Path(argv[0]).resolve()
    visible_only = "--visible" in argv
    cells = [source for kind, tags, source in visible_code.cells(page.read_text(encoding="utf-8"))
             if kind == "code" and not (visible_only and tags & visible_code.HIDDEN)]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    env_path = [] if visible_only else [str(DOCS / "_pages")]
    os.environ["PYTHONPATH"] = os.pathsep.join([*env_path, os.environ.get("PYTHONPATH", "")])
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MPLBACKEND", "Agg")
    with tempfile.TemporaryDirectory() as cwd:
        client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                         resources={"metadata": {"path": cwd}})
        try:
            client.execute()
        except nbclient.exceptions.CellExecutionError as err:
            print(f"{page.name}: a cell failed\n{err}")
            return 1
    print(f"{page.name}: {len(cells)} cells ran")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
