"""Drawings and the player: SVG laid out in pure Python (no Graphviz binary), step by step.

What it is for: ``drawing`` (``trace_svg``, ``side_by_side``, ``Drawing``, DOT text; the
drawing primitives), ``player`` (``BackwardPlayer``: a backward pass node by node) and
``modules`` (``draw_modules``: one box per ``nn.Module`` of a ``watch`` record).  They read a
trace or a record by its attributes; nothing is recomputed here.

May import: :mod:`gradarg.trace.graph` (and :mod:`gradarg.core`, :mod:`gradarg.show`,
``gradarg._validate``).  Not the tape, ``why`` or ``watching``, which import this package
(a type named under ``if TYPE_CHECKING:`` is not an import: it never runs).
"""
