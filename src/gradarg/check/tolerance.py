"""Every tolerance of the checks: how far a correct backward may be from an independent
reference, and when a reference is too uncertain to judge by.

- :func:`backward_rtol`: the rounding a correct backward may show, per dtype (relative to
  ``|v|ᵀ|J|``);
- :func:`entry_tolerance`: per entry of a Jacobian block (``check_backward``'s comparisons);
- :func:`probe_tolerance` and :func:`probe_rounding`: per random probe ``vᵀJu``, with the
  rounding measured on a float64 twin of the backward when there is one (``C_PRECISION``);
  :func:`linearity_tolerance`: per linearity probe (``g(v1) + g(v2) - g(v1 + v2)``);
- :func:`loose_tolerance`: two computations of the same quantity by the backward under test
  (two runs, its derivative against one pass, group tests), ``LOOSE`` times the allowance;
- :func:`assert_close_tolerance` and :func:`vjp_atol`: ``compare_vjp``'s ``(rtol, atol)``;
- :func:`uncertain`: a finite-difference estimate too uncertain to say much;
  :func:`same_function`: float64 outputs that are the outputs rounded, not other draws;
- ``C_SHIFT`` and :func:`shifted_inputs`: a low-precision backward's conditioning, the change
  of the float64 derivative over one rounding step of the inputs;
- ``C_ROUND``: the rounding of one evaluation of ``fn`` that the finite differences of
  :mod:`gradarg.check.fd_error` allow for.

A new tolerance is one more function (or constant) here, used where it applies.
"""

from __future__ import annotations

from typing import Any

import torch

from ..core.fd_error import C_ROUND  # the finite differences' rounding allowance

__all__ = [
    "C_PRECISION",
    "C_ROUND",
    "C_SHIFT",
    "LOOSE",
    "SAFETY",
    "assert_close_tolerance",
    "backward_rtol",
    "below_normal",
    "entry_tolerance",
    "linearity_tolerance",
    "loose_tolerance",
    "probe_rounding",
    "probe_tolerance",
    "same_function",
    "shifted_inputs",
    "uncertain",
    "vjp_atol",
]

# Relative to |v|ᵀ|J| (the sum of the sizes of the terms of vᵀJ, so cancellation is covered).
_RTOL = {
    # ~4.5e5 eps of float64: room for long chains and reductions, yet a backward that rounds
    # through float32 (relative error up to 6e-8, half float32's eps) is caught.
    torch.float64: 1e-10,
    # ~84 eps of float32: sqrt(n)·eps, the typical rounding of a length-n dot product
    # (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 3.1 and
    # Theorem 3.8's probabilistic reading), for n up to about 7,000; equal to
    # torch.testing.assert_close's float32 atol.
    torch.float32: 1e-5,
    # torch.testing.assert_close's defaults for the half-precision types (rtol).
    torch.float16: 1e-3,
    torch.bfloat16: 1.6e-2,
}


def backward_rtol(dtype: torch.dtype) -> float:
    """Relative rounding a correct ``backward`` may show in ``dtype``.

    A backward computed in ``dtype`` rounds; :func:`gradarg.compare_vjp` (finite-difference
    reference) and :func:`gradarg.check_backward` allow ``backward_rtol(dtype) * (|v|ᵀ|J|)``
    on top of the reference's own estimated error.  Values: float64 ``1e-10`` (far above
    float64 rounding, far below float32's, so a backward that silently computes in float32 is
    caught); float32 ``1e-5`` (``sqrt(n)·eps`` for dot products of length up to about 7,000,
    Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 3.1; the
    ``atol`` of ``torch.testing.assert_close`` for float32); float16 ``1e-3`` and bfloat16
    ``1.6e-2`` (``torch.testing.assert_close``'s ``rtol``).  Complex dtypes use their real
    dtype's value.

    Parameters
    ----------
    dtype : torch.dtype
        Floating or complex dtype of the backward's result.

    Raises
    ------
    TypeError
        ``dtype`` is not a ``torch.dtype`` (a string such as ``"float64"``), or not a floating
        or complex one.

    Examples
    --------
    >>> import torch
    >>> backward_rtol(torch.float64), backward_rtol(torch.complex64)
    (1e-10, 1e-05)
    """
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"backward_rtol: dtype must be a torch.dtype (e.g. torch.float64 or "
                        f"x.dtype), got {type(dtype).__name__} {dtype!r}")
    if not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError(f"dtype must be floating or complex, got {dtype}")
    real = torch.empty((), dtype=dtype).real.dtype
    return _RTOL[real]


SAFETY = 2.0  # margin on the finite-difference error estimate (itself an overestimate)


def entry_tolerance(reference: torch.Tensor, error: torch.Tensor | float,
                    rtol: float, floor: float = 0.0) -> torch.Tensor:
    """Per entry of a Jacobian block, how far the backward's entry may be from the reference's:
    ``SAFETY · e + rtol · (|reference| + max |reference|)``, with ``e`` the reference's
    estimated error (zero for forward mode and an intended backward).  The ``max`` term lets
    entries near zero differ by the rounding of the largest entries of their row and their
    column (of a 2-D block; of the whole tensor otherwise), over the entries the reference
    resolved (finite ``e``) only.

    An entry the reference could not resolve (an infinite ``e``, see
    :mod:`gradarg.check.fd_error`) or whose value is not finite gets an infinite tolerance: it
    is not checked, and the verdict says so instead of calling it right or wrong.

    ``floor``: the least tolerance, the smallest normal number of the backward's dtype
    (``torch.finfo(dtype).tiny``, as :func:`vjp_atol` allows): below it values are subnormal
    and keep fewer significant bits than ``eps`` says (``exp(-100)`` in float32, 3.8e-44, is
    27 steps of the smallest subnormal), so a difference smaller than it is rounding."""
    finite = torch.isfinite(reference)
    # the scale from entries the reference resolved: an unresolved entry's value is no
    # derivative (its best estimate can be any size) and must not loosen the others
    known = finite & torch.isfinite(torch.as_tensor(error, dtype=reference.dtype)).expand_as(
        reference)
    size = torch.where(known, reference.abs(), torch.zeros_like(reference))
    if size.dim() == 2 and size.numel():
        # per entry, the largest of its row and of its column: the rounding an entry may
        # share (one backward pass per row; one input element per column), never that of
        # a large entry elsewhere in the block (y = [1e6·x0, sin x1]: 1e6 hid an error of
        # 1e-5 relative in cos x1)
        scale = torch.maximum(size.amax(1, keepdim=True), size.amax(0, keepdim=True))
    else:
        scale = size.max() if size.numel() else size.new_zeros(())
    tol = (SAFETY * error + rtol * (reference.abs() + scale)).clamp_min(floor) + 1e-300
    return torch.where(finite, tol, torch.full_like(reference, float("inf")))


def probe_tolerance(error: float, rounding: float, floor: float = 0.0) -> float:
    """How far a random probe ``vᵀJu`` of a correct backward may be from the reference's:
    ``SAFETY · e + rounding``, with ``e`` the reference's estimated error of the probe (zero
    for forward mode and an intended backward) and ``rounding`` the backward's allowance
    (:func:`probe_rounding`, or ``rtol · (|g·u| + |reference·u|)`` summed entrywise); at least
    ``floor`` (the entries' least tolerance, :func:`entry_tolerance`, times ``Σ|u|``)."""
    return max(SAFETY * error + rounding, floor) + 1e-300


# a backward in float32 (or lower) may lose this many times the forward's relative rounding
# (at least its dtype's eps), norm-wise, before it is said to compute in a lower precision
C_PRECISION = 16.0


def probe_rounding(delta: float, forward_rounding: float, size: float) -> float:
    """How far ``g · u`` of a correct backward may be from the exact value, for ``u`` with
    independent standard normal entries: six standard deviations of ``δ · u``, with ``delta =
    ‖g - g64‖`` the rounding measured on this very product (``g64`` the same backward run in
    float64), plus the precision the backward may lose against the forward's (``C_PRECISION``
    times the forward's relative rounding ``forward_rounding``, at least its dtype's eps, of
    ``size = ‖g64‖``)."""
    return 6.0 * (delta + C_PRECISION * forward_rounding * size)


def linearity_tolerance(delta: float, forward_rounding: float, size: float) -> float:
    """How far ``g(v1) + g(v2) - g(v1 + v2)`` of a right backward may be from zero (norm):
    twice the rounding measured on its float64 twin, ``delta`` (the norms of ``g - g64`` of
    the three terms, summed), plus ``C_PRECISION`` times the forward's relative rounding of
    their size ``size`` (the norms of ``g64`` summed).  Right backwards stay below a tenth
    of it (the corpora of ``tests/check``); one that rounds through bfloat16 in a float32
    function exceeds it tenfold and more."""
    return 2.0 * (delta + C_PRECISION * forward_rounding * size) + 1e-300


# The derivative's own conditioning in a low-precision dtype: a backward in float32 computes
# from intermediates rounded to their dtype (``u = x³`` in ``cos(x³)``: ``eps·|u|``), which is
# what moving the input by one rounding step of its dtype does to them.  ``C_SHIFT`` times the
# change of the float64 derivative when every input moves by ``±eps(dtype)·|x|`` is what such
# a backward may differ by (at x = 12.2 in float32, ``d/dx cos(x³)`` changes by 4 % over that
# shift; a correct float32 backward is off by 0.2 %).
C_SHIFT = 2.0


def shifted_inputs(xs: Any, dtype: torch.dtype) -> list[tuple[torch.Tensor, ...]]:
    """Float64 copies of ``xs`` moved by ``+eps(dtype)·|x|`` and by ``-eps(dtype)·|x|``
    (non-floating tensors unchanged): the two shifts :data:`C_SHIFT` is measured over."""
    eps = torch.finfo(dtype).eps
    out = []
    for sign in (1.0, -1.0):
        out.append(tuple(
            x.detach().double() * (1.0 + sign * eps) if x.is_floating_point() else x
            for x in xs))
    return out


LOOSE = 10  # two computations of one quantity by the backward under test: LOOSE × its rtol


def loose_tolerance(scale: Any, rtol: float, error: Any = 0.0) -> Any:
    """How far two computations of the same quantity by the backward under test may differ
    (two runs with the same ``v``; its derivative with respect to ``v`` against one plain
    pass; a group test ``J u`` against the reference's, ``error`` its estimated error):
    ``SAFETY · error + LOOSE · rtol · scale``, ``scale`` the size of the quantities (a float or
    a tensor)."""
    return SAFETY * error + LOOSE * rtol * scale + 1e-300


def uncertain(error: float, size: float) -> bool:
    """A finite-difference estimate whose estimated error is above 1% of ``size`` (its largest
    entry, or ``|v|ᵀ|J|``): ``fn`` may be discontinuous or random there, so an agreement there
    says little."""
    return error > 0.01 * size


def same_function(difference: float, size: float, conditioning: float = 0.0) -> bool:
    """Are outputs computed on float64 copies the outputs of the same function, rounded
    (``‖y - y64‖ <= 1% of ‖y64‖ + C_SHIFT · conditioning``), not other random draws?  False
    for NaN.

    ``conditioning``: the largest change ``‖y64(x') - y64(x)‖`` of the float64 outputs when
    the inputs move by one rounding step of their dtype (:func:`shifted_inputs`, with ``fn``'s
    draws replayed), what rounding the intermediates does to a low-precision forward: float32
    ``cos((1 + x - x²/2)³)`` at ``x = [4.2, 11.4375]`` is 1.5 % off its float64 outputs (the
    cube, -1.5e5, rounds by 0.01), yet computes the same function (long profile, issue 44).
    Other random draws differ by far more than their own conditioning."""
    return difference <= 1e-2 * size + C_SHIFT * conditioning


def assert_close_tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """``torch.testing.assert_close`` defaults ``(rtol, atol)`` for ``dtype``: ``compare_vjp``'s
    tolerance with a reference that carries no error estimate."""
    real = torch.empty((), dtype=dtype).real.dtype
    return {
        torch.float16: (1e-3, 1e-5),
        torch.bfloat16: (1.6e-2, 1e-5),
        torch.float32: (1.3e-6, 1e-5),
        torch.float64: (1e-7, 1e-7),
    }[real]


def vjp_atol(error: Any, size: Any, dtype: torch.dtype, tiny_dtype: torch.dtype) -> Any:
    """``compare_vjp``'s ``atol`` against finite differences: ``SAFETY · err_j +
    backward_rtol(dtype) · (|v|ᵀ|J|)_j``, ``error`` the estimated errors ``err_j`` of the
    elements of ``vᵀJ`` and ``size`` their ``(|v|ᵀ|J|)_j`` (tensors: one ``atol`` per
    element, each from its own values; or floats); at least the smallest normal number of
    ``tiny_dtype`` (the estimate's dtype)."""
    atol = SAFETY * error + backward_rtol(dtype) * size
    tiny = torch.finfo(tiny_dtype).tiny
    if isinstance(atol, torch.Tensor):
        return atol.clamp_min(tiny)
    return atol if atol != 0.0 else tiny



def below_normal(what: str, floor: float, dtype: str = "the dtype") -> str:
    """The note for values judged only to ``floor``, the smallest normal number of ``dtype``
    (below it a dtype holds fewer significant bits, none below its smallest subnormal):
    ``what`` names them ("some compared values")."""
    return (f"{what} are below {floor:.3g}, the smallest normal number of {dtype}: there a "
            f"difference below it is rounding, so they are checked to {floor:.3g} in absolute "
            f"terms, not relatively")
