"""Central finite differences: a Jacobian and a VJP that never touch autograd.

``jacobian(method="finite-difference")`` takes its values from ``gradarg.core.fd_error``:
every column is differentiated over a geometric sequence of steps, from ``max(1, |x_j|)``
down to ``min(1, |x_j|)`` (times ``eps ** (1/5)``), consecutive central differences are
combined by Richardson extrapolation, and each entry keeps the step with the smallest
estimated error (Ridders' method, the scheme numdifftools uses; see that module); an entry
whose estimate is still loose there (error above ``LOOSE``: ``sin(1/t)`` at ``t = 1e-3``,
which varies on ``t²``) is estimated again on finer steps (``gradarg.core.fd_finer``).  So a
function that curves on a fixed scale far from 0 (``sin`` at ``x = 10³`` in float32) is
resolved, where a single step proportional to ``|x|`` sampled it over several periods and got
the sign of the derivative wrong.  The function is evaluated on float64 copies when it accepts
them; the result has the outputs' dtypes.  Where the estimates over steps disagree beyond their
error bound (the derivative is not resolved: ``sin`` at ``x = 10¹⁷``, a function that jumps,
an output that is not finite, an output so large that no step moves it: ``x.sum()`` along
``x[0] = 0`` beside ``x[1] = 1e300``), the entry is NaN and a ``RuntimeWarning`` names the
entries and the input values (``warn_unresolved``): such an entry is never returned as a
number.

Inside ``torch.func`` transforms (``detach=False``) the fixed step of ``fd_step`` is used
instead: ``h_j = eps ** (1/3) * max(1, |x_j|)`` with ``eps`` the machine epsilon of the dtype,
whose central difference ``(f(x + h e_j) - f(x - h e_j)) / (2 h)`` has a truncation error
``h**2 / 6 * |f'''|`` and a rounding error about ``eps * |f| / h``, balanced by this step
(Nocedal & Wright, *Numerical Optimization*, 2nd ed., section 8.1; Press et al., *Numerical
Recipes*, 3rd ed., section 5.7): a constant step, so that the transforms differentiate and
batch the difference quotient.  :func:`gradarg.fd_tolerance` turns that into a fixed tolerance
for this fixed step.

Complex inputs are perturbed along their real and imaginary parts; the result follows PyTorch's
convention for complex autograd (the conjugate Wirtinger derivative, see
https://pytorch.org/docs/stable/notes/autograd.html#complex-autograd-doc).
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch

from . import fd_error
from .fd_finer import LOOSE  # the loose-entry warning's threshold, and the refinement's
from .functorch import VMAP_ERRORS, batched
from .graph import call, copies

__all__ = ["LOOSE", "fd_partials", "fd_step", "fd_tolerance", "warn_unresolved"]


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

    Raises
    ------
    TypeError
        ``x`` is not a tensor (a Python number: wrap it in ``torch.tensor``), or not a
        floating or complex one.

    Examples
    --------
    >>> import torch
    >>> fd_step(torch.tensor([0.0, 10.0], dtype=torch.float64))
    tensor([6.0555e-06, 6.0555e-05], dtype=torch.float64)
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"fd_step: x must be a floating or complex torch.Tensor, got "
                        f"{type(x).__name__} {x!r}; wrap a number in torch.tensor(...)")
    if not (x.is_floating_point() or x.is_complex()):
        raise TypeError(f"fd_step: x must be a floating or complex tensor, got dtype "
                        f"{x.dtype}; convert it first, e.g. x.double()")
    real = x.real if x.is_complex() else x
    eps = torch.finfo(real.dtype).eps
    return eps ** (1 / 3) * torch.clamp(x.detach().abs(), min=1.0).to(real.dtype)


def fd_tolerance(dtype: torch.dtype) -> float:
    """Relative and absolute tolerance for comparing with a central difference in ``dtype``.

    ``100 * eps ** (2/3)``: about ``3.7e-9`` for float64 and ``2.4e-3`` for float32.  The factor
    100 leaves room for functions whose third derivative is larger than their value.

    Raises
    ------
    TypeError
        ``dtype`` is not a ``torch.dtype`` (a string such as ``"float64"``), or not a
        floating or complex one.

    Examples
    --------
    >>> f"{fd_tolerance(torch.float64):.1e}"
    '3.7e-09'
    """
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"fd_tolerance: dtype must be a torch.dtype (e.g. torch.float64 or "
                        f"x.dtype), got {type(dtype).__name__} {dtype!r}")
    if not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError(f"fd_tolerance: dtype must be floating or complex, got {dtype}")
    real = torch.empty((), dtype=dtype).real.dtype if dtype.is_complex else dtype
    return 100 * torch.finfo(real).eps ** (2 / 3)


def _evaluate_batch(
    fn: Callable[..., Any], xs: Sequence[torch.Tensor], j: int, batch: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    """``fn`` at every row of ``batch`` substituted for input ``j``: outputs with a batch dim."""

    def at(xj: torch.Tensor) -> tuple[torch.Tensor, ...]:
        args = copies(xs, keep=(j,))
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

    Warns
    -----
    RuntimeWarning
        ``detach=True``: some entries are not resolved (``warn_unresolved``).
    """
    if detach:
        return _estimated(fn, xs)
    return _fixed_step(fn, xs, detach=detach)


def _estimated(fn: Callable[..., Any], xs: Sequence[torch.Tensor]):
    """:func:`fd_partials` with error-estimated steps (:mod:`.fd_error`), outside transforms."""
    xs = tuple(x.detach() for x in xs)
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        state = torch.get_rng_state()
        base, is_tuple = call(fn, copies(xs))
        torch.set_rng_state(state)
        xs_eval, f0 = fd_error.base_outputs(fn, xs)
        dx: list[list[torch.Tensor]] = [[] for _ in base]
        dy: list[list[torch.Tensor | None]] = [[] for _ in base]
        unresolved = []
        loose: list[tuple[int, int, torch.Tensor, tuple[float, float]]] = []
        ests = []
        for j, x in enumerate(xs):
            torch.set_rng_state(state)
            if x.is_complex():
                ests.append(fd_error.partials(fn, xs, xs_eval=xs_eval, f0=f0,
                                              crossings=True)[j])
            else:  # crossings: past a pole crossed with finite values too (core/fd_edge.py)
                ests.append([fd_error.columns(fn, xs_eval, f0, j, torch.arange(x.numel()),
                                              settled=False, crossings=True)])
        # entries whose output never moved, judged against the whole rows of the Jacobian
        fd_error.settle([e for est in ests for e in est])
        for j, (x, est) in enumerate(zip(xs, ests, strict=True)):
            for d, e in enumerate(est):
                for k, y in enumerate(base):
                    shape = tuple(y.shape) + tuple(x.shape)
                    deriv = e.value[k].movedim(0, -1).reshape(shape).to(y.dtype)
                    err = e.error[k].movedim(0, -1).reshape(shape)
                    bad = torch.isinf(err)
                    # rows of outputs that are NaN/inf already: not the differences' fault
                    bad &= torch.isfinite(y).reshape(tuple(y.shape) + (1,) * x.dim())
                    # (nor columns of NaN/inf elements of x: the input check warned)
                    bad &= torch.isfinite(x).reshape((1,) * y.dim() + tuple(x.shape))
                    # an entry the differences could not resolve is no number: NaN
                    deriv = torch.where(bad, torch.full_like(deriv, math.nan), deriv)
                    (dx if d == 0 else dy)[k].append(deriv)
                    if bool(bad.any()):
                        unresolved.append((k, j, bad))
                    # resolved, but to fewer than four significant digits (or the
                    # tolerance of a lower precision): said, the value kept
                    tol = max(LOOSE, fd_tolerance(y.dtype))
                    # (not at a kink: there every value between the one-sided slopes is
                    # a subgradient, and the bound is half their gap by design)
                    kink = e.kink[k].movedim(0, -1).reshape(shape)
                    ratio = err / (1 + deriv.abs())
                    wide = ~bad & ~kink & torch.isfinite(deriv) & (ratio > tol)
                    if bool(wide.any()):
                        worst = int(torch.where(wide, ratio, 0).reshape(-1).argmax())
                        loose.append((k, j, wide, (float(err.reshape(-1)[worst]),
                                                   float(deriv.reshape(-1)[worst].abs()))))
            if len(est) == 1:
                for k in range(len(base)):
                    dy[k].append(None)
    if unresolved:
        warn_unresolved(unresolved, xs, len(base) > 1, len(xs) > 1)
    if loose:
        warn_loose(loose, xs, len(base) > 1, len(xs) > 1)
    return dx, dy, is_tuple


def _named(entries, xs: Sequence[torch.Tensor], many_out: bool,
           many_in: bool) -> tuple[int, list[str]]:
    """The count of ``(k, j, mask)`` entries in columns of finite ``x_j`` elements, and up to
    four of them named, ``∂y[i]/∂x[j] at x[j] = value``."""
    shown: list[str] = []
    total = 0
    for k, j, mask in entries:
        x = xs[j]
        lead = mask.dim() - x.dim()
        finite = torch.isfinite(x.detach()).reshape((1,) * lead + tuple(x.shape))
        mask = mask & finite
        total += int(mask.sum())
        for idx in mask.nonzero()[: max(0, 4 - len(shown))].tolist():
            yi, xi = idx[:lead], idx[lead:]
            y_name = f"y{k}" if many_out else "y"
            x_name = f"x{j}" if many_in else "x"
            t = x.detach()[tuple(xi)]
            value = f"{complex(t):.4g}" if x.is_complex() else f"{float(t):.4g}"
            shown.append(f"∂{y_name}{yi}/∂{x_name}{xi} at {x_name}{xi} = {value}")
    return total, shown


def warn_unresolved(unresolved, xs: Sequence[torch.Tensor], many_out: bool,
                    many_in: bool) -> None:
    """Warn (``RuntimeWarning``) about Jacobian entries the finite differences could not
    resolve: ``unresolved`` holds ``(k, j, mask)`` with ``mask`` of shape ``y_k.shape +
    x_j.shape``.  Entries in columns of NaN/inf elements of ``x_j`` and in rows of NaN/inf
    outputs are left out (the input check has warned about NaN/inf inputs already)."""
    total, shown = _named(unresolved, xs, many_out, many_in)
    if total:
        more = f" and {total - len(shown)} more" if total > len(shown) else ""
        warnings.warn(
            f"jacobian(method='finite-difference'): the central differences could not resolve "
            f"{total} entr{'y' if total == 1 else 'ies'} ({'; '.join(shown)}{more}): their "
            f"estimates over step sizes disagree beyond their error bound, or fn is not "
            f"finite there (it varies on a scale below the smallest step tried, jumps or "
            f"overflows, or its output is so large that the steps do not move it). Those "
            f"entries are NaN; use method='forward' or 'reverse', or other inputs",
            RuntimeWarning, stacklevel=6)


def warn_loose(loose, xs: Sequence[torch.Tensor], many_out: bool, many_in: bool) -> None:
    """Warn (``RuntimeWarning``) about entries returned with an estimated error above
    ``tol * (1 + |J|)``, ``tol`` the larger of :data:`LOOSE` and :func:`fd_tolerance`:
    ``loose`` holds ``(k, j, mask, (error, |J|) of the worst entry)``.  Their values are kept: each is within its bound (the bound is an
    overestimate), but not as accurate as a central difference usually is."""
    total, shown = _named([(k, j, m) for k, j, m, _ in loose], xs, many_out, many_in)
    if total:
        err, size = max((w for *_, w in loose), key=lambda w: w[0] / (1 + w[1]))
        more = f" and {total - len(shown)} more" if total > len(shown) else ""
        warnings.warn(
            f"jacobian(method='finite-difference'): {total} entr"
            f"{'y is' if total == 1 else 'ies are'} resolved to fewer than four significant "
            f"digits: an estimated error of up to {err:.2g} on an entry of size {size:.3g} "
            f"({'; '.join(shown)}{more}): fn varies on a scale close to the smallest steps "
            f"tried there (sin(1/t) near 0), or x's magnitude or the output's limits how "
            f"small a step can be. The values are kept; use method='forward' or 'reverse' "
            f"for exact values, or compare with a tolerance of at least that size",
            RuntimeWarning, stacklevel=6)


def _fixed_step(fn: Callable[..., Any], xs: Sequence[torch.Tensor], *, detach: bool):
    """:func:`fd_partials` with the fixed step of ``fd_step`` (inside transforms)."""
    if detach:
        xs = tuple(x.detach() for x in xs)
    recording = contextlib.nullcontext() if not detach else torch.no_grad()
    with recording, torch.random.fork_rng(devices=[]):
        state = torch.get_rng_state()
        base, is_tuple = call(fn, copies(xs))
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
