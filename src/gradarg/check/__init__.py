"""Is a backward right?  Checking what ``backward`` computes against an independent Jacobian.

What it is for: ``compare_vjp`` (one ``y.backward(gradient=v)`` against ``v`` contracted with a
Jacobian from finite differences, forward mode, a matrix or a VJP function you give) and
``check_backward`` (a custom ``autograd.Function`` or module, every (output, input) pair: random
probes first, then the wrong entries, the kind of bug and a ``v`` that shows it).

Modules: ``compare`` (``compare_vjp``); ``backward`` (``check_backward``: argument checks, then
one ``Checker`` run); ``checker`` (the steps of a run: determinism, probes, full comparison,
result), built from ``setup`` (the inputs a check differentiates), ``references`` (what the
backward is compared with: forward mode, finite differences, the intended backward, one class
each with one interface), ``under_test`` (rows and columns of the backward under test),
``sampling`` (bounded localisation: sampled columns, group tests), ``verdict`` (wrong entries,
their pattern, an example ``v``), ``results`` (the result objects); ``localize`` (patterns and
regions), ``report`` (text, HTML and the heatmap), ``fd_error`` (finite differences that carry
their own error estimate), ``tolerance`` (rounding allowed per dtype, and per entry).

Where a change goes: a new kind of reference is a class in ``references`` (returned by
``references.choose``); a tolerance in ``tolerance``; how much is sampled in ``sampling``; the
report's wording in ``report`` (table) or ``verdict`` (the sentence on a block).

May import: :mod:`gradarg.core`, :mod:`gradarg.show` and ``gradarg._validate``; never
:mod:`gradarg.trace` or :mod:`gradarg.sparse`.
"""

from .backward import (
    BackwardCheck,
    ExampleV,
    LocalizationCostWarning,
    PairCheck,
    ProbeCheck,
    check_backward,
)
from .compare import VJPComparison, compare_vjp
from .localize import WrongEntry
from .tolerance import backward_rtol

__all__ = [
    "BackwardCheck",
    "ExampleV",
    "LocalizationCostWarning",
    "PairCheck",
    "ProbeCheck",
    "VJPComparison",
    "WrongEntry",
    "backward_rtol",
    "check_backward",
    "compare_vjp",
]
