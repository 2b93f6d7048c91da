"""Node inspection and the operator catalogue: the bottom of :mod:`gradarg.trace`.

What it is for: reading autograd's graph and its values, nothing recorded and nothing drawn.

- ``nodes``: the only module that reads autograd nodes' internals (``next_functions``, a
  leaf's ``variable``, the saved ``_saved_*`` values; freed-graph and in-place checks;
  ``Graph``, the walk and its ``networkx`` graph).
- ``operators``: what is known about each operation, one row per operator (label, the rule the
  player shows, zero, singular and gate regions, random).  A new operator is one row of
  ``operators.OPERATORS`` (with its example in ``tests/trace/test_operators.py``, which checks
  every row, and its shown rule, against torch).
- ``labels``: how a node is named (``c = 8 * b``).
- ``values``: how values are shown and measured (``SHOWN_ENTRIES``, norms, sparse values).

May import: :mod:`gradarg.core`, :mod:`gradarg.show` and ``gradarg._validate``; no other
sub-package of :mod:`gradarg.trace` (every one of them may import this one).
"""
