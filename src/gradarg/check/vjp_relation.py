"""How ``x.grad`` and the reference's ``vᵀJ`` differ, when ``compare_vjp`` finds them apart.

A disagreement is stated in words only when the numbers show a simple relation, checked
elementwise within the comparison's own tolerance: all zeros on one side, a flipped sign, a
constant factor, a complex conjugate (PyTorch's conjugate Wirtinger convention against a
hand derivation of ``∂L/∂z``), or a transpose (real inputs: the one side equals the other's
Jacobian applied as ``J v`` instead of ``vᵀJ``: a hand-written Jacobian or VJP that computes
``u @ W`` where ``W @ u`` belongs, or a backward that does).  Which side is wrong the two
vectors cannot tell, so the sentences name the relation, not a culprit.  Otherwise the
elements of ``x`` where they differ are listed.  Reads the backward's Jacobian (reverse
mode: the same backward formulas as ``x.grad``) only for the transpose, and only when it has
at most :data:`MAX_ENTRIES` entries.
Imports ``gradarg.core``, ``gradarg.show`` and ``.vjp_reference`` only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..core.dense import jacobian
from ..show.render import fmt
from .vjp_reference import places

__all__ = ["MAX_ENTRIES", "relation"]

MAX_ENTRIES = 16_384  # the backward's Jacobian read for the transpose (as check_backward's budget)


def _close(a: torch.Tensor, b: torch.Tensor, tol: torch.Tensor) -> bool:
    return bool(((a - b).abs() <= tol).all())


def _places(x: torch.Tensor, where: torch.Tensor, most: int = 4) -> str:
    idx = where.reshape(-1).nonzero().reshape(-1).tolist()
    shape = tuple(x.shape)

    def name(i: int) -> str:
        if not shape:
            return "x"
        return "x[" + ", ".join(str(int(k)) for k in torch.unravel_index(
            torch.tensor(i), shape)) + "]"

    shown = ", ".join(name(i) for i in idx[:most])
    return shown + (f" and {len(idx) - most} more" if len(idx) > most else "")


def relation(fn: Callable[..., Any] | None, x: torch.Tensor, v: torch.Tensor,
             got: torch.Tensor, ref: torch.Tensor, apart: torch.Tensor, tol: Any,
             state: torch.Tensor) -> str:
    """A sentence on how ``got`` (``x.grad``) and ``ref`` (the reference's ``vᵀJ``) differ,
    or ``""`` when they agree everywhere.

    Parameters
    ----------
    fn : callable or None
        The function (``None``: only an output tensor was given; no transpose is tried).
    x, v : torch.Tensor
        The input and the upstream gradient (output's shape).
    got, ref : torch.Tensor
        ``x.grad`` and the reference, shape ``x.shape``, compared in float64 here.
    apart : torch.Tensor
        ``torch.bool``, shape ``x.shape``: the elements the comparison found apart.
    tol : torch.Tensor or float
        The comparison's tolerance per element (``atol + rtol·|ref|``): a relation holds
        when every element is within it (scaled by a factor's size).
    state : torch.Tensor
        The CPU generator state every evaluation of ``fn`` replays.
    """
    complex_ = got.is_complex() or ref.is_complex()
    wide = torch.complex128 if complex_ else torch.float64
    g, r = got.detach().to(wide), ref.detach().to(wide)
    if not bool(apart.any()):
        return ""
    bad = apart & ~torch.isfinite(g) & torch.isfinite(r)
    if bool(bad.any()):
        return (f"the backward is NaN or infinite at {places(x, bad.nonzero(), first=3)}, "
                f"where the reference is finite: an intermediate that overflows (inf · 0 is "
                f"NaN: tanh(exp(x)) at x = 1000, even in float64) or a formula undefined "
                f"there")
    if not bool(torch.isfinite(g).all() and torch.isfinite(r).all()):
        return ""
    t = torch.as_tensor(tol).real.to(torch.float64).expand(r.shape)
    n = x.numel()
    where = (f"they differ at {int(apart.sum())} of {n} element{'s' if n > 1 else ''} of x "
             f"({_places(x, apart)})")
    if bool((g == 0).all()):
        return f"{where}: x.grad is all zeros where the reference is not (a gradient left out)"
    if bool((r == 0).all()):
        return f"{where}: the reference is all zeros where x.grad is not"
    if _close(g, -r, t):
        return f"{where}: x.grad is the reference's vᵀJ with its sign flipped"
    if complex_ and _close(g, r.conj(), t):
        return (f"{where}: x.grad is the complex conjugate of the reference's vᵀJ (PyTorch's "
                f"gradient of a real loss is the conjugate Wirtinger derivative, conj(∂L/∂z): "
                f"a reference derived by hand as ∂L/∂z differs by exactly this)")
    rr = float(r.abs().square().sum())
    c = complex((r.conj() * g).sum()) / rr if rr > 0 else 0.0
    if abs(c.imag) <= 1e-12 * abs(c):
        c = c.real
    if c != 0 and _close(g, c * r, t * max(1.0, abs(c))):
        shown = fmt(c, 6) if isinstance(c, float) else f"({c.real:.6g}{c.imag:+.6g}j)"
        return (f"{where}: x.grad is {shown} × the reference's vᵀJ, a constant factor "
                f"(a missing or extra scale, such as a mean's 1/n, a 2 from a square)")
    if (fn is not None and not complex_ and v.numel() == n and n > 1
            and v.numel() * n <= MAX_ENTRIES):
        try:
            with torch.random.fork_rng(devices=[]):  # the caller's generator is kept
                torch.set_rng_state(state)
                jb = jacobian(fn, x.detach(), method="reverse").detach().to(wide)
        except (RuntimeError, TypeError, ValueError):
            return where
        jv = jb.reshape(v.numel(), n) @ v.detach().to(wide).reshape(-1)
        if _close(jv.reshape(r.shape), r, t):
            return (f"{where}: the reference equals J v with x.grad's Jacobian J (the "
                    f"Jacobian applied the other way, not vᵀJ): one side has the Jacobian "
                    f"transposed, a hand-written Jacobian or VJP that computes u @ W where "
                    f"W @ u belongs (or a backward that does)")
    return where
