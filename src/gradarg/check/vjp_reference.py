"""compare_vjp's finite-difference reference: ``vᵀJ`` from error-estimated central
differences (:mod:`gradarg.check.fd_error`), each element's tolerance from its own estimated
error, the elements it leaves unresolved (inf) or only bounds (a finite bound: an output no
step moved, :mod:`gradarg.core.fd_settle`), and the sentences that name them.

Imports the finite differences (:mod:`.fd_error`, ``gradarg.core.finite_diff``) and
:mod:`.tolerance` only.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ..core.finite_diff import vjp_from_partials
from . import fd_error
from .tolerance import backward_rtol, below_normal, uncertain, vjp_atol

__all__ = ["fd_reference", "outside_note", "places", "unresolved_note", "value_text"]


def value_text(t: torch.Tensor) -> str:
    """One entry of ``x`` as the notes print it (4 significant digits)."""
    return f"{complex(t):.4g}" if t.is_complex() else f"{float(t):.4g}"


def unresolved_note(x: torch.Tensor, unresolved: torch.Tensor) -> str:
    """Where the finite-difference reference could not give ``vᵀJ`` (``unresolved``: inf
    there, or the finite bound of an element it only bounds), as a sentence."""
    idx = (unresolved > 0).nonzero()
    return (f"could not check: the reference is unreliable or not finite at "
            f"{places(x, idx)} ({idx.shape[0]} of {x.numel()} elements of vᵀJ): its "
            f"estimates over step sizes disagree beyond their error bound, or fn is not "
            f"finite there (it may vary on a scale below the smallest step tried, jump, overflow or "
            f"see a NaN), or an output is so large that no step along x moves it; "
            + ("no element could be compared" if idx.shape[0] == x.numel() else
               "the other elements are compared"))


def outside_note(x: torch.Tensor, outside: torch.Tensor, bound: torch.Tensor) -> str:
    """The elements of ``vᵀJ`` the reference only bounds where the backward is beyond that
    bound (``outside``), as a sentence."""
    return (f"the finite differences do not resolve vᵀJ at {places(x, outside.nonzero(), bound)}"
            f", but they bound it (no step along x moved those outputs): the backward is "
            f"beyond twice that bound there")


def places(x: torch.Tensor, idx: torch.Tensor, bound: torch.Tensor | None = None,
           first: int = 4) -> str:
    """The first ``first`` elements of ``x`` at ``idx`` (``k × x.dim()`` indices) with their
    values (and bounds), and how many more."""
    flat = x.detach()
    at = [f"x{list(i)} = {value_text(flat[tuple(i)])}" + (
        "" if bound is None else f" (|vᵀJ - reference| <= {float(bound[tuple(i)]):.2g})")
        for i in idx[:first].tolist()]
    more = f" and {idx.shape[0] - first} more" if idx.shape[0] > first else ""
    return ", ".join(at) + more


def fd_reference(fn, x, y, v, got_dtype) -> tuple[str, torch.Tensor, tuple, str, torch.Tensor]:
    """``vᵀJ`` from error-estimated central differences, and the tolerance that estimate gives.

    ``atol_j = 2 * err_j + rtol_b * (|v|ᵀ|J|)_j`` per element ``j`` of ``x`` (a tensor), with ``err_j = sum_i |v_i| e_ij`` (``e_ij`` the estimated error of ``J_ij``) and
    ``rtol_b = backward_rtol(dtype)``; the factor 2 is a safety margin on an estimate that is
    itself an overestimate.  Elements that meet an unresolved entry (``e_ij`` infinite, with
    ``v_i != 0``) are ``unresolved`` and never compared.
    """
    est = fd_error.partials(fn, (x.detach().clone(),))  # fn never sees the caller's x
    shape = tuple(y.shape) + tuple(x.shape)

    def block(t: torch.Tensor) -> torch.Tensor:
        return t.movedim(0, -1).reshape(shape)

    parts = [(block(e.value[0]), block(e.error[0])) for e in est[0]]
    dx, ex = parts[0]
    dy, ey = parts[1] if len(parts) > 1 else (None, None)
    # entries left unresolved with a finite bound on their size (core/fd_settle.py), inf
    # where nothing bounds them, 0 where resolved
    def gap(e: Any) -> torch.Tensor:
        unknown = ~torch.isfinite(block(e.error[0]))
        b = block(e.bound[0]) if e.bound is not None else torch.full_like(ex, math.inf)
        bounded = unknown & torch.isfinite(b) & (b > 0)
        return torch.where(bounded, b, torch.where(unknown, math.inf, 0.0)).to(ex.dtype)

    gaps = [gap(e) for e in est[0]]
    ref_x = x.to(dx.dtype) if not x.is_complex() else x.to(torch.complex128)
    ref = vjp_from_partials(v, dx, dy, ref_x)
    va = v.abs().to(ex.dtype)
    nd = v.dim()

    def finite(t: torch.Tensor) -> torch.Tensor:  # unresolved entries (inf) apart
        return torch.where(torch.isfinite(t), t, torch.zeros_like(t))

    err = torch.tensordot(va, finite(ex), dims=nd)
    size = torch.tensordot(va, finite(dx.abs().to(ex.dtype)), dims=nd)
    if dy is not None and ey is not None:
        err = err + torch.tensordot(va, finite(ey), dims=nd)
        size = size + torch.tensordot(va, finite(dy.abs().to(ex.dtype)), dims=nd)
    # rows of outputs that are NaN/inf in fn's own dtype (exp(100.0) in float32), where the
    # reference on float64 copies is finite: the backward's inf or NaN there is not checked
    rows = ((~torch.isfinite(y.detach())) & (v != 0)).to(ex.dtype)
    # each element's unresolved entries (v_i != 0): |vᵀJ - ref| is at most the sum of |v_i|
    # times their bounds, inf where one is unbounded, 0 where none is unresolved (returned as
    # ``unresolved``: compare_vjp calls a backward beyond it DISAGREE, one inside unchecked)
    lift = va.reshape(va.shape + (1,) * x.dim())

    def over_outputs(g: torch.Tensor) -> torch.Tensor:  # sum_i |v_i| g_ij, 0 where v_i = 0
        tiny = torch.finfo(g.dtype).tiny  # an unresolved entry never sums to 0 (underflow)
        g = torch.where((lift > 0) & (g > 0), torch.clamp_min(g * lift, tiny), 0.0)
        return g.sum(tuple(range(nd))) if nd else g  # (sum over () would sum every dim)

    unresolved = torch.stack([over_outputs(g) for g in gaps]).sum(0).to(ex.dtype)
    if bool(rows.any()):
        unresolved = torch.where(torch.tensordot(rows, ((dx != 0) | ~torch.isfinite(dx)).to(
            ex.dtype), dims=nd) > 0, math.inf, unresolved)
    checked = unresolved == 0
    # each element's allowance from its own estimated error and its own |v|ᵀ|J| (never the
    # largest of them: at x = [0, 1e300] one element's error 1e289 made every element
    # agree; beside an element of 2e12 an error of 1e-4 in an element of 1 went unseen)
    scale = float(size[checked].max()) if bool(checked.any()) else 0.0
    # at least the smallest normal number of the backward's dtype: below it x.grad holds
    # fewer bits, so a difference there is its rounding (x^9 at -1e-6: 9e-48, 0 in float32)
    low = got_dtype if torch.finfo(got_dtype).tiny > torch.finfo(err.dtype).tiny else err.dtype
    atol, note, floor = vjp_atol(err, size, got_dtype, low), "", torch.finfo(low).tiny
    if bool((checked & (ref.abs() < floor) & (size > 0)).any()):
        note = below_normal("some elements of vᵀJ", floor, str(low).removeprefix("torch."))
    worst = float(err[checked].max()) if bool(checked.any()) else 0.0
    if uncertain(worst, scale):
        note = note + "; " if note else ""
        note += (f"the finite differences are uncertain here (estimated error {worst:.2g} of "
                f"vᵀJ, against |v|ᵀ|J| up to {scale:.2g}): fn may be discontinuous or random "
                f"at x, so an 'agree' says little; try reference='forward'")
    return "finite-difference", ref, (backward_rtol(got_dtype), atol), note, unresolved
