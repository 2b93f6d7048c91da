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
written again against ``gradarg.jacobian``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, vjp, vmap

import gradarg

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
        raises=(ValueError, r"jacobian\(strict=True\) .* inside {inner}.* outside the "
                            r"transform, or drop strict=True")),
    Row("backward_vjp", lambda f, y: gradarg.backward_vjp(f, y, V),
        lambda f, y: vjp(f, y)[1](V)[0]),
    Row("backward_vjp in v", lambda f, y: gradarg.backward_vjp(f, Y0, y),
        lambda f, y: vjp(f, Y0)[1](y)[0]),
    Row("contract", lambda f, y: gradarg.contract(V, gradarg.jacobian(f, y)),
        lambda f, y: V @ jacrev(f)(y)),
    Row("contract in v", lambda f, y: gradarg.contract(y, gradarg.jacobian(f, Y0)),
        lambda f, y: y @ jacrev(f)(Y0)),
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
