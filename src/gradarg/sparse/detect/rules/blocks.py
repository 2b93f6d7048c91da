"""Conservative blocks: every output element of a batch depends on every input element of it.

Where an exact rule would cost more than it saves (linear algebra factorisations and solves,
whose outputs mix every entry of their matrices; losses reduced to a number; interpolations),
each output element depends on every element of every operand that depends on ``x`` and
shares its *leading index*: the batch of matrices (``linalg_*``), the plane ``(n, c)``
(interpolation, fractional pooling), or nothing (one block: losses, ``dist``, ``trace``).
An operand whose leading dimensions are not the block's (broadcast over batches, a vector
right-hand side) feeds every block: never a missed dependency, at the price of more entries.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..registry import BY_NAME, LOCAL_PATTERN, bind, floating, leaves, name, register
from ..sets import Dep, UnsupportedOpError, empty, group, take, union
from .pointwise import pointwise

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten

__all__ = ["MAX_ENTRIES", "lead_blocks"]

MAX_ENTRIES = 5 * 10**7  # (output, input) pairs a block may create: 400 MB of int64


def lead_blocks(tr: Tracer, func, tensors: list, outs: list, lead: tuple[int, ...],
                ndim: int | None = None, shared_too: tuple = ()) -> list[Dep | None]:
    """Each output element (of an output whose shape starts with ``lead``) depends on the
    elements with the same leading index of every operand in ``tensors`` whose shape starts
    with ``lead`` (and, when ``ndim`` is given, has ``ndim`` dimensions), and on every element
    of the other operands and of ``shared_too`` that depend on ``x``."""
    k = len(lead)
    g = math.prod(lead)
    n = tr.n
    parts: list[Dep] = []
    shared: list[Dep] = []
    for t in [*tensors, *shared_too]:
        d = tr.dep(t)
        if d is None or t.numel() == 0:
            continue
        if g and all(t is not u for u in shared_too) and tuple(t.shape[:k]) == lead and (ndim is None or t.dim() == ndim):
            per = t.numel() // g
            parts.append(group(d, np.repeat(np.arange(g, dtype=np.int64), per),
                               np.arange(t.numel(), dtype=np.int64), g, n))
        else:
            shared.append(group(d, np.zeros(t.numel(), dtype=np.int64),
                                np.arange(t.numel(), dtype=np.int64), 1, n))
    if shared:
        parts.append(take(union(shared, n), np.zeros(max(g, 1), dtype=np.int64)))
    if not parts:
        return [None] * len(outs)
    per_block = union(parts, n) if g else None
    every = (group(per_block, np.zeros(g, dtype=np.int64), np.arange(g, dtype=np.int64), 1, n)
             if g else union(parts, n))
    # estimated before it is allocated: every output row holds its block's whole set
    entries = sum(o.numel() * (per_block.indices.size // max(g, 1)
                               if per_block is not None and tuple(o.shape[:k]) == lead
                               else every.indices.size) for o in outs if floating(o))
    if entries > MAX_ENTRIES:
        raise UnsupportedOpError(
            f"no sparsity rule for {name(func)} at this size: its conservative block would hold "
            f"{entries:.3g} (output, input) pairs (limit {MAX_ENTRIES:.0e}); {LOCAL_PATTERN}")
    tr.nonlinear(every)
    result: list[Dep | None] = []
    for o in outs:
        if not floating(o):
            result.append(None)
        elif o.numel() == 0:
            result.append(empty(0))
        elif per_block is not None and tuple(o.shape[:k]) == lead:
            result.append(take(per_block, np.repeat(np.arange(g, dtype=np.int64),
                                                    o.numel() // g)))
        else:
            result.append(take(every, np.zeros(o.numel(), dtype=np.int64)))
    return result


def _tensors(args, kwargs) -> list[torch.Tensor]:
    return [t for t in leaves((args, kwargs)) if isinstance(t, torch.Tensor)]


@register(
    "linalg_qr", "linalg_lu_factor_ex", "linalg_lu", "linalg_lu_solve", "lu_unpack",
    "_linalg_solve_ex", "linalg_solve", "linalg_inv_ex", "linalg_inv", "linalg_pinv",
    "_linalg_svd", "linalg_svd", "svd", "_linalg_eigh", "linalg_eig", "linalg_eigvals",
    "_linalg_eigvals", "_linalg_det", "linalg_det", "det", "_linalg_slogdet",
    "linalg_slogdet", "logdet", "linalg_cholesky_ex", "cholesky", "cholesky_inverse",
    "cholesky_solve", "_cholesky_solve_helper", "triangular_solve",
    "linalg_solve_triangular", "linalg_lstsq", "linalg_householder_product", "ormqr",
    "geqrf", "linalg_matrix_exp", "matrix_exp", "linalg_ldl_factor_ex", "linalg_ldl_solve",
    "linalg_matrix_power", "matrix_power", "_linalg_matrix_power", "linalg_matrix_rank",
    "linalg_cond", "linalg_tensorinv", "linalg_tensorsolve", "_linalg_pinv",
    family="blocks",
)
def matrices(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Factorisations, solves, inverses, decompositions, determinants: every output element
    of a batch of matrices depends on every element of that batch (the batch is the leading
    dimensions of the operand with the most dimensions, less its last two)."""
    tensors = [t for t in _tensors(args, kwargs) if floating(t)]
    big = max(tensors, key=lambda t: t.dim())
    lead = tuple(big.shape[:-2]) if big.dim() > 2 else ()
    return lead_blocks(tr, func, tensors, outs, lead, ndim=big.dim())


@register(
    # losses (reduced to a number, or per sample with structure not worth tracking)
    "nll_loss_forward", "nll_loss2d_forward", "nll_loss", "nll_loss2d", "nll_loss_nd",
    "multi_margin_loss", "multilabel_margin_loss_forward", "_ctc_loss", "ctc_loss",
    "margin_ranking_loss", "kl_div", "poisson_nll_loss", "cosine_embedding_loss",
    "hinge_embedding_loss", "triplet_margin_loss",
    # small reductions over everything, or pairs of everything
    "dist", "vdot", "_pdist_forward", "_trilinear", "addbmm",
    "segment_reduce", "_embedding_bag_forward_only", "_embedding_bag", "embedding_bag",
    "_unsafe_masked_index_put_accumulate", "bilinear", "tensordot", "kron",
    "affine_grid_generator",
    family="blocks",
)
def dense(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Every output element depends on every element of every operand (one block)."""
    return lead_blocks(tr, func, [t for t in _tensors(args, kwargs) if floating(t)], outs, ())


@register("mse_loss", "huber_loss", "smooth_l1_loss", "soft_margin_loss",
          "binary_cross_entropy", "binary_cross_entropy_with_logits", "l1_loss",
          family="blocks")
def loss(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Elementwise losses: with ``reduction='none'`` (0) the output is pointwise in its
    operands (broadcast), otherwise one number that depends on everything."""
    b = bind(func, args, kwargs)
    o = outs[0]
    if b.get("reduction") == 0 and tuple(o.shape) == tuple(b["self"].shape):
        return pointwise(tr, func, args, kwargs, outs)
    return dense(tr, func, args, kwargs, outs)


@register(
    "grid_sampler_2d", "grid_sampler_3d",
    "fractional_max_pool2d", "fractional_max_pool3d",
    family="blocks",
)
def planes(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Grid sampling and fractional pooling (windows drawn at random): every
    output element of plane ``(n, c)`` (``(c,)`` unbatched) depends on every element of that
    plane of the input; a grid or other operand computed from ``x`` feeds every plane."""
    x = args[0]
    spatial = int(str(func.overloadpacket).rstrip("_ad")[-1])  # ..._2d, ..._3d, ..._1d
    lead = tuple(x.shape[: x.dim() - spatial])
    rest = [t for t in _tensors(args, kwargs)[1:] if floating(t)]
    return lead_blocks(tr, func, [x], outs, lead, ndim=x.dim(), shared_too=tuple(rest))


# operators outside ``aten`` that ``nn.functional`` calls, defined when first used (looked up
# by name): ``linear_cross_entropy``'s chunked kernels (a loss per sample or reduced)
for _name in ("torch_nn._linear_cross_entropy_batch_chunked",
              "torch_nn._linear_cross_entropy_batch_chunked_no_reduction"):
    BY_NAME[_name] = dense
