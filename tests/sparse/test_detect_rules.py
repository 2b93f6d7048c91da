"""One family of detection rules at a time, against dense Jacobians and Hessians.

Each family module of ``gradarg.sparse.detect.rules`` registers its operators; here a few of
each are traced alone and compared with the non-zeros of ``torch.func.jacrev`` (or
``torch.func.hessian``) at random points.  The global pattern must contain the local one, and
for these inputs (no value-dependent zeros) equal it.
"""

from __future__ import annotations

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


def dense_pattern(f, shape, points=3):
    g = torch.Generator().manual_seed(0)
    nz = None
    for _ in range(points):
        j = torch.func.jacrev(f)(torch.randn(shape, generator=g, dtype=D)) != 0
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
    ],
}
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
    found = jacobian_sparsity(f, x, layout=torch.strided)
    truth = dense_pattern(f, shape)
    assert found.shape == truth.shape
    assert bool((truth <= found).all()), "a non-zero of the Jacobian is missing"
    if family == "order statistics":  # which element is which depends on the values
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
