"""Agreement corpus: every route of gradarg.jacobian against torch.autograd.functional.jacobian.

For each differentiable op below, at a point chosen away from kinks, ties and singularities:

* reverse and forward mode (vectorized and looped) agree with
  ``torch.autograd.functional.jacobian`` to float64 round-off;
* central differences agree within ``gradarg.fd_tolerance(torch.float64)``, relative and absolute.

Ops without a forward-mode formula in torch (``NO_FORWARD``) must raise ``NotImplementedError``
with ``method="forward"``, while ``method="auto"`` still works (it falls back to reverse mode).
Hypothesis draws shapes and values for elementwise ops and matrix products, whose Jacobians
are also checked against derivatives written out by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from torch.autograd.functional import jacobian as torch_jacobian

import gradarg

F64 = torch.float64
AUTODIFF_TOL = {"rtol": 1e-10, "atol": 1e-12}
FD_TOL = gradarg.fd_tolerance(F64)


# --------------------------------------------------------------------------- inputs


def rnd(*shape: int, lo: float = -1.0, hi: float = 1.0, seed: int = 0) -> torch.Tensor:
    """Uniform values in [lo, hi), from a private generator (independent of the global seed)."""
    g = torch.Generator().manual_seed(seed)
    return lo + (hi - lo) * torch.rand(*shape, generator=g, dtype=F64)


def spaced(*shape: int, lo: float = -1.0, hi: float = 1.0, seed: int = 0) -> torch.Tensor:
    """Distinct values at least (hi - lo) / n apart, shuffled: no ties for max, sort, pools."""
    n = int(np.prod(shape))
    g = torch.Generator().manual_seed(seed)
    values = torch.linspace(lo, hi, n, dtype=F64)[torch.randperm(n, generator=g)]
    return values.reshape(shape)


def signed(*shape: int, lo: float = 0.2, hi: float = 1.0, seed: int = 0) -> torch.Tensor:
    """Magnitudes in [lo, hi] with alternating signs: away from the kink of abs/relu at 0."""
    mag = rnd(*shape, lo=lo, hi=hi, seed=seed)
    sign = torch.tensor([1.0, -1.0], dtype=F64).repeat(mag.numel())[: mag.numel()]
    return mag * sign.reshape(mag.shape)


def spd_base(n: int, seed: int = 0) -> torch.Tensor:
    return rnd(n, n, seed=seed)


def well_conditioned(n: int, seed: int = 0) -> torch.Tensor:
    return 3 * torch.eye(n, dtype=F64) + 0.5 * rnd(n, n, seed=seed)


# Fixed weights (constants of the functions, not inputs).
W_MM = rnd(3, 4, seed=11)
W_LN, B_LN = rnd(4, lo=0.5, hi=1.5, seed=12), rnd(4, seed=13)
MLP_W1, MLP_B1 = rnd(5, 3, seed=14), rnd(5, lo=-0.1, hi=0.1, seed=15)
MLP_W2 = rnd(2, 5, seed=16)
MLP_X = rnd(4, 3, seed=17)
MASK = torch.tensor([[True, False, True], [False, True, True]])
POINTS = rnd(6, 2, seed=18)  # cdist targets


def mlp(t: torch.Tensor) -> torch.Tensor:
    return F.linear(F.relu(F.linear(t, MLP_W1, MLP_B1)), MLP_W2)


def qr_well(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    q, r = torch.linalg.qr(t)
    return q, r


# --------------------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class Op:
    name: str
    fn: Callable
    make: Callable[[], torch.Tensor | tuple[torch.Tensor, ...]]
    tags: frozenset[str] = field(default_factory=frozenset)

    def inputs(self):
        return self.make()


def op(name, fn, make, *tags):
    return Op(name, fn, make, frozenset(tags))


ELEMENTWISE = [
    op("sin", torch.sin, lambda: rnd(2, 3, lo=-3, hi=3)),
    op("cos", torch.cos, lambda: rnd(2, 3, lo=-3, hi=3)),
    op("exp", torch.exp, lambda: rnd(2, 3, lo=-2, hi=2)),
    op("tanh", torch.tanh, lambda: rnd(2, 3, lo=-2, hi=2)),
    op("sigmoid", torch.sigmoid, lambda: rnd(2, 3, lo=-3, hi=3)),
    op("log1p", torch.log1p, lambda: rnd(2, 3, lo=-0.5, hi=2)),
    op("log", torch.log, lambda: rnd(2, 3, lo=0.5, hi=2)),
    op("sqrt (positive)", torch.sqrt, lambda: rnd(2, 3, lo=0.5, hi=2)),
    op("rsqrt", torch.rsqrt, lambda: rnd(2, 3, lo=0.5, hi=2)),
    op("reciprocal", torch.reciprocal, lambda: rnd(2, 3, lo=0.5, hi=2)),
    op("abs (away from 0)", torch.abs, lambda: signed(2, 3)),
    op("pow 3", lambda t: t**3, lambda: rnd(2, 3)),
    op("pow tensor exponent", torch.pow, lambda: (rnd(4, lo=0.5, hi=2), rnd(4, lo=-1, hi=2, seed=1))),
    op("clamp (away from edges)", lambda t: t.clamp(-0.5, 0.5),
       lambda: torch.tensor([-0.9, -0.3, 0.1, 0.4, 0.7, -0.05], dtype=F64)),
    op("relu (away from 0)", torch.relu, lambda: signed(2, 3)),
    op("leaky_relu", lambda t: F.leaky_relu(t, 0.1), lambda: signed(2, 3)),
    op("erf", torch.erf, lambda: rnd(2, 3, lo=-2, hi=2)),
    op("softplus", F.softplus, lambda: rnd(2, 3, lo=-2, hi=2)),
    op("gelu", F.gelu, lambda: rnd(2, 3, lo=-2, hi=2)),
    op("atan2 (tuple inputs)", torch.atan2, lambda: (rnd(3, seed=1), rnd(3, lo=0.5, hi=1, seed=2))),
    op("hypot (tuple inputs)", torch.hypot, lambda: (signed(3, seed=1), signed(3, seed=2))),
    op("lerp (tuple inputs)", lambda a, b: torch.lerp(a, b, 0.3), lambda: (rnd(3, seed=1), rnd(3, seed=2))),
    op("addcmul (three inputs)", torch.addcmul,
       lambda: (rnd(3, seed=1), rnd(3, seed=2), rnd(3, seed=3))),
]

REDUCTIONS = [
    op("sum", torch.sum, lambda: rnd(2, 3)),
    op("sum dim", lambda t: t.sum(dim=1), lambda: rnd(2, 3)),
    op("mean", torch.mean, lambda: rnd(2, 3)),
    op("prod", torch.prod, lambda: rnd(2, 3, lo=0.5, hi=1.5)),
    op("prod dim", lambda t: t.prod(dim=0), lambda: rnd(2, 3, lo=0.5, hi=1.5)),
    op("norm", torch.norm, lambda: rnd(2, 3)),
    op("vector_norm ord 3", lambda t: torch.linalg.vector_norm(t, 3), lambda: signed(5)),
    op("logsumexp", lambda t: torch.logsumexp(t, dim=-1), lambda: rnd(2, 3)),
    op("max (distinct)", torch.max, lambda: spaced(2, 3)),
    op("amax dim (distinct)", lambda t: t.amax(dim=1), lambda: spaced(2, 3)),
    op("min dim values", lambda t: t.min(dim=0).values, lambda: spaced(3, 2)),
    op("cumsum", lambda t: t.cumsum(dim=-1), lambda: rnd(2, 3)),
    op("cumprod", lambda t: t.cumprod(dim=-1), lambda: rnd(2, 3, lo=0.5, hi=1.5)),
    op("var", lambda t: t.var(dim=-1), lambda: rnd(2, 4)),
    op("std", torch.std, lambda: rnd(2, 4)),
    op("sort values (distinct)", lambda t: t.sort(dim=-1).values, lambda: spaced(2, 4)),
    op("topk values (distinct)", lambda t: t.topk(2).values, lambda: spaced(5)),
]

LINALG = [
    op("matmul (tuple inputs)", torch.matmul, lambda: (rnd(2, 3, seed=1), rnd(3, 2, seed=2))),
    op("mm with weights", lambda t: t @ W_MM, lambda: rnd(2, 3)),
    op("batched matmul", torch.bmm, lambda: (rnd(2, 2, 3, seed=1), rnd(2, 3, 2, seed=2))),
    op("inverse", torch.linalg.inv, lambda: well_conditioned(3)),
    op("det", torch.linalg.det, lambda: well_conditioned(3)),
    op("slogdet logabsdet", lambda t: torch.linalg.slogdet(t).logabsdet, lambda: well_conditioned(3)),
    op("solve (tuple inputs)", torch.linalg.solve, lambda: (well_conditioned(3), rnd(3, 2, seed=4))),
    op("cholesky of SPD", lambda t: torch.linalg.cholesky(t @ t.T + 3 * torch.eye(3, dtype=F64)),
       lambda: spd_base(3)),
    op("qr (tuple outputs)", qr_well, lambda: well_conditioned(3)),
    op("eigvalsh (distinct)", lambda t: torch.linalg.eigvalsh((t + t.T) / 2),
       lambda: torch.diag(torch.tensor([1.0, 2.0, 3.5], dtype=F64)) + 0.1 * rnd(3, 3)),
    op("svdvals (distinct)", torch.linalg.svdvals,
       lambda: torch.diag(torch.tensor([3.0, 2.0, 1.0], dtype=F64)) + 0.1 * rnd(3, 3)),
    op("matrix_exp", torch.linalg.matrix_exp, lambda: 0.5 * rnd(3, 3)),
    op("trace", torch.trace, lambda: rnd(3, 3)),
    op("einsum ij,jk->ik", lambda a, b: torch.einsum("ij,jk->ik", a, b),
       lambda: (rnd(2, 3, seed=1), rnd(3, 2, seed=2))),
    op("einsum bij,bj->bi", lambda a, b: torch.einsum("bij,bj->bi", a, b),
       lambda: (rnd(2, 2, 3, seed=1), rnd(2, 3, seed=2))),
    op("outer", torch.outer, lambda: (rnd(3, seed=1), rnd(2, seed=2))),
    op("kron", torch.kron, lambda: (rnd(2, 2, seed=1), rnd(2, 2, seed=2))),
    op("cross", lambda a, b: torch.linalg.cross(a, b), lambda: (rnd(3, seed=1), rnd(3, seed=2))),
]

NN = [
    op("softmax", lambda t: torch.softmax(t, dim=-1), lambda: rnd(2, 3)),
    op("log_softmax", lambda t: torch.log_softmax(t, dim=-1), lambda: rnd(2, 3)),
    op("layer_norm", lambda t: F.layer_norm(t, (4,), W_LN, B_LN), lambda: rnd(2, 4)),
    op("batch_norm (training)", lambda t: F.batch_norm(t, None, None, training=True),
       lambda: rnd(4, 2)),
    op("conv1d (tuple inputs)", F.conv1d, lambda: (rnd(1, 2, 5, seed=1), rnd(3, 2, 3, seed=2))),
    op("conv1d padding stride", lambda x, w: F.conv1d(x, w, padding=1, stride=2),
       lambda: (rnd(1, 1, 6, seed=1), rnd(2, 1, 3, seed=2))),
    op("max_pool1d (distinct)", lambda t: F.max_pool1d(t, 2), lambda: spaced(1, 2, 6)),
    op("avg_pool1d", lambda t: F.avg_pool1d(t, 2), lambda: rnd(1, 2, 6)),
    op("linear + relu MLP", mlp, lambda: MLP_X.clone()),
    op("linear (weight as input)", lambda w: F.linear(MLP_X, w), lambda: rnd(2, 3)),
    op("cross_entropy", lambda t: F.cross_entropy(t, torch.tensor([0, 2, 1])), lambda: rnd(3, 4)),
    op("mse_loss", lambda a, b: F.mse_loss(a, b), lambda: (rnd(2, 3, seed=1), rnd(2, 3, seed=2))),
    op("cosine_similarity", lambda a, b: F.cosine_similarity(a, b),
       lambda: (rnd(2, 3, seed=1), rnd(2, 3, seed=2))),
    op("interpolate linear", lambda t: F.interpolate(t, scale_factor=2, mode="linear"),
       lambda: rnd(1, 1, 4)),
    op("embedding (weight input)", lambda w: F.embedding(torch.tensor([2, 0, 2]), w),
       lambda: rnd(3, 2)),
]

SHAPES = [
    op("transpose", lambda t: t.T * torch.arange(1.0, 7.0, dtype=F64).reshape(3, 2), lambda: rnd(2, 3)),
    op("permute", lambda t: t.permute(2, 0, 1).sin(), lambda: rnd(2, 3, 2)),
    op("reshape", lambda t: t.reshape(3, 2) ** 2, lambda: rnd(2, 3)),
    op("advanced index (repeated)", lambda t: t[[0, 0, 1], [1, 1, 2]] ** 2, lambda: rnd(2, 3)),
    op("gather", lambda t: torch.gather(t, 1, torch.tensor([[2, 0], [1, 1]])), lambda: rnd(2, 3)),
    op("where", lambda t: torch.where(MASK, t, t**2), lambda: rnd(2, 3)),
    op("cat (tuple inputs)", lambda a, b: torch.cat([a, b * 2]), lambda: (rnd(2, seed=1), rnd(3, seed=2))),
    op("stack (tuple inputs)", lambda a, b: torch.stack([a * b, a - b]),
       lambda: (rnd(3, seed=1), rnd(3, seed=2))),
    op("flip", lambda t: t.flip(-1) * t, lambda: rnd(4)),
    op("roll", lambda t: t.roll(1) * t, lambda: rnd(4)),
    op("diagonal", lambda t: t.diagonal() ** 2, lambda: rnd(3, 3)),
    op("triu", torch.triu, lambda: rnd(3, 3)),
    op("repeat", lambda t: t.repeat(2, 1), lambda: rnd(2, 2)),
    op("expand", lambda t: t.expand(3, 2) * torch.arange(6.0, dtype=F64).reshape(3, 2), lambda: rnd(1, 2)),
    op("narrow", lambda t: t.narrow(1, 1, 2), lambda: rnd(2, 3)),
    op("index_select", lambda t: t.index_select(0, torch.tensor([1, 1, 0])), lambda: rnd(2, 3)),
    op("masked_fill", lambda t: t.masked_fill(MASK, 0.0) * t, lambda: rnd(2, 3)),
    op("scatter_add (src input)", lambda s: torch.zeros(3, dtype=F64).scatter_add(
        0, torch.tensor([0, 2, 0, 1]), s), lambda: rnd(4)),
    op("unfold", lambda t: t.unfold(0, 2, 1).prod(-1), lambda: rnd(5)),
    op("diff", torch.diff, lambda: rnd(5)),
    op("sin and cos (tuple outputs)", lambda t: (t.sin(), t.cos().sum()), lambda: rnd(3)),
]

# torch has no forward-mode (JVP) formula for these: method="forward" raises
# NotImplementedError, method="auto" must still work.
NO_FORWARD = [
    op("cdist (m > n)", lambda t: torch.cdist(t, POINTS), lambda: spaced(2, 2, lo=-2, hi=2),
       "no-forward"),
    op("pdist (m > n)", lambda t: F.pdist(t), lambda: spaced(5, 1), "no-forward"),
    op("multi_margin_loss", lambda t: F.multi_margin_loss(t, torch.tensor([0, 2])),
       lambda: spaced(2, 3, lo=-0.4, hi=0.4), "no-forward"),
    op("embedding_bag (weight input)", lambda w: F.embedding_bag(
        torch.tensor([0, 2, 1, 2]), w, torch.tensor([0, 2])), lambda: rnd(3, 2), "no-forward"),
    op("segment_reduce sum", lambda t: torch.segment_reduce(t, "sum", lengths=torch.tensor([2, 3])),
       lambda: rnd(5), "no-forward"),
]

CORPUS = ELEMENTWISE + REDUCTIONS + LINALG + NN + SHAPES + NO_FORWARD
FORWARD_OK = [o for o in CORPUS if "no-forward" not in o.tags]


def ids(ops):
    return [o.name for o in ops]


def assert_blocks_close(got, expected, **tol):
    """Compare (nested tuples of) Jacobian blocks, structure included."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple), f"expected a tuple, got {type(got).__name__}"
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert_blocks_close(g, e, **tol)
        return
    assert isinstance(got, torch.Tensor)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, **tol)


def reference(o: Op):
    return torch_jacobian(o.fn, o.inputs())


def test_corpus_is_broad():
    assert len(CORPUS) >= 40
    assert len({o.name for o in CORPUS}) == len(CORPUS)


# --------------------------------------------------------------------------- routes vs torch


# torch 2.13: the functorch batching rule of cdist's backward gives wrong rows, so
# torch.func.jacrev(cdist) is wrong too; torch.autograd.functional.jacobian (one row at a time, or
# vectorize=True with the legacy batching rules) and gradarg's loops are right.  gradarg's
# vectorized reverse route detects CdistBackward0 in the graph and loops instead.


def test_cdist_upstream_bug_is_in_torch_func_jacrev():
    """If this fails, torch fixed the batching rule: drop speeds.WRONG_BATCHED_BACKWARD."""
    (o,) = [o for o in NO_FORWARD if o.name.startswith("cdist")]
    x = o.inputs()
    assert not torch.allclose(torch.func.jacrev(o.fn)(x), torch_jacobian(o.fn, x))


def test_vectorize_true_refuses_cdist_rather_than_answer_wrong():
    x = spaced(3, 2)
    with pytest.raises(gradarg.VectorizationError, match="CdistBackward0"):
        gradarg.jacobian(lambda t: torch.cdist(t, POINTS[:1]), x, method="reverse", vectorize=True)


def test_auto_with_cdist_and_fewer_outputs_than_inputs():
    """m <= n: auto takes the reverse route, which must not batch cdist's backward."""
    x = spaced(3, 2)
    fn = lambda t: torch.cdist(t, POINTS[:1])
    assert_blocks_close(gradarg.jacobian(fn, x), torch_jacobian(fn, x), **AUTODIFF_TOL)


@pytest.mark.parametrize("vectorize", [None, False], ids=["batched", "loop"])
@pytest.mark.parametrize("o", CORPUS, ids=ids(CORPUS))
def test_reverse_matches_torch(o, vectorize):
    assert_blocks_close(gradarg.jacobian(o.fn, o.inputs(), method="reverse", vectorize=vectorize),
                        reference(o), **AUTODIFF_TOL)


@pytest.mark.parametrize("vectorize", [None, False], ids=["batched", "loop"])
@pytest.mark.parametrize("o", FORWARD_OK, ids=ids(FORWARD_OK))
def test_forward_matches_torch(o, vectorize):
    assert_blocks_close(gradarg.jacobian(o.fn, o.inputs(), method="forward", vectorize=vectorize),
                        reference(o), **AUTODIFF_TOL)


@pytest.mark.parametrize("o", CORPUS, ids=ids(CORPUS))
def test_auto_matches_torch(o):
    assert_blocks_close(gradarg.jacobian(o.fn, o.inputs()), reference(o), **AUTODIFF_TOL)


@pytest.mark.parametrize("o", CORPUS, ids=ids(CORPUS))
def test_finite_differences_within_fd_tolerance(o):
    assert_blocks_close(gradarg.jacobian(o.fn, o.inputs(), method="finite-difference"),
                        reference(o), rtol=FD_TOL, atol=FD_TOL)


NO_FORWARD_IDS = ids(NO_FORWARD)


@pytest.mark.parametrize("o", NO_FORWARD, ids=NO_FORWARD_IDS)
def test_no_forward_formula_raises_but_auto_works(o):
    with pytest.raises(NotImplementedError, match="forward AD"):
        gradarg.jacobian(o.fn, o.inputs(), method="forward")
    assert_blocks_close(gradarg.jacobian(o.fn, o.inputs(), method="auto"), reference(o),
                        **AUTODIFF_TOL)


def test_no_forward_ops_include_more_outputs_than_inputs():
    """For these auto first picks forward mode (m > n) and must fall back to reverse."""
    for name in ("cdist (m > n)", "pdist (m > n)"):
        (o,) = [o for o in NO_FORWARD if o.name == name]
        x = o.inputs()
        assert o.fn(x).numel() > x.numel()


# --------------------------------------------------------------------------- hand-derived, hypothesis

# name, function, map from u in [-1, 1] to the op's safe domain, derivative written by hand
ELEMENTWISE_DERIVATIVES = [
    ("sin", torch.sin, lambda u: 3 * u, torch.cos),
    ("exp", torch.exp, lambda u: 2 * u, torch.exp),
    ("tanh", torch.tanh, lambda u: 2 * u, lambda x: 1 - torch.tanh(x) ** 2),
    ("sigmoid", torch.sigmoid, lambda u: 3 * u,
     lambda x: torch.exp(-x) / (1 + torch.exp(-x)) ** 2),
    ("log1p", torch.log1p, lambda u: 0.75 + 1.25 * u, lambda x: 1 / (1 + x)),
    ("log", torch.log, lambda u: 1.25 + 0.75 * u, lambda x: 1 / x),
    ("sqrt", torch.sqrt, lambda u: 1.25 + 0.75 * u, lambda x: 0.5 / torch.sqrt(x)),
    ("abs", torch.abs, lambda u: torch.where(u < 0, u - 0.2, u + 0.2), torch.sign),
    ("cube", lambda t: t**3, lambda u: 2 * u, lambda x: 3 * x**2),
    ("x * exp(-x^2)", lambda t: t * torch.exp(-(t**2)), lambda u: 2 * u,
     lambda x: (1 - 2 * x**2) * torch.exp(-(x**2))),
]

shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


def unit_arrays(shape):
    return hnp.arrays(np.float64, shape, elements=st.floats(-1, 1, allow_nan=False, width=64))


@given(
    case=st.sampled_from(ELEMENTWISE_DERIVATIVES),
    u=shapes.flatmap(unit_arrays),
)
def test_elementwise_jacobian_is_diagonal_of_derivative(case, u):
    _, fn, to_domain, deriv = case
    x = to_domain(torch.tensor(u, dtype=F64))
    # J[i..., j...] = f'(x[i...]) if i == j else 0, for any shape (0-d included)
    expected = torch.diag(deriv(x).reshape(-1)).reshape(x.shape + x.shape)
    for method in ("reverse", "forward"):
        torch.testing.assert_close(gradarg.jacobian(fn, x, method=method), expected,
                                   **AUTODIFF_TOL)
    torch.testing.assert_close(gradarg.jacobian(fn, x, method="finite-difference"), expected,
                               rtol=FD_TOL, atol=FD_TOL)
    torch.testing.assert_close(torch_jacobian(fn, x), expected, **AUTODIFF_TOL)


@given(
    dims=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)),
    data=st.data(),
)
def test_matmul_jacobian_blocks_by_hand(dims, data):
    n, k, m = dims
    a = torch.tensor(data.draw(unit_arrays((n, k)), label="a"), dtype=F64)
    b = torch.tensor(data.draw(unit_arrays((k, m)), label="b"), dtype=F64)
    # Y = A @ B, Y[i, j] = sum_p A[i, p] B[p, j]
    #   dY[i, j]/dA[p, q] = delta_ip B[q, j];   dY[i, j]/dB[p, q] = A[i, p] delta_jq
    ja = torch.einsum("ip,qj->ijpq", torch.eye(n, dtype=F64), b)
    jb = torch.einsum("ip,jq->ijpq", a, torch.eye(m, dtype=F64))
    for method in ("auto", "reverse", "forward"):
        assert_blocks_close(gradarg.jacobian(torch.matmul, (a, b), method=method), (ja, jb),
                            **AUTODIFF_TOL)
    assert_blocks_close(gradarg.jacobian(torch.matmul, (a, b), method="finite-difference"),
                        (ja, jb), rtol=FD_TOL, atol=FD_TOL)
