"""One family of detection rules at a time, against dense Jacobians and Hessians.

Each family module of ``gradarg.sparse.detect.rules`` registers its operators; here a few of
each are traced alone and compared with the non-zeros of ``torch.func.jacrev`` (or
``torch.func.hessian``) at random points.  The global pattern must contain the local one, and
for these inputs (no value-dependent zeros) equal it.
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F

from gradarg import hessian_sparsity, jacobian_sparsity
from gradarg.sparse.detect import registry, rules

D = torch.float64
_G = torch.Generator().manual_seed(7)
W = torch.randn(5, 4, dtype=D, generator=_G)
W[W.abs() < 0.5] = 0  # a constant operand's zeros stay zeros
K = torch.randn(3, 2, 3, dtype=D, generator=_G)
UNPOOL_INDICES = torch.tensor([[[[0, 3], [9, 14]], [[1, 2], [12, 15]]]])
IDX = torch.tensor([[0, 2, 2, 1], [2, 2, 0, 1]])
ROWS = torch.tensor([3, 0, 3])
MASK = torch.tensor([[True, False, True], [False, True, True]])
GRID = torch.rand(1, 2, 2, 2, dtype=D, generator=_G) * 1.6 - 0.8


def dense_pattern(f, shape, points=3):
    # torch.autograd.functional.jacobian, row by row: torch.func.jacrev (vmap) gets cdist's
    # Jacobian wrong when a batch is broadcast (torch 2.13)
    g = torch.Generator().manual_seed(0)
    nz = None
    for _ in range(points):
        j = torch.autograd.functional.jacobian(f, torch.randn(shape, generator=g, dtype=D)) != 0
        nz = j if nz is None else nz | j
    return nz


def dense_hessian_pattern(f, shape, points=3):
    g = torch.Generator().manual_seed(0)
    nz = None
    for _ in range(points):
        h = torch.func.hessian(f)(torch.randn(shape, generator=g, dtype=D)) != 0
        nz = h if nz is None else nz | h
    return nz


FAMILIES = {
    "pointwise": [
        ("sin * exp, broadcast", lambda x: torch.sin(x) * torch.exp(x[:1]), (6,)),
        ("where", lambda x: torch.where(x > 0, x**2, -x), (5,)),
    ],
    "moves": [
        ("flip and roll", lambda x: torch.flip(x, (0,)) + torch.roll(x, 2), (6,)),
        ("transpose, slice", lambda x: x.T[1:, :2].reshape(-1), (3, 4)),
        ("gather", lambda x: x.gather(1, torch.tensor([[2, 0], [1, 1]])), (2, 3)),
    ],
    "reductions": [
        ("sum over a dim", lambda x: x.sum(1), (3, 4)),
        ("cumprod", lambda x: torch.cumprod(x, 0), (5,)),
        ("softmax", lambda x: torch.softmax(x, -1), (2, 3)),
        ("logsumexp", lambda x: torch.logsumexp(x, 0), (3, 2)),
        ("trace", lambda x: torch.trace(x).reshape(1), (3, 4)),
        ("cdist, broadcast batch", lambda x: torch.cdist(x[:, :2], x[:1, 2:]),
         (2, 4, 3)),
    ],
    "order statistics": [
        ("sort", lambda x: torch.sort(x, dim=1).values, (2, 4)),
        ("topk", lambda x: torch.topk(x, 2).values, (5,)),
    ],
    "normalisation": [
        ("layer norm", lambda x: F.layer_norm(x, (3,)), (2, 3)),
        ("group norm", lambda x: F.group_norm(x, 2), (2, 4, 3)),
    ],
    "products": [
        ("constant matrix with zeros", lambda x: W @ x, (4,)),
        ("x @ x.T", lambda x: x @ x.T, (3, 2)),
    ],
    "convolution": [
        ("conv1d", lambda x: F.conv1d(x, K, padding=1), (1, 2, 6)),
        ("conv_transpose1d", lambda x: F.conv_transpose1d(x, K.transpose(0, 1)), (1, 2, 4)),
        ("conv_transpose1d, output_padding",
         lambda x: F.conv_transpose1d(x, K.transpose(0, 1), stride=2, output_padding=1),
         (1, 2, 4)),
    ],
    "pooling": [
        ("avg_pool2d, padding, ceil_mode",
         lambda x: F.avg_pool2d(x, 2, stride=2, padding=1, ceil_mode=True), (1, 2, 5, 4)),
        ("avg_pool1d, unbatched", lambda x: F.avg_pool1d(x, 3, stride=2), (2, 7)),
        ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), (2, 1, 5, 4)),
        ("max_pool2d, dilation", lambda x: F.max_pool2d(x, 2, stride=1, dilation=2),
         (1, 1, 5, 5)),
        ("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 3), (1, 2, 7)),
        ("max_unpool2d", lambda x: F.max_unpool2d(x, UNPOOL_INDICES, 2), (1, 2, 2, 2)),
        ("bilinear interpolation",
         lambda x: F.interpolate(x, scale_factor=2.5, mode="bilinear"), (1, 2, 3, 4)),
        ("bicubic, align_corners", lambda x: F.interpolate(x, size=(7, 5), mode="bicubic",
                                                           align_corners=True), (1, 1, 4, 3)),
        ("linear, antialiased downsampling",
         lambda x: F.interpolate(x.unsqueeze(0), size=(2, 3), mode="bilinear", antialias=True),
         (1, 7, 9)),
        ("trilinear", lambda x: F.interpolate(x, scale_factor=(2, 1.5, 1), mode="trilinear"),
         (1, 1, 2, 3, 2)),
    ],
    "scatter": [
        ("scatter_add", lambda x: torch.zeros(3, 4, dtype=D).scatter_add(0, IDX, x), (2, 4)),
        ("scatter_reduce amax",
         lambda x: x[:3].scatter_reduce(0, IDX, x[3:] ** 2, "amax"), (5, 4)),
        ("index_add", lambda x: torch.zeros(4, 3, dtype=D).index_add(0, ROWS, x), (3, 3)),
        ("index_reduce prod",
         lambda x: torch.ones(4, 3, dtype=D).index_reduce(0, ROWS, x, "prod"), (3, 3)),
        ("index_put accumulate",
         lambda x: torch.zeros(5, dtype=D).index_put((ROWS,), x, accumulate=True), (3,)),
        ("masked_scatter", lambda x: torch.zeros(2, 3, dtype=D).masked_scatter(MASK, x), (6,)),
    ],
    "fft": [
        ("fft over dim 1", lambda x: torch.view_as_real(torch.fft.fft(x, dim=1)), (2, 4)),
        ("rfft2 over the last two", lambda x: torch.view_as_real(torch.fft.rfft2(x)),
         (2, 3, 4)),
        ("irfft", lambda x: torch.fft.irfft(torch.view_as_complex(x), n=6), (3, 4, 2)),
        ("hfft", lambda x: torch.fft.hfft(x), (2, 4)),
    ],
    "blocks": [
        ("batched inverse", lambda x: torch.linalg.inv(x.reshape(2, 2, 2) + 3 * torch.eye(2)),
         (8,)),
        ("qr of a batch", lambda x: torch.linalg.qr(x.reshape(3, 3, 2)).Q, (18,)),
        ("mse_loss", lambda x: F.mse_loss(x, torch.ones(4, dtype=D)).reshape(1), (4,)),
        ("grid sample", lambda x: F.grid_sample(x, GRID, align_corners=False), (1, 2, 3, 3)),
    ],
}
# the sets of these can exceed the non-zeros at random points
# (which element is the maximum depends on the values; a conservative block; the imaginary
# parts of an FFT's zero frequency, and a complex element's one set for both parts; QR's
# column j reads the first j columns only)
CONSERVATIVE = {"order statistics", "fft over dim 1", "rfft2 over the last two", "irfft",
                "max_pool2d, dilation", "adaptive_max_pool1d",
                "scatter_reduce amax", "grid sample", "qr of a batch"}
CASES = [(family, *case) for family, cases in FAMILIES.items() for case in cases]


def test_every_family_is_tested_and_registered():
    families = set(registry.FAMILY.values()) | {"pointwise"}
    assert families == set(FAMILIES)
    # each family lives in one module of the rules package
    modules = {registry.RULES[p].__module__ for p in registry.RULES}
    assert modules <= {f"{rules.__name__}.{m}" for m in rules.__all__}


@pytest.mark.parametrize(("family", "label", "f", "shape"), CASES,
                         ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_family_rule_equals_dense_jacobian_pattern(family, label, f, shape):
    x = torch.zeros(shape, dtype=D)
    with warnings.catch_warnings():  # index_reduce is "in beta"; vmap's slow fallbacks
        warnings.simplefilter("ignore", UserWarning)
        found = jacobian_sparsity(f, x, layout=torch.strided)
        truth = dense_pattern(f, shape)
    assert found.shape == truth.shape
    assert bool((truth <= found).all()), "a non-zero of the Jacobian is missing"
    if family in CONSERVATIVE or label in CONSERVATIVE:
        assert found.sum() > truth.sum()
    else:
        assert torch.equal(found, truth), label


HESSIANS = [
    ("pointwise: linear adds nothing", lambda x: (3 * x + x[0]).sum(), (4,)),
    ("pointwise: exp of a sum of pairs", lambda x: torch.exp(x[:-1] + x[1:]).sum(), (5,)),
    ("reductions: logsumexp", lambda x: torch.logsumexp(x, 1).sum(), (2, 3)),
    ("products: quadratic form", lambda x: x @ (W.T @ W) @ x, (4,)),
    ("normalisation: layer norm", lambda x: F.layer_norm(x, (3,)).pow(2).sum(), (2, 3)),
]


@pytest.mark.parametrize(("label", "f", "shape"), HESSIANS, ids=[h[0] for h in HESSIANS])
def test_hessian_rules_contain_the_dense_hessian_pattern(label, f, shape):
    x = torch.zeros(shape, dtype=D)
    found = hessian_sparsity(f, x, layout=torch.strided)
    truth = dense_hessian_pattern(f, shape)
    assert bool((truth <= found).all()), label
    if label.startswith("pointwise: linear"):
        assert not found.any()


def test_zero_second_derivative_operators_add_no_pair():
    # relu, abs, max are piecewise linear: listed, so hessian_sparsity marks no pair for them
    for op in ("relu", "abs", "amax", "sum"):
        assert getattr(torch.ops.aten, op) in registry.ZERO_SECOND_DERIVATIVE
    f = lambda x: (torch.relu(x) + x.abs()).amax()
    assert not hessian_sparsity(f, torch.zeros(4, dtype=D), layout=torch.strided).any()


def test_batch_norm_with_running_statistics_in_training():
    # functionalization refuses the in-place update of the captured running statistics: the
    # function is traced as it is, and each output depends on its channel across the batch
    bn = torch.nn.BatchNorm1d(3).double().train()
    x = torch.zeros(4, 3, dtype=D)
    found = jacobian_sparsity(bn, x, layout=torch.strided)
    w, b = bn.weight.detach(), bn.bias.detach()
    truth = dense_pattern(lambda t: F.batch_norm(t, None, None, w, b, training=True), (4, 3))
    assert torch.equal(found, truth)
    assert int(bn.num_batches_tracked) == 0  # the caller's buffers are left as they were
