"""Global sparsity patterns by tracing: which input elements each output element can depend on.

``fn`` runs once, functionalized (``torch.func.functionalize``, so in-place writes and views
become plain ops), under a ``TorchDispatchMode`` (``torch.utils._python_dispatch``) that sees
every ATen operator.  Next to every floating tensor computed from ``x`` it keeps the set of
input elements each of its elements depends on: a boolean ``numel × n`` matrix in compressed
sparse row form (two numpy arrays).  Each operator maps its operands' sets to its output's sets
by a rule that depends only on shapes and on the zeros of constant operands, never on the
values of ``x``: the result holds for every input (a *global* pattern, as in
SparseConnectivityTracer.jl and JAX's ``asdex``) and is conservative.

The rules, by family of operators, are listed once, in :func:`jacobian_sparsity`'s docstring.

Modules: ``api`` (the public functions), ``mode`` (the ``TorchDispatchMode`` that carries the
sets), ``aliases`` (writes through views reach every tensor on the written memory),
``registry`` (which rule answers which operator; argument helpers; the refusal), ``sets``
(the index sets and their operations), ``rules/`` (one module per family: pointwise, moves,
reductions, order, normalization, products, convolution, pooling, scatter, fft, blocks).
``benchmarks/detect_opinfo.py`` runs detection over PyTorch's OpInfo database.  A new operator's rule goes in
``rules/<family>.py``, registered with ``@register("op_name", family=...)``; its test against
dense Jacobians in ``tests/sparse/test_detect_rules.py``.
"""

from .api import hessian_sparsity, jacobian_sparsity
from .sets import UnsupportedOpError

__all__ = ["UnsupportedOpError", "hessian_sparsity", "jacobian_sparsity"]
