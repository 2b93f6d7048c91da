"""The Jacobian core: whole Jacobians and vector–Jacobian products, the layer everything uses.

What it is for: ``jacobian(fn, x, method=...)`` by reverse mode (rows from VJPs with one-hot
upstream gradients), forward mode (columns from JVPs) or central finite differences;
``backward_vjp`` and ``contract`` (``vᵀJ`` from ``backward`` and from a Jacobian); the
finite-difference steps and tolerances.

Modules, from the public entry down:

- ``dense``: the public ``jacobian`` (input checks, the caller's tensors kept apart, the
  result's structure); ``vjp``: ``backward_vjp`` and ``contract``; ``finite_diff``: steps,
  tolerances and central differences.
- ``choose``: the one place that picks a route (finite differences, reverse, forward).
- ``reverse`` and ``forward``: the routes (rows from VJPs, columns from JVPs), each with its
  batched paths and its loop.  A new route is a module of its own, chosen in ``choose``.
- ``speeds``: what was measured about torch's batching paths (the tables the routes read) and
  the one per-function plan cache, ``PLANS``.  A new measurement goes there, next to its table.
- ``functorch``: ``torch.func.vmap``/``jvp`` as the routes call them, public by default, the
  private fast path on request; ``VMAP_ERRORS``, what a failed batched attempt may raise.
- ``compose``: inside ``torch.func`` transforms (``grad``, ``jacrev``, ``vmap``...), whether a
  call is inside one, and the routes that compose with them (``torch.func`` alone, no
  detached copies), which ``jacobian`` and ``backward_vjp`` take there.
- ``graph``: evaluating ``fn`` and walking the graph it records; ``basis``: one-hot bases and
  the blocks ``J[k][j]`` they become.
- ``buffers``: the buffers of the modules ``fn`` reaches (BatchNorm's running statistics),
  restored after every helper that evaluates ``fn`` (``keeps_buffers``, used by every public
  helper that takes a function, here and in ``check`` and ``sparse``).

May import: torch, NumPy and ``gradarg._validate`` only.  Nothing else in gradarg: every other
subpackage stands on this one.  ``jacobian(..., sparsity=P)`` reaches :mod:`gradarg.sparse`
through :func:`~gradarg.core.dense.register_sparse_route`, which that package calls when it is
imported, so the core never imports it.
"""

from .dense import METHODS, jacobian
from .finite_diff import fd_step, fd_tolerance
from .functorch import VectorizationError
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
