"""``jacobian_sparsity`` and ``hessian_sparsity``: run ``fn`` once under the tracing mode and
read the pattern off the sets its output carries."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from ...core.buffers import keeps_buffers
from ...core.compose import inside_transform, transform_name
from .mode import Tracer
from .sets import empty, identity, sorted_unique

__all__ = ["hessian_sparsity", "jacobian_sparsity"]


def _trace(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, hessian: bool, what: str):
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(
            f"x must be a real floating torch.Tensor, got "
            f"{x.dtype if isinstance(x, torch.Tensor) else type(x).__name__}"
        )
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if inside_transform():  # the trace would see the transform's wrappers: an empty pattern
        raise ValueError(
            f"{what} traces fn on a copy of x, which does not work inside a torch.func "
            f"transform (it was called inside {transform_name()}): call it outside; the "
            "pattern depends on fn and x's shape, not on x's values")
    x0 = x.detach().clone()
    n = x0.numel()
    tracer = Tracer(n, hessian)
    tracer.deps[x0] = identity(n)
    try:
        with tracer:
            y = torch.func.functionalize(fn, remove="mutations_and_views")(x0)
    except RuntimeError as e:
        # functionalization refuses in-place writes into tensors captured from outside fn
        # (batch norm's running statistics): trace fn as it is, the mode follows writes
        # through views itself (``aliases``)
        if "non-functional tensor" not in str(e):
            raise
        x0 = x.detach().clone()
        tracer = Tracer(n, hessian)
        tracer.deps[x0] = identity(n)
        with tracer:
            y = fn(x0)
    if not isinstance(y, torch.Tensor):
        raise TypeError(f"{what} needs fn(x) to return one tensor, got {type(y).__name__}")
    d = tracer.deps.get(y)
    if d is None:
        d = empty(y.numel())
    return tracer, y, d


def _as_pattern(rows: np.ndarray, cols: np.ndarray, y_shape, x_shape, layout) -> torch.Tensor:
    if layout not in (torch.sparse_coo, torch.strided):
        raise ValueError(f"layout must be torch.sparse_coo or torch.strided, got {layout}")
    shape = tuple(y_shape) + tuple(x_shape)
    if layout == torch.strided:
        dense = torch.zeros(math.prod(y_shape), math.prod(x_shape), dtype=torch.bool)
        dense[torch.from_numpy(rows), torch.from_numpy(cols)] = True
        return dense.reshape(shape)
    parts = []
    for idx, s in ((rows, tuple(y_shape)), (cols, tuple(x_shape))):
        if s:
            parts += list(np.unravel_index(idx, s))
    indices = (
        torch.from_numpy(np.stack(parts).astype(np.int64))
        if parts
        else torch.zeros(0, rows.size, dtype=torch.int64)
    )
    return torch.sparse_coo_tensor(
        indices,
        torch.ones(rows.size, dtype=torch.bool),
        shape,
        is_coalesced=True,
        check_invariants=False,
    )


@keeps_buffers()
def jacobian_sparsity(
    fn: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    *,
    layout: torch.layout = torch.sparse_coo,
) -> torch.Tensor:
    r"""The global sparsity pattern of the Jacobian of ``fn`` at ``x``, found by tracing ``fn``.

    ``fn`` runs once on a copy of ``x``, functionalized (``torch.func.functionalize``)
    under a ``TorchDispatchMode`` (once more, not functionalized, when functionalization
    refuses ``fn``: in-place updates of tensors captured from outside ``fn``, such as batch
    norm's running statistics in training; those updates happen during the trace and are
    undone: the buffers of the modules ``fn`` reaches are restored,
    ``gradarg.core.buffers``).  For every element of every tensor computed from ``x`` the
    set of input elements it depends on is carried through each ATen operator by a rule
    that looks at shapes and at the zeros of constant operands, never at the values of
    ``x`` — so the pattern holds for *every* input (a global pattern, as
    SparseConnectivityTracer.jl's ``TracerSparsityDetector`` and JAX's ``asdex`` find) and
    is conservative: ``True`` wherever ``∂y_i/∂x_j`` may be non-zero for some ``x``.  It can be
    larger than the Jacobian at a given point (``x * 0`` keeps its entries; ``torch.where``
    keeps both branches), never smaller, apart from Python control flow on the values of ``x``
    (refused: converting a tensor that depends on ``x`` to a Python number raises).

    Rules (ATen operators):

    * pointwise operators (every operator tagged ``torch.Tag.pointwise``: arithmetic,
      ``sin``, ``exp``, ``where``, ``clamp``...), with broadcasting: union of the operands;
      ``floor``, ``ceil``, ``round``, ``trunc``, ``sign``, ``detach``, comparisons and integer
      results have zero derivative (empty sets);
    * reductions ``sum``, ``mean``, ``prod``, ``amax``/``amin``/``max``/``min``, ``norm``,
      ``linalg_vector_norm``, ``var``, ``std``, ``logsumexp`` over given dimensions or all;
      scans ``cumsum``, ``cumprod``, ``logcumsumexp``, ``cummax``, ``cummin``; ``softmax`` and
      ``log_softmax``;
    * normalisation: ``layer_norm`` (each element depends on its normalised slice),
      ``group_norm`` (on its channel group in its sample), ``batch_norm`` in training (on its
      channel across the batch; running statistics updated in place are not followed) and in
      evaluation (elementwise); weights, biases and running statistics must not depend on ``x``;
    * order statistics along a dimension (``sort``, ``topk``, ``kthvalue``, ``median``,
      ``nanmedian``, ``mode``, ``msort``): each value depends on its whole slice, since which
      element it is depends on the values;
    * matrix products ``mm``, ``mv``, ``dot``, ``bmm``, ``addmm``, ``addmv``, ``baddbmm`` (hence
      ``matmul``, ``@``, ``nn.Linear``): a constant operand's zeros are used;
    * convolutions in any number of dimensions (``conv1d``/``2d``/``3d`` and
      ``conv_transpose1d``/``2d``/``3d``; any stride, padding, dilation, groups): a constant
      weight's zeros are used (a transposed convolution's weight must not depend on ``x``);
    * pooling, exact windows: ``max_pool*`` (with indices), ``avg_pool*``, adaptive pools,
      ``max_unpool*`` (constant indices) and max pooling's backward;
    * scatters and index reductions with constant indices: ``scatter_add``,
      ``scatter_reduce``, ``index_add``, ``index_reduce``, ``index_copy``, ``index_fill``,
      ``put``, ``masked_scatter``, ``index_put(accumulate=True)``;
    * FFTs (``fft``, ``rfft``, ``irfft``, ``hfft``, ``stft``...): dense over the transformed
      dimensions, independent over the others; ``view_as_real`` / ``view_as_complex``
      (a complex element has one set, for both parts); scaled dot-product attention (a
      query row with every key and value row of its batch);
    * conservative blocks: linear algebra (factorisations, solves, inverses, decompositions,
      determinants: every output of a batch of matrices depends on the whole batch), losses
      reduced to a number, ``dist``, ``cdist``, interpolation and grid sampling (the plane
      ``(n, c)``); a block larger than 5·10⁷ (output, input) pairs is refused before it is
      allocated;
    * data movement — views, ``reshape``, ``permute``, ``transpose``, ``expand``, ``squeeze``,
      ``flatten``, ``clone``, slicing, ``select``, ``as_strided``, indexing and
      ``gather``/``index_select`` with constant integer indices, ``cat``, ``stack``, ``split``,
      ``flip``, ``roll``, ``repeat``, ``tril``/``triu``, constant, reflection, replication and
      circular padding — by running the operator itself on a tensor of element ids;
    * writes into tensors through views (``copy_``, slice assignment, ``index_put_``,
      ``add_``..., also the writes operators implemented in C++ make below functionalization, as
      ``F.pad(mode="circular")`` does): every tensor on the written memory gets the sets of
      the elements it shares with the written view;
    * constants (tensors not computed from ``x``): empty sets.

    Parameters
    ----------
    fn : callable
        ``fn(x)`` returns one tensor; built from the operators above.
    x : torch.Tensor
        Real floating tensor: its shape and dtype are what matter (``fn`` runs on a copy).
        An empty ``x`` gives a pattern with no columns (shape ``y.shape + x.shape``).
    layout : torch.layout
        ``torch.sparse_coo`` (default: coalesced COO, memory ``O(nnz)``) or ``torch.strided``
        (dense).

    Returns
    -------
    torch.Tensor
        ``torch.bool`` pattern of shape ``y.shape + x.shape``, ready for
        ``SparseJacobian(pattern, x.shape)``.

    Raises
    ------
    UnsupportedOpError
        (a ``NotImplementedError``) an operator on a tensor that depends on ``x`` has no rule
        (the message names it), or its conservative block would exceed 5·10⁷ pairs; indices
        computed from the values of ``x``; a tensor that depends on ``x`` converted to a
        Python number.  :func:`sparsity_pattern` (a local
        pattern from dense Jacobians at random points) works for any differentiable ``fn``.
    TypeError
        ``x`` is not a real floating tensor, or ``fn(x)`` is not one tensor.
    ValueError
        ``layout`` is neither ``torch.sparse_coo`` nor ``torch.strided``; called inside a
        ``torch.func`` transform (``grad``, ``vmap``, ...: the message names it), where the
        trace would see the transform's wrappers instead of ``fn``'s operations.

    Examples
    --------
    >>> import torch
    >>> def f(u):                       # 1-D stencil: tridiagonal Jacobian
    ...     up = torch.nn.functional.pad(u, (1, 1))
    ...     return up[:-2] - 2 * u + up[2:] + torch.sin(u)
    >>> P = jacobian_sparsity(f, torch.zeros(5), layout=torch.strided)
    >>> P.int()
    tensor([[1, 1, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [0, 1, 1, 1, 0],
            [0, 0, 1, 1, 1],
            [0, 0, 0, 1, 1]], dtype=torch.int32)
    >>> from gradarg import SparseJacobian
    >>> x = torch.rand(1000, dtype=torch.float64)
    >>> sj = SparseJacobian(jacobian_sparsity(f, x), x.shape)
    >>> sj.passes
    3
    >>> torch.allclose(sj(f, x).to_dense(), torch.func.jacrev(f)(x))
    True
    """
    _, y, d = _trace(fn, x, False, "jacobian_sparsity")
    return _as_pattern(d.rows(), d.indices, tuple(y.shape), tuple(x.shape), layout)


@keeps_buffers()
def hessian_sparsity(
    f: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    *,
    layout: torch.layout = torch.sparse_coo,
) -> torch.Tensor:
    r"""A global, conservative sparsity pattern of the Hessian of a scalar ``f``, by tracing.

    Traces ``f`` as :func:`jacobian_sparsity` does and, at every operator that is not linear
    in the inputs that depend on ``x`` (``sin``, ``exp``, ``x * y`` with both depending on
    ``x``, ``prod``, ``norm``, ``softmax``, a product of two tensors that depend on ``x``...),
    marks every pair ``(j, k)`` of input elements that one of its output elements depends on.
    By the chain rule, ``∂²f/∂x_j∂x_k`` can be non-zero only if some nonlinear operator
    combines a dependency on ``x_j`` with one on ``x_k``, so the union of these pairs contains
    the Hessian's pattern for every input.  Linear and piecewise-linear operators (``+``,
    ``-``, scaling by a constant, sums, views, indexing, ``relu``, ``abs``, ``max``,
    ``clamp``, ``where``) add no pair (their second derivatives vanish wherever they exist).
    The pattern can be larger than needed: pairs are also marked for intermediate results that
    do not reach ``f``, and all pairs within an operator's operands (``x * y`` also marks the
    pairs within ``x``).  This is the global Hessian pattern of SparseConnectivityTracer.jl
    (``TracerSparsityDetector``, ``hessian_sparsity``) in a coarser form.

    Parameters
    ----------
    f : callable
        ``f(x)`` returns a tensor with one element.
    x : torch.Tensor
        Real floating tensor (``f`` runs on a copy).
    layout : torch.layout
        ``torch.sparse_coo`` (default) or ``torch.strided``.

    Returns
    -------
    torch.Tensor
        Symmetric ``torch.bool`` pattern of shape ``x.shape + x.shape``.

    Raises
    ------
    UnsupportedOpError
        As in :func:`jacobian_sparsity`.
    TypeError
        ``x`` is not a real floating tensor, or ``f(x)`` is not one tensor.
    ValueError
        ``f(x)`` has more than one element; unknown ``layout``; called inside a
        ``torch.func`` transform, as in :func:`jacobian_sparsity`.

    Examples
    --------
    >>> import torch
    >>> def energy(u):                  # a sum of local terms: tridiagonal Hessian
    ...     return ((u[1:] - u[:-1]) ** 2).sum() + torch.cos(u).sum()
    >>> hessian_sparsity(energy, torch.zeros(4), layout=torch.strided).int()
    tensor([[1, 1, 0, 0],
            [1, 1, 1, 0],
            [0, 1, 1, 1],
            [0, 0, 1, 1]], dtype=torch.int32)
    """
    tracer, y, _ = _trace(f, x, True, "hessian_sparsity")
    if y.numel() != 1:
        raise ValueError(
            f"hessian_sparsity needs a scalar f (one element), got an output of shape "
            f"{tuple(y.shape)}; for a vector function use jacobian_sparsity"
        )
    n = tracer.n
    keys = sorted_unique(np.concatenate(tracer.pairs)) if tracer.pairs else np.zeros(0, np.int64)
    rows, cols = np.divmod(keys, n) if n else (keys, keys)
    return _as_pattern(rows, cols, tuple(x.shape), tuple(x.shape), layout)
