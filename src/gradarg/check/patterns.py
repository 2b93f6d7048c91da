"""What kind of bug a wrong Jacobian block shows: NaN or inf, a constant factor, a flipped sign,
a transpose, zeros, an offset, a gradient where the derivative is zero, or rounding in a lower precision.

:func:`classify` works on one block ``(output k, input j)`` flattened to a matrix: ``got`` (the
Jacobian the backward implies, one row per one-hot upstream gradient), ``expected`` (the
independent reference) and ``tol`` (the allowed error of every entry), all ``m × n``.  A new
pattern is one more test in :func:`classify` (in the order it lists) and a ``kind`` of
:class:`Pattern`; a test that needs more evaluations of the function to confirm a pattern goes
in :mod:`.confirm` (the verdict asks it whether a gradient where the derivative is zero meets
a flat forward, ``"not-derivative"``, or not, ``"spurious"``; and whether small errors are
rounding, ``"precision"``, or a formula slightly off).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..show.render import fmt
from .blocks import wrong_entries

__all__ = ["Pattern", "classify"]


@dataclass(frozen=True)
class Pattern:
    """A recognised kind of bug: ``kind`` is one of ``"non-finite"`` (NaN or inf where the
    reference is finite), ``"zero"``, ``"sign"``, ``"factor"``,
    ``"transposed"``, ``"not-derivative"`` (a gradient where the forward is flat, as a
    straight-through estimator passes), ``"spurious"`` (a gradient where the Jacobian is zero
    and the forward is not flat; set by the verdict after :meth:`.confirm.Confirm.forward_flat`),
    ``"offset"``, ``"precision"``; ``sentence`` says it for a reader."""

    kind: str
    sentence: str


def _close(a: torch.Tensor, b: torch.Tensor, tol: torch.Tensor) -> bool:
    return bool(((a - b).abs() <= tol).all())


def _nice_factor(c: float) -> str:
    for q in range(1, 65):
        p = round(c * q)
        if p != 0 and abs(c * q - p) < 1e-6 * max(1.0, abs(c * q)):
            return f"{p}" if q == 1 else f"{p}/{q}"
    return fmt(c, 6)


def classify(
    got: torch.Tensor, expected: torch.Tensor, tol: torch.Tensor,
    out_shape: tuple[int, ...], in_shape: tuple[int, ...], *,
    dropped: bool, dtype: torch.dtype, names: tuple[str, str],
    partial: bool, affine: bool, intended: bool, forward_rounding: float,
) -> Pattern | None:
    """The simplest description of ``got`` in terms of ``expected``, if there is one.

    Tried in order: zero where a gradient is expected, sign flipped, a constant factor,
    transposed (the whole matrix, or two equally long input or output dimensions swapped; not
    tried when ``partial``, a sample of rows or columns), nonzero only where the derivative is
    zero (``"not-derivative"``: the backward of a different function, as in a straight-through
    estimator; not when ``intended``, i.e. ``expected`` is the intended backward already), off
    by a constant, and relative errors below 0.1 that fit no other pattern (rounding in a lower
    precision than ``dtype``, the function's, to be confirmed as rounding by the verdict).  ``dropped``: the backward returned ``None`` for
    this input; ``affine``: it gives a nonzero gradient for a zero upstream gradient.
    ``names``: the output's and the input's, for the sentences.
    Ratios ``got / expected`` that cluster tightly away from 1 (within a tenth of their distance
    to 1) are a nearly constant factor (``"factor"``), not rounding.  ``forward_rounding``:
    the forward's own relative rounding (low-precision inputs; 0 when not measured), quoted
    beside the backward's.
    """
    y, x = names
    wrong = wrong_entries(got, expected, tol)
    if not bool(wrong.any()):
        return None
    what = "the intended gradient" if intended else f"∂{y}/∂{x}"
    if bool((~torch.isfinite(got[wrong]) & torch.isfinite(expected[wrong])).all()):
        return Pattern("non-finite", (
            f"the backward is NaN or infinite where {what} is finite: an intermediate "
            f"that overflows (inf · 0 is NaN: tanh(exp(x)) at x = 1000, even in float64) "
            f"or a formula undefined there"))
    if _close(got, torch.zeros_like(got), tol) or bool((got[wrong] == 0).all()):
        how = "returned None for" if dropped else "gives zeros for"
        true = what if intended else f"the true {what}"
        return Pattern("zero", f"the backward {how} the gradient of {x}, where {true} is "
                               f"not zero (a gradient left out)")
    if _close(got, -expected, tol):
        return Pattern("sign", f"the sign is flipped: the backward gives -{what}")
    ee = float((expected * expected).sum())
    if ee > 0:
        c = float((got * expected).sum()) / ee
        if c != 0 and _close(got, c * expected, tol * max(1.0, abs(c))):
            if _nice_factor(c) == "-1":
                return Pattern("sign", f"the sign is flipped: the backward gives -{what}")
            return Pattern("factor", f"off by a constant factor: the backward gives "
                                     f"{_nice_factor(c)} × {what}")
    near = _near_factor(got, expected, tol, wrong)
    if near is not None:
        lo, hi = near
        return Pattern("factor", f"off by a nearly constant factor: the backward gives "
                                 f"{fmt(lo, 6)} to {fmt(hi, 6)} × {what}")
    t = None if partial else _transposed(got, expected, tol, out_shape, in_shape)
    if t is not None:
        return Pattern("transposed", f"transposed: the backward gives ∂{y}/∂{x} with {t} "
                                     f"(a matrix used where its transpose belongs)")
    if not intended and not affine and bool(
            (expected[wrong].abs() <= tol[wrong]).all()):
        return Pattern("not-derivative", (
            f"not the derivative of the forward: the backward passes a gradient where "
            f"∂{y}/∂{x} is zero (the forward is flat there)"))
    diff = (got - expected)[wrong]
    c = float(diff.median())
    if c != 0 and bool(((diff - c).abs() <= tol[wrong]).all()):
        why = ("a term that does not depend on the upstream gradient" if affine else
               "a term added to the derivative")
        return Pattern("offset", f"off by a constant: every wrong entry of {what} is "
                                 f"{fmt(c, 4)} away from it ({why})")
    rel_all = ((got - expected).abs() / expected.abs().clamp_min(1e-300))[wrong]
    rel = float(rel_all.max())
    # small errors: rounding, or a formula slightly off (the verdict tells them apart by
    # the backward's departure from linearity, :meth:`.confirm.Confirm.is_rounding`)
    if rel < 0.1:
        name = str(dtype).replace("torch.", "")
        fwd = (f", against {fmt(forward_rounding, 2)} for the forward in {name}"
               if forward_rounding else "")
        return Pattern("precision", f"wrong at the rounding level of a lower precision "
                                    f"(relative error up to {fmt(rel, 2)} in a {name} "
                                    f"function{fwd}): the backward computes in a lower "
                                    f"precision than the forward")
    return None


def _near_factor(got, expected, tol, wrong) -> tuple[float, float] | None:
    """``(lo, hi)`` when ``got / expected`` on the wrong entries (with ``expected`` clear of
    its tolerance) lies in a band narrower than a tenth of its distance to 1, and the entries
    that are not wrong are consistent with it; else ``None``."""
    big = wrong & (expected.abs() > 10 * tol)
    if int(big.sum()) < 2 or bool((wrong & ~big).any()):  # wrong where the truth is ~0
        return None
    r = (got[big] / expected[big]).double()
    lo, hi = float(r.min()), float(r.max())
    mid = (lo + hi) / 2
    if not (hi - lo <= 0.1 * abs(mid - 1) and abs(mid - 1) > 0):
        return None
    if lo * hi <= 0 or hi - lo > 0.1 * abs(mid):  # a band through or near 0 is no factor
        return None
    # everywhere else: within the tolerance of some ratio in the band
    rest = ~wrong & (expected.abs() > 10 * tol)
    if bool(rest.any()):
        rr = got[rest] / expected[rest]
        if bool(((rr < lo - 0.5 * (hi - lo) - 1e-12) | (rr > hi + 0.5 * (hi - lo) + 1e-12))
                .any()):
            return None
    return lo, hi


def _transposed(got, expected, tol, out_shape, in_shape) -> str | None:
    m, n = got.shape
    if m == n and m > 1 and _close(got, expected.T, tol.T):
        return "rows and columns exchanged"
    full = tuple(out_shape) + tuple(in_shape)
    g, e, t = got.reshape(full), expected.reshape(full), tol.reshape(full)
    no = len(out_shape)
    for span, label in ((range(no, len(full)), "input"), (range(no), "output")):
        dims = list(span)
        for a in dims:
            for b in dims:
                if a < b and full[a] == full[b] and full[a] > 1:
                    perm = list(range(len(full)))
                    perm[a], perm[b] = perm[b], perm[a]
                    if _close(g, e.permute(perm), t.permute(perm)):
                        ia, ib = (a - no, b - no) if label == "input" else (a, b)
                        return f"its {label} dimensions {ia} and {ib} swapped"
    return None
