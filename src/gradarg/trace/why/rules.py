"""Ordered rules over one context: the shape of both answers to "why is this gradient missing".

A :class:`Rule` names the cases it can answer and a phrase for the documentation, and holds
its handling of a live graph and, where that differs, of a graph whose saved tensors
``backward()`` freed.  A handler returns an answer, or ``None``: it could not decide on this
context, and the next rule is asked.  :func:`decide` asks the rules in order; :func:`cases` and
:func:`checked` are what the docstrings list.  :data:`gradarg.trace.why.causes.RULES` (for
:func:`gradarg.why_no_grad`, on the graph) and :data:`gradarg.trace.watching.explain.RULES` (for
:meth:`gradarg.GradWatch.why_no_grad`, on the hooks' record) are two such lists; a new cause is
one more rule in one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["Rule", "cases", "checked", "decide", "undecided"]

C = TypeVar("C")
A = TypeVar("A")


@dataclass(frozen=True)
class Rule(Generic[C, A]):
    """One cause, checked on a context ``C``; its answer an ``A``.

    Attributes
    ----------
    cases : tuple of str
        The cases its answers can have.
    doc : str
        What it checks, a phrase for the documentation (``""``: not listed).
    live : callable
        ``live(context)``: the answer, or ``None`` when it cannot decide.  Used for every
        context when ``freed`` is ``None``.
    freed : callable or None
        The same for a context whose ``freed`` is true (``backward()`` freed the saved
        tensors); ``None`` when the handling is the same.
    when : callable or None
        ``when(context)``: whether the rule applies at all (asked first; ``None``: always).
    """

    cases: tuple[str, ...]
    doc: str
    live: Callable[[C], A | None]
    freed: Callable[[C], A | None] | None = None
    when: Callable[[C], bool] | None = None

    def __call__(self, context: C) -> A | None:
        if self.when is not None and not self.when(context):
            return None
        # the context's ``freed`` is asked only by rules that handle it: it may cost a pass
        if self.freed is not None and _freed(context):
            return self.freed(context)
        return self.live(context)


def _freed(context: Any) -> bool:
    return bool(context.freed)


def undecided(context: Any) -> None:
    """A handler that never decides: the cause cannot be read in that state (``freed=``)."""


def decide(rules: Sequence[Rule[C, A]], context: C) -> tuple[Rule[C, A], A]:
    """The first rule that decides, and its answer.

    Raises
    ------
    LookupError
        No rule decided (the last rule of a list is meant to decide always).
    """
    for rule in rules:
        answer = rule(context)
        if answer is not None:
            return rule, answer
    raise LookupError("no rule decided")


def cases(rules: Sequence[Rule[Any, Any]]) -> tuple[str, ...]:
    """Every case the rules can answer, each once, in the order they are checked."""
    return tuple(dict.fromkeys(case for rule in rules for case in rule.cases))


def checked(rules: Sequence[Rule[Any, Any]]) -> str:
    """The rules' phrases, in order, joined by commas."""
    return ", ".join(rule.doc for rule in rules if rule.doc)
