"""``watch``: the record of the user's own training step, its findings and their explanations.

What it is for: ``watch`` (``watch`` and ``GradWatch``), composed of the ``recorder`` (the
hooks on modules, parameters, optimizers; the notes they take), ``gradhooks`` (the hooks on
``.grad``'s events: accumulation, optimizer steps, edits), ``graphnotes`` (what the hooks read
from the graph and the values at a few moments), ``events`` (each parameter's ``.grad``
events, in order, and how they are read), ``records`` (module and parameter records and their
assembly), ``finding`` / ``findings`` / ``eventfindings`` (one function per thing that can be
wrong with a step; those read from observed ``.grad`` events in ``eventfindings``), ``explain``
(``GradWatch.why_no_grad`` in words) and ``view`` (rows, table, plot).

A new observed event is one hook in ``gradhooks``, its note in ``events`` and one finding in
``eventfindings``.

May import: every other sub-package of :mod:`gradarg.trace` (``graph``, ``draw``, ``tape``,
``why``) and :mod:`gradarg.core`, :mod:`gradarg.show`, ``gradarg._validate``.  Nothing imports
it but :mod:`gradarg.trace` itself.
"""
