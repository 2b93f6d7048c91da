"""``why_no_grad``: why a tensor's ``.grad`` is None, zero or NaN, read from the live graph.

What it is for: ``diagnose`` (``why_no_grad`` and ``GradDiagnosis``) asks the ordered rules of
``reach`` (is the tensor tracked and in the graph?) and ``causes`` (what one pass and ``.grad``
show; ``raised``: the pass itself raises), each with its live-graph and freed-graph handling,
over one ``context``; ``cuts`` and
``gradients`` read the evidence; ``located`` runs a recomputing function once more, watched,
to say where a cut path was cut; ``rules`` is the rule engine (``watching.explain`` shares it).
A new cause is one rule in ``reach`` or ``causes``, placed in that module's ``RULES``.

May import: :mod:`gradarg.trace.graph`, :mod:`gradarg.trace.draw`, :mod:`gradarg.trace.tape`
(and :mod:`gradarg.core`, :mod:`gradarg.show`, ``gradarg._validate``).  Not ``watching``.
"""
