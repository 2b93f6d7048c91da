"""``check_backward``: is a backward right, and if not, which Jacobian entries are wrong?

A backward is a function ``v -> vᵀJ``.  It is right when the Jacobian it implies (row ``i`` is
what ``y.backward(gradient=e_i)`` gives) equals the Jacobian of the forward pass.  The check
compares the two per (output, input) pair against a reference that shares no code with the
backward: forward mode where the function supports it, else central differences with an error
estimate (:mod:`gradarg.check.fd_error`) on float64 copies.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from ..core._routes import call
from ..core.dense import jacobian
from . import fd_error
from .localize import WrongEntry, classify, region, worst_entries
from .report import BackwardCheckReport
from .tolerance import backward_rtol

__all__ = ["BackwardCheck", "PairCheck", "check_backward"]

SAFETY = 2.0  # margin on the finite-difference error estimate (itself an overestimate)
FULL_SIZE = 16_384  # Jacobians with at most this many entries are always built in full


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
        on one side of a threshold.
    sentence : str
        What is wrong, for a reader.
    got, expected, tolerance : torch.Tensor or None
        The block as an ``m × n`` matrix (float64) from the backward, from the reference, and
        the allowed error per entry; ``None`` when only the random probes ran.
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


@dataclass(frozen=True)
class ExampleV:
    """One upstream gradient that shows the bug: the one-hot of the worst row.

    ``y.backward(gradient=v)`` (with ``v`` zero for the other outputs) gave ``got[name]`` for
    each input and should give ``expected[name]``.
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

    return _Setup(names, tuple(xs), flat, skipped)


# --------------------------------------------------------------------------- the check


def check_backward(
    fn: Callable[..., Any] | torch.nn.Module,
    *args: Any,
    reference: Literal["auto", "forward", "finite-difference"] = "auto",
    parameters: bool = True,
    probes: int = 3,
    localize: bool | None = None,
    rtol: float | None = None,
    seed: int = 0,
) -> BackwardCheck:
    """Check a backward pass against an independent Jacobian and say which entries are wrong.

    The backward of ``fn`` (a function, ``MyFunction.apply``, or an ``nn.Module``) is checked
    for every input of ``args`` that requires grad (and a module's parameters).  First a few
    randomized probes: for random ``v`` and ``u``, the scalar ``vᵀ J u`` from one backward pass
    per output against the same scalar from one Jacobian–vector product per input (forward mode,
    or a directional central difference); cheaper than any full Jacobian.  Then, for small
    problems, on a mismatch, or when ``localize=True``, the full Jacobians: rows from the
    backward with one-hot upstream gradients, batched, and columns from the reference; every
    (output, input) block is compared entry by entry, and wrong blocks are localised (largest
    errors, pattern, region of the input) with a concrete ``v`` that shows the bug.

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
    localize : bool or None
        ``True``: always compare the full Jacobians; ``False``: never (probes only); ``None``:
        when the Jacobian has at most 16,384 entries or a probe disagrees.
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
        No input requires grad; ``reference="forward"`` for a function without forward mode.
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
    setup = _setup(fn, args, parameters)
    gen = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        return _Checker(setup, reference, probes, localize, rtol, gen).run()


class _Checker:
    def __init__(self, setup: _Setup, reference, probes, localize, rtol, gen):
        self.s = setup
        self.reference = reference
        self.n_probes = probes
        self.localize = localize
        self.gen = gen
        self.notes: list[str] = []
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

        self.s.flat = floating_only
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

    # -------------------------------------------------------------- reference

    def pick_reference(self) -> str:
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
        status_nd = self.determinism()
        if status_nd is not None:
            return self._result("non-deterministic", status_nd, ref_name, skipped, (), (), None)
        self.offset_check()
        probes = self.probe()
        m = sum(self.outs[k].numel() for k in self.keep)
        n = sum(x.numel() for x in s.xs)
        full = self.localize if self.localize is not None else (
            m * n <= FULL_SIZE or not all(p.agree for p in probes))
        pairs: tuple[PairCheck, ...] = ()
        example = None
        if full:
            pairs = self.compare_full()
            example = self.example(pairs)
        wrong = [p for p in pairs if not p.agree]
        probe_wrong = [p for p in probes if not p.agree]
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
        else:
            summary = ("WRONG: random probes vᵀJu disagree for "
                       + ", ".join(f"∂{p.output}/∂{p.input}" for p in probe_wrong)
                       + " (run with localize=True to see which entries).")
        return self._result("wrong", summary, ref_name, skipped, probes, pairs, example)

    def _result(self, status, summary, ref_name, skipped, probes, pairs, example):
        return BackwardCheck(
            status=status, summary=summary, reference=ref_name, inputs=tuple(self.s.names),
            outputs=tuple(self.out_names[k] for k in self.keep), skipped=tuple(skipped),
            probes=tuple(probes), pairs=tuple(pairs), example=example,
            notes=tuple(self.notes), rtol=self.rtol)

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
            if g.numel() and bool((g != 0).any()):
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
        ref_vals, ref_errs = self.ref_directional(dirs)
        for p, (vs, us) in enumerate(vss):
            for k in self.keep:
                grads, _ = self.backward({k: vs[k]})
                v64 = vs[k].double()
                for j in range(nin):
                    g, u = grads[j].double(), us[j].double()
                    got = float((g * u).sum())
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

    def _pair(self, k, j, got, exp, tol, dropped) -> PairCheck:
        yname, xname = self.out_names[k], self.s.names[j]
        out_shape, in_shape = tuple(self.outs[k].shape), tuple(self.s.xs[j].shape)
        diff = (got - exp).abs()
        wrong = diff > tol
        nw = int(wrong.sum())
        max_err = float(diff.max()) if diff.numel() else 0.0
        if nw == 0:
            return PairCheck(yname, xname, True, max_err, 0, got.numel(), got=got,
                             expected=exp, tolerance=tol)
        cols = wrong.any(0)
        where = region(cols, self.s.xs[j], xname) if got.numel() else None
        sub = cols if where is not None else torch.ones_like(cols)
        pat = classify(got[:, sub], exp[:, sub], tol[:, sub], out_shape,
                       in_shape if where is None else (int(sub.sum()),),
                       dropped=dropped and where is None,
                       dtype=self.dtype,
                       names=(yname, xname))
        if pat is not None:
            sentence = pat.sentence + (f", only {where}" if where else "")
        elif where is not None:
            sentence = f"wrong only {where}"
        else:
            sentence = (f"{nw} of {got.numel()} entries wrong, with no simple pattern (not a "
                        f"constant factor, sign, transpose or offset)")
        return PairCheck(
            yname, xname, False, max_err, nw, got.numel(),
            worst_entries(got, exp, wrong, out_shape, in_shape),
            pat.kind if pat else None, where, sentence, got, exp, tol)

    def example(self, pairs) -> ExampleV | None:
        wrong = [p for p in pairs if not p.agree]
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
            expected[name] = q.expected[flat_row].reshape(self.s.xs[j].shape).to(grads[j].dtype)
        return ExampleV(p.output, row, v, got, expected, right)
