"""The Jacobian core: whole Jacobians and vector–Jacobian products, the layer everything uses.

What it is for: ``jacobian(fn, x, method=...)`` by reverse mode (rows from VJPs with one-hot
upstream gradients), forward mode (columns from JVPs) or central finite differences;
``backward_vjp`` and ``contract`` (``vᵀJ`` from ``backward`` and from a Jacobian); the
finite-difference steps and tolerances.

Modules: ``dense`` (the public ``jacobian``), ``_routes`` (the batched reverse and forward
routes over ``torch.func`` and ``torch.autograd``), ``finite_diff``, ``vjp``.

May import: torch, NumPy and ``gradarg._validate`` only.  Nothing else in gradarg: every other
subpackage stands on this one.  ``jacobian(..., sparsity=P)`` reaches :mod:`gradarg.sparse`
through :func:`~gradarg.core.dense.register_sparse_route`, which that package calls when it is
imported, so the core never imports it.
"""

from ._routes import VectorizationError
from .dense import METHODS, jacobian
from .finite_diff import fd_step, fd_tolerance
from .vjp import backward_vjp, contract

__all__ = [
    "METHODS",
    "VectorizationError",
    "backward_vjp",
    "contract",
    "fd_step",
    "fd_tolerance",
    "jacobian",
]
