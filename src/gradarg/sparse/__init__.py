"""Sparse Jacobians by compression: one backward pass for several rows that touch disjoint columns.

What it is for: ``SparseJacobian(pattern)`` (colour once, then every call makes one batched pass
per colour instead of one per row or column, with a random certificate; a bidirectional split
when a row and a column are dense), ``color_pattern`` (greedy colouring of the row or column
intersection graph: largest-first and DSATUR compiled by rustworkx, other orders in
``greedy``), ``sparsity_pattern`` (a local pattern from dense Jacobians at random points),
``SparseHessian(pattern)`` (star or acyclic colouring, one Hessian-vector product per
colour), and ``jacobian_sparsity`` / ``hessian_sparsity`` (global patterns found by tracing
``fn``, valid for every input).

Modules: ``compressed``, ``coloring`` (conflict graphs, strategies), ``greedy`` (greedy
colouring and vertex orders), ``bidirectional`` (dense rows by VJPs, the rest by JVPs),
``star`` (star colouring and direct recovery), ``acyclic`` (acyclic colouring and
substitution), ``hessian``, ``pattern`` (local patterns), ``detect/`` (patterns by tracing: a
``TorchDispatchMode`` in ``detect/mode.py``, a rule registry in ``detect/registry.py``, one
rule module per family of operators in ``detect/rules/``; a new operator's rule goes in
``detect/rules/<family>.py``, registered with ``@register("op", family=...)``).

May import: :mod:`gradarg.core` and ``gradarg._validate``; never :mod:`gradarg.check`,
:mod:`gradarg.trace` or :mod:`gradarg.show`.  Importing it registers the compressed route
that ``gradarg.jacobian(fn, x, sparsity=P)`` calls.
"""

from ..core.dense import register_sparse_route
from .coloring import STRATEGIES, color_pattern
from .compressed import CertificateError, SparseJacobian, sparse_jacobian
from .detect import UnsupportedOpError, hessian_sparsity, jacobian_sparsity
from .hessian import SparseHessian
from .pattern import sparsity_pattern

register_sparse_route(sparse_jacobian)

__all__ = [
    "STRATEGIES",
    "CertificateError",
    "SparseHessian",
    "SparseJacobian",
    "UnsupportedOpError",
    "color_pattern",
    "hessian_sparsity",
    "jacobian_sparsity",
    "sparsity_pattern",
]
