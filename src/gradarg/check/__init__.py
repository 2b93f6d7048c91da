"""Is a backward right?  Checking what ``backward`` computes against an independent Jacobian.

What it is for: ``compare_vjp`` (one ``y.backward(gradient=v)`` against ``v`` contracted with a
Jacobian from finite differences, forward mode, a matrix or a VJP function you give) and
``check_backward`` (a custom ``autograd.Function`` or module, every (output, input) pair: random
probes first, then the wrong entries, the kind of bug and a ``v`` that shows it).

Modules: ``compare``, ``backward`` (``check_backward``), ``localize`` (wrong entries and
patterns), ``report`` (text, HTML and the heatmap), ``fd_error`` (finite differences that carry
their own error estimate), ``tolerance`` (rounding allowed per dtype).

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
