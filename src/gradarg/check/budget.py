"""How much one check computes at a time, which comparison it runs, and what the full one costs.

Every size limit of ``check_backward`` is here: how many Jacobian entries a bounded comparison
of one (output, input) block may hold (:func:`columns_for`, :func:`rows_for`), how many one-hot
rows or directions go through one batched pass (:func:`chunk`, :func:`directions_per_call`),
when the full Jacobians are built (:func:`comparison`), and what ``localize="full"`` would take
(:func:`full_cost`, quoted in every result and in the warning before an expensive run), and
the advice to run it (:func:`full_advice`), which never suggests what cannot fit in this
machine's memory (:func:`memory_bytes`, :func:`full_fits`).  A new budget, or advice that
depends on time or memory, goes here.
"""

from __future__ import annotations

import os

from . import fd_error

__all__ = [
    "BLOCK_ENTRIES",
    "CHUNK_ENTRIES",
    "FD_FULL_COLUMNS",
    "FULL_SIZE",
    "FULL_WARN_BYTES",
    "MAX_COLUMNS",
    "MIN_COLUMNS",
    "NAN_ROW_ENTRIES",
    "PATCH_NONZEROS",
    "ROW_PASS_ENTRIES",
    "chunk",
    "columns_for",
    "comparison",
    "directions_per_call",
    "fallback_rows",
    "full_advice",
    "full_cost",
    "full_fits",
    "memory_bytes",
    "rows_for",
]

# Bounded localisation of a wrong pair: at most this many Jacobian entries compared per pair
# (sampled columns × all rows), at least MIN_COLUMNS columns, at most MAX_COLUMNS.
BLOCK_ENTRIES = 1 << 19
MIN_COLUMNS, MAX_COLUMNS = 16, 512
CHUNK_ENTRIES = 1 << 21  # entries per batched backward pass (rows × input size)
FULL_SIZE = 16_384  # Jacobians with at most this many entries are built in full
FD_FULL_COLUMNS = 1_024  # with finite differences, only up to this many input elements
FULL_WARN_BYTES = 1 << 30  # localize="full" warns before it runs when it expects more memory
# one-hot backward passes of a bounded localisation whose backward cannot be differentiated:
# at most this many gradient entries computed per block (rows × input size), so that the
# fallback costs about as much as a few differentiated passes, not one pass per output element
ROW_PASS_ENTRIES = 1 << 25
# rows where the derivative of the backward is not finite (0/0 of a masked division) are
# computed by one-hot passes instead, up to this many entries
NAN_ROW_ENTRIES = 1 << 28
PATCH_NONZEROS = 1 << 22  # such rows are kept (sparse) for the next group test up to this many
MEMORY_SHARE = 0.5  # localize="full" is suggested only when it needs at most this share of RAM


def chunk(width: int) -> int:
    """One-hot rows (or columns) of length ``width`` per batched pass."""
    return max(1, CHUNK_ENTRIES // max(width, 1))


def directions_per_call(m: int) -> int:
    """Directions per call of a reference's ``directional`` for ``m`` output elements: the
    Richardson tables of finite differences are steps × directions × outputs."""
    return max(1, CHUNK_ENTRIES // (2 * max(1, m) * (fd_error.MAX_STEPS + 2)))


def columns_for(n: int, m: int) -> int:
    """Columns of an ``m × n`` block compared in a bounded localisation."""
    return min(n, max(MIN_COLUMNS, min(MAX_COLUMNS, BLOCK_ENTRIES // max(m, 1))))


def rows_for(m: int, width: int) -> int:
    """Rows of length ``width`` compared in a bounded localisation, of ``m``."""
    return min(m, max(MIN_COLUMNS, BLOCK_ENTRIES // max(width, 1)))


def fallback_rows(m: int, c: int, n: int, entries: int = ROW_PASS_ENTRIES) -> int:
    """Rows of ``m`` computed by one-hot backward passes (each ``n`` entries long) for ``c``
    columns, when the backward cannot be differentiated: :func:`rows_for` of the ``c``
    columns, and at most ``entries`` entries computed in all."""
    return min(rows_for(m, c), max(MIN_COLUMNS, entries // max(n, 1)))


def comparison(localize: str, m: int, n: int, finite_differences: bool,
               probes_disagree: bool) -> str:
    """``"full"``, ``"bounded"`` or ``"none"``: what ``localize`` asks for, and for ``"auto"``
    the full Jacobians (``m`` outputs × ``n`` inputs) when they are small (and, with finite
    differences, when a Richardson table per column stays cheap), else a bounded localisation
    when the probes disagree."""
    if localize != "auto":
        return localize
    # finite differences take a Richardson table per column: a full Jacobian of many columns
    # (a scalar loss of 4,096 inputs) is left to the probes and the bounded way
    cheap = not finite_differences or n <= FD_FULL_COLUMNS
    return ("full" if m * n <= FULL_SIZE and cheap else
            "bounded" if probes_disagree else "none")


def full_cost(m: int, ns: list[int], reference_cost) -> tuple[str, int]:
    """What ``localize="full"`` costs for ``m`` outputs and inputs of ``ns`` elements: a
    sentence and the bytes it is expected to take.  ``reference_cost(m, ns, size)`` is the
    reference's part (:meth:`~.references.Reference.cost`), ``size`` the bytes of one float64
    copy of the Jacobians."""
    n = sum(ns)
    size = 8 * m * n
    ref, mem = reference_cost(m, ns, size)
    text = (f"the full Jacobians have {m * n:,} entries: {m:,} backward passes and {ref}, "
            f"about {_bytes(mem)} of memory")
    return text, mem


def memory_bytes() -> int | None:
    """This machine's physical memory in bytes (``os.sysconf``), or ``None`` where it cannot
    be read."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


def full_fits(cost_bytes: float) -> bool:
    """Can ``localize="full"``, expected to take ``cost_bytes``, run here: at most
    ``MEMORY_SHARE`` of the physical memory (:func:`memory_bytes`; 8 GB when unknown)?"""
    total = memory_bytes()
    return cost_bytes <= MEMORY_SHARE * (total if total else 8 << 30)


def full_advice(cost_text: str = "", cost_bytes: float | None = None,
                entries: int = 0) -> str:
    """The advice a report gives when a sample left something open: compare every entry
    (with what that costs, :func:`full_cost`, when given), or, when that would need more than
    this machine's memory allows (:func:`full_fits`), the estimate and what fits instead
    (``entries``: the Jacobians' entries, to say how many would fit)."""
    if cost_bytes is None or full_fits(cost_bytes):
        return "localize='full' compares every entry" + (f": {cost_text}" if cost_text
                                                         else "")
    total = memory_bytes()
    here = f"this machine has {_bytes(total)}" if total else "more than fits here"
    # the memory of the full comparison grows with the entries: how many would fit
    fits = _two_digits(MEMORY_SHARE * (total or 8 << 30) / max(cost_bytes, 1) * entries)
    smaller = f" (about {fits:,} Jacobian entries fit: fewer rows or features)" if fits else ""
    return (f"localize='full' would need about {_bytes(cost_bytes)} of memory ({here}); "
            f"instead, check the same Function on a smaller input{smaller}, where every "
            f"entry is compared, or sample other columns with another seed=")


def _two_digits(n: float) -> int:
    """``n`` rounded down to two significant digits (an estimate, not a count)."""
    if n < 1:
        return 0
    scale = 10 ** max(0, len(str(int(n))) - 2)
    return int(n) // scale * scale


def _bytes(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"
