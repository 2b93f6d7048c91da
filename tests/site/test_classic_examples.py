"""Every classic example of the ``gradient`` argument is still on its page, in visible code.

The list lives in ``classic_examples.py``; the browser suite checks that the built pages show
each example's numbers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from classic_examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "tools"))
import visible_code


def test_every_example_has_a_name_of_its_own():
    names = [e.name for e in EXAMPLES]
    assert len(names) == len(set(names))
    assert len(EXAMPLES) >= 13


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_example_code_is_visible_on_its_page(example):
    page = ROOT / "docs" / f"{example.page}.md"
    assert page.exists(), f"{example.name}: no page {example.page}"
    code = "\n".join(visible_code.visible_cells(page))
    missing = [fragment for fragment in example.code if fragment not in code]
    assert missing == [], f"{example.name}: not in the visible code of {example.page}"


def test_a_removed_example_is_noticed(tmp_path):
    page = ROOT / "docs" / "tutorial" / "vjp-by-examples.md"
    text = page.read_text(encoding="utf-8").replace("y = x.sum()", "y = x.mean()")
    cut = tmp_path / "vjp-by-examples.md"
    cut.write_text(text, encoding="utf-8")
    example = next(e for e in EXAMPLES if "y = x.sum()" in e.code)
    code = "\n".join(visible_code.visible_cells(cut))
    assert any(fragment not in code for fragment in example.code)
