"""Check that two builds of the site show the same numbers on every page.

Usage: python docs/tools/compare_builds.py BUILD_A BUILD_B

Compares the visible text of every page (code, outputs, glued numbers, formulas' sources).
Exempt are only wall-clock timings, which no two runs share: outputs of cells tagged
``measured`` and prose inside a ``:::{container} measured`` block; and the page footers. Line breaks are not compared (the same words in the same order match). Exits 1 and prints a diff of each page that differs.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from bs4 import BeautifulSoup


def page_text(path: Path) -> list[str]:
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    main = soup.find("main") or soup.body
    for el in main.select("script, style, footer, .tag_measured, .measured, .bd-footer-article"):
        el.decompose()
    lines = (line.strip() for line in main.get_text("\n").splitlines())
    return [line for line in lines if line]


def compare(a: Path, b: Path) -> int:
    pages_a = {p.relative_to(a) for p in a.rglob("*.html") if "_static" not in p.parts}
    pages_b = {p.relative_to(b) for p in b.rglob("*.html") if "_static" not in p.parts}
    failures = 0
    if pages_a != pages_b:
        print("different page sets:", sorted(map(str, pages_a ^ pages_b)))
        failures += 1
    for rel in sorted(pages_a & pages_b):
        ta, tb = page_text(a / rel), page_text(b / rel)
        # the same words in the same order: where a line breaks is not compared, because
        # MyST-NB joins the chunks of a cell's stdout with a newline (coalesce_streams), and
        # how print()'s writes were chunked depends on the kernel's flush timing, not the page
        if ta != tb and " ".join(ta).split() != " ".join(tb).split():
            failures += 1
            print(f"--- {rel} differs:")
            sys.stdout.writelines(
                line + "\n" for line in difflib.unified_diff(ta, tb, "first", "second", n=1)
            )
    print(f"{len(pages_a & pages_b)} pages compared, {failures} with differences")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(compare(Path(sys.argv[1]), Path(sys.argv[2])))
