"""What flowed through a backward pass, drawn, and why a ``.grad`` is None, zero or NaN.

What it is for: ``trace_backward`` (runs ``y.backward(gradient=v)`` with hooks on every node and
records the cotangent each node received and sent), its drawings (``trace_svg``,
``side_by_side``, ``Drawing``: SVG laid out in pure Python, no Graphviz binary) and
``why_no_grad`` (the cause, read from the live graph and tensors).

Modules: ``tracer``, ``drawing``, ``diagnose``, ``gradflow`` (``watch``: the gradient through
every module and parameter of the user's own training step) and ``modules`` (``draw_modules``:
one box per ``nn.Module``).

May import: :mod:`gradarg.core`, :mod:`gradarg.show` and ``gradarg._validate``; never
:mod:`gradarg.check` or :mod:`gradarg.sparse`.
"""

from .diagnose import GradDiagnosis, why_no_grad
from .drawing import Drawing, side_by_side, trace_svg
from .gradflow import GradWatch, ModuleRecord, ParamRecord, watch
from .modules import draw_modules
from .tracer import BackwardTrace, TracedEdge, TracedNode, trace_backward

__all__ = [
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
