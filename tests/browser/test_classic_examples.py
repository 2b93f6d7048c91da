"""The built pages show the numbers of every classic example (``tests/site/classic_examples.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "classic_examples", Path(__file__).resolve().parents[1] / "site" / "classic_examples.py")
classic_examples = importlib.util.module_from_spec(_SPEC)
sys.modules["classic_examples"] = classic_examples  # dataclasses look their module up
_SPEC.loader.exec_module(classic_examples)
EXAMPLES = classic_examples.EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_page_shows_the_example_numbers(visits, example):
    text = visits(f"{example.page}.html").visible_text
    missing = [shown for shown in example.shows if shown not in text]
    assert missing == [], f"{example.name}: not visible on {example.page}"
