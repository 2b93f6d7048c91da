"""The tape: one backward pass recorded node by node.

What it is for: ``tracer`` (``trace_backward``: runs ``y.backward(gradient=v)`` with hooks on
every node and records the cotangent each node received and sent) and ``traced`` (the
``BackwardTrace`` it returns, ``TracedNode``, ``TracedEdge``; detached tensors and strings
only, never the graph).

May import: :mod:`gradarg.trace.graph` and :mod:`gradarg.trace.draw` (a trace draws itself),
and :mod:`gradarg.core`, :mod:`gradarg.show`, ``gradarg._validate``.  Not ``why`` or
``watching``.
"""
