"""Shared pieces of the blind training-step scenarios (see ``../README.md``).

Each ``case_*.py`` next to this file describes one training step taken from a public bug report:
``step(watch)`` runs it, ``truth(run)`` asserts the bug with plain torch, ``MUST`` / ``MUST_NOT``
say what a right diagnosis has to say and must not claim.  This module only holds the helpers
that read them; it never imports gradarg.
"""

from __future__ import annotations

import contextlib
import re
import types
from collections.abc import Callable, Iterable

# The summary line claims the step is fine.  Phrases are matched against a text made of one line
# "summary: <w.summary(checks=False)>" and one line "why <name>: <w.why_no_grad(name)>" per name
# in ASK.
FALSE_OK = r"^summary: ok\b"
HEALTHY_OK = r"^summary: ok\b"
# claims that zero_grad was not called (for steps where it was)
CLAIMS_NO_ZERO_GRAD = (
    r"zero_grad(\(\))?\s+(is\s+|was\s+)?(missing|not called|never called|forgotten)"
    r"|(missing|forgot\w*|no)\s+(call to\s+)?(optimizer\.|model\.)?zero_grad"
    r"|\.grad\s+(was\s+|is\s+)?not\s+(zeroed|reset|cleared)"
)
# claims of a non-finite gradient (for steps where every gradient is finite)
CLAIMS_NONFINITE = r"\bnan\b|non-?finite|\binf\b|infinit"
# claims that a backward pass or forward raised (for steps where nothing raised)
CLAIMS_ERROR = r"\braised\b|\bexception\b|RuntimeError|\berror\b"


class Run(types.SimpleNamespace):
    """What ``step`` returns: ``w`` (the watch, or None under ``plain``) and the step's objects."""


def plain(model: object) -> contextlib.AbstractContextManager[None]:
    """Stand-in for ``gradarg.watch`` when the ground truth is established with torch alone."""
    del model
    return contextlib.nullcontext()


def tool_text(w: object, ask: Iterable[str]) -> str:
    """The text the phrases are matched against: the summary and ``why_no_grad`` per name."""
    # checks=False: the line without its trailing list of check names ("[checked: non-finite,
    # ..., dead units, accumulated ...]"), which names checks and claims nothing (see README).
    lines = [f"summary: {w.summary(checks=False)}"]  # type: ignore[attr-defined]
    for name in ask:
        try:
            why = w.why_no_grad(name)  # type: ignore[attr-defined]
        except Exception as error:  # noqa: BLE001  (the answer is part of what is judged)
            why = f"<{type(error).__name__}: {error}>"
        lines.append(f"why {name}: {why}")
    return "\n".join(lines)


def _found(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE | re.MULTILINE) is not None


def judge(text: str, must: list[list[str]], must_not: list[str]) -> tuple[str, list, list]:
    """``("right" | "false" | "silent", missing must-groups, must-not patterns found)``.

    False when a must-not phrase appears (a false "ok" is one), silent when nothing false is
    said but a must group has no match, right otherwise.
    """
    missing = [group for group in must if not any(_found(p, text) for p in group)]
    found = [p for p in must_not if _found(p, text)]
    verdict = "false" if found else ("silent" if missing else "right")
    return verdict, missing, found


def expect_raise(fn: Callable[[], object], kind: type[BaseException]) -> BaseException | None:
    """Run ``fn``; return the exception of type ``kind`` it raised, or None."""
    try:
        fn()
    except kind as error:
        return error
    return None
