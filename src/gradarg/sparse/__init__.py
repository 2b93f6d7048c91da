"""Sparse Jacobians by compression: one backward pass for several rows that touch disjoint columns.

What it is for: ``SparseJacobian(pattern)`` (colour once, then every call makes one batched pass
per colour instead of one per row or column, with a random certificate), ``color_pattern``
(greedy colouring of the row or column intersection graph, by networkx) and
``sparsity_pattern`` (a local pattern from dense Jacobians at random points).

``jacobian_sparsity`` / ``hessian_sparsity`` find global patterns by tracing ``fn``.

Modules: ``compressed``, ``coloring``, ``pattern``, ``detect``.

May import: :mod:`gradarg.core` and ``gradarg._validate``; never :mod:`gradarg.check`,
:mod:`gradarg.trace` or :mod:`gradarg.show`.  Importing it registers the compressed route
that ``gradarg.jacobian(fn, x, sparsity=P)`` calls.
"""

from ..core.dense import register_sparse_route
from .coloring import STRATEGIES, color_pattern
from .compressed import CertificateError, SparseJacobian, sparse_jacobian
from .detect import UnsupportedOpError, hessian_sparsity, jacobian_sparsity
from .pattern import sparsity_pattern

register_sparse_route(sparse_jacobian)

__all__ = [
    "STRATEGIES",
    "CertificateError",
    "SparseJacobian",
    "UnsupportedOpError",
    "color_pattern",
    "hessian_sparsity",
    "jacobian_sparsity",
    "sparsity_pattern",
]
