"""What flowed through a backward pass, drawn, and why a ``.grad`` is None, zero or NaN.

What it is for: ``trace_backward`` (runs ``y.backward(gradient=v)`` with hooks on every node and
records the cotangent each node received and sent), its drawings (``trace_svg``,
``side_by_side``, ``Drawing``: SVG laid out in pure Python, no Graphviz binary) and
``why_no_grad`` (the cause, read from the live graph and tensors).

Modules:

- ``tracer``: ``trace_backward``, the hook engine; ``traced``: the ``BackwardTrace`` it returns
  (``TracedNode``, ``TracedEdge``); ``labels``: how a node is named (``c = 8 * b``);
  ``drawing``: its SVG drawings; ``player``: ``BackwardTrace.player()``, the pass step by step.
- ``nodes``: the only module that reads autograd nodes' internals (``next_functions``, a leaf's
  ``variable``, the saved ``_saved_*`` values; freed-graph and in-place checks; ``Graph``, the
  walk and its ``networkx`` graph); ``operators``: what is known about each operation, one row
  per operator (label, the rule the player shows, zero, singular and gate regions, random).
- ``diagnose``: ``why_no_grad`` and ``GradDiagnosis``; it asks the ordered rules of ``reach``
  (is the tensor tracked and in the graph?) and ``causes`` (what one pass and ``.grad`` show),
  each with its live-graph and freed-graph handling, over one ``context``; ``cuts`` and
  ``gradients`` read the evidence; ``rules`` is the rule engine ``explain`` shares.
- ``gradflow``: ``watch`` and ``GradWatch`` (the record of the user's own training step), built
  from ``hooks`` (the hooks and the notes they take; those on ``.grad``'s events in
  ``stephooks``), ``events`` (what happened to each
  parameter's ``.grad``, in order: the passes that accumulated into it, what an optimizer step
  and the end of the block found there, parameters re-created by an assignment; and how those
  notes are read), ``graphnotes`` (what the hooks read from the graph and the values at a few
  moments: all-zero factors, where a failed backward stopped, the call that made the forward's
  first NaN, reentrant checkpointing), ``records`` (the module and parameter records and their
  assembly), ``findings`` (one function per thing that can be wrong with a step; the summary
  line), ``explain`` (``GradWatch.why_no_grad`` in words, ordered rules) and ``view`` (rows,
  table, plot); ``modules``: ``draw_modules``, one box per ``nn.Module``.
- ``values``: how values are shown and measured (``SHOWN_ENTRIES``, norms, sparse values);
  a leaf every other module may import.

Where a change goes: a new operator is one row of ``operators.OPERATORS`` (with its example in
``tests/trace/test_operators.py``, which checks every row against torch); a new cause of
``why_no_grad`` is one rule in ``reach`` or ``causes``, placed in that module's ``RULES`` (the
``Case`` type and the docstrings' lists follow); a new reason in ``GradWatch.why_no_grad`` is
one rule in ``explain.RULES``; a new finding of ``watch`` is one function in ``findings``, added
to ``FINDINGS`` (one read from observed events in ``stepfindings``); a new hook or note in
``hooks`` (a new event of ``.grad``: its hook in ``stephooks``, its reading in ``events``;
what it reads from the graph or the values, in ``graphnotes``); a new view of the record in
``view``; a new drawing primitive in ``drawing`` (operations) or ``modules`` (modules);
anything that reads a node's internals in ``nodes``.  No module imports one that imports it
back (``tests/test_layout.py``).

May import: :mod:`gradarg.core`, :mod:`gradarg.show` and ``gradarg._validate``; never
:mod:`gradarg.check` or :mod:`gradarg.sparse`.
"""

from .diagnose import GradDiagnosis, why_no_grad
from .drawing import Drawing, side_by_side, trace_svg
from .gradflow import GradWatch, ModuleRecord, ParamRecord, watch
from .modules import draw_modules
from .player import BackwardPlayer
from .traced import BackwardTrace, TracedEdge, TracedNode
from .tracer import trace_backward

__all__ = [
    "BackwardPlayer",
    "BackwardTrace",
    "Drawing",
    "GradDiagnosis",
    "GradWatch",
    "ModuleRecord",
    "ParamRecord",
    "TracedEdge",
    "TracedNode",
    "draw_modules",
    "side_by_side",
    "trace_backward",
    "trace_svg",
    "watch",
    "why_no_grad",
]
