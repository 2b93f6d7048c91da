"""``check_backward``: is a backward right, and if not, which Jacobian entries are wrong?

A backward is a function ``v -> vᵀJ``.  It is right when the Jacobian it implies (row ``i`` is
what ``y.backward(gradient=e_i)`` gives) equals the Jacobian of the forward pass.  The check
compares the two per (output, input) pair against a reference that shares no code with the
backward: forward mode where the function supports it, else central differences with an error
estimate (:mod:`gradarg.check.fd_error`) on float64 copies.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from ..core.dense import jacobian
from ..core.graph import call
from . import fd_error
from .localize import WrongEntry, _unravel, classify, region, threshold, worst_entries
from .report import BackwardCheckReport
from .tolerance import backward_rtol

__all__ = ["BackwardCheck", "LocalizationCostWarning", "PairCheck", "check_backward"]

SAFETY = 2.0  # margin on the finite-difference error estimate (itself an overestimate)
FULL_SIZE = 16_384  # Jacobians with at most this many entries are always built in full
# Bounded localisation of a wrong pair: at most this many Jacobian entries compared per pair
# (sampled columns × all rows), at least MIN_COLUMNS columns, at most MAX_COLUMNS.
BLOCK_ENTRIES = 1 << 19
MIN_COLUMNS, MAX_COLUMNS = 16, 512
CHUNK_ENTRIES = 1 << 21  # entries per batched backward pass (rows × input size)
FULL_WARN_BYTES = 1 << 30  # localize="full" warns before it runs when it expects more memory


class LocalizationCostWarning(UserWarning):
    """``localize="full"`` on a problem whose full Jacobians are expected to be large."""


@dataclass(frozen=True)
class PairCheck:
    """The verdict for one block ``∂output/∂input`` of the Jacobian.

    Attributes
    ----------
    output, input : str
        Names, e.g. ``"y"`` and ``"w"``.
    agree : bool
    max_abs_error : float
        ``max |got - expected|`` over the block.
    n_wrong, n_entries : int
        Entries outside the tolerance, and all entries (``y.numel() * x.numel()``).
    worst : tuple of WrongEntry
        The wrong entries with the largest error (output index, input index, expected, got).
    pattern : str or None
        ``"zero"``, ``"sign"``, ``"factor"``, ``"transposed"``, ``"offset"``, ``"precision"``
        or ``None`` when no simple pattern fits.
    region : str or None
        ``"where x < 0 (3 of 8 elements)"`` when the wrong columns are the elements of the input
        on one side of a threshold, at this point and at fresh points (the input's values
        shuffled) where the check was repeated.
    sentence : str
        What is wrong, for a reader.
    got, expected, tolerance : torch.Tensor or None
        The block as an ``m × n`` matrix (float64) from the backward, from the reference, and
        the allowed error per entry; ``None`` when only the random probes ran.  With a sampled
        localisation, only the compared rows and columns (see ``rows`` and ``columns``).
    sampled : str
        What was compared when it was not the whole block (``""`` when it was): e.g.
        ``"64 of 4096 columns of w, all 2048 rows of y"``, or ``"random probes only"``.
    n_checked : int
        Entries compared one by one (``n_entries`` when the whole block was).
    rows, columns : torch.Tensor or None
        Flat indices of the output and input elements compared (``None``: all of them).
    """

    output: str
    input: str
    agree: bool
    max_abs_error: float
    n_wrong: int
    n_entries: int
    worst: tuple[WrongEntry, ...] = ()
    pattern: str | None = None
    region: str | None = None
    sentence: str = ""
    got: torch.Tensor | None = field(default=None, repr=False)
    expected: torch.Tensor | None = field(default=None, repr=False)
    tolerance: torch.Tensor | None = field(default=None, repr=False)
    sampled: str = ""
    n_checked: int = -1
    rows: torch.Tensor | None = field(default=None, repr=False)
    columns: torch.Tensor | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.n_checked < 0:
            object.__setattr__(self, "n_checked", self.n_entries)


@dataclass(frozen=True)
class ExampleV:
    """One upstream gradient that shows the bug: the one-hot of the worst row.

    ``y.backward(gradient=v)`` (with ``v`` zero for the other outputs) gave ``got[name]`` for
    each input and should give ``expected[name]``.  After a sampled localisation
    ``expected[name]`` is known only at the compared input elements and NaN elsewhere.
    """

    output: str
    index: tuple[int, ...]
    v: torch.Tensor
    got: dict[str, torch.Tensor]
    expected: dict[str, torch.Tensor]
    right: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeCheck:
    """The randomized check of one pair: ``vᵀ J u`` from the backward and from the reference."""

    output: str
    input: str
    got: float
    expected: float
    tolerance: float

    @property
    def agree(self) -> bool:
        return abs(self.got - self.expected) <= self.tolerance


@dataclass(frozen=True)
class BackwardCheck(BackwardCheckReport):
    """The result of :func:`check_backward`; true when the backward is right.

    Attributes
    ----------
    status : {"agree", "wrong", "non-deterministic"}
    summary : str
        One sentence: the verdict, and what is wrong when it is.
    reference : str
        Which independent reference was used.
    inputs, outputs : tuple of str
        Names of the checked inputs and outputs.
    skipped : tuple of str
        Inputs and outputs left out, with the reason.
    probes : tuple of ProbeCheck
        The randomized checks (``vᵀJu`` per pair and probe).
    pairs : tuple of PairCheck
        One per (output, input) pair when the full Jacobians were compared, else empty.
    example : ExampleV or None
        A concrete ``v`` that shows the bug.
    notes : tuple of str
        Anything else worth knowing (non-determinism at rounding level, tolerances).
    rtol : float
        The backward rounding allowance used (:func:`gradarg.backward_rtol`).
    full_cost : str
        What ``localize="full"`` costs (or cost, when it ran) on this problem: backward
        passes, reference columns and the memory the full Jacobians take.
    """

    status: str
    summary: str
    reference: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    skipped: tuple[str, ...]
    probes: tuple[ProbeCheck, ...]
    pairs: tuple[PairCheck, ...]
    example: ExampleV | None
    notes: tuple[str, ...]
    rtol: float
    full_cost: str = ""

    def __bool__(self) -> bool:
        return self.status == "agree"

    @property
    def wrong_pairs(self) -> tuple[PairCheck, ...]:
        return tuple(p for p in self.pairs if not p.agree)


# --------------------------------------------------------------------------- inputs


def _arg_names(fn: Any, n: int) -> list[str]:
    target = fn
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, type) and issubclass(owner, torch.autograd.Function):
        target = owner.forward
    elif isinstance(fn, torch.nn.Module):
        target = fn.forward
    try:
        params = [p for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params]
    if names and names[0] in ("ctx", "self"):
        names = names[1:]
    return [names[i] if i < len(names) else f"input {i}" for i in range(n)]


@dataclass
class _Setup:
    names: list[str]
    xs: tuple[torch.Tensor, ...]
    flat: Callable[..., tuple[torch.Tensor, ...]]
    skipped: list[str]
    args: tuple = ()
    slots: tuple = ()

    def at(self, xs: tuple[torch.Tensor, ...]) -> _Setup:
        """The same function at other values of the checked inputs."""
        args = list(self.args)
        for (kind, key), x in zip(self.slots, xs, strict=True):
            if kind == "arg":
                args[key] = x
        return _Setup(self.names, xs, self.flat, [], tuple(args), self.slots)

    def call_args(self) -> list:
        """``args`` with the checked tensors replaced by detached copies of ``xs``."""
        args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in self.args]
        for (kind, key), x in zip(self.slots, self.xs, strict=True):
            if kind == "arg":
                args[key] = x.detach().clone()
        return args


def _setup(fn, args, parameters: bool) -> _Setup:
    names_all = _arg_names(fn, len(args))
    slots: list[tuple[str, Any]] = []  # ("arg", position) or ("param", name)
    names, xs, skipped = [], [], []
    for i, (a, name) in enumerate(zip(args, names_all, strict=True)):
        if not isinstance(a, torch.Tensor):
            continue
        if not (a.is_floating_point() or a.is_complex()):
            skipped.append(f"{name} ({a.dtype}): integer and bool tensors have no gradient")
        elif a.is_complex():
            skipped.append(f"{name} ({a.dtype}): complex inputs are not checked here; use "
                           f"gradarg.compare_vjp")
        elif not a.requires_grad:
            skipped.append(f"{name}: does not require grad")
        else:
            slots.append(("arg", i))
            names.append(name)
            xs.append(a.detach().clone())
    module = fn if isinstance(fn, torch.nn.Module) else None
    if module is not None and parameters:
        for pname, p in module.named_parameters():
            if p.requires_grad:
                slots.append(("param", pname))
                names.append(pname)
                xs.append(p.detach().clone())
            else:
                skipped.append(f"{pname}: parameter does not require grad")
    if not xs:
        raise ValueError(
            "no input to check: mark the tensors whose gradient the backward computes with "
            "requires_grad_() (floating dtypes), e.g. x = torch.randn(3, requires_grad=True)"
        )
    buffers = dict(module.named_buffers()) if module is not None else {}

    def flat(*ts: torch.Tensor) -> tuple[torch.Tensor, ...]:
        call_args = list(args)
        params: dict[str, torch.Tensor] = {}
        for (kind, key), t in zip(slots, ts, strict=True):
            if kind == "arg":
                call_args[key] = t
            else:
                params[key] = t
        wide = next((t.dtype for t in ts if t.dtype == torch.float64), None)
        if wide is not None and any(t.dtype != a.dtype for t, a in zip(ts, xs, strict=True)):
            # finite differences on float64 copies: the constant arguments follow
            call_args = [a.to(wide) if isinstance(a, torch.Tensor) and a.is_floating_point()
                         else a for a in call_args]
        if module is None:
            out = fn(*call_args)
        else:
            state = {**buffers, **params}
            if wide is not None:
                state = {k: (v.to(wide) if v.is_floating_point() else v)
                         for k, v in state.items()}
            out = torch.func.functional_call(module, state, tuple(call_args))
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    return _Setup(names, tuple(xs), flat, skipped, tuple(args), tuple(slots))


# --------------------------------------------------------------------------- the check


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
    not with the Jacobian's.  Wrong blocks are described by their largest errors, the kind of
    bug, the region of the input (only when it holds again at fresh points), and a concrete
    ``v`` that shows the bug.

    Parameters
    ----------
    fn : callable
        A function, ``MyFunction.apply`` or an ``nn.Module`` (whose parameters become inputs
        too), called as ``fn(*args)``; returns a tensor or a tuple of tensors.
    *args
        Inputs.  Floating tensors with ``requires_grad=True`` are checked; other tensors (no
        grad, integer, bool, complex) are passed through and reported in ``skipped``.
    reference : {"auto", "forward", "finite-difference"}
        ``"auto"``: forward mode if ``fn`` supports it (a custom ``autograd.Function`` needs a
        ``jvp``), else finite differences.  Finite differences run on float64 copies of the
        inputs (and of the module's parameters and buffers) when ``fn`` accepts them.
    parameters : bool
        With a module: also check the gradients of its parameters that require grad.
    probes : int
        Number of random ``(v, u)`` pairs.
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
        :func:`gradarg.backward_rtol` of the inputs' dtype.
    seed : int
        Seed of the random probes (the caller's generator is not touched).

    Returns
    -------
    BackwardCheck
        True when the backward is right.  Prints as text, shows as tables and a heatmap of
        the errors in a notebook; ``.figure()`` draws the heatmap.

    Raises
    ------
    ValueError
        No input requires grad; ``reference="forward"`` for a function without forward mode;
        an unknown ``localize``; ``expected`` returning gradients of the wrong number or shape.
    TypeError
        ``fn`` returns something other than tensors.

    Notes
    -----
    Entry ``(i, j)`` is wrong when ``|got - expected| > 2 e_ij + rtol (|expected_ij| +
    max |expected|)``, with ``e_ij`` the reference's estimated error (zero for forward mode) and
    the maximum taken over the block.  The backward runs twice with the same ``v``: results
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
    if reference not in ("auto", "forward", "finite-difference"):
        raise ValueError(f"reference must be 'auto', 'forward' or 'finite-difference', "
                         f"got {reference!r}")
    if localize not in (None, True, False, "auto", "bounded", "full"):
        raise ValueError(f"localize must be None, True, False, 'auto', 'bounded' or 'full', "
                         f"got {localize!r}")
    if expected is not None and not callable(expected):
        raise TypeError(f"expected must be a function (grad_output, *args) -> gradients, "
                        f"got {type(expected).__name__}")
    mode = {None: "auto", True: "full", False: "none"}.get(localize, localize)
    setup = _setup(fn, args, parameters)
    gen = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        return _Checker(setup, reference, probes, mode, rtol, gen, expected).run()


class _Checker:
    def __init__(self, setup: _Setup, reference, probes, localize, rtol, gen, expected=None):
        self.s = setup
        self.reference = reference
        self.n_probes = probes
        self.localize = localize
        self.gen = gen
        self.expected = expected
        self.raw_flat = setup.flat
        self.notes: list[str] = []
        self.affine: dict[str, bool] = {}
        self.state = torch.get_rng_state()
        leaves = tuple(x.clone().requires_grad_(True) for x in setup.xs)
        with torch.enable_grad():
            raw = setup.flat(*leaves)
        names = ["y"] if len(raw) == 1 else [f"y[{k}]" for k in range(len(raw))]
        floating = [k for k, y in enumerate(raw)
                    if isinstance(y, torch.Tensor) and y.is_floating_point()]
        self.dropped_outputs = [
            f"{names[k]} ({getattr(y, 'dtype', type(y).__name__)}): not a floating output"
            for k, y in enumerate(raw) if k not in floating]
        if not floating:
            raise TypeError("fn returned no floating-point tensor: nothing to differentiate")
        flat = setup.flat

        def floating_only(*ts: torch.Tensor) -> tuple[torch.Tensor, ...]:
            out = flat(*ts)
            return tuple(out[k] for k in floating)

        self.s = _Setup(setup.names, setup.xs, floating_only, setup.skipped, setup.args,
                        setup.slots)
        self.floating = floating
        self.leaves, self.outs = leaves, tuple(raw[k] for k in floating)
        self.out_names = [names[k] for k in floating]
        self.keep = list(range(len(floating)))
        dtype = setup.xs[0].dtype
        self.rtol = backward_rtol(dtype) if rtol is None else rtol
        self.dtype = dtype

    # -------------------------------------------------------------- backward under test

    def backward(self, vs: dict[int, torch.Tensor]) -> tuple[list[torch.Tensor], list[bool]]:
        """Gradients for every input given upstream gradients for some outputs (cloned)."""
        live = [k for k in vs if self.outs[k].requires_grad]
        if not live:
            return [torch.zeros_like(x) for x in self.leaves], [True] * len(self.leaves)
        with torch.enable_grad():
            grads = torch.autograd.grad(
                [self.outs[k] for k in live], self.leaves,
                [vs[k].detach().clone() for k in live], retain_graph=True, allow_unused=True)
        none = [g is None for g in grads]
        return [torch.zeros_like(x) if g is None else g.detach()
                for g, x in zip(grads, self.leaves, strict=True)], none

    def expected_vjp(self, vs: dict[int, torch.Tensor]) -> list[torch.Tensor]:
        """What the intended backward gives for upstream gradients ``vs`` (others zero)."""
        gos = [vs[k].detach().clone() if k in vs else torch.zeros_like(self.outs[k]).detach()
               for k in self.keep]
        torch.set_rng_state(self.state)
        with torch.no_grad():
            out = self.expected(gos[0] if len(gos) == 1 else tuple(gos), *self.s.call_args())
        return self._expected_grads(out)

    def _expected_grads(self, out) -> list[torch.Tensor]:
        names, xs = self.s.names, self.s.xs
        if isinstance(out, dict):
            unknown = [k for k in out if k not in names]
            if unknown:
                raise ValueError(f"expected returned gradients for {unknown}; the checked "
                                 f"inputs are {names}")
            picked = [out.get(n) for n in names]
        elif isinstance(out, (tuple, list)):
            if len(out) == len(self.s.args):  # like backward: one per argument of fn
                picked = [out[key] if kind == "arg" else None for kind, key in self.s.slots]
            elif len(out) == len(names):
                picked = list(out)
            else:
                raise ValueError(
                    f"expected returned {len(out)} gradients; give one per argument of fn "
                    f"({len(self.s.args)}, None where there is none, like backward) or one per "
                    f"checked input ({', '.join(names)})")
        elif isinstance(out, torch.Tensor) or out is None:
            if len(names) != 1:
                raise ValueError(f"expected returned one tensor, but {len(names)} inputs are "
                                 f"checked ({', '.join(names)}): return a tuple")
            picked = [out]
        else:
            raise TypeError(f"expected must return tensors, got {type(out).__name__}")
        grads = []
        for g, x, n in zip(picked, xs, names, strict=True):
            if g is None:
                grads.append(torch.zeros_like(x))
                continue
            g = torch.as_tensor(g)
            if g.shape != x.shape:
                raise ValueError(f"expected returned a gradient of shape {tuple(g.shape)} for "
                                 f"{n}, whose shape is {tuple(x.shape)}")
            grads.append(g.detach().to(x.dtype))
        return grads

    # -------------------------------------------------------------- reference

    def pick_reference(self) -> str:
        if self.expected is not None:
            self.ref_kind = "expected"
            self.expected_vjp({k: torch.zeros_like(self.outs[k]) for k in self.keep})
            return "the intended backward given as expected=(grad_output, *args)"
        if self.reference == "finite-difference":
            return self._fd_setup()
        us = [torch.randn(x.shape, generator=self.gen, dtype=x.dtype) for x in self.s.xs]
        try:
            torch.set_rng_state(self.state)
            torch.func.jvp(self.s.flat, self.s.xs, tuple(us))
            self.ref_kind = "forward"
            return "forward mode (Jacobian–vector products)"
        except (RuntimeError, NotImplementedError) as err:
            if self.reference == "forward":
                raise ValueError(f"reference='forward': fn does not support forward mode: "
                                 f"{str(err).splitlines()[0]}") from err
        return self._fd_setup()

    def _fd_setup(self) -> str:
        self.ref_kind = "fd"
        up = fd_error.upcast(self.s.xs)
        torch.set_rng_state(self.state)
        try:
            with torch.no_grad():
                f0 = call(self.s.flat, up)[0]
            if not all(f0[k].dtype == torch.float64 for k in self.keep if k < len(f0)):
                raise TypeError("fn does not compute in float64")
            self.xs_eval, self.f0 = up, f0
            return "central differences with error estimates, on float64 copies"
        except (RuntimeError, TypeError) as err:
            torch.set_rng_state(self.state)
            with torch.no_grad():
                self.xs_eval = tuple(x.detach() for x in self.s.xs)
                self.f0 = call(self.s.flat, self.xs_eval)[0]
            if self.dtype != torch.float64:
                self.notes.append(f"finite differences in {self.dtype}: fn failed on float64 "
                                  f"copies ({str(err).splitlines()[0]})")
            return f"central differences with error estimates, in {self.dtype}"

    def ref_directional(self, dirs: list[list[torch.Tensor | None]]):
        """``J u`` per direction: values[c][k] and errors[c][k]."""
        if self.ref_kind == "forward":
            vals = []
            for us in dirs:
                tangents = tuple(torch.zeros_like(x) if u is None else u
                                 for x, u in zip(self.s.xs, us, strict=True))
                torch.set_rng_state(self.state)
                _, t = torch.func.jvp(self.s.flat, self.s.xs, tangents)
                vals.append([tk.detach().double() for tk in t])
            return vals, [[torch.zeros_like(v) for v in row] for row in vals]
        dirs_eval = [[None if u is None else u.to(x.dtype) for u, x in
                      zip(us, self.xs_eval, strict=True)] for us in dirs]
        torch.set_rng_state(self.state)
        est = fd_error.directional(self.s.flat, self.xs_eval, self.f0, dirs_eval)
        vals = [[est.value[k][c].double() for k in range(len(self.f0))] for c in range(len(dirs))]
        errs = [[est.error[k][c].double() for k in range(len(self.f0))] for c in range(len(dirs))]
        return vals, errs

    def ref_jacobian(self):
        """Blocks ``[k][j]`` as ``m × n`` float64 matrices: values, errors, kinks."""
        ms = [self.outs[k].numel() for k in range(len(self.outs))]
        ns = [x.numel() for x in self.s.xs]
        if self.ref_kind == "expected":
            vals = [[self.expected_rows(k, torch.arange(ms[k]))[j] for j in range(len(ns))]
                    for k in range(len(ms))]
            zeros = [[torch.zeros_like(b) for b in row] for row in vals]
            self._kink_err = zeros
            return vals, zeros
        if self.ref_kind == "forward":
            torch.set_rng_state(self.state)
            jac = jacobian(self.s.flat, self.s.xs, method="forward")
            vals = [[jac[k][j].detach().double().reshape(ms[k], ns[j])
                     for j in range(len(ns))] for k in range(len(ms))]
            zeros = [[torch.zeros_like(b) for b in row] for row in vals]
            self._kink_err = zeros
            return vals, zeros
        torch.set_rng_state(self.state)
        est, _, _ = fd_error.partials(self.s.flat, self.xs_eval, xs_eval=self.xs_eval, f0=self.f0)
        vals = [[est[j][0].value[k].double().reshape(ns[j], ms[k]).T for j in range(len(ns))]
                for k in range(len(ms))]
        # an entry at a kink carries half the gap of its one-sided slopes as its error: that is
        # no uncertainty of the reference, but the set of valid subgradients
        errs = [[torch.where(est[j][0].kink[k], torch.zeros_like(est[j][0].error[k]),
                             est[j][0].error[k]).double().reshape(ns[j], ms[k]).T
                 for j in range(len(ns))] for k in range(len(ms))]
        self._kink_err = [[est[j][0].error[k].double().reshape(ns[j], ms[k]).T
                           for j in range(len(ns))] for k in range(len(ms))]
        return vals, errs

    # -------------------------------------------------------------- steps

    def run(self) -> BackwardCheck:
        s = self.s
        skipped = list(s.skipped) + self.dropped_outputs
        ref_name = self.pick_reference()
        self.cost_text, cost_bytes = self.full_cost()
        status_nd = self.determinism()
        if status_nd is not None:
            return self._result("non-deterministic", status_nd, ref_name, skipped, (), (), None)
        self.offset_check()
        probes = self.probe()
        m = sum(self.outs[k].numel() for k in self.keep)
        n = sum(x.numel() for x in s.xs)
        probe_wrong = [p for p in probes if not p.agree]
        mode = self.localize
        if mode == "auto":
            mode = "full" if m * n <= FULL_SIZE else ("bounded" if probe_wrong else "none")
        pairs: tuple[PairCheck, ...] = ()
        example = None
        if mode == "full":
            if cost_bytes > FULL_WARN_BYTES:
                warnings.warn(f"localize='full': {self.cost_text}",
                              LocalizationCostWarning, stacklevel=3)
            pairs = self.compare_full()
            example = self.example(pairs)
        elif mode == "bounded":
            pairs = self.compare_bounded(probes)
            example = self.example(pairs)
        wrong = [p for p in pairs if not p.agree]
        if not wrong and not probe_wrong:
            return self._result("agree", "agree: the backward matches the reference for every "
                                "(output, input) pair.", ref_name, skipped, probes, pairs, None)
        if wrong:
            parts = [f"∂{p.output}/∂{p.input}: {p.sentence}" for p in wrong]
            summary = "WRONG: " + "; ".join(parts) + "."
            right = [p for p in pairs if p.agree]
            if right and len({p.input for p in wrong}) < len(s.names):
                bad = {p.input for p in wrong}
                ok_inputs = [n for n in s.names if n not in bad and any(
                    p.input == n for p in right)]
                if ok_inputs:
                    names = (", ".join(ok_inputs[:-1]) + " and " + ok_inputs[-1]
                             if len(ok_inputs) > 1 else ok_inputs[0])
                    summary += (f" Only some inputs are wrong: the gradients of {names} "
                                f"are right.")
            if any(p.pattern == "not-derivative" or (p.pattern == "sign" and not p.region)
                   for p in wrong) and (
                    self.ref_kind != "expected"):
                summary += (" If that is intended (a straight-through estimator, a "
                            "surrogate gradient, gradient reversal), check it against what the backward should compute: "
                            "check_backward(..., expected=lambda grad_output, *args: ...).")
        else:
            seen = dict.fromkeys(f"∂{p.output}/∂{p.input}" for p in probe_wrong)
            summary = ("WRONG: random probes vᵀJu disagree for " + ", ".join(seen)
                       + " (run with localize='bounded' or 'full' to see which entries).")
        return self._result("wrong", summary, ref_name, skipped, probes, pairs, example)

    # -------------------------------------------------------------- cost of the full way

    def full_cost(self) -> tuple[str, int]:
        """What ``localize="full"`` costs: a sentence and the bytes it is expected to take."""
        m = sum(self.outs[k].numel() for k in self.keep)
        ns = [x.numel() for x in self.s.xs]
        n = sum(ns)
        size = 8 * m * n
        if self.ref_kind == "expected":
            ref, mem = f"{m:,} calls of expected", 3 * size
        elif self.ref_kind == "forward":
            ref, mem = f"{n:,} Jacobian–vector products", 4 * size
        else:
            steps = [fd_error._n_steps(  # the step count partials uses
                x.abs().clamp_min(1.0).reshape(-1) / torch.where(
                    x.reshape(-1) != 0, x.abs().reshape(-1), torch.ones(1, dtype=x.dtype)))
                if x.numel() else 0 for x in self.s.xs]
            evals = sum(2 * k * nj for k, nj in zip(steps, ns, strict=True))
            # the Richardson tables of the largest input: about nine (steps × n_j × m) arrays
            big = max((k * nj for k, nj in zip(steps, ns, strict=True)), default=0)
            ref, mem = f"{evals:,} evaluations of fn (finite differences)", 3 * size + 72 * big * m
        text = (f"the full Jacobians have {m * n:,} entries: {m:,} backward passes and {ref}, "
                f"about {_bytes(mem)} of memory")
        return text, mem

    # -------------------------------------------------------------- bounded localisation

    def compare_bounded(self, probes) -> tuple[PairCheck, ...]:
        bad = {(p.output, p.input) for p in probes if not p.agree}
        _, none = self.backward(self._random_vs())
        pairs, sampled = [], []
        for k in self.keep:
            for j in range(len(self.s.xs)):
                yname, xname = self.out_names[k], self.s.names[j]
                total = self.outs[k].numel() * self.s.xs[j].numel()
                if (yname, xname) not in bad:
                    pairs.append(PairCheck(yname, xname, True, 0.0, 0, total,
                                           sampled="random probes only", n_checked=0))
                    continue
                pair = self.localize_pair(k, j, none[j])
                if pair.agree:  # the probes disagree, yet no compared entry is wrong
                    pair = dataclasses.replace(
                        pair, agree=False, sentence=(
                            f"the random probes disagree, but none of the compared entries "
                            f"is wrong ({pair.sampled}); localize='full' compares every "
                            f"entry"))
                pairs.append(pair)
                if pair.sampled:
                    sampled.append(f"∂{yname}/∂{xname}: {pair.sampled}")
        if sampled:
            self.notes.append("localised on a sample of the Jacobian (" + "; ".join(sampled)
                              + "); localize='full' compares every entry: " + self.cost_text)
        return tuple(pairs)

    def localize_pair(self, k: int, j: int, dropped: bool) -> PairCheck:
        y, x = self.outs[k], self.s.xs[j]
        m, n = y.numel(), x.numel()
        if self.ref_kind == "expected":
            r = min(m, max(MIN_COLUMNS, BLOCK_ENTRIES // max(n, 1)))
            rows = None if r == m else torch.randperm(m, generator=self.gen)[:r].sort().values
            idx = torch.arange(m) if rows is None else rows
            got = self.got_rows(k, j, idx)
            exp = self.expected_rows(k, idx)[j]
            scale = float(exp.abs().max()) if exp.numel() else 0.0
            tol = self.rtol * (exp.abs() + scale) + 1e-300
            cols = None
        else:
            c = min(n, max(MIN_COLUMNS, min(MAX_COLUMNS, BLOCK_ENTRIES // max(m, 1))))
            perm = torch.randperm(n, generator=self.gen)
            cols = None if c == n else perm[:c].sort().values
            rows, got, exp, _, tol = self._columns_block(k, j, cols)
            if cols is not None and not bool(((got - exp).abs() > tol).any()):
                # a random sample missed sparse errors: find the columns by group tests
                found = self.screen_columns(k, j, c)
                if found is not None:
                    cols = found
                    rows, got, exp, _, tol = self._columns_block(k, j, cols)
        parts = []
        if cols is not None:
            parts.append(f"{cols.numel()} of {n} columns (elements of {self.s.names[j]})")
        if rows is not None:
            parts.append(f"{rows.numel()} of {m} rows (elements of {self.out_names[k]})")
        elif cols is not None:
            parts.append(f"all {m} rows")
        return self._pair(k, j, got, exp, tol, dropped, rows=rows, cols=cols,
                          sampled=", ".join(parts))

    def _columns_block(self, k, j, cols):
        idx = torch.arange(self.s.xs[j].numel()) if cols is None else cols
        rows, got = self.got_columns(k, j, idx)
        vals, errs = self.ref_columns(j, idx)
        exp, err = vals[k], errs[k]
        if rows is not None:
            exp, err = exp[rows], err[rows]
        scale = float(exp.abs().max()) if exp.numel() else 0.0
        tol = SAFETY * err + self.rtol * (exp.abs() + scale) + 1e-300
        return rows, got, exp, err, tol

    def screen_columns(self, k: int, j: int, c: int, groups: int = 16):
        """Input elements of ``j`` whose columns hold the errors, by group tests.

        The candidates are split into ``groups`` groups; each gets one random direction ``u``
        supported on it, and ``J u`` from the backward is compared with the reference's: a
        group whose products differ holds a wrong column.  The wrong groups are split again
        until at most ``c`` candidates are left (``groups`` products per level, about
        ``log(n / c) / log(groups)`` levels).  ``None`` when no group differs.
        """
        x = self.s.xs[j]
        n = x.numel()
        cand = torch.randperm(n, generator=self.gen)
        nin = len(self.s.xs)
        while cand.numel() > c:
            parts = [p for p in cand.chunk(groups) if p.numel()]
            dirs = torch.zeros(len(parts), n, dtype=x.dtype)
            for i, p in enumerate(parts):
                dirs[i, p] = torch.randn(p.numel(), generator=self.gen,
                                         dtype=torch.float64).to(x.dtype)
            rows, got = self.got_columns(k, j, None, dirs)
            m = max(1, self.outs[k].numel())
            per = max(1, CHUNK_ENTRIES // (2 * m * (fd_error.MAX_STEPS + 2)))
            vals, errs = [], []
            for start in range(0, len(parts), per):
                v_, e_ = self.ref_directional(
                    [[dirs[i].reshape(x.shape) if jj == j else None for jj in range(nin)]
                     for i in range(start, min(len(parts), start + per))])
                vals += [v[k].reshape(-1) for v in v_]
                errs += [e[k].reshape(-1) for e in e_]
            exp, err = torch.stack(vals).T, torch.stack(errs).T
            if rows is not None:
                exp, err = exp[rows], err[rows]
            scale = exp.abs().amax(0) + got.abs().amax(0)
            bad = ((got - exp).abs() > SAFETY * err + self.rtol * scale * 10 + 1e-300).any(0)
            if not bool(bad.any()):
                return None
            cand = torch.cat([p for p, b in zip(parts, bad.tolist(), strict=True) if b])
        return cand.sort().values

    def _chunk(self, width: int) -> int:
        return max(1, CHUNK_ENTRIES // max(width, 1))

    def got_rows(self, k: int, j: int, rows: torch.Tensor) -> torch.Tensor:
        """Rows ``rows`` of block (k, j) of the backward's Jacobian, ``len(rows) × n_j``."""
        y, x = self.outs[k], self.leaves[j]
        m, n = y.numel(), x.numel()
        if not y.requires_grad:
            return torch.zeros(rows.numel(), n, dtype=torch.float64)
        out = []
        step = self._chunk(max(m, n))
        for start in range(0, rows.numel(), step):
            idx = rows[start:start + step]
            basis = torch.zeros(idx.numel(), m, dtype=y.dtype)
            basis[torch.arange(idx.numel()), idx] = 1
            basis = basis.reshape(idx.numel(), *y.shape)
            torch.set_rng_state(self.state)
            try:
                with torch.enable_grad():
                    (g,) = torch.autograd.grad(y, x, basis, retain_graph=True,
                                               allow_unused=True, is_grads_batched=True)
                g = torch.zeros(idx.numel(), n, dtype=torch.float64) if g is None else g
            except RuntimeError:
                g = torch.stack([self.backward({k: b})[0][j] for b in basis])
            out.append(g.detach().reshape(idx.numel(), n).double())
        return torch.cat(out)

    def expected_rows(self, k: int, rows: torch.Tensor) -> list[torch.Tensor]:
        """Rows of the intended backward's Jacobian, per input: ``len(rows) × n_j``."""
        y = self.outs[k]
        per = [[] for _ in self.s.xs]
        for i in rows.tolist():
            v = torch.zeros(y.numel(), dtype=y.dtype)
            v[i] = 1
            for j, g in enumerate(self.expected_vjp({k: v.reshape(y.shape)})):
                per[j].append(g.reshape(-1).double())
        return [torch.stack(p) if p else torch.zeros(0, x.numel(), dtype=torch.float64)
                for p, x in zip(per, self.s.xs, strict=True)]

    def got_columns(self, k: int, j: int, cols: torch.Tensor | None,
                    dirs: torch.Tensor | None = None):
        """Columns ``cols`` of block (k, j) of the backward's Jacobian: ``(rows, m × c)``;
        with ``dirs`` (``c × n_j``) instead, the products ``J u`` for each row ``u`` of it.

        The backward ``g(v)`` is linear in ``v`` (plus ``g(0)`` when it adds a term that does
        not depend on ``v``), so column ``c`` is ``∂g_c/∂v + g(0)_c``: one backward pass
        through the backward per column.  When the backward cannot be differentiated
        (``once_differentiable``, in-place writes), every row instead (``rows`` is ``None``),
        or a sample of rows when there are too many.
        """
        y, x = self.outs[k], self.leaves[j]
        m, n = y.numel(), x.numel()
        c = cols.numel() if dirs is None else dirs.shape[0]

        def block(start: int, stop: int) -> torch.Tensor:  # one-hot rows built per chunk
            if dirs is not None:
                return dirs[start:stop]
            b = torch.zeros(stop - start, n, dtype=x.dtype)
            b[torch.arange(stop - start), cols[start:stop]] = 1
            return b

        def apply(rows_of_j: torch.Tensor) -> torch.Tensor:  # (r × n) -> (r × c)
            if dirs is None:
                return rows_of_j[:, cols]
            return rows_of_j @ dirs.double().T

        if not y.requires_grad:
            return None, torch.zeros(m, c, dtype=torch.float64)
        try:
            v = torch.zeros_like(y).detach().requires_grad_(True)
            torch.set_rng_state(self.state)
            with torch.enable_grad():
                (g,) = torch.autograd.grad(y, x, v, retain_graph=True, create_graph=True,
                                           allow_unused=True)
            if g is None:
                return None, torch.zeros(m, c, dtype=torch.float64)
            off = apply(g.detach().reshape(1, -1).double())[0]
            out = [] if g.requires_grad else [torch.zeros(c, m, dtype=torch.float64)]
            step = self._chunk(max(m, n))
            for start in range(0, c if g.requires_grad else 0, step):
                basis = block(start, min(c, start + step)).to(g.dtype).reshape(-1, *x.shape)
                b_n = basis.shape[0]
                try:
                    (d,) = torch.autograd.grad(g, v, basis, retain_graph=True,
                                               allow_unused=True, is_grads_batched=True)
                except RuntimeError:
                    d = torch.stack([_or_zeros(torch.autograd.grad(
                        g, v, b, retain_graph=True, allow_unused=True)[0], v) for b in basis])
                if d is None:
                    d = torch.zeros(b_n, m, dtype=torch.float64)
                out.append(d.detach().reshape(b_n, m).double())
            res = torch.cat(out).T
            # trust the derivative only if it reproduces one plain backward pass: a backward
            # marked once_differentiable, or one not linear in v, fails this
            vr = torch.randn(y.shape, generator=self.gen, dtype=torch.float64).to(y.dtype)
            g0 = g.detach().reshape(1, -1).double()
            gv = self.backward({k: vr})[0][j].reshape(1, -1).double()
            lhs = apply(gv - g0)[0]
            rhs = vr.reshape(-1).double() @ res
            scale = float((vr.reshape(-1).double().abs() @ res.abs()).max()) + float(
                lhs.abs().max()) if res.numel() else 0.0
            if res.numel() and float((lhs - rhs).abs().max()) > 10 * self.rtol * scale + 1e-300:
                raise RuntimeError("the derivative of the backward does not match it")
            return None, res + off
        except RuntimeError:
            pass
        rows_needed = min(m, max(MIN_COLUMNS, BLOCK_ENTRIES // max(c, 1)))
        rows = None if rows_needed == m else (
            torch.randperm(m, generator=self.gen)[:rows_needed].sort().values)
        idx = torch.arange(m) if rows is None else rows
        out = []
        step = self._chunk(max(m, n))
        for start in range(0, idx.numel(), step):
            out.append(apply(self.got_rows(k, j, idx[start:start + step])))
        return rows, torch.cat(out)

    def ref_columns(self, j: int, cols: torch.Tensor):
        """Reference columns of input ``j``'s elements ``cols``: per output ``m_k × c``
        values and errors (kinks included in the errors)."""
        x = self.s.xs[j]
        n = x.numel()
        if self.ref_kind == "forward":
            vals = [[] for _ in self.outs]
            step = self._chunk(n)
            for start in range(0, cols.numel(), step):
                idx = cols[start:start + step]
                dirs = []
                for i in idx.tolist():
                    u = torch.zeros(n, dtype=x.dtype)
                    u[i] = 1
                    dirs.append([u.reshape(x.shape) if jj == j else None
                                 for jj in range(len(self.s.xs))])
                vs, _ = self.ref_directional(dirs)
                for kk in range(len(self.outs)):
                    vals[kk].append(torch.stack([v[kk].reshape(-1) for v in vs]))
            vals = [torch.cat(v).T for v in vals]
            return vals, [torch.zeros_like(v) for v in vals]
        torch.set_rng_state(self.state)
        est = fd_error.columns(self.s.flat, self.xs_eval, self.f0, j, cols)
        vals = [v.double().reshape(cols.numel(), -1).T for v in est.value]
        errs = [e.double().reshape(cols.numel(), -1).T for e in est.error]
        plain = [torch.where(kk, torch.zeros_like(e), e).double().reshape(cols.numel(), -1).T
                 for e, kk in zip(est.error, est.kink, strict=True)]
        shaky = [self.out_names[k] for k in self.keep if plain[k].numel() and float(
            plain[k].max()) > 0.01 * max(float(vals[k].abs().max()), 1e-300)]
        if shaky:
            note = (f"the finite differences are uncertain for the sampled columns of "
                    f"{self.s.names[j]} (estimated error above 1% of the largest entry): fn "
                    f"may be discontinuous or random there, so agreement there says little")
            if note not in self.notes:
                self.notes.append(note)
        return vals, errs

    def _result(self, status, summary, ref_name, skipped, probes, pairs, example):
        return BackwardCheck(
            status=status, summary=summary, reference=ref_name, inputs=tuple(self.s.names),
            outputs=tuple(self.out_names[k] for k in self.keep), skipped=tuple(skipped),
            probes=tuple(probes), pairs=tuple(pairs), example=example,
            notes=tuple(self.notes), rtol=self.rtol, full_cost=getattr(self, "cost_text", ""))

    def _random_vs(self) -> dict[int, torch.Tensor]:
        return {k: torch.randn(self.outs[k].shape, generator=self.gen,
                               dtype=self.outs[k].dtype) for k in self.keep}

    def determinism(self) -> str | None:
        vs = self._random_vs()
        torch.set_rng_state(self.state)
        a, _ = self.backward(vs)
        b, _ = self.backward(vs)
        worst, name = 0.0, ""
        for g1, g2, nm in zip(a, b, self.s.names, strict=True):
            d = float((g1 - g2).abs().max()) if g1.numel() else 0.0
            scale = float(g1.abs().max()) if g1.numel() else 0.0
            if d > 0:
                self.notes.append(f"the backward is non-deterministic for {nm}: two runs with "
                                  f"the same v differ by {d:.1e} (e.g. atomic adds)")
            if d > self.rtol * max(scale, 1e-30) * 10 and d > worst:
                worst, name = d, nm
        if worst > 0:
            return (f"NON-DETERMINISTIC: two backward passes with the same v give gradients of "
                    f"{name} that differ by {worst:.2e}; a verdict on right or wrong needs a "
                    f"deterministic backward.")
        return None

    def offset_check(self) -> None:
        zeros = {k: torch.zeros_like(self.outs[k]) for k in self.keep}
        grads, _ = self.backward(zeros)
        for g, nm in zip(grads, self.s.names, strict=True):
            self.affine[nm] = bool(g.numel() and bool((g != 0).any()))
            if self.affine[nm]:
                self.notes.append(
                    f"the backward is not linear in the upstream gradient: with v = 0 it gives "
                    f"a nonzero gradient for {nm} (max {float(g.abs().max()):.3g}), so it adds "
                    f"a term that does not depend on v")

    def probe(self) -> list[ProbeCheck]:
        out: list[ProbeCheck] = []
        if self.n_probes <= 0:
            return out
        nin = len(self.s.xs)
        dirs, vss = [], []
        for _ in range(self.n_probes):
            us = [torch.randn(x.shape, generator=self.gen, dtype=torch.float64).to(x.dtype)
                  for x in self.s.xs]
            vss.append((self._random_vs(), us))
            for j in range(nin):
                dirs.append([us[jj] if jj == j else None for jj in range(nin)])
        if self.ref_kind != "expected":
            # a few directions per call: the Richardson tables are steps × directions × outputs
            m = max(1, sum(self.outs[k].numel() for k in self.keep))
            per = max(1, CHUNK_ENTRIES // (2 * m * (fd_error.MAX_STEPS + 2)))
            ref_vals, ref_errs = [], []
            for start in range(0, len(dirs), per):
                v_, e_ = self.ref_directional(dirs[start:start + per])
                ref_vals += v_
                ref_errs += e_
        for p, (vs, us) in enumerate(vss):
            for k in self.keep:
                grads, _ = self.backward({k: vs[k]})
                v64 = vs[k].double()
                if self.ref_kind == "expected":
                    want = self.expected_vjp({k: vs[k]})
                for j in range(nin):
                    g, u = grads[j].double(), us[j].double()
                    got = float((g * u).sum())
                    if self.ref_kind == "expected":
                        e = want[j].double()
                        expected = float((e * u).sum())
                        scale = float((g * u).abs().sum()) + float((e * u).abs().sum())
                        out.append(ProbeCheck(self.out_names[k], self.s.names[j], got,
                                              expected, self.rtol * scale + 1e-300))
                        continue
                    jv, je = ref_vals[p * nin + j][k], ref_errs[p * nin + j][k]
                    expected = float((v64 * jv).sum())
                    err = float((v64.abs() * je).sum())
                    scale = float((g * u).abs().sum()) + float((v64 * jv).abs().sum())
                    tol = SAFETY * err + self.rtol * scale + 1e-300
                    out.append(ProbeCheck(self.out_names[k], self.s.names[j], got, expected, tol))
        return out

    def compare_full(self) -> tuple[PairCheck, ...]:
        torch.set_rng_state(self.state)
        bwd = jacobian(self.s.flat, self.s.xs, method="reverse")
        ref, err = self.ref_jacobian()
        shaky = [(self.out_names[k], self.s.names[j]) for k in self.keep
                 for j in range(len(self.s.xs))
                 if err[k][j].numel() and float(err[k][j].max())
                 > 0.01 * max(float(ref[k][j].abs().max()), 1e-300)]
        err = self._kink_err
        if shaky:
            self.notes.append(
                "the finite differences are uncertain for " + ", ".join(
                    f"∂{a}/∂{b}" for a, b in shaky) + " (estimated error above 1% of the "
                "largest entry): fn may be discontinuous or random there, so agreement there "
                "says little")
        _, none = self.backward(self._random_vs())
        pairs = []
        for k in self.keep:
            yk = self.outs[k]
            for j, x in enumerate(self.s.xs):
                got = bwd[k][j].detach().double().reshape(yk.numel(), x.numel())
                exp, e = ref[k][j], err[k][j]
                scale = float(exp.abs().max()) if exp.numel() else 0.0
                tol = SAFETY * e + self.rtol * (exp.abs() + scale) + 1e-300
                pairs.append(self._pair(k, j, got, exp, tol, none[j]))
        return tuple(pairs)

    def _pair(self, k, j, got, exp, tol, dropped, rows=None, cols=None,
              sampled="") -> PairCheck:
        yname, xname = self.out_names[k], self.s.names[j]
        out_shape, in_shape = tuple(self.outs[k].shape), tuple(self.s.xs[j].shape)
        total = self.outs[k].numel() * self.s.xs[j].numel()
        diff = (got - exp).abs()
        wrong = diff > tol
        nw = int(wrong.sum())
        max_err = float(diff.max()) if diff.numel() else 0.0
        extra = {"sampled": sampled, "n_checked": got.numel(), "rows": rows,
                 "columns": cols}
        if nw == 0:
            return PairCheck(yname, xname, True, max_err, 0, total, got=got,
                             expected=exp, tolerance=tol, **extra)
        x_flat = self.s.xs[j].reshape(-1)
        x_cols = x_flat if cols is None else x_flat[cols]
        wrong_cols = wrong.any(0)
        split = threshold(wrong_cols, x_cols)
        where = None
        if split is not None and self._split_holds(k, j, cols, rows, split):
            where = region(wrong_cols, x_cols, xname)
            if cols is not None and where:
                where = where.replace(" elements)", " sampled elements)")
        sub = wrong_cols if where is not None else torch.ones_like(wrong_cols)
        full_block = rows is None and cols is None
        pat = classify(got[:, sub], exp[:, sub], tol[:, sub], out_shape,
                       in_shape if where is None and full_block else (int(sub.sum()),),
                       dropped=dropped and where is None,
                       dtype=self.dtype,
                       names=(yname, xname),
                       partial=not full_block,
                       affine=self.affine.get(xname, False),
                       intended=self.ref_kind == "expected")
        if pat is not None:
            sentence = pat.sentence + (f", only {where}" if where else "")
        elif where is not None:
            sentence = f"wrong only {where}"
        else:
            sentence = (f"{nw} of {got.numel()} entries wrong, with no simple pattern (not a "
                        f"constant factor, sign, transpose or offset)")
            if int(wrong_cols.sum()) <= 6 and int(wrong_cols.sum()) < wrong_cols.numel():
                sentence += self._listed(wrong_cols, cols, in_shape, xname)
        if pat is not None and where is None and split is not None:
            sentence += self._listed(wrong_cols, cols, in_shape, xname)
        worst = worst_entries(got, exp, wrong, (got.shape[0],), (got.shape[1],))
        worst = tuple(WrongEntry(
            _unravel(int(e.output_index[0]) if rows is None else int(rows[e.output_index[0]]),
                     out_shape),
            _unravel(int(e.input_index[0]) if cols is None else int(cols[e.input_index[0]]),
                     in_shape),
            e.expected, e.got) for e in worst)
        return PairCheck(
            yname, xname, False, max_err, nw, total, worst,
            pat.kind if pat else None, where, sentence, got, exp, tol, **extra)

    @staticmethod
    def _listed(wrong_cols, cols, in_shape, xname) -> str:
        idx = wrong_cols.nonzero().reshape(-1)
        if cols is not None:
            idx = cols[idx]
        shown = [f"{xname}[{', '.join(map(str, _unravel(int(i), in_shape)))}]"
                 for i in idx[:6].tolist()]
        more = f" and {idx.numel() - 6} more" if idx.numel() > 6 else ""
        return f" (wrong only at {', '.join(shown)}{more})"

    def _split_holds(self, k, j, cols, rows, split, points: int = 2) -> bool:
        """Does "wrong exactly where x op t" hold again with the input's values shuffled?"""
        op, t = split
        x = self.s.xs[j]
        n = x.numel()
        idx = torch.arange(n) if cols is None else cols
        for _ in range(points):
            perm = torch.randperm(n, generator=self.gen)
            xs = list(self.s.xs)
            xs[j] = x.reshape(-1)[perm].reshape(x.shape).clone()
            try:
                sub = _Checker(self.s.at(tuple(xs)), self.reference, 0, "none", self.rtol,
                               self.gen, self.expected)
                sub.pick_reference()
                if self.ref_kind == "expected":
                    ridx = torch.arange(sub.outs[k].numel()) if rows is None else rows
                    got = sub.got_rows(k, j, ridx)[:, idx]
                    exp = sub.expected_rows(k, ridx)[j][:, idx]
                    err = torch.zeros_like(exp)
                else:
                    r2, got = sub.got_columns(k, j, idx)
                    vals, errs = sub.ref_columns(j, idx)
                    exp, err = vals[k], errs[k]
                    if r2 is not None:
                        exp, err = exp[r2], err[r2]
                scale = float(exp.abs().max()) if exp.numel() else 0.0
                tol = SAFETY * err + self.rtol * (exp.abs() + scale) + 1e-300
                wrong = ((got - exp).abs() > tol).any(0)
            except (RuntimeError, ValueError, TypeError, IndexError):
                return False
            xv = xs[j].reshape(-1)[idx].double()
            side = xv < t if op == "<" else xv > t
            if not torch.equal(wrong, side):
                return False
        return True

    def example(self, pairs) -> ExampleV | None:
        wrong = [p for p in pairs if not p.agree and p.worst]
        if not wrong:
            return None
        p = max(wrong, key=lambda q: q.max_abs_error)
        k = self.out_names.index(p.output)
        row = p.worst[0].output_index
        v = torch.zeros_like(self.outs[k]).detach()
        v[row] = 1
        grads, _ = self.backward({k: v})
        got, expected, right = {}, {}, {}
        flat_row = int(sum(i * math.prod(self.outs[k].shape[d + 1:])
                           for d, i in enumerate(row)))
        for j, name in enumerate(self.s.names):
            q = next(pp for pp in pairs if pp.output == p.output and pp.input == name)
            got[name] = grads[j]
            right[name] = q.agree
            shape, dtype = self.s.xs[j].shape, grads[j].dtype
            if q.expected is None:  # agreed in the probes: nothing else known
                expected[name] = grads[j].clone()
                continue
            if q.rows is None:
                r = flat_row
            else:
                hit = (q.rows == flat_row).nonzero()
                r = int(hit[0, 0]) if hit.numel() else None
            if q.columns is None and r is not None:
                expected[name] = q.expected[r].reshape(shape).to(dtype)
                continue
            full = torch.full((self.s.xs[j].numel(),), math.nan, dtype=dtype)
            if r is not None:
                full[q.columns if q.columns is not None else slice(None)] = (
                    q.expected[r].to(dtype))
            expected[name] = full.reshape(shape)
        return ExampleV(p.output, row, v, got, expected, right)


def _or_zeros(g: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(like) if g is None else g


def _bytes(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"
