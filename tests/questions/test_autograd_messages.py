"""The table of autograd messages (``docs/questions/_data/autograd_messages.json``, written by
``docs/tools/autograd_messages.py`` from the installed torch): each message was raised by its
trigger on torch 2.13, and the question entry it names exists and quotes it."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = json.loads((ROOT / "docs/questions/_data/autograd_messages.json").read_text())
_LABEL = re.compile(r"^\(([A-Za-z0-9_-]+)\)=\s*$", re.MULTILINE)


def _labels(page: str) -> set[str]:
    path = ROOT / "docs" / f"{page}.md"
    return set(_LABEL.findall(path.read_text())) if path.exists() else set()


def test_every_message_was_raised_by_its_trigger():
    assert len(TABLE) >= 60
    untriggered = [r["message"] for r in TABLE if r["raised"] is None]
    assert len(untriggered) <= 5, untriggered
    # "raised" holds the exception (or warning) text, cut at 300 characters; a message printed
    # beside the exception (anomaly mode's "Error detected in ...") is not in it
    beside = [r["message"] for r in TABLE
              if r["raised"] is not None and r["message"][:60] not in r["raised"]]
    assert len(beside) <= 2, beside
    for r in TABLE:
        if r["raised"] is not None:
            assert r["trigger"], r["message"]


def test_every_named_entry_exists():
    named = [r for r in TABLE if r["entry"]]
    assert len(named) >= 0.8 * len(TABLE)
    for r in named:
        page, _, label = r["entry"].partition("#")
        assert label in _labels(page), (r["message"], r["entry"])
