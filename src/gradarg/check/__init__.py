"""Is a backward right?  Checking what ``backward`` computes against an independent Jacobian.

What it is for: ``compare_vjp`` (one ``y.backward(gradient=v)`` against ``v`` contracted with a
Jacobian from finite differences, forward mode, a matrix or a VJP function you give) and
``check_backward`` (a custom ``autograd.Function`` or module, every (output, input) pair: random
probes first, then the wrong entries, the kind of bug and a ``v`` that shows it).

Modules: ``compare`` (``compare_vjp``); ``backward`` (``check_backward``: argument checks, then
one run) and ``setup`` (the inputs a check differentiates).  A run (``checker``: its steps) is
built from parts with small interfaces:

- ``under_test``: the backward under test (its VJPs; rows and columns of the Jacobian it
  implies; the same backward in float64 for the rounding it shows);
- ``references``: what the backward is compared with (forward mode, finite differences, the
  intended backward), one class each with one interface, given only the function, the inputs,
  the outputs' shapes, the random state and the run's notes;
- ``probes``: the random probes ``vᵀJu``;
- ``localize``: where a wrong block is wrong (a sample of its columns or rows within the
  budget, group tests, the worst entries, a region of the input);
- ``blocks``: some entries of a block from both sides, with their tolerance;
- ``patterns``: what kind of bug a wrong block shows;
- ``confirm``: second looks that evaluate again before a pattern or region is named;
- ``verdict``: the sentence on each block, the example ``v``, the summary of a run;
- ``budget``: sizes, the choice between the full and the bounded comparison, the full one's
  cost; ``tolerance``: every tolerance (per dtype, per entry, per probe, ``compare_vjp``'s);
- ``results`` (the result objects) and ``report`` (text, HTML and the heatmap);
  ``fd_error`` (finite differences that carry their own error estimate).

Where a change goes: a new kind of reference is a class in ``references`` (returned by
``references.choose``); a tolerance in ``tolerance``; a limit of time or memory, or advice that
depends on one, in ``budget``; how the compared entries are chosen (sampling, group tests) in
``localize.Localizer``; a new pattern in ``patterns``, a new kind of region in ``localize``
(beside ``threshold``), and a test that evaluates again before either is named in ``confirm``;
a verdict's wording in ``verdict`` (the sentence on a block, the summary) and the report's
layout in ``report``; a new step of a run in ``checker``.

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
