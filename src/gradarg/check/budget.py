"""How much one check computes at a time, which comparison it runs, and what the full one costs.

Every size limit of ``check_backward`` is here: how many Jacobian entries a bounded comparison
of one (output, input) block may hold (:func:`columns_for`, :func:`rows_for`), how many one-hot
rows or directions go through one batched pass (:func:`chunk`, :func:`directions_per_call`),
when the full Jacobians are built (:func:`comparison`), and what ``localize="full"`` would take
(:func:`full_cost`, quoted in every result and in the warning before an expensive run), and
the advice to run it (:func:`full_advice`).  A new budget, or advice that depends on time or
memory, goes here.
"""

from __future__ import annotations

from . import fd_error

__all__ = [
    "BLOCK_ENTRIES",
    "CHUNK_ENTRIES",
    "FD_FULL_COLUMNS",
    "FULL_SIZE",
    "FULL_WARN_BYTES",
    "MAX_COLUMNS",
    "MIN_COLUMNS",
    "chunk",
    "columns_for",
    "comparison",
    "directions_per_call",
    "full_advice",
    "full_cost",
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


def full_advice(cost_text: str = "") -> str:
    """The advice a report gives when a sample left something open: compare every entry
    (with what that costs, :func:`full_cost`, when given)."""
    return "localize='full' compares every entry" + (f": {cost_text}" if cost_text else "")


def _bytes(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"
