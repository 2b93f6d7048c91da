"""Central finite differences: a Jacobian and a VJP that never touch autograd.

The step for an element ``x_j`` is ``h_j = eps ** (1/3) * max(1, |x_j|)`` with ``eps`` the machine
epsilon of the dtype.  The central difference ``(f(x + h e_j) - f(x - h e_j)) / (2 h)`` has a
truncation error ``h**2 / 6 * |f'''|`` and a rounding error about ``eps * |f| / h``; this step
balances the two, so the error is of order ``eps ** (2/3)`` times the scale of ``f`` and its
third derivative (Nocedal & Wright, *Numerical Optimization*, 2nd ed., section 8.1;
Press et al., *Numerical Recipes*, 3rd ed., section 5.7).  :func:`gradarg.fd_tolerance` turns that into
a fixed tolerance for this fixed step (``jacobian(method="finite-difference")``).  The comparers,
:func:`gradarg.compare_vjp` and :func:`gradarg.check_backward`, use the differences of
:mod:`gradarg.check.fd_error` instead, which carry their own error estimate.

Complex inputs are perturbed along their real and imaginary parts; the result follows PyTorch's
convention for complex autograd (the conjugate Wirtinger derivative, see
https://pytorch.org/docs/stable/notes/autograd.html#complex-autograd-doc).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import torch

from .functorch import VMAP_ERRORS, batched
from .graph import call

__all__ = ["fd_partials", "fd_step", "fd_tolerance"]


def fd_step(x: torch.Tensor) -> torch.Tensor:
    """Central-difference step for every element of ``x``.

    Parameters
    ----------
    x : torch.Tensor
        Floating or complex tensor of any shape.

    Returns
    -------
    torch.Tensor
        Real tensor of ``x``'s shape: ``eps ** (1/3) * max(1, |x|)``, with ``eps`` the machine
        epsilon of ``x``'s (real) dtype.

    Examples
    --------
    >>> import torch
    >>> fd_step(torch.tensor([0.0, 10.0], dtype=torch.float64))
    tensor([6.0555e-06, 6.0555e-05], dtype=torch.float64)
    """
    real = x.real if x.is_complex() else x
    eps = torch.finfo(real.dtype).eps
    return eps ** (1 / 3) * torch.clamp(x.detach().abs(), min=1.0).to(real.dtype)


def fd_tolerance(dtype: torch.dtype) -> float:
    """Relative and absolute tolerance for comparing with a central difference in ``dtype``.

    ``100 * eps ** (2/3)``: about ``3.7e-9`` for float64 and ``2.4e-3`` for float32.  The factor
    100 leaves room for functions whose third derivative is larger than their value.

    Examples
    --------
    >>> f"{fd_tolerance(torch.float64):.1e}"
    '3.7e-09'
    """
    real = torch.empty((), dtype=dtype).real.dtype if dtype.is_complex else dtype
    return 100 * torch.finfo(real).eps ** (2 / 3)


def _evaluate_batch(
    fn: Callable[..., Any], xs: Sequence[torch.Tensor], j: int, batch: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    """``fn`` at every row of ``batch`` substituted for input ``j``: outputs with a batch dim."""

    def at(xj: torch.Tensor) -> tuple[torch.Tensor, ...]:
        args = list(xs)
        args[j] = xj
        return call(fn, args)[0]

    state = torch.get_rng_state()
    try:
        return batched(at, [batch], randomness="same")
    except VMAP_ERRORS:
        rows = []
        for b in batch:
            torch.set_rng_state(state)
            rows.append(at(b))
        return tuple(torch.stack(col) for col in zip(*rows, strict=True))


def fd_partials(
    fn: Callable[..., Any], xs: Sequence[torch.Tensor], *, detach: bool = True
) -> tuple[list[list[torch.Tensor]], list[list[torch.Tensor | None]], bool]:
    """Central-difference partial derivatives of every output with respect to every input.

    Parameters
    ----------
    fn : callable
        ``fn(*xs)`` returns a tensor or a tuple of tensors.
    xs : sequence of torch.Tensor
        Inputs (floating or complex).
    detach : bool
        ``True`` (default): ``fn`` is evaluated on detached inputs under ``torch.no_grad()``,
        so nothing is recorded.  ``False``: on the inputs as given, with grad mode unchanged,
        so that ``torch.func`` transforms around the call differentiate and batch the
        differences (the step stays a constant).

    Returns
    -------
    dx, dy : nested lists ``[k][j]``
        ``dx[k][j]`` has shape ``ys[k].shape + xs[j].shape`` and holds ``∂y_k/∂Re(x_j)``;
        ``dy[k][j]`` holds ``∂y_k/∂Im(x_j)`` for complex ``x_j`` and is ``None`` for real ones.
    is_tuple : bool
        Whether ``fn`` returned a tuple.
    """
    if detach:
        xs = tuple(x.detach() for x in xs)
    recording = contextlib.nullcontext() if not detach else torch.no_grad()
    with recording, torch.random.fork_rng(devices=[]):
        state = torch.get_rng_state()
        base, is_tuple = call(fn, xs)
        dx: list[list[torch.Tensor]] = [[] for _ in base]
        dy: list[list[torch.Tensor | None]] = [[] for _ in base]
        for j, x in enumerate(xs):
            n = x.numel()
            h = fd_step(x).reshape(-1)
            directions = [1.0] + ([1j] if x.is_complex() else [])
            for d, unit in enumerate(directions):
                steps = torch.diag(h).to(x.dtype) * unit  # (n, n)
                flat = x.reshape(1, n)
                batch = torch.cat([flat + steps, flat - steps]).reshape((2 * n, *x.shape))
                torch.set_rng_state(state)
                outs = _evaluate_batch(fn, xs, j, batch)
                for k, yk in enumerate(outs):
                    plus, minus = yk[:n], yk[n:]
                    hk = (2 * h).reshape(n, *([1] * (yk.dim() - 1))).to(yk.real.dtype)
                    deriv = ((plus - minus) / hk).movedim(0, -1)
                    deriv = deriv.reshape(tuple(base[k].shape) + tuple(x.shape))
                    (dx if d == 0 else dy)[k].append(deriv)
                if d == 0 and len(directions) == 1:
                    for k in range(len(base)):
                        dy[k].append(None)
    return dx, dy, is_tuple


def jacobian_from_partials(
    dx: torch.Tensor, dy: torch.Tensor | None, x: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    """The matrix PyTorch's reverse mode builds from real one-hot cotangents.

    Real ``x`` and ``y``: ``dx``.  Complex ``y``, real ``x``: ``Re(dx)`` (a real input's gradient is
    real).  Complex ``x``: ``Re(dx) + i Re(dy)``; for a holomorphic ``f`` this is ``conj(f'(x))``.
    """
    if dy is None:
        out = dx.real if (y.is_complex() and not x.is_complex()) else dx
        return out.to(x.dtype)
    return torch.complex(dx.real, dy.real).to(x.dtype)


def vjp_from_partials(
    v: torch.Tensor, dx: torch.Tensor, dy: torch.Tensor | None, x: torch.Tensor
) -> torch.Tensor:
    """``v`` contracted with partials, in PyTorch's convention (what ``backward(v)`` returns).

    ``grad_j = sum_i Re(conj(v_i) dx_ij) + i sum_i Re(conj(v_i) dy_ij)``; for real tensors this
    is ``vᵀJ``.
    """
    nd = v.dim()
    dims = (list(range(nd)), list(range(nd)))

    def contract(d: torch.Tensor) -> torch.Tensor:
        if not (v.is_complex() or d.is_complex()):
            return torch.tensordot(v.to(d.dtype), d, dims=dims)
        return torch.tensordot(v.conj().to(torch.promote_types(v.dtype, d.dtype)), d.to(
            torch.promote_types(v.dtype, d.dtype)), dims=dims).real

    gx = contract(dx)
    if dy is None:
        return gx.to(x.dtype) if not x.is_complex() else gx.to(x.real.dtype)
    return torch.complex(gx, contract(dy)).to(x.dtype)
