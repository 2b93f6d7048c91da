"""``check_backward``: is a backward right, and if not, which Jacobian entries are wrong?

A backward is a function ``v -> vᵀJ``.  It is right when the Jacobian it implies (row ``i`` is
what ``y.backward(gradient=e_i)`` gives) equals the Jacobian of the forward pass.  The check
compares the two per (output, input) pair against a reference that shares no code with the
backward: forward mode where the function supports it, else central differences with an error
estimate (:mod:`gradarg.check.fd_error`) on float64 copies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import torch

from .._validate import check_callable
from ..core.buffers import keeps_buffers
from .checker import Checker
from .options import check_count, check_flag, check_seed, check_tolerance
from .results import (
    BackwardCheck,
    ExampleV,
    LocalizationCostWarning,
    PairCheck,
    ProbeCheck,
)
from .setup import setup

__all__ = ["BackwardCheck", "ExampleV", "LocalizationCostWarning", "PairCheck", "ProbeCheck",
           "check_backward"]


@keeps_buffers()
def check_backward(
    fn: Callable[..., Any] | torch.nn.Module,
    *args: Any,
    reference: Literal["auto", "forward", "finite-difference"] = "auto",
    parameters: bool = True,
    probes: int = 3,
    localize: bool | Literal["auto", "bounded", "full"] | None = None,
    expected: Callable[..., Any] | None = None,
    rtol: float | None = None,
    seed: int = 0,
) -> BackwardCheck:
    """Check a backward pass against an independent Jacobian and say which entries are wrong.

    The backward of ``fn`` (a function, ``MyFunction.apply``, or an ``nn.Module``) is checked
    for every input of ``args`` that requires grad (and a module's parameters).  First a few
    randomized probes: for random ``v`` and ``u``, the scalar ``vᵀ J u`` from one backward pass
    per output against the same scalar from one Jacobian–vector product per input (forward mode,
    or a directional central difference); cheaper than any full Jacobian.  For small problems
    (Jacobians of at most 16,384 entries) the full Jacobians follow: rows from the backward
    with one-hot upstream gradients, columns from the reference, every (output, input) block
    compared entry by entry.  On larger problems only the pairs whose probes disagree are
    localised, on a sample: whole columns of the block for a bounded number of input
    elements (the backward's columns by differentiating the backward with respect to its
    upstream gradient, or from batched rows), so time and memory grow with the output size,
    not with the Jacobian's; when the sample shows nothing, group tests over all columns
    (random groups, then halves) find the wrong ones, and for low-precision inputs a sample
    is compared against the rounding the same backward shows on float64 copies.  Wrong
    blocks are described by their largest errors, the kind of bug (a gradient where the
    Jacobian is zero is called a flat forward's, as a straight-through estimator passes,
    only when finite differences at several step sizes show the forward flat there), the
    region of the input (only when at least three wrong elements support it, it holds again
    at fresh points and no right element lies inside it; else the wrong elements with their
    values), and a concrete ``v`` that shows the bug.  Advice to compare every entry is given
    only when that fits in this machine's memory.

    Parameters
    ----------
    fn : callable
        A function, ``MyFunction.apply`` or an ``nn.Module`` (whose parameters become inputs
        too), called as ``fn(*args)``; returns a tensor or a tuple of tensors.  The buffers of
        the modules it reaches (BatchNorm's running statistics) are restored afterwards.
    *args
        Inputs.  Floating tensors with ``requires_grad=True`` are checked; other tensors (no
        grad, integer, bool, complex) are passed through and reported in ``skipped``.
    reference : {"auto", "forward", "finite-difference"}
        ``"auto"``: forward mode if ``fn`` supports it (a custom ``autograd.Function`` needs a
        ``jvp``: run by ``torch.func.jvp`` with ``setup_context``, by dual tensors of
        ``torch.autograd.forward_ad`` in the classic ``forward(ctx, ...)`` style) and its
        Jacobian–vector products along two random directions agree with central differences
        of ``fn``'s values, else finite differences (a note says why: forward mode follows
        ``fn``'s graph, so a gradient changed with ``.detach()``, as in
        ``x + (x.round() - x).detach()``, or a ``jvp`` that is not the derivative would move
        with the backward).  Finite differences run on float64 copies of the
        inputs (and of the module's parameters and buffers) when ``fn`` accepts them.
    parameters : bool
        With a module: also check the gradients of its parameters that require grad.
    probes : int
        Number of random ``(v, u)`` pairs, at least 1.
    localize : bool, {"auto", "bounded", "full"} or None
        ``None`` or ``"auto"``: full Jacobians when they have at most 16,384 entries, else a
        bounded localisation of the pairs whose probes disagree (at most about 5·10⁵ entries
        compared per pair; ``PairCheck.sampled`` says what).  ``"bounded"``: the sampled
        localisation even for small problems.  ``"full"`` or ``True``: every entry of the full
        Jacobians; its cost is in ``BackwardCheck.full_cost`` of any earlier result, and a
        ``gradarg.check.LocalizationCostWarning`` states it before a run expected to need more than
        1 GB.  ``False``: the probes only.
    expected : callable, optional
        The backward the Function is *meant* to compute, when that is not the derivative of
        the forward (a straight-through estimator, gradient reversal, a clipped or surrogate
        gradient): ``expected(grad_output, *args)`` with ``grad_output`` the upstream gradient
        (a tuple of them when ``fn`` has several floating outputs) and ``args`` detached copies
        of the arguments; it returns what ``backward`` should: one gradient per argument of
        ``fn`` (``None`` for those without one), or one per checked input, or a single tensor
        for a single input, or a dict ``{name: gradient}``.  It becomes the reference: no
        finite differences, no forward mode.
    rtol : float, optional
        Rounding a correct backward may show, relative to ``|v|ᵀ|J|``; default
        :func:`gradarg.backward_rtol` of the inputs' dtype.  Without it, for inputs in
        float32 (or lower) the random probes measure the rounding instead: the backward is run
        again on float64 copies, and a probe may differ by six standard deviations of that
        measured rounding plus 16 times the forward's own relative rounding (at least the
        dtype's eps) of ``‖vᵀJ‖``; so the allowance does not grow with the size, and a backward
        that loses precision against its forward (a reduction in bfloat16) is caught.  The
        pairs whose probes agree are then checked for linearity in ``v``:
        ``‖g(v1) + g(v2) - g(v1 + v2)‖`` may be twice that measured rounding (plus the same
        16 times the forward's), which a backward rounding through bfloat16 exceeds at any
        size.
    seed : int
        Seed of the random probes (the caller's generator is not touched).

    Returns
    -------
    BackwardCheck
        True when the backward is right.  ``status`` is ``"agree"``, ``"wrong"``,
        ``"non-deterministic"`` or ``"could-not-check"``: the reference could not give some
        entries (finite differences whose estimates over step sizes disagree beyond their
        error bound, e.g. ``sin`` at ``x = 1e17``, or NaN/inf inputs, whose columns are never
        compared: there a reference's 0 and a backward's ``0 · NaN`` are both right), and
        nothing it could give is wrong; the summary names the inputs and entries.  Prints as text, shows as tables and a heatmap of
        the errors in a notebook; ``.figure()`` draws the heatmap.

    Raises
    ------
    ValueError
        No input requires grad; an input that requires grad is empty (named); ``reference="forward"`` for a function without forward mode;
        an unknown ``localize``; ``expected`` returning gradients of the wrong number or shape;
        ``probes < 1`` (nothing would be compared); ``rtol`` negative, NaN or infinite; a
        ``seed`` outside what ``torch.Generator.manual_seed`` accepts.
    TypeError
        ``fn`` is not callable (e.g. a tensor ``fn(x)`` passed instead of ``fn``); ``fn``
        returns something other than tensors; ``probes`` or ``seed`` not an integer (a
        ``bool`` is not one), ``rtol`` not a real number, ``parameters`` not a ``bool``,
        ``localize`` or ``reference`` of another type.  Every message names the argument,
        what was given and what is expected.

    Notes
    -----
    Entry ``(i, j)`` is wrong when ``|got - expected| > 2 e_ij + rtol (|expected_ij| +
    max |expected|)``, with ``e_ij`` the reference's estimated error (zero for forward mode) and
    the maximum taken over the block's resolved entries.  For inputs in float32 or lower (and
    no ``rtol`` given), an entry beyond that is still within the dtype's rounding when the
    same backward run on float64 copies matches the reference there and the entry is off by at
    most ``16 · eps(dtype) · |y_i|`` (``tanh`` at ``x = -10`` in float32: ``1 - y²`` is 0 for
    a derivative of 8.2e-9): not wrong, and a note and the summary name the dtype.  So is an
    entry that is NaN or infinite in that dtype where the float64 run is finite and matches a
    finite reference: an overflow of the dtype (``tanh(exp(x))`` at ``x = 100`` in float32:
    ``exp`` gives ``inf``, the chain rule ``0 · inf = NaN``, autograd's own too), said in the
    summary and a note.  NaN or infinite in float64 too, it is wrong (pattern
    ``"non-finite"``).  The backward runs twice with the same ``v``: results
    that differ by more than that tolerance make the verdict ``"non-deterministic"`` rather than
    ``"wrong"``; smaller differences (atomic adds) are noted.

    Examples
    --------
    >>> import torch
    >>> class Square(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return g * x            # wrong: d(x²)/dx = 2x
    >>> x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    >>> r = check_backward(Square.apply, x)
    >>> bool(r), r.pairs[0].pattern
    (False, 'factor')
    >>> r.summary
    'WRONG: ∂y/∂x: off by a constant factor: the backward gives 1/2 × ∂y/∂x.'
    """
    check_callable("fn", fn)
    probes = check_count("check_backward", "probes", probes, 1,
                         "the number of random (v, u) probes; 0 would compare nothing")
    rtol = check_tolerance("check_backward", "rtol", rtol)
    seed = check_seed("check_backward", "seed", seed)
    parameters = check_flag("check_backward", "parameters", parameters)
    if isinstance(localize, np.bool_):
        localize = bool(localize)
    if not (localize is None or isinstance(localize, (bool, str))):
        raise TypeError(f"check_backward: localize must be None, a bool (True or False), "
                        f"'auto', 'bounded' or 'full', got {type(localize).__name__} "
                        f"{localize!r}")
    if not isinstance(reference, str):
        raise TypeError(f"check_backward: reference must be 'auto', 'forward' or "
                        f"'finite-difference', got {type(reference).__name__} {reference!r}")
    if reference not in ("auto", "forward", "finite-difference"):
        raise ValueError(f"reference must be 'auto', 'forward' or 'finite-difference', "
                         f"got {reference!r}")
    if localize not in (None, True, False, "auto", "bounded", "full"):
        raise ValueError(f"check_backward: localize must be None, a bool (True or False), "
                         f"'auto', 'bounded' or 'full', got {localize!r}")
    if expected is not None and not callable(expected):
        raise TypeError(f"expected must be a function (grad_output, *args) -> gradients, "
                        f"got {type(expected).__name__}")
    mode: str = ("auto" if localize is None else "full" if localize is True else
                 "none" if localize is False else localize)
    s = setup(fn, args, parameters)
    for name, x in zip(s.names, s.xs, strict=True):
        if x.numel() == 0:
            raise ValueError(
                f"{name} is empty (shape {tuple(x.shape)}): a gradient with no elements has "
                f"nothing to check; pass an input with at least one element")
    gen = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        return Checker(s, reference, probes, mode, rtol, gen, expected).run()
