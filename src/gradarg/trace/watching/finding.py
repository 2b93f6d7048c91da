"""One check of a watched step and the thresholds the checks take: the two types the findings
(:mod:`.findings`, :mod:`.eventfindings`) return and read.  Imports nothing of the trace room."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Finding", "Options", "shown"]


@dataclass(frozen=True)
class Options:
    """Thresholds of the findings (see :meth:`GradWatch.problems`)."""

    factor: float = 1e3
    dead_fraction: float = 0.5


@dataclass(frozen=True)
class Finding:
    """One check of a watched step: its name, whether it could run (and why not), what it
    found."""

    check: str
    ran: bool
    problem: str | None = None
    why_not: str = ""
    note: str = ""  # a fact worth saying that is not a problem
    expected: tuple[str, ...] = ()  # parameters whose zero gradient the note says is expected


def shown(names: Sequence[str], k: int = 2) -> str:
    """The first ``k`` names joined by commas, with ``", ..."`` when there are more."""
    return ", ".join(list(names)[:k]) + (", ..." if len(names) > k else "")
