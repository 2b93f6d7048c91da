"""What flowed through a backward pass, drawn, and why a ``.grad`` is None, zero or NaN.

What it is for: ``trace_backward`` (runs ``y.backward(gradient=v)`` with hooks on every node and
records the cotangent each node received and sent), its drawings (``trace_svg``,
``side_by_side``, ``Drawing``: SVG laid out in pure Python, no Graphviz binary) and
``why_no_grad`` (the cause, read from the live graph and tensors).

Sub-packages, bottom to top (each may import only those before it; ``tests/test_layout.py``
checks it):

- ``graph``: node inspection and the operator catalogue (``nodes``: the only module that reads
  autograd nodes' internals; ``operators``: one row per operator, with the rule the player
  shows; ``labels``: how a node is named; ``values``: how values are shown and measured).
- ``draw``: the drawings (``drawing``: ``trace_svg``, ``side_by_side``, ``Drawing``), the
  ``player`` (``BackwardPlayer``) and ``modules`` (``draw_modules``, one box per
  ``nn.Module``).
- ``tape``: ``tracer`` (``trace_backward``, the hook engine) and ``traced`` (the
  ``BackwardTrace`` it returns).
- ``why``: ``why_no_grad`` (``diagnose``, the ordered rules of ``reach`` and ``causes`` over
  one ``context``; ``cuts`` and ``gradients`` read the evidence; ``rules``, the rule engine).
- ``watching``: ``watch`` and ``GradWatch``, composed of a ``recorder`` and the hooks on
  ``.grad``'s events (``gradhooks``); ``events``, ``records``, ``findings``,
  ``eventfindings``, ``explain`` and ``view``.

Where a change goes: a new operator is one row of ``graph.operators.OPERATORS`` (with its
example in ``tests/trace/test_operators.py``, which checks every row against torch); a new
cause of ``why_no_grad`` is one rule in ``why.reach`` or ``why.causes``, placed in that
module's ``RULES``; a new reason in ``GradWatch.why_no_grad`` is one rule in
``watching.explain.RULES``; a new finding of ``watch`` is one function in
``watching.findings``, added to ``FINDINGS``; a new observed event of ``.grad`` is one hook in
``watching.gradhooks`` (a call torch has no hook for: one wrapper in ``watching.patches``), its
note in ``watching.events`` and one finding in ``watching.eventfindings``; a new view of the record in ``watching.view``; a new drawing
primitive in ``draw.drawing`` (operations) or ``draw.modules`` (modules); anything that reads
a node's internals in ``graph.nodes``.

May import: :mod:`gradarg.core`, :mod:`gradarg.show` and ``gradarg._validate``; never
:mod:`gradarg.check` or :mod:`gradarg.sparse`.
"""

from .draw.drawing import Drawing, side_by_side, trace_svg
from .draw.modules import draw_modules
from .draw.player import BackwardPlayer
from .tape.traced import BackwardTrace, TracedEdge, TracedNode
from .tape.tracer import trace_backward
from .watching.watch import GradWatch, ModuleRecord, ParamRecord, watch
from .why.diagnose import GradDiagnosis, why_no_grad

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
