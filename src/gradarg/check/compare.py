"""Compare what ``backward(gradient=v)`` computes with an independent vector-Jacobian product."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._validate import (
    NAN_WARNING,
    as_input_tuple,
    check_cotangent,
    check_requires_grad,
)
from ..core.buffers import keeps_buffers
from ..core.compose import inside_transform, transform_name
from ..core.dense import jacobian
from ..core.finite_diff import vjp_from_partials
from ..core.vjp import contract, run_backward_or_none
from ..show.render import format_cells, html_table, markdown_table
from .options import check_finite_cotangent, check_tolerance
from .tolerance import (
    C_PRECISION,
    C_SHIFT,
    LOOSE,
    assert_close_tolerance,
    same_function,
    shifted_inputs,
)
from .vjp_reference import fd_reference, outside_note, places, unresolved_note
from .vjp_relation import relation

__all__ = ["VJPComparison", "compare_vjp"]

Reference = str | np.ndarray | torch.Tensor | Callable[[torch.Tensor], Any]


@dataclass(frozen=True, repr=False)
class VJPComparison:
    """The result of :func:`compare_vjp`.

    Attributes
    ----------
    backward : torch.Tensor
        What ``y.backward(gradient=v)`` put in ``x.grad`` (shape ``x.shape``).
    reference : torch.Tensor
        The independent ``vᵀJ`` (shape ``x.shape``, dtype of ``backward``).
    reference_name : str
        Where the reference came from (``"finite-difference"``, ``"forward"``, ``"jacobian"``...).
    max_abs_error, max_rel_error : float
        ``max |backward - reference|`` and the same divided by ``max(|reference|, tiny)``
        elementwise.
    rtol, atol : float
        The tolerance used: they agree when ``|backward - reference| <= atol + rtol*|reference|``
        everywhere.
    agree : bool
        The verdict: true only when every compared entry agrees and nothing was left
        unchecked.
    note : str
        A sentence about something the numbers alone do not say (a backward that returned
        ``None``; what could not be checked), else ``""``.
    status : str
        ``"agree"``, ``"DISAGREE"`` or ``"could not check"``: the finite-difference reference
        could not resolve ``vᵀJ`` at some elements of ``x`` (its estimates over step sizes
        disagree beyond their error bound, or ``fn`` is not finite there, e.g. at NaN inputs);
        ``note`` names them, and the other elements agree.  A backward that disagrees on an
        element the reference resolved is ``"DISAGREE"`` whatever the rest; so is one beyond
        twice the bound the reference gives where it does not resolve an element because no
        step moved an output (``sigmoid`` at 30: a backward of 1 for a derivative of 9e-14).
    """

    backward: torch.Tensor
    reference: torch.Tensor
    reference_name: str
    max_abs_error: float
    max_rel_error: float
    rtol: float
    atol: float
    agree: bool
    note: str = ""
    status: str = ""

    def __post_init__(self) -> None:
        if not self.status:
            object.__setattr__(self, "status", "agree" if self.agree else "DISAGREE")

    def __bool__(self) -> bool:
        return self.agree

    def _rows(self) -> list[list[Any]]:
        return [
            ["x.grad from backward(gradient=v)", self.backward],
            [f"vᵀJ, reference: {self.reference_name}", self.reference],
            ["max abs error", f"{self.max_abs_error:.2e}"],
            ["max rel error", f"{self.max_rel_error:.2e}"],
            ["tolerance", f"rtol={self.rtol:.1e}, atol={self.atol:.1e}"],
            ["verdict", self.status],
            *([["note", self.note]] if self.note else []),
        ]

    def __str__(self) -> str:
        cells = [["quantity", "value"], *format_cells(self._rows(), digits=6)]
        width = max(len(c[0]) for c in cells)
        return "\n".join(f"{a:<{width}}  {b}" for a, b in cells)

    def __repr__(self) -> str:
        """At the REPL, the same short table as ``print`` (not the fields' dump)."""
        return str(self)

    def _repr_markdown_(self) -> str:
        return markdown_table(self._rows(), ["quantity", "value"], digits=6)

    def _repr_html_(self) -> str:
        return html_table(self._rows(), ["quantity", "value"], digits=6)


@keeps_buffers()
def compare_vjp(
    fn: Callable[[torch.Tensor], torch.Tensor] | torch.Tensor,
    x: torch.Tensor,
    v: Any,
    *,
    reference: Reference = "finite-difference",
    rtol: float | None = None,
    atol: float | None = None,
) -> VJPComparison:
    """Check ``y.backward(gradient=v)`` against ``v`` contracted with an independent Jacobian.

    Parameters
    ----------
    fn : callable or torch.Tensor
        A function ``fn(x) -> y`` returning one tensor, or an output tensor ``y`` already
        computed from ``x`` (then ``x`` must be in its graph and ``reference`` must be a
        Jacobian or a VJP function, since there is no function to differentiate).
    x : torch.Tensor
        Input, floating or complex, any shape. Never modified; with an output tensor, its
        ``.grad`` is restored after the comparison (and a module's buffers, BatchNorm's
        running statistics, after every evaluation of ``fn``).
    v : torch.Tensor or number
        Upstream gradient (``grad_outputs``, cotangent) of shape ``y.shape``.
    reference : str, array, tensor or callable
        ``"finite-difference"`` (default; central differences, no autograd at all),
        ``"forward"`` (forward-mode Jacobian), ``"reverse"`` (reverse-mode Jacobian: not
        independent of the backward under test, useful only as a consistency check); a Jacobian
        of shape ``y.shape + x.shape`` as NumPy array or tensor (e.g. derived by hand); or a
        function ``ref(v) -> x-shaped`` that computes the VJP itself.
    rtol, atol : float, optional
        Tolerance: they agree when ``|backward - reference| <= atol + rtol * |reference|``
        everywhere.  With finite differences the defaults come from the reference's own error
        estimate (see :mod:`gradarg.check.fd_error`): ``rtol = backward_rtol(dtype)`` and, per
        element ``j`` of ``x``, ``atol_j = 2 * (estimated error of (vᵀJ)_j) +
        backward_rtol(dtype) * (|v|ᵀ|J|)_j``, each element's own and at least the smallest
        normal number of the backward's dtype (below it ``x.grad`` holds fewer significant
        bits: ``note`` says when some element is there), ``atol`` reporting the largest over
        the compared elements; for float32 and lower, an element whose
        difference the same backward run in float64 does not show, and that is below what the
        dtype's rounding of ``y`` allows, is within rounding (``note`` says so, naming the
        dtype), and so is one NaN or infinite in the dtype where the float64 run is finite and
        matches the reference (an overflow: ``tanh(exp(x))`` at ``x = 100`` in float32, where
        the chain rule gives ``0 · inf``; ``note`` names the elements); one NaN or infinite
        in float64 too disagrees, and ``note`` says so.  With other references ``torch.testing.assert_close``'s defaults for the
        dtype.

    Returns
    -------
    VJPComparison
        Both vectors, their max absolute/relative difference, the tolerance and the verdict;
        shows as a table in a notebook and as text with ``print``.

    Raises
    ------
    TypeError
        ``fn`` neither callable nor a tensor (named ``fn``); non-tensor ``x``/``v``, integer
        ``x``, ``fn`` returning a tuple or non-tensor, a reference of an unknown kind.
    ValueError
        ``x`` empty (no elements); ``v.shape != y.shape``; a reference Jacobian whose shape is
        not ``y.shape + x.shape``; an output that does not require grad; a string reference
        with an output tensor (refused before any backward pass); called inside a
        ``torch.func`` transform (the message names it, and :func:`gradarg.backward_vjp` /
        ``torch.func.vjp``, which compose).
    RuntimeError
        An output tensor whose graph an earlier ``backward()`` freed (the message says what
        to pass instead); errors ``fn`` or its backward raise.

    Notes
    -----
    ``v`` is copied before the backward pass, so a backward that writes into its
    ``grad_output`` changes neither the caller's ``v`` nor the reference.  A backward that
    returns ``None`` for ``x`` although the output depends on ``x`` is compared as zeros (and
    says so in ``note``).  Works under ``torch.no_grad()``: the backward pass switches grad
    mode on for itself.  Tensors ``fn`` captures (a module's parameters) get no gradient:
    their ``.grad`` is left as it was, ``None`` or what your own ``backward()`` put there.

    On a disagreement ``note`` says how the two differ where the numbers show it
    (``gradarg.check.vjp_relation``): NaN or inf from the backward where the reference is
    finite, all zeros on one side, a flipped sign, a constant factor, or a transpose (the
    reference equals ``J v`` for ``x.grad``'s Jacobian ``J``: one side has the Jacobian
    transposed); else the elements of ``x`` where they differ.  It never says which is wrong.

    Examples
    --------
    >>> import numpy as np, torch
    >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    >>> J = np.array([[2.0, 0.0], [0.0, 4.0]])  # d(x**2)/dx, by hand
    >>> v = torch.tensor([100.0, 1.0])
    >>> r = compare_vjp(lambda t: t**2, x, v, reference=J)
    >>> r.agree, r.backward
    (True, tensor([200.,   4.], dtype=torch.float64))
    >>> print(compare_vjp(lambda t: t**2, x, torch.ones(2)).reference_name)
    finite-difference
    """
    if inside_transform():
        raise ValueError(
            f"compare_vjp runs torch's backward pass (a graph of its own, on a detached copy of "
            f"x) and returns plain numbers, which torch.func transforms cannot differentiate or "
            f"batch; it was called inside {transform_name()}. Call it outside the transform; "
            f"to differentiate a VJP inside one, use gradarg.backward_vjp or torch.func.vjp, "
            f"which compose"
        )
    rtol = check_tolerance("compare_vjp", "rtol", rtol)
    atol = check_tolerance("compare_vjp", "atol", atol)
    check_finite_cotangent("compare_vjp", "v", v)
    (x,), _ = as_input_tuple("x", x)  # warns once about NaN/Inf; the references stay quiet
    if x.numel() == 0:
        raise ValueError(f"x is empty (shape {tuple(x.shape)}): a gradient with no elements "
                         f"has nothing to compare; pass an input with at least one element")
    if not isinstance(fn, torch.Tensor) and not callable(fn):
        raise TypeError(f"fn must be a callable or an output tensor, got "
                        f"{type(fn).__name__}; pass the function itself (or its output y "
                        f"with reference= a Jacobian or a VJP function)")
    v_bwd = v.detach().clone() if isinstance(v, torch.Tensor) else v  # the backward may write
    # Every evaluation of fn replays the caller's RNG state, so random draws (dropout) are the
    # same in the backward pass under test and in the reference; the caller's state is kept.
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        warnings.filterwarnings("ignore", NAN_WARNING, RuntimeWarning)
        state = torch.get_rng_state()
        note = ""
        if isinstance(fn, torch.Tensor):
            y = fn
            _refuse_without_function(reference)  # before any backward pass runs
            got = _backward_on_output(y, x, v_bwd)
            fn_ = None
        elif callable(fn):
            got, y, reaches = run_backward_or_none(fn, x, v_bwd)
            if got is None and not reaches:
                raise ValueError(
                    "the output of fn does not depend on x (backward() left x.grad empty): it "
                    "requires grad only through other tensors, e.g. parameters captured by fn"
                )
            if got is None:
                got = torch.zeros_like(x)
                note = ("backward() returned None for x although the output depends on x: "
                        "the gradient was dropped, so x.grad is compared as zeros")
            fn_ = fn
        else:
            raise TypeError(f"fn must be a callable or an output tensor, got {type(fn).__name__}")
        v_t = check_cotangent(v, y)

        torch.set_rng_state(state)
        name, ref, default_tol, ref_note, unresolved = _reference(reference, fn_, x, y, v_t,
                                                                  got.dtype)
    note = "; ".join(n for n in (note, ref_note) if n)
    tol = default_tol if default_tol is not None else assert_close_tolerance(got.dtype)
    defaults = rtol is None and atol is None
    rtol = tol[0] if rtol is None else rtol
    atol = tol[1] if atol is None else atol
    wide = torch.promote_types(got.dtype, ref.dtype)  # the difference in the finer dtype
    diff = (got.to(wide) - ref.to(wide)).abs()
    ref_abs = ref.to(wide).abs()
    # the elements at a NaN/inf element of x are never compared: there the reference's and the
    # backward's values (0, NaN, 0 · NaN) are what IEEE arithmetic gives, right or not
    if unresolved is None:
        unresolved = torch.zeros(x.shape, dtype=diff.real.dtype)
    # (nor those where the reference is not finite: forward mode gives NaN at x[1] of sin
    # when x[0] is NaN, through 0 · cos(NaN))
    unresolved = torch.where(torch.isfinite(x.detach()) & torch.isfinite(ref),
                             unresolved.to(diff.real.dtype), math.inf)
    # elements the reference did not resolve but bounds (|vᵀJ - ref| <= unresolved, finite):
    # a backward beyond twice that bound plus the tolerance is wrong whatever vᵀJ is there
    outside = (unresolved > 0) & torch.isfinite(unresolved) & (
        diff > 2 * unresolved + atol + rtol * ref_abs)
    seen = (unresolved == 0) | outside
    tiny = torch.finfo(diff.dtype).tiny
    max_abs = float(diff[seen].max()) if bool(seen.any()) else 0.0
    max_rel = float((diff / ref_abs.clamp_min(tiny))[seen].max()) if bool(seen.any()) else 0.0
    ok = ((diff <= atol + rtol * ref_abs) | (unresolved > 0)) & ~outside
    if (not bool(torch.all(ok)) and defaults and fn_ is not None
            and isinstance(reference, str) and reference == "finite-difference"
            and x.dtype in _LOW):
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(state)
            rounded = _within_rounding(fn_, x, v_t, y, got, ref, atol + rtol * ref_abs, ok)
        if rounded is not None:
            ok = ok | rounded
            note = "; ".join(n for n in (note, _rounding_note(x, rounded, diff)) if n)
            over = rounded & ~torch.isfinite(diff)
            if bool(over.any()):  # the errors of the other elements
                seen = seen & ~over
                max_abs = float(diff[seen].max()) if bool(seen.any()) else 0.0
                max_rel = float((diff / ref_abs.clamp_min(tiny))[seen].max()) if bool(
                    seen.any()) else 0.0
    agree = bool(torch.all(ok))
    status = "agree" if agree else "DISAGREE"
    if not agree:  # what the numbers show: NaN/inf, or a sign, factor or transpose
        note = "; ".join(n for n in (note, relation(fn_, x, v_t, got, ref, ~ok,
                                                     atol + rtol * ref_abs, state)) if n)
    if bool(outside.any()):
        note = "; ".join(n for n in (note, outside_note(x, outside, unresolved)) if n)
    if agree and bool((unresolved > 0).any()):
        agree, status = False, "could not check"
        note = "; ".join(n for n in (note, unresolved_note(x, unresolved)) if n)
    if isinstance(atol, torch.Tensor):  # per element (finite differences): the largest used
        atol = float(atol[seen].max()) if bool(seen.any()) else 0.0
    return VJPComparison(got, ref.to(got.dtype), name, max_abs, max_rel, rtol, atol, agree,
                         note, status)


_LOW = (torch.float16, torch.bfloat16, torch.float32)


def _within_rounding(fn, x, v, y, got, ref, tol, ok) -> torch.Tensor | None:
    """The elements of ``vᵀJ`` where a low-precision backward differs from the reference only
    by what its dtype can resolve (``tanh`` at ``x = -10`` in float32: ``1 - y²`` is 0 there
    for a derivative of 8.2e-9), else ``None``.

    The same backward runs in float64 on copies of ``x`` and ``v``; an element outside its
    tolerance ``tol`` is within rounding when that run matches the reference within ``tol``
    and the element is no farther from the reference than ``LOOSE`` times its distance to the
    float64 run, nor than the larger of ``C_PRECISION · eps(dtype) · |v|ᵀ|y|`` (what rounding
    the forward values can do) and ``C_SHIFT`` times the change of the float64 run when ``x``
    moves by one rounding step of its dtype (what rounding the intermediates can do:
    ``cos(x³)`` at ``x = 12.2`` in float32).  A backward wrong in float64 too (a factor, a dropped term) stays wrong.
    ``None`` when ``fn`` fails on float64 copies or computes another function there."""
    state = torch.get_rng_state()  # fn's draws as in the checked run, for every run below
    try:
        got64, y64, _ = run_backward_or_none(fn, x.detach().double(), v.detach().double())
    except (RuntimeError, TypeError, ValueError):
        return None
    if got64 is None or y64.dtype != torch.float64 or y64.shape != y.shape:
        return None
    ref64 = ref.double()
    diff = (got.double() - ref64).abs()
    cap = torch.full_like(diff, C_PRECISION * torch.finfo(x.dtype).eps
                          * float((v.double().abs() * y64.abs()).sum()))
    conditioning = 0.0  # how far y64 moves over the shifts (an ill-conditioned forward)
    for xs in shifted_inputs((x,), x.dtype):  # the derivative's own conditioning
        torch.set_rng_state(state)
        try:
            moved, y_moved, _ = run_backward_or_none(fn, xs[0], v.detach().double())
        except (RuntimeError, TypeError, ValueError):
            moved = None
        if moved is not None and moved.shape == got64.shape:
            cap = torch.maximum(cap, C_SHIFT * (moved.detach() - got64.detach()).abs())
            if y_moved.shape == y64.shape:
                conditioning = max(conditioning, float((y_moved.double() - y64).norm()))
    if not same_function(float((y.double() - y64).norm()), float(y64.norm()), conditioning):
        return None
    allow = torch.minimum(LOOSE * (got.double() - got64.detach()).abs(), cap)
    tol = tol.double()
    near = (got64.detach() - ref64).abs() <= tol
    # NaN or inf in the dtype only (tanh(exp(x)) at x = 100 in float32: 0 · inf), finite
    # and right on float64 copies: an overflow, not a wrong formula (_rounding_note says it)
    over = ~torch.isfinite(got) & torch.isfinite(ref64) & torch.isfinite(got64.detach())
    return ~ok & near & ((diff <= tol + allow) | over)


def _rounding_note(x: torch.Tensor, rounded: torch.Tensor, diff: torch.Tensor) -> str:
    """The sentence for the elements :func:`_within_rounding` found ('' when none): those
    within rounding, then those not finite in ``x``'s dtype only (:func:`_overflow_note`)."""
    over = rounded & ~torch.isfinite(diff)
    rounded = rounded & torch.isfinite(diff)
    text = "; ".join(t for t in (_overflow_note(x, over), _rounded_note(x, rounded, diff)) if t)
    return text


def _overflow_note(x: torch.Tensor, over: torch.Tensor) -> str:
    """The sentence for the elements of ``vᵀJ`` that are NaN or infinite in ``x``'s dtype and
    right on float64 copies ('' when none)."""
    if not bool(over.any()):
        return ""
    idx = over.nonzero()
    at = places(x, idx, first=3)
    name = str(x.dtype).replace("torch.", "")
    one = idx.shape[0] == 1
    return (f"{idx.shape[0]} element{'' if one else 's'} of vᵀJ {'is' if one else 'are'} NaN "
            f"or infinite in {name} (at {at}), where the same backward on float64 copies "
            f"matches the reference: {name} overflows inside the backward or in the forward "
            f"values it uses (inf · 0 is NaN, as in autograd's chain rule for tanh(exp(x)) at "
            f"x = 100); not counted as disagreeing, but a {name} step there gets these values "
            f"(compute in float64, or rewrite the formula so that no intermediate overflows)")


def _rounded_note(x: torch.Tensor, rounded: torch.Tensor, diff: torch.Tensor) -> str:
    """The sentence for the elements within rounding ('' when none)."""
    if not bool(rounded.any()):
        return ""
    idx = rounded.nonzero()
    at = places(x, idx, first=3)
    name = str(x.dtype).replace("torch.", "")
    one = idx.shape[0] == 1
    return (f"{idx.shape[0]} element{'' if one else 's'} of vᵀJ differ{'s' if one else ''} "
            f"from the "
            f"reference by up to {float(diff[rounded].max()):.2g} (at {at}), within "
            f"{name} rounding: the same backward on float64 copies matches the reference, "
            f"and {name} values of y, x and what is computed from them cannot resolve the "
            f"difference; not counted as disagreeing")


def _backward_on_output(y: torch.Tensor, x: torch.Tensor, v: Any) -> torch.Tensor:
    """``y.backward(v)`` for a caller's graph, accumulating only into ``x`` and restoring it."""
    check_requires_grad(y, "y")
    if not x.requires_grad:
        raise ValueError("x does not require grad, so it cannot be in y's graph; pass the tensor "
                         "y was computed from")
    v_t = check_cotangent(v, y)
    saved = x.grad if x.is_leaf or x.retains_grad else None  # a non-leaf's .grad warns
    x.grad = None
    try:
        try:
            y.backward(gradient=v_t, retain_graph=True, inputs=[x])
        except RuntimeError as err:
            if "backward through the graph a second time" not in str(err):
                raise
            raise RuntimeError(
                "y's graph was freed by an earlier backward pass (your own y.backward() or "
                "loss.backward() frees the saved tensors): pass the function instead, "
                "compare_vjp(fn, x, v), or recompute y, or call that earlier backward with "
                "retain_graph=True") from err
        if x.grad is None:
            raise ValueError("x is not part of y's graph: backward() left x.grad empty")
        return x.grad.detach().clone()
    finally:
        x.grad = saved


def _refuse_without_function(reference: Reference) -> None:
    """A string reference differentiates a function: with an output tensor there is none."""
    if isinstance(reference, str):  # a ValueError, as documented: the value, not its type
        raise ValueError(  # noqa: TRY004
            f"reference={reference!r} needs a function to differentiate; with an output "
            f"tensor pass a Jacobian (array or tensor) or a VJP function instead"
        )


def _reference(
    reference: Reference, fn, x, y, v, got_dtype: torch.dtype
) -> tuple[str, torch.Tensor, tuple | None, str, torch.Tensor | None]:
    """``(name, vᵀJ, default (rtol, atol) or None, note, unresolved)``; ``unresolved`` is inf
    at the elements of ``vᵀJ`` the finite-difference reference could not resolve (else 0), or
    ``None`` for other references."""
    if isinstance(reference, str):
        if fn is None:
            _refuse_without_function(reference)
        if reference == "finite-difference":
            return fd_reference(fn, x, y, v, got_dtype)
        if reference in ("forward", "reverse"):
            try:
                jac = jacobian(fn, x, method="forward" if reference == "forward" else "reverse")
            except NotImplementedError as err:  # a Function without jvp: as check_backward
                raise ValueError(
                    f"reference={reference!r}: fn does not support forward mode: "
                    f"{str(err).splitlines()[0]}; use reference='finite-difference'") from err
            if reference == "forward":  # ∂y/∂x itself: complex for a complex y of a real x
                return reference, vjp_from_partials(v, jac, None, x), None, "", None
            return reference, contract(v, jac), None, "", None
        raise ValueError(
            f"reference must be 'finite-difference', 'forward', 'reverse', a Jacobian or a "
            f"callable, got {reference!r}"
        )
    if isinstance(reference, (np.ndarray, torch.Tensor)):
        expected = tuple(y.shape) + tuple(x.shape)
        if tuple(reference.shape) != expected:
            raise ValueError(
                f"the reference Jacobian has shape {tuple(reference.shape)}, expected "
                f"y.shape + x.shape = {expected}"
            )
        return "jacobian", contract(v, reference), None, "", None
    if callable(reference):
        out = reference(v.clone())
        out_t = torch.as_tensor(np.asarray(out) if not isinstance(out, torch.Tensor) else out)
        if tuple(out_t.shape) != tuple(x.shape):
            raise ValueError(
                f"the reference VJP function returned shape {tuple(out_t.shape)}, "
                f"expected x.shape = {tuple(x.shape)}"
            )
        return getattr(reference, "__name__", "vjp function"), out_t, None, "", None
    raise TypeError(
        f"reference must be a string, an array/tensor Jacobian or a callable, "
        f"got {type(reference).__name__}"
    )
