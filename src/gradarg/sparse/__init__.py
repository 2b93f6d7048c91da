"""Sparse Jacobians by compression: one backward pass for several rows that touch disjoint columns.

What it is for: ``SparseJacobian(pattern)`` (colour once, then every call makes one batched pass
per colour instead of one per row or column, with a random certificate; a bidirectional split when
a row and a column are dense), ``color_pattern`` (greedy colouring of the rows or columns:
largest-first and DSATUR at distance 2 on the pattern's CSR/CSC arrays, other orders on an explicit
intersection graph), ``sparsity_pattern`` (a local pattern from dense Jacobians at random points),
``SparseHessian(pattern)`` (star or acyclic colouring, one Hessian-vector product per colour),
``.compile(fn)`` on either (``CompiledSparse``: the compressed pass handed to ``torch.compile``
once, for a function called many times at one shape), and ``jacobian_sparsity`` /
``hessian_sparsity`` (global patterns found by tracing ``fn``, valid for every input).

Modules: ``compressed`` (``SparseJacobian``: which modes to colour, the call, the certificate),
``hessian`` (``SparseHessian``), ``modes`` (one class per mode: its seeds, its compressed pass,
eager and compiled, and its recovery), ``passes`` (the batched VJPs, JVPs and Hessian-vector
products every mode runs), ``compiled`` (the compiled call, given the modes), ``coloring``
(strategies, explicit conflict graphs), ``d2color`` (distance-2 colouring on CSR/CSC arrays),
``greedy`` (greedy colouring and vertex orders), ``_buckets`` (the bucket queue of both),
``_pycolor`` (the default colourings without numba), ``_numba`` (when numba is loaded),
``peel`` (dense lines: candidate splits), ``bidirectional`` (dense rows by VJPs, the rest by
JVPs), ``star`` (star colouring and direct recovery), ``starfast`` (the structured
colourings tried first), ``tiling`` (periodic star colourings of grid stencils), ``acyclic`` (acyclic colouring and
substitution), ``pattern`` (local patterns), ``detect/`` (patterns by tracing: a
``TorchDispatchMode`` in ``detect/mode.py``, a rule registry in ``detect/registry.py``, one rule
module per family of operators in ``detect/rules/``).

Where new things go: a new operator's pattern rule in ``detect/rules/<family>.py``, registered
with ``@register("op", family=...)``; a new mode (a way to seed, compute and read back a
compressed derivative) as a class in ``modes.py``, named in ``JACOBIAN_MODES`` or
``HESSIAN_MODES`` (a Jacobian mode also in ``SparseJacobian``'s choice of what to colour, in
``compressed.py``; its colouring in ``coloring.py`` or a module of its own, as ``star.py``); a
new colouring strategy in ``coloring.STRATEGIES`` (a vertex order in ``greedy.py``).

Compiled loops are marked ``@lazy_njit`` (``_numba``): numba is never imported by ``import
gradarg``, and a colouring imports it only where it pays.  Loading numba's kernels costs
0.4–0.65 s in a fresh process; the default colourings also run interpreted (``_pycolor``: the
same colours, 5–35 ms on the seven functions of the benchmarks, where compiled takes
0.4–5 ms), and ``_numba.use_numba`` picks numba for a pattern whose interpreted colouring is
estimated to cost more than its start-up, or once the process has spent that much
interpreting (ski rental), and always once numba is loaded.  The eager passes need no
one-off work either: JVPs and Hessian-vector products run as backward passes
(``gradarg.sparse.passes``), so torch's forward mode, whose first use in a process loads
TorchScript decompositions (80-170 ms), is used only where a custom ``autograd.Function`` is in
the graph and by the compiled call.

May import: :mod:`gradarg.core` and ``gradarg._validate``; never :mod:`gradarg.check`,
:mod:`gradarg.trace` or :mod:`gradarg.show`. Importing it registers the compressed route that
``gradarg.jacobian(fn, x, sparsity=P)`` calls.
"""

from ..core.dense import register_sparse_route
from .coloring import STRATEGIES, color_pattern
from .compiled import CompiledSparse
from .compressed import CertificateError, SparseJacobian, sparse_jacobian
from .detect import UnsupportedOpError, hessian_sparsity, jacobian_sparsity
from .hessian import SparseHessian
from .pattern import sparsity_pattern

register_sparse_route(sparse_jacobian)

__all__ = [
    "STRATEGIES",
    "CertificateError",
    "CompiledSparse",
    "SparseHessian",
    "SparseJacobian",
    "UnsupportedOpError",
    "color_pattern",
    "hessian_sparsity",
    "jacobian_sparsity",
    "sparsity_pattern",
]
