"""Compressed sparse Jacobians: exactness against dense torch Jacobians, colourings, certificate."""

from __future__ import annotations

import math
import warnings

import networkx as nx
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from problems import stencil_1d, stencil_2d
from torch.autograd.functional import jacobian as af_jacobian

import gradarg
from gradarg.sparse.coloring import conflict_adjacency
from gradarg.sparse.pattern import coordinates

F64 = torch.float64
RTOL = 1e-12
MODES = ("reverse", "forward")
LAYOUTS = (torch.sparse_coo, torch.sparse_csr, torch.strided)


def dense_of(jac: torch.Tensor) -> torch.Tensor:
    return jac if jac.layout == torch.strided else jac.to_dense()


def assert_exact(got: torch.Tensor, want: torch.Tensor) -> None:
    got = dense_of(got)
    assert got.dtype == want.dtype
    # rounding of the products is relative to the Jacobian's largest entries, not to each
    # entry: a small entry (1e-5 beside 1) may differ from the loop's by a few eps of those
    # (hypothesis: n=9, lower=2, upper=5, seed=1, forward: 1e-16 on 1.5e-5)
    scale = float(want.abs().max()) if want.numel() else 0.0
    torch.testing.assert_close(got.reshape(want.shape), want, rtol=RTOL,
                               atol=max(1e-300, 8 * torch.finfo(want.dtype).eps * scale))


def csr(pattern: torch.Tensor) -> torch.Tensor:
    with warnings.catch_warnings():  # torch: "Sparse CSR tensor support is in beta state"
        warnings.simplefilter("ignore", UserWarning)
        return pattern.to_sparse_csr()


# --------------------------------------------------------------------------- test functions


def tridiagonal(n: int) -> torch.Tensor:
    i = torch.arange(n)
    return (i[:, None] - i[None, :]).abs() <= 1


def five_point(s: int) -> torch.Tensor:
    """Pattern of shape (s, s, s, s): output (a, b) reads inputs at Manhattan distance <= 1."""
    a = torch.arange(s)
    di = (a[:, None, None, None] - a[None, None, :, None]).abs()
    dj = (a[None, :, None, None] - a[None, None, None, :]).abs()
    return di + dj <= 1


def mlp(d_in: int, d_out: int, hidden: int = 8, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    w1 = torch.randn(hidden, d_in, generator=g, dtype=F64)
    w2 = torch.randn(d_out, hidden, generator=g, dtype=F64)

    def f(xb: torch.Tensor) -> torch.Tensor:  # (batch, d_in) -> (batch, d_out), row by row
        return torch.tanh(xb @ w1.T) @ w2.T

    return f


def per_sample_pattern(batch: int, d_in: int, d_out: int) -> torch.Tensor:
    """Output row b reads only input row b: shape (batch, d_out, batch, d_in)."""
    eye = torch.eye(batch, dtype=torch.bool)
    return eye[:, None, :, None].expand(batch, d_out, batch, d_in).clone()


# --------------------------------------------------------------------------- exactness


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_1d_stencil_equals_dense_in_three_passes(mode, layout):
    n = 40
    x = torch.linspace(-1, 2, n, dtype=F64)
    sj = gradarg.SparseJacobian(tridiagonal(n).to_sparse(), method=mode)
    assert sj.mode == mode and sj.passes == 3
    got = sj(stencil_1d, x, layout=layout)
    assert got.layout == layout
    assert_exact(got, af_jacobian(stencil_1d, x))


@pytest.mark.parametrize("mode", MODES)
def test_2d_five_point_stencil(mode):
    s = 9
    x = torch.randn(s, s, generator=torch.Generator().manual_seed(1), dtype=F64)
    sj = gradarg.SparseJacobian(five_point(s), x.shape, method=mode)
    assert sj.passes <= 8 < s * s
    got = sj(stencil_2d, x)
    assert got.shape == (s, s, s, s)
    assert_exact(got, af_jacobian(stencil_2d, x))


@pytest.mark.parametrize("mode", MODES)
def test_per_sample_mlp_block_diagonal(mode):
    batch, d_in, d_out = 12, 5, 3
    f = mlp(d_in, d_out)
    x = torch.randn(batch, d_in, generator=torch.Generator().manual_seed(2), dtype=F64)
    sj = gradarg.SparseJacobian(per_sample_pattern(batch, d_in, d_out), x.shape, method=mode)
    assert sj.passes == (d_out if mode == "reverse" else d_in)
    assert_exact(sj(f, x), af_jacobian(f, x))


def test_auto_picks_the_side_with_fewer_colours():
    batch, d_in, d_out = 6, 5, 2
    sj = gradarg.SparseJacobian(per_sample_pattern(batch, d_in, d_out), (batch, d_in))
    assert (sj.row_colors, sj.column_colors) == (d_out, d_in)
    assert sj.mode == "reverse" and sj.passes == d_out
    wide = gradarg.SparseJacobian(per_sample_pattern(batch, 2, 5), (batch, 2))
    assert wide.mode == "forward" and wide.passes == 2


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(2, 40),
    lower=st.integers(0, 6),
    upper=st.integers(0, 6),
    seed=st.integers(0, 2**31 - 1),
    mode=st.sampled_from(MODES),
)
@example(n=9, lower=2, upper=5, seed=1, mode="forward")  # CI 2026-11-30: 1e-16 on a 1.5e-5 entry
def test_banded_random_bandwidth(n, lower, upper, seed, mode):
    g = torch.Generator().manual_seed(seed)
    i = torch.arange(n)
    band = (i[:, None] - i[None, :] <= lower) & (i[None, :] - i[:, None] <= upper)
    a = torch.randn(n, n, generator=g, dtype=F64) * band

    def f(x):
        return torch.tanh(a @ x)

    x = torch.randn(n, generator=g, dtype=F64)
    sj = gradarg.SparseJacobian(band, method=mode)
    assert sj.passes <= min(n, lower + upper + 1)  # greedy meets the band's bound here
    assert_exact(sj(f, x), af_jacobian(f, x))


@st.composite
def random_patterns(draw):
    m, n = draw(st.integers(1, 24)), draw(st.integers(1, 24))
    density = draw(st.floats(0.02, 0.6))
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(m, n, generator=g) < density
    mask[torch.randint(m, (1,), generator=g), torch.randint(n, (1,), generator=g)] = True
    return mask, g


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    drawn=random_patterns(),
    mode=st.sampled_from(MODES),
    layout=st.sampled_from(("dense", "coo", "csr")),
    superset=st.booleans(),
)
def test_random_sparse_patterns(drawn, mode, layout, superset):
    mask, g = drawn
    m, n = mask.shape
    w = torch.randn(m, n, generator=g, dtype=F64) * mask

    def f(x):  # J = W diag(cos x): exactly the mask's non-zeros
        return w @ torch.sin(x) + 0.5

    pattern = mask | (torch.rand(m, n, generator=g) < 0.1) if superset else mask
    given_pattern = {"dense": pattern, "coo": pattern.to_sparse(), "csr": csr(pattern)}[layout]
    x = torch.randn(n, generator=g, dtype=F64)
    sj = gradarg.SparseJacobian(given_pattern, method=mode)
    assert_exact(sj(f, x, layout=torch.strided), af_jacobian(f, x))
    assert_exact(sj(f, x), af_jacobian(f, x))


@settings(max_examples=40, deadline=None)
@given(drawn=random_patterns(), side=st.sampled_from(("rows", "columns")))
def test_conflict_graph_and_colouring_against_brute_force(drawn, side):
    mask, _ = drawn
    p = mask.to(torch.int64)
    overlap = p @ p.T if side == "rows" else p.T @ p  # shared columns / shared rows
    want = {(a, b) for a, b in zip(*np.nonzero(overlap.numpy()), strict=True) if a < b}
    indptr, b = conflict_adjacency(coordinates(mask), side)  # both directions
    a = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    assert {(i, j) for i, j in zip(a.tolist(), b.tolist(), strict=True) if i < j} == want
    colors = gradarg.color_pattern(mask, side, strategy="largest_first")
    assert len(colors) == (mask.shape[0] if side == "rows" else mask.shape[1])
    assert all(colors[i] != colors[j] for i, j in want)  # a proper colouring
    graph = nx.Graph()  # networkx on the brute-force graph gives the same colouring
    graph.add_nodes_from(range(len(colors)))
    graph.add_edges_from(sorted(want))
    nx_colors = nx.greedy_color(graph, strategy="largest_first")
    assert colors.tolist() == [nx_colors[k] for k in range(len(colors))]


def test_tridiagonal_colours_are_three_at_16384():
    n = 16384
    i = torch.arange(n)
    idx = torch.stack([torch.cat([i, i[1:], i[:-1]]), torch.cat([i, i[:-1], i[1:]])])
    pattern = torch.sparse_coo_tensor(
        idx, torch.ones(idx.shape[1], dtype=torch.bool), (n, n), check_invariants=True
    )
    sj = gradarg.SparseJacobian(pattern)
    assert (sj.row_colors, sj.column_colors, sj.passes) == (3, 3, 3)
    x = torch.randn(n, generator=torch.Generator().manual_seed(3), dtype=F64)
    got = sj(stencil_1d, x)
    assert got._nnz() == 3 * n - 2
    main = -2 + torch.cos(x)  # the diagonal, by hand
    rows, cols = got.indices()
    diag = got.values()[rows == cols]
    torch.testing.assert_close(diag, main, rtol=RTOL, atol=0)
    assert torch.all(got.values()[rows != cols] == 1)


def test_jacobian_sparsity_keyword():
    n = 12
    x = torch.linspace(0, 1, n, dtype=F64)
    want = af_jacobian(stencil_1d, x)
    got = gradarg.jacobian(stencil_1d, x, sparsity=tridiagonal(n))
    assert got.layout == torch.sparse_coo
    assert_exact(got, want)
    sj = gradarg.SparseJacobian(tridiagonal(n))
    assert_exact(gradarg.jacobian(stencil_1d, x, sparsity=sj), want)
    assert_exact(gradarg.jacobian(stencil_1d, x, sparsity=tridiagonal(n), method="forward"), want)


def test_colouring_is_reused_across_calls():
    n = 20
    sj = gradarg.SparseJacobian(tridiagonal(n))
    colors = sj.colors.clone()
    for k in range(3):  # a Newton-like loop: new points, same object
        x = torch.full((n,), 0.1 * k, dtype=F64)
        assert_exact(sj(stencil_1d, x), af_jacobian(stencil_1d, x))
    assert torch.equal(sj.colors, colors)


@pytest.mark.parametrize("mode", MODES)
def test_fn_that_changes_the_dtype(mode):
    x = torch.linspace(0, 1, 6)  # float32 in, float64 out

    def f(t):
        return stencil_1d(t.double())

    got = gradarg.SparseJacobian(tridiagonal(6), method=mode)(f, x, certify=2)
    want = af_jacobian(f, x)
    torch.testing.assert_close(got.to_dense().double(), want.double(), rtol=1e-6, atol=1e-6)


def test_output_not_depending_on_input_gives_zeros():
    sj = gradarg.SparseJacobian(torch.eye(3, dtype=torch.bool))
    got = sj(lambda t: torch.ones(3, dtype=F64), torch.zeros(3, dtype=F64), layout=torch.strided)
    assert torch.equal(got, torch.zeros(3, 3, dtype=F64))


# --------------------------------------------------------------------------- certificate


@pytest.mark.parametrize("mode", MODES)
def test_certificate_passes_on_a_right_pattern(mode):
    s = 6
    x = torch.randn(s, s, generator=torch.Generator().manual_seed(4), dtype=F64)
    sj = gradarg.SparseJacobian(five_point(s), x.shape, method=mode)
    for seed in range(20):
        sj(stencil_2d, x, certify=3, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("mode", MODES)
def test_certificate_catches_a_pattern_with_one_entry_removed(mode):
    n = 30
    x = torch.linspace(-1, 1, n, dtype=F64)
    full = tridiagonal(n)
    entries = full.nonzero()
    messages = []
    for trial in range(100):
        g = torch.Generator().manual_seed(trial)
        i, j = entries[torch.randint(len(entries), (1,), generator=g)].flatten().tolist()
        pattern = full.clone()
        pattern[i, j] = False
        sj = gradarg.SparseJacobian(pattern, method=mode)
        try:
            sj(stencil_1d, x, certify=1, generator=g)
        except gradarg.CertificateError as err:
            messages.append(str(err))
    assert len(messages) >= 99
    assert all("misses non-zero entries" in msg for msg in messages)


# --------------------------------------------------------------------------- the pattern finder


def test_sparsity_pattern_finds_the_stencils():
    assert torch.equal(gradarg.sparsity_pattern(stencil_1d, torch.zeros(10, dtype=F64)),
                       tridiagonal(10))
    got = gradarg.sparsity_pattern(stencil_2d, torch.zeros(5, 5, dtype=F64), points=2)
    assert torch.equal(got, five_point(5))


def test_sparsity_pattern_is_local():
    # relu(u - 10) has derivative 1 where u > 10; probes around 0 (spread 1) never get
    # there, so the diagonal is missed, as documented
    got = gradarg.sparsity_pattern(lambda u: torch.relu(u - 10), torch.zeros(3, dtype=F64))
    assert not got.any()
    assert torch.equal(gradarg.sparsity_pattern(torch.relu, torch.full((3,), 20.0)),
                       torch.eye(3, dtype=torch.bool))


def test_sparsity_pattern_errors():
    with pytest.raises(ValueError, match="points must be at least 1"):
        gradarg.sparsity_pattern(torch.sin, torch.zeros(2), points=0)
    with pytest.raises(TypeError, match="real floating"):
        gradarg.sparsity_pattern(torch.sin, torch.zeros(2, dtype=torch.int64))


# --------------------------------------------------------------------------- errors


def test_pattern_errors():
    with pytest.raises(TypeError, match=r"dtype torch.bool .* got torch.float32"):
        gradarg.SparseJacobian(torch.eye(3))
    with pytest.raises(TypeError, match=r"must be a torch\.Tensor"):
        gradarg.SparseJacobian([[True]])
    with pytest.raises(ValueError, match="all False"):
        gradarg.SparseJacobian(torch.zeros(3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="all False"):
        gradarg.SparseJacobian(torch.zeros(3, 3, dtype=torch.bool).to_sparse())
    with pytest.raises(ValueError, match=r"ending in x.shape = \(4,\)"):
        gradarg.SparseJacobian(torch.ones(3, 3, 3, dtype=torch.bool), (4,))
    with pytest.raises(ValueError, match="needs x_shape"):
        gradarg.SparseJacobian(torch.ones(3, 3, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match="layout"):
        gradarg.SparseJacobian(torch.eye(3, dtype=torch.bool).to_sparse_csc())
    with pytest.raises(ValueError, match="method must be"):
        gradarg.SparseJacobian(torch.eye(3, dtype=torch.bool), method="finite-difference")
    with pytest.raises(ValueError, match="strategy must be one of"):
        gradarg.SparseJacobian(torch.eye(3, dtype=torch.bool), strategy="dsatur")


def test_call_errors():
    sj = gradarg.SparseJacobian(tridiagonal(4))
    with pytest.raises(ValueError, match=r"x has shape \(5,\)"):
        sj(stencil_1d, torch.zeros(5, dtype=F64))
    with pytest.raises(ValueError, match=r"fn\(x\) has shape \(3,\)"):
        sj(lambda t: t[:3], torch.zeros(4, dtype=F64))
    with pytest.raises(TypeError, match="real floating"):
        sj(stencil_1d, torch.zeros(4, dtype=torch.int64))
    with pytest.raises(TypeError, match="one real floating tensor"):
        sj(lambda t: (t, t), torch.zeros(4, dtype=F64))
    with pytest.raises(ValueError, match="layout must be"):
        sj(stencil_1d, torch.zeros(4, dtype=F64), layout=torch.sparse_csc)
    with pytest.raises(ValueError, match="method must be 'auto', 'reverse' or 'forward'"):
        gradarg.jacobian(stencil_1d, torch.zeros(4), sparsity=tridiagonal(4),
                         method="finite-difference")
    fwd = gradarg.SparseJacobian(tridiagonal(4), method="forward")
    with pytest.raises(ValueError, match="coloured for 'forward'"):
        gradarg.jacobian(stencil_1d, torch.zeros(4), sparsity=fwd, method="reverse")


def test_the_sparse_route_takes_the_bidirectional_method():
    """``sparse_jacobian`` (what ``jacobian(fn, x, sparsity=P)`` calls) takes
    ``method="bidirectional"`` as ``SparseJacobian`` does, and keeps its colouring apart."""
    from gradarg.sparse import _seen
    from gradarg.sparse.compressed import sparse_jacobian

    n = 30
    arrow = torch.eye(n, dtype=torch.bool)  # a dense row and a dense column
    arrow[0] = arrow[:, 0] = True

    def f(u):
        return torch.cat([(u * u).sum(0, keepdim=True), torch.sin(u[1:]) * u[0]])

    x = torch.linspace(-1, 1, n, dtype=F64)
    want = torch.func.jacrev(f)(x)
    _seen.clear()
    try:
        got = sparse_jacobian(f, x, arrow, method="bidirectional")
        (kept,) = _seen._SEEN.values()
        assert kept.mode == "bidirectional"
        assert_exact(got, want)
        assert_exact(sparse_jacobian(f, x, arrow.to_sparse()), want)  # "auto": its own key
        assert len(_seen._SEEN) == 2
    finally:
        _seen.clear()
    sj = gradarg.SparseJacobian(arrow, method="bidirectional")
    assert_exact(sparse_jacobian(f, x, sj, method="bidirectional"), want)
    with pytest.raises(ValueError, match="coloured for 'bidirectional'"):
        sparse_jacobian(f, x, sj, method="forward")


# --------------------------------------------------------------------------- hygiene


@pytest.mark.parametrize("mode", MODES)
def test_callers_tensors_untouched(mode):
    n = 8
    x = torch.linspace(0, 1, n, dtype=F64).requires_grad_(True)
    before = x.detach().clone()
    pattern = tridiagonal(n)
    pattern_before = pattern.clone()
    rng_before = torch.get_rng_state()
    sj = gradarg.SparseJacobian(pattern, method=mode)
    got = sj(stencil_1d, x, certify=2)
    assert not got.requires_grad
    assert x.grad is None and x.requires_grad and x.grad_fn is None
    assert torch.equal(x.detach(), before)
    assert torch.equal(pattern, pattern_before)
    assert torch.equal(torch.get_rng_state(), rng_before)


def test_random_draws_in_fn_are_replayed():
    n = 6
    noise = []

    def f(u):
        r = torch.rand(n, dtype=u.dtype)
        noise.append(r)
        return stencil_1d(u) * (1 + r)

    x = torch.zeros(n, dtype=F64)
    torch.manual_seed(0)
    got = gradarg.SparseJacobian(tridiagonal(n))(f, x, layout=torch.strided)
    torch.manual_seed(0)
    r = torch.rand(n, dtype=F64)
    want = af_jacobian(stencil_1d, x) * (1 + r)[:, None]
    assert_exact(got, want)
    assert math.isfinite(float(got.sum()))


@pytest.mark.parametrize("keyword", ["create_graph", "strict"])
def test_sparsity_refuses_dropin_keywords_it_cannot_honour(keyword):
    x = torch.linspace(0.1, 1.0, 5, dtype=torch.float64)
    pattern = torch.eye(5, dtype=torch.bool)
    with pytest.raises(ValueError, match=keyword):
        gradarg.jacobian(torch.sin, x, sparsity=pattern, **{keyword: True})


def test_dense_line_rule_against_numpy_median():
    """``_has_dense_line`` (the median from the lengths' histogram) is the rule "a line with
    at least max(4 · median, 3) entries", with np.median over the line lengths."""
    from gradarg.sparse.compressed import _has_dense_line

    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(300):
        m, n = (int(v) for v in rng.integers(1, 30, 2))
        mask = rng.random((m, n)) < rng.choice([0.05, 0.2, 0.5])
        if rng.random() < 0.4:
            mask[rng.integers(m)] = True
        if rng.random() < 0.4:
            mask[:, rng.integers(n)] = True
        if not mask.any():
            continue
        want = any(int(c.max()) >= max(4 * np.median(c), 3)
                   for c in (mask.sum(1), mask.sum(0)))
        seen.add(want)
        assert _has_dense_line(mask.sum(1), mask.sum(0)) == want
    assert seen == {True, False}
