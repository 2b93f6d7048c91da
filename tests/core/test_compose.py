"""Composition with torch.func: every helper of the core that returns a derivative, under every
transform, against torch.func's own result on the same function.

The matrix is rows x transforms.  A row (:class:`Row`) is one way of calling a gradarg helper:
``apply(f, y)`` returns the derivative it computes for ``f`` at ``y``, ``expected(f, y)`` the same
quantity computed by torch.func alone (``jacrev``, ``jacfwd``, ``vjp``...).  A transform takes such
a function of ``y`` and returns what the transform makes of it (``grad``, ``jacrev``, ``jacfwd``,
``vmap``, ``hessian``, nested pairs, and a ``grad`` over a module's parameters through
``torch.func.functional_call``).  Each cell asserts that the transform of ``apply`` equals the same
transform of ``expected`` (float64), or, for a row documented to refuse transforms, that it raises
with a message naming the transform and what to use instead.  A silently cut (detached) result
gives zeros where torch.func does not, so it fails here.

More helpers become more rows: append a :class:`Row` to ``ROWS`` (the sparse Jacobian and
Hessian, their compiled calls and ``compare_vjp``'s values are meant to be added that way).

Then ``create_graph=True`` outside any transform is checked with ``torch.autograd.gradgradcheck``,
and the composability tests of PyTorch's ``test/functorch/test_eager_transforms.py`` that apply
(torch.autograd.functional inside a transform, jacrev/jacfwd/hessian inside transforms) are
written again against ``gradarg.jacobian``.  Not ported: ``test_make_fx_*`` (``make_fx``
tracing refuses the ``.item()`` of jacobian's input check: an error, not a wrong value) and the
tests of torch.func's own API (argnums, has_aux, pytrees, chunk sizes).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, vjp, vmap

import gradarg
from gradarg.core.compose import inside_transform

F64 = torch.float64
AUTODIFF_TOL = {"rtol": 1e-9, "atol": 1e-11}
# a central difference of fn (or, through a transform, of fn's derivatives): error of order
# eps ** (2/3) times the scale of the third derivatives (gradarg.core.finite_diff)
FD_TOL = {"rtol": 1e-6, "atol": 1e-7}

N = 3
Y0 = torch.tensor([0.5, -1.25, 2.0], dtype=F64)
YS = torch.stack([Y0, Y0.flip(0) * 0.75 + 0.1])  # a batch of two points, for vmap
V = torch.tensor([1.5, -0.5, 0.25], dtype=F64)  # a fixed upstream gradient


def f_vec(x: torch.Tensor) -> torch.Tensor:
    """R^3 -> R^3, non-linear in every input, a Jacobian with no zero entry."""
    return torch.sin(x) * x.roll(1) + x**3 / 3 + torch.tanh(x.sum())


def _module() -> torch.nn.Module:
    g = torch.Generator().manual_seed(3)
    lin = torch.nn.Linear(N, N).double()
    with torch.no_grad():
        lin.weight.copy_(torch.randn(N, N, dtype=F64, generator=g))
        lin.bias.copy_(torch.randn(N, dtype=F64, generator=g))
    return torch.nn.Sequential(lin, torch.nn.Tanh())


MODULE = _module()
PARAMS = {k: p.detach().clone() for k, p in MODULE.named_parameters()}


def _weighted_sum(t: torch.Tensor) -> torch.Tensor:
    """A scalar from every entry with a distinct weight, so no entry can hide behind another."""
    w = torch.linspace(0.5, 1.5, t.numel(), dtype=t.real.dtype).reshape(t.shape)
    return (t * w).sum()


def _flat(blocks: Any) -> torch.Tensor:
    """Nested tuples of blocks (tuple inputs/outputs) as one flat tensor."""
    if isinstance(blocks, torch.Tensor):
        return blocks.reshape(-1)
    return torch.cat([_flat(b) for b in blocks])


# --------------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    """One way of calling a helper: ``apply(f, y)`` through gradarg, ``expected(f, y)`` through
    torch.func.  ``raises``: ``(exception type, regex)`` the helper raises under any transform
    (documented), ``None`` when it computes through them.  ``f`` is ``R^3 -> R^3``."""

    name: str
    apply: Callable[[Callable, torch.Tensor], torch.Tensor]
    expected: Callable[[Callable, torch.Tensor], torch.Tensor]
    tol: dict = field(default_factory=lambda: dict(AUTODIFF_TOL))
    raises: tuple[type[BaseException], str] | None = None


def _jac(**kw: Any) -> Callable[[Callable, torch.Tensor], torch.Tensor]:
    return lambda f, y: gradarg.jacobian(f, y, **kw)


def _pair(f: Callable, y: torch.Tensor) -> tuple[Callable, tuple[torch.Tensor, torch.Tensor]]:
    """A function of two inputs with two outputs built from ``f``, and its point."""

    def g(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return f(a) * b, (a * b).sum().reshape(1)

    return g, (y, y.flip(0) * 2.0)


def _complex(y: torch.Tensor) -> torch.Tensor:
    return y * (1.0 + 0.5j)


def _holo(z: torch.Tensor) -> torch.Tensor:
    return z * torch.sin(z) + z.roll(1) ** 2


def _rows_by_vjp(f: Callable, z: torch.Tensor) -> torch.Tensor:
    """torch.func's Jacobian of a complex function in PyTorch's convention (one row per one-hot
    cotangent): ``torch.func.jacrev`` refuses complex tensors, ``vjp`` and ``vmap`` do not."""
    y, vjp_fn = vjp(f, z)
    eye = torch.eye(y.numel(), dtype=y.dtype).reshape(y.numel(), *y.shape)
    (rows,) = vmap(vjp_fn)(eye)
    return rows.reshape(*y.shape, *z.shape)


def _samples(y: torch.Tensor) -> torch.Tensor:
    return torch.stack([y, 2.0 * y - 0.5])


def _scalar_of(f: Callable) -> Callable[[torch.Tensor], torch.Tensor]:
    return lambda t: _weighted_sum(f(t))


_FULL = torch.ones(N, N, dtype=torch.bool)
_SPARSE_J = gradarg.sparse.SparseJacobian(_FULL)
_SPARSE_J_FWD = gradarg.sparse.SparseJacobian(_FULL, method="forward")  # JVPs by backward passes
_SPARSE_H = gradarg.sparse.SparseHessian(_FULL)
_SPARSE_REFUSAL = (r"{call} computes a compressed derivative on a detached copy of x.* inside "
                   r"{{inner}}.* Call it outside the transform")


@functools.cache
def _compiled(kind: str) -> Any:
    """The compiled call of f_vec (or of its weighted sum), built once; outside transforms it
    must equal torch.func's result, inside them it refuses before compiling anything."""
    if kind == "jacobian":
        return _SPARSE_J.compile(f_vec, backend="aot_eager")
    return _SPARSE_H.compile(_scalar_of(f_vec), backend="aot_eager")


ROWS = [
    Row("jacobian", _jac(), lambda f, y: jacrev(f)(y)),
    Row("jacobian reverse", _jac(method="reverse"), lambda f, y: jacrev(f)(y)),
    Row("jacobian forward", _jac(method="forward"), lambda f, y: jacfwd(f)(y)),
    Row("jacobian finite-difference", _jac(method="finite-difference"),
        lambda f, y: jacrev(f)(y), tol=FD_TOL),
    Row("jacobian vectorize=False", _jac(vectorize=False), lambda f, y: jacrev(f)(y)),
    Row("jacobian forward vectorize=False", _jac(method="forward", vectorize=False),
        lambda f, y: jacfwd(f)(y)),
    Row("jacobian create_graph", _jac(create_graph=True), lambda f, y: jacrev(f)(y)),
    Row("jacobian strategy=forward-mode", _jac(strategy="forward-mode", vectorize=True),
        lambda f, y: jacfwd(f)(y)),
    Row("jacobian tuple in/out",
        lambda f, y: _flat(gradarg.jacobian(_pair(f, y)[0], _pair(f, y)[1])),
        lambda f, y: _flat(jacrev(_pair(f, y)[0], argnums=(0, 1))(*_pair(f, y)[1]))),
    Row("jacobian complex",
        lambda f, y: torch.view_as_real(gradarg.jacobian(lambda z: _holo(z) * f(z.real),
                                                         _complex(y))),
        lambda f, y: torch.view_as_real(_rows_by_vjp(lambda z: _holo(z) * f(z.real),
                                                     _complex(y)))),
    Row("jacobian batch_dim", lambda f, y: gradarg.jacobian(f, _samples(y), batch_dim=0),
        lambda f, y: vmap(jacrev(f))(_samples(y))),
    Row("jacobian strict", _jac(strict=True), lambda f, y: jacrev(f)(y),
        raises=(ValueError, (r"jacobian\(strict=True\) .* inside {inner}.* outside the "
                             r"transform, or drop strict=True"))),
    Row("jacobian sparsity",
        lambda f, y: gradarg.jacobian(f, y, sparsity=torch.ones(N, N, dtype=torch.bool)).to_dense(),
        lambda f, y: jacrev(f)(y),
        raises=(ValueError, (r"jacobian\(sparsity=\) .* inside {inner}.* outside the "
                             r"transform, or drop sparsity="))),
    Row("backward_vjp", lambda f, y: gradarg.backward_vjp(f, y, V),
        lambda f, y: vjp(f, y)[1](V)[0]),
    Row("backward_vjp in v", lambda f, y: gradarg.backward_vjp(f, Y0, y),
        lambda f, y: vjp(f, Y0)[1](y)[0]),
    Row("contract", lambda f, y: gradarg.contract(V, gradarg.jacobian(f, y)),
        lambda f, y: V @ jacrev(f)(y)),
    Row("contract in v", lambda f, y: gradarg.contract(y, gradarg.jacobian(f, Y0)),
        lambda f, y: y @ jacrev(f)(Y0)),
    Row("compare_vjp values", lambda f, y: gradarg.compare_vjp(f, y, V).backward,
        lambda f, y: vjp(f, y)[1](V)[0],
        raises=(ValueError, (r"compare_vjp runs torch's backward pass.* inside {inner}.* "
                             r"Call it outside the transform"))),
    # compressed derivatives run on a detached copy: they refuse inside every transform
    Row("SparseJacobian", lambda f, y: _SPARSE_J(f, y).to_dense(), lambda f, y: jacrev(f)(y),
        raises=(ValueError, _SPARSE_REFUSAL.format(call="SparseJacobian"))),
    Row("SparseJacobian forward", lambda f, y: _SPARSE_J_FWD(f, y).to_dense(),
        lambda f, y: jacfwd(f)(y),
        raises=(ValueError, _SPARSE_REFUSAL.format(call="SparseJacobian"))),
    Row("SparseJacobian strided",
        lambda f, y: _SPARSE_J(f, y, layout=torch.strided), lambda f, y: jacrev(f)(y),
        raises=(ValueError, _SPARSE_REFUSAL.format(call="SparseJacobian"))),
    Row("SparseHessian", lambda f, y: _SPARSE_H(_scalar_of(f), y).to_dense(),
        lambda f, y: hessian(_scalar_of(f))(y),
        raises=(ValueError, _SPARSE_REFUSAL.format(call="SparseHessian"))),
    # detection traces fn on a copy of x: inside a transform it would see the wrappers
    Row("jacobian_sparsity",
        lambda f, y: gradarg.jacobian_sparsity(f, y, layout=torch.strided).to(y.dtype),
        lambda f, y: (jacrev(f)(y) != 0).to(y.dtype),
        raises=(ValueError, (r"jacobian_sparsity traces fn on a copy of x.* inside {inner}.*"
                            r"call it outside"))),
    Row("hessian_sparsity",
        lambda f, y: gradarg.hessian_sparsity(_scalar_of(f), y, layout=torch.strided).to(
            y.dtype),
        lambda f, y: (hessian(_scalar_of(f))(y) != 0).to(y.dtype),
        raises=(ValueError, (r"hessian_sparsity traces fn on a copy of x.* inside {inner}.*"
                            r"call it outside"))),
    Row("SparseJacobian.compile", lambda f, y: _compiled("jacobian")(y).to_dense(),
        lambda f, y: jacrev(f)(y),
        raises=(ValueError, _SPARSE_REFUSAL.format(call=r"SparseJacobian\.compile\(\.\.\.\)"))),
    Row("SparseHessian.compile", lambda f, y: _compiled("hessian")(y).to_dense(),
        lambda f, y: hessian(_scalar_of(f))(y),
        raises=(ValueError, _SPARSE_REFUSAL.format(call=r"SparseHessian\.compile\(\.\.\.\)"))),
]


# --------------------------------------------------------------------------------- transforms


def _scalar(d: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    return lambda y: _weighted_sum(d(y))


def _over_params(derivative: Callable, f_of: Callable) -> dict:
    """``grad`` over a module's parameters: the derivative of ``derivative(f_p, Y0)`` with
    ``f_p = functional_call(module, p, ...)``."""

    def loss(p: dict) -> torch.Tensor:
        return _weighted_sum(derivative(f_of(p), Y0))

    return grad(loss)(PARAMS)


def _module_fn(p: dict) -> Callable[[torch.Tensor], torch.Tensor]:
    return lambda x: f_vec(functional_call(MODULE, p, (x,)))


# name -> (derivative: (f, y) -> tensor) -> result; the same call for gradarg and torch.func
TRANSFORMS: dict[str, Callable[[Callable], Any]] = {
    "none": lambda d: d(f_vec, Y0),
    "grad": lambda d: grad(_scalar(functools.partial(d, f_vec)))(Y0),
    "jacrev": lambda d: jacrev(functools.partial(d, f_vec))(Y0),
    "jacfwd": lambda d: jacfwd(functools.partial(d, f_vec))(Y0),
    "vmap": lambda d: vmap(functools.partial(d, f_vec))(YS),
    "hessian": lambda d: hessian(_scalar(functools.partial(d, f_vec)))(Y0),
    "functional_call": lambda d: _over_params(d, _module_fn),
    "vmap(jacrev)": lambda d: vmap(jacrev(functools.partial(d, f_vec)))(YS),
    "jacrev(jacrev)": lambda d: jacrev(jacrev(functools.partial(d, f_vec)))(Y0),
    "vmap(grad)": lambda d: vmap(grad(_scalar(functools.partial(d, f_vec))))(YS),
    "jacfwd(jacrev)": lambda d: jacfwd(jacrev(functools.partial(d, f_vec)))(Y0),
    "grad(grad)": lambda d: grad(lambda y: _weighted_sum(
        grad(_scalar(functools.partial(d, f_vec)))(y)))(Y0),
    "jacrev(vmap)": lambda d: jacrev(vmap(functools.partial(d, f_vec)))(YS),
}


# the innermost transform while fn runs, which an error names: jacfwd runs fn under jvp;
# jacrev and hessian under a reverse-mode level (torch's "grad" kind)
_GRAD, _JVP, _VMAP = (re.escape(f"torch.func.{t}") for t in ("grad", "jvp", "vmap"))
INNERMOST = {"grad": _GRAD, "jacrev": _GRAD, "jacfwd": _JVP, "vmap": _VMAP, "hessian": _GRAD,
             "functional_call": _GRAD, "vmap(jacrev)": _GRAD, "jacrev(jacrev)": _GRAD,
             "vmap(grad)": _GRAD, "jacfwd(jacrev)": _GRAD, "grad(grad)": _GRAD,
             "jacrev(vmap)": _VMAP}


def _cell(row: Row, transform: str) -> None:
    run = TRANSFORMS[transform]
    if row.raises is not None and transform != "none":
        kind, pattern = row.raises
        with pytest.raises(kind, match=pattern.format(inner=INNERMOST[transform])):
            run(row.apply)
        return
    got, want = run(row.apply), run(row.expected)
    torch.testing.assert_close(got, want, **row.tol)
    # a cut result is zero where torch.func's is not: say so plainly
    if transform != "none":
        for g, w in zip(_leaves(got), _leaves(want), strict=True):
            assert not (g.abs().max() == 0 and w.abs().max() > 0), "a detached result"


def _leaves(t: Any) -> list[torch.Tensor]:
    return list(t.values()) if isinstance(t, dict) else [t]


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_matrix(row: Row, transform: str) -> None:
    _cell(row, transform)


@pytest.mark.parametrize("method", gradarg.METHODS)
def test_outside_transforms_the_autograd_routes_run(method, monkeypatch):
    """The torch.func routes are for transforms only: outside, jacobian and backward_vjp keep
    their own (faster) routes."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the torch.func route ran outside a transform")

    monkeypatch.setattr(importlib.import_module("gradarg.core.dense"), "composable_blocks", refuse)
    monkeypatch.setattr(importlib.import_module("gradarg.core.vjp"), "composable_vjp", refuse)
    assert not inside_transform()
    torch.testing.assert_close(gradarg.jacobian(f_vec, Y0, method=method), jacrev(f_vec)(Y0),
                               **(FD_TOL if method == "finite-difference" else AUTODIFF_TOL))
    torch.testing.assert_close(gradarg.backward_vjp(f_vec, Y0, V), vjp(f_vec, Y0)[1](V)[0])
    with torch.no_grad():
        assert not inside_transform()
    assert vmap(lambda t: torch.tensor(inside_transform()))(YS).all()


# --------------------------------------------------------------------------------- create_graph


@pytest.mark.parametrize("kw", [{}, {"method": "reverse"}, {"method": "forward"},
                                {"vectorize": False}, {"method": "forward", "vectorize": False}],
                         ids=["auto", "reverse", "forward", "loop", "forward loop"])
def test_create_graph_passes_gradcheck_and_gradgradcheck(kw):
    """Outside transforms ``create_graph=True`` gives a Jacobian whose first and second
    derivatives (the third derivatives of ``f``) agree with finite differences."""
    y = Y0.clone().requires_grad_()

    def jac(t):
        return gradarg.jacobian(f_vec, t, create_graph=True, **kw)

    assert torch.autograd.gradcheck(jac, (y,))
    assert torch.autograd.gradgradcheck(jac, (y,))


def test_create_graph_tuple_and_captured_weight_pass_gradgradcheck():
    y = Y0.clone().requires_grad_()
    w = torch.tensor([[0.3, -1.1, 0.4], [0.9, 0.2, -0.6]], dtype=F64, requires_grad=True)

    def tuple_jac(a, b):
        return _flat(gradarg.jacobian(_pair(f_vec, a)[0], (a, b), create_graph=True))

    assert torch.autograd.gradgradcheck(tuple_jac, (y, (2 * Y0).requires_grad_()))

    def towards_w(weight):  # the Jacobian in x, differentiated towards a tensor fn captures
        return gradarg.jacobian(lambda x: torch.tanh(weight @ x), Y0, create_graph=True)

    assert torch.autograd.gradgradcheck(towards_w, (w,))


# ------------------------------------------- PyTorch's composability tests, against gradarg
# test/functorch/test_eager_transforms.py (TestComposability, TestJac, TestHessian): where torch's
# own autograd.functional raises inside a transform, gradarg computes; where torch.func raises
# (a Function without setup_context, saved-tensor hooks), gradarg raises the same.


def _sin_sum(x):
    return x.sin().sum()


def test_jacobian_inside_vmap_and_grad():
    # test_autograd_functional_jacrev_inside_transform: torch raises, gradarg computes
    x = torch.randn(5, 3, dtype=F64)
    torch.testing.assert_close(vmap(lambda t: gradarg.jacobian(_sin_sum, t))(x), x.cos())
    s = torch.randn([], dtype=F64)
    torch.testing.assert_close(grad(lambda t: gradarg.jacobian(_sin_sum, t))(s), -s.sin())
    # the example of the issue: -sin(0.5), not 0
    half = torch.tensor(0.5, dtype=F64)
    torch.testing.assert_close(grad(lambda t: gradarg.jacobian(_sin_sum, t))(half),
                               -torch.sin(half))


def test_backward_vjp_inside_vmap_and_grad():
    # test_autograd_functional_vjp_inside_transform
    x = torch.randn(5, 3, dtype=F64)
    torch.testing.assert_close(vmap(lambda t: gradarg.backward_vjp(_sin_sum, t, 1.0))(x),
                               x.cos())
    s = torch.randn([], dtype=F64)
    torch.testing.assert_close(grad(lambda t: gradarg.backward_vjp(_sin_sum, t, 1.0))(s),
                               -s.sin())


@pytest.mark.parametrize("kw", [{"method": "forward"},
                                {"strategy": "forward-mode", "vectorize": True}])
def test_forward_jacobian_inside_vmap_and_grad(kw):
    # test_autograd_functional_jvp/jacfwd_inside_transform: torch raises ("Batching rule not
    # implemented for aten::_make_dual"), gradarg computes
    x = torch.randn(5, 3, dtype=F64)
    torch.testing.assert_close(vmap(lambda t: gradarg.jacobian(_sin_sum, t, **kw))(x), x.cos())
    s = torch.randn([], dtype=F64)
    torch.testing.assert_close(grad(lambda t: gradarg.jacobian(_sin_sum, t, **kw))(s), -s.sin())


def test_nested_grad_and_vmap_of_grad_over_jacobian():
    # test_requires_grad_inside_transform runs vmap(grad(f)) and grad(grad(f)); with gradarg
    # inside f they compute: d/dx of jacobian(sin)(x) = -sin(x), then -cos(x)
    def f(x):
        return gradarg.jacobian(torch.sin, x)

    xs = torch.randn(4, dtype=F64)
    torch.testing.assert_close(vmap(grad(f))(xs), -xs.sin())
    s = torch.randn([], dtype=F64)
    torch.testing.assert_close(grad(grad(f))(s), -s.cos())


def test_grad_vmap_vjp_over_backward_vjp():
    # test_grad_vjp, test_vmap_vjp, test_vjp_vjp with backward_vjp in place of torch.func.vjp;
    # v depends on x too
    x = torch.randn(3, dtype=F64)
    got = grad(lambda t: gradarg.backward_vjp(torch.sin, t, t).sum())(x)
    torch.testing.assert_close(got, grad(lambda t: (t * t.cos()).sum())(x))
    xs = torch.randn(5, 3, dtype=F64)
    torch.testing.assert_close(vmap(lambda t: gradarg.backward_vjp(torch.sin, t, t))(xs),
                               xs * xs.cos())
    y, pullback = vjp(lambda t: gradarg.backward_vjp(torch.sin, t, t), x)
    torch.testing.assert_close(y, x * x.cos())
    v = torch.randn(3, dtype=F64)
    torch.testing.assert_close(pullback(v)[0], (x.cos() - x * x.sin()) * v)


def test_vjp_of_jacobian():
    # test_vjp_grad: vjp of the derivative
    x = torch.randn([], dtype=F64)
    y, pullback = vjp(lambda t: gradarg.jacobian(torch.sin, t), x)
    torch.testing.assert_close(y, x.cos())
    v = torch.randn([], dtype=F64)
    torch.testing.assert_close(pullback(v)[0], -x.sin() * v)


@pytest.mark.parametrize("outer", ["jacobian", "jacrev", "jacfwd"])
def test_nested_jacobians(outer):
    # test_nested_jac_simple, mixing gradarg and torch.func: the Hessian of sum(sin) is
    # diag(-sin); gradarg outside a transform needs create_graph=True on the inner Jacobian
    x = torch.randn(3, dtype=F64)
    inner = functools.partial(gradarg.jacobian, _sin_sum, create_graph=outer == "jacobian")
    if outer == "jacobian":
        got = gradarg.jacobian(inner, x)
    else:
        got = {"jacrev": jacrev, "jacfwd": jacfwd}[outer](inner)(x)
    torch.testing.assert_close(got, torch.diagflat(-x.sin()))
    # torch.func inside gradarg composes with gradarg's autograd passes
    torch.testing.assert_close(gradarg.jacobian(jacrev(_sin_sum), x), torch.diagflat(-x.sin()))


def test_per_sample_hessians_of_a_loss_with_several_inputs():
    # test_jacfwd_different_levels (functorch issue 597): vmap of a Hessian built from two
    # gradarg Jacobians, against vmap(hessian) and vmap(jacrev(jacrev))
    b, n, d = 4, 10, 2
    x1 = torch.randn(b, n, d, dtype=F64)
    x2 = x1 + 0.1 * torch.randn(b, n, d, dtype=F64)
    a = 0.1 * torch.randn(b, d, d, dtype=F64)

    def loss(a_, x1_, x2_):
        return ((x2_ - (a_ @ x1_.T).T) ** 2).sum()

    def gradarg_hessian(a_, x1_, x2_):
        def g(t):
            return gradarg.jacobian(lambda s: loss(s, x1_, x2_), t)

        return gradarg.jacobian(g, a_)

    got = vmap(gradarg_hessian)(a, x1, x2)
    torch.testing.assert_close(got, vmap(hessian(loss))(a, x1, x2))
    torch.testing.assert_close(got, vmap(jacrev(jacrev(loss)))(a, x1, x2))


class _NoSetupContext(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, gy):
        (x,) = ctx.saved_tensors
        return gy * x.cos()


@pytest.mark.parametrize("transform", ["vmap", "grad", "jacrev", "jacfwd", "hessian"])
@pytest.mark.parametrize("helper", ["jacobian", "backward_vjp"])
def test_function_without_setup_context_raises_inside_transforms(transform, helper):
    # test_autograd_function_no_setup_context: torch.func refuses such a Function; so does
    # gradarg inside a transform (outside, its autograd routes take it: tests/core/test_jacobian)
    def f(x):
        if helper == "jacobian":
            return gradarg.jacobian(lambda t: _NoSetupContext.apply(t).sum(), x)
        return gradarg.backward_vjp(lambda t: _NoSetupContext.apply(t).sum(), x, 1.0)

    x = torch.randn(3, dtype=F64)
    t = {"vmap": vmap, "grad": lambda g: grad(lambda s: g(s).sum()), "jacrev": jacrev,
         "jacfwd": jacfwd, "hessian": lambda g: hessian(lambda s: g(s).sum())}[transform]
    with pytest.raises(RuntimeError, match="setup_context"):
        t(f)(x)
    torch.testing.assert_close(f(x), x.cos())  # outside transforms: computed


@pytest.mark.parametrize("helper", ["jacobian", "backward_vjp"])
def test_saved_tensor_hooks_raise_inside_grad(helper):
    # test_transforms_dont_support_saved_tensor_hooks: torch.func's reverse mode refuses
    # saved-tensor hooks, and so does gradarg inside it rather than returning a cut result
    def f(x):
        with torch.autograd.graph.save_on_cpu():
            if helper == "jacobian":
                return gradarg.jacobian(_sin_sum, x).sum()
            return gradarg.backward_vjp(_sin_sum, x, 1.0).sum()

    with pytest.raises(RuntimeError, match="saved tensor hooks"):
        grad(f)(torch.randn(3, dtype=F64))


@pytest.mark.parametrize("vectorize", [False, None])
def test_loop_inside_grad_when_the_backward_cannot_be_batched(vectorize):
    # test_chunk_jacrev_chunksize_one: a backward with a data-dependent shape cannot be batched
    # by vmap; vectorize=False (and the fallback of vectorize=None) loops, inside grad too
    class DynamicBackward(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 1.0

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, gy):
            gy.nonzero()
            return gy

    def f(x):
        return gradarg.jacobian(lambda t: DynamicBackward.apply(t).sin(), x, vectorize=vectorize)

    x = torch.randn(3, dtype=F64)
    got = grad(lambda t: _weighted_sum(f(t)))(x)
    want = grad(lambda t: _weighted_sum(jacrev(torch.sin)(t)))(x)
    torch.testing.assert_close(got, want)
    with pytest.raises(gradarg.VectorizationError, match="vmap"):
        grad(lambda t: gradarg.jacobian(lambda s: DynamicBackward.apply(s).sin(), t,
                                        vectorize=True).sum())(x)



def outcome(row: Row, transform: str) -> str:
    """One cell as a word: ``computes`` (equal to torch.func), ``raises <type>``, ``ZERO``
    (a cut result where torch.func's is not zero) or ``WRONG``."""
    run = TRANSFORMS[transform]
    try:
        got = run(row.apply)
    except Exception as err:  # noqa: BLE001 - a table of what happens, errors included
        return f"raises {type(err).__name__}"
    pairs = list(zip(_leaves(got), _leaves(run(row.expected)), strict=True))
    if all(torch.allclose(g, w, **row.tol) for g, w in pairs):
        return "computes"
    return "ZERO" if all(g.abs().max() == 0 for g, _ in pairs) else "WRONG"


if __name__ == "__main__":  # PYTHONPATH=src python tests/core/test_compose.py: the table
    print("row | " + " | ".join(TRANSFORMS))
    for r in ROWS:
        print(f"{r.name} | " + " | ".join(outcome(r, t) for t in TRANSFORMS))
