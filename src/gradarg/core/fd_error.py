"""Central differences that carry their own error estimate: the reference of the comparers
(:mod:`gradarg.check`, which reaches it as ``gradarg.check.fd_error``) and the values of
``jacobian(method="finite-difference")`` (:mod:`gradarg.core.finite_diff`).

A derivative from one central difference with one fixed step has an error nobody measured: the
truncation error ``h**2/6 * |f'''|`` depends on how hard ``f`` curves near ``x``, the rounding
error ``≈ eps * |f| / h`` on the size of the output, not of the derivative.  Here every column of
the Jacobian (one input element, or one direction ``u``) is differentiated with a geometric
sequence of steps ``h_k = h_0 / 2**k``; consecutive central differences are combined by
Richardson extrapolation, ``R_k = D_{k+1} + (D_{k+1} - D_k) / 3``, which cancels the ``h**2``
term, and the error of ``R_{k+1}`` is estimated as ``|R_{k+1} - R_k|`` (the error of the
coarser value, so an overestimate) plus the rounding bound ``C * eps * |f| / h_{k+2}``, where
``|f|`` is at least the size of the terms ``f`` adds up, ``sum_j |∂f/∂x_j| |x_j|`` (a row of
``W @ x`` whose terms cancel rounds like its terms, not like its small value: :func:`row_terms`).
For each Jacobian entry the step with the smallest estimate is kept, together with its estimate.
This is Ridders' method (C. J. F. Ridders, *Accurate computation of F'(x) and F'(x) F''(x)*,
Advances in Engineering Software 4(2), 1982; Press et al., *Numerical Recipes*, 3rd ed.,
section 5.7, ``dfridr``), vectorised over entries.

The steps span the scales on which ``f`` may vary near ``x_j``: from ``max(1, |x_j|)`` down to
``min(1, |x_j|)``, so both functions that curve on the scale of their distance to 0 (``log``,
``sqrt``) and functions that curve on a fixed scale (``sin`` at ``x = 10⁴``, where a step
proportional to ``|x|`` samples many periods) are resolved at some step; the error estimate
picks the step per entry.  numdifftools does the same with a longer geometric sequence of steps
(``MinStepGenerator`` / ``MaxStepGenerator``, step ratio 2, whose nominal step grows like
``log(e + |x|)`` rather than ``|x|``; https://numdifftools.readthedocs.io).

An entry is **unresolved** when the estimates over steps disagree beyond their error bound:
the best estimate's bound is above ``UNRESOLVED`` (1%) of the size of the derivatives (the
largest of the entry, of its column: every output along that input element or direction, and
of the one-sided slopes ``|f(x ± h_0) - f(x)| / h_0`` of the entry at the coarsest step, so
that a derivative that vanishes where ``f`` is smooth, ``t**3`` at 0, is resolved as 0 within
a bound far below those slopes, while a difference quotient the steps do not resolve has a
bound of their size) and above ``DISAGREE`` times its rounding part, or the estimate of a
finer step differs from it by more than ``DISAGREE`` (4) times the sum of the best bound and
the finer step's rounding bound (truncation only shrinks with the step).  Examples: ``sin`` at ``x = 10¹⁷``, where
float64's spacing exceeds the period and ``(f(x+h) - f(x-h)) / 2h`` falls like ``1/h`` over
the coarse steps, so that they look converged; a function that jumps between the sampled
points.  Steps whose actual size (``x + h`` rounded to the grid of ``x``'s dtype) departs by
more than 1% from the geometric sequence are not used.  And the chosen estimate must hold
between the steps: a central difference at a step off the grid (the golden ratio times the
finer step), extrapolated, must agree with it (:mod:`.fd_alias`; ``cos(exp(x))`` at ``x =
12.94``, whose finest steps are whole periods, converged to -951 for a derivative of 3.95e5).  Such an entry, or one where ``f``
is not finite, carries an infinite error: the checkers say they could not check it.

A singularity or domain edge closer to ``x`` than the coarse steps (``log1p`` at ``x =
-0.999``: ``f`` is NaN at the steps that cross -1; ``1 / (x - a)`` crossed with finite values)
leaves too few clean steps to extrapolate: such an entry, unresolved by the table, is
estimated again on a window of finer steps that starts past the last step that was not finite
or crossed, down to a precision floor (:mod:`.fd_edge`).

An entry whose output never moved is zero within ``C * eps * |f_i| / h_0`` (its own output and
step): resolved only against far larger derivatives near it (:mod:`.fd_settle`).

A kink (``abs``, ``relu`` or ``clamp`` exactly at the breakpoint) shows as one-sided differences
``(f(x+h) - f(x)) / h`` and ``(f(x) - f(x-h)) / h`` whose gap does not shrink with ``h``; there
every value between the two one-sided derivatives is a valid (sub)gradient, so the estimate is
their midpoint and the error half their gap.  A kink beside ``x`` within the steps (``abs`` at
``1e-12``) is unresolved: there the central estimates do not converge; one a few spacings of
``x`` away (``clamp`` at ``1 + 1e-15``), where they do, too (:mod:`.fd_kink`).

Inputs in float32, bfloat16 or float16 are differentiated on float64 copies when the function
accepts them (falling back to the input's own dtype when it raises), so the reference is far
more accurate than the function under test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .fd_alias import Chosen, off_grid
from .fd_edge import past_nonfinite
from .fd_finer import LOOSE, past_loose
from .fd_kink import kink_at_x, spacing
from .fd_settle import UNRESOLVED, settle
from .fd_steps import MAX_STEPS, MIN_STEPS, _root, _spans, coarse_directions, n_steps, steps_for
from .fd_terms import row_terms, steady_terms

__all__ = ["DISAGREE", "MAX_STEPS", "MIN_STEPS", "UNRESOLVED", "Estimate", "base_outputs",
           "columns", "directional", "n_steps", "partials", "steps_for", "upcast"]
from .fd_rows import ROW_BUDGET, evaluate_rows, moved_columns
from .graph import call, copies

# Rounding of one evaluation of f, in units of eps·|f|, times the noise gain of the Richardson
# combination (about 1.5/h for R_{k+1}): generous, since reductions round more than one op.
C_ROUND = 16.0
DISAGREE = 4.0  # a finer step's estimate this many times both error bounds away: not resolved
_TABLE_BUDGET = ROW_BUDGET // 4  # entries of one Richardson table of :func:`columns`
_LOW = (torch.float16, torch.bfloat16, torch.float32)


@dataclass
class Estimate:
    """Derivatives of every output along every column, with error bounds.

    ``value[k]`` and ``error[k]`` have shape ``(N, *y_k.shape)``: column ``c`` holds the
    derivative of output ``k`` along column ``c``'s direction and its estimated error (real).
    ``kink[k]`` marks entries at a point where ``f`` is not differentiable.
    """

    value: list[torch.Tensor]
    error: list[torch.Tensor]
    kink: list[torch.Tensor]
    #: entries whose output never moved at any step, with a nonzero bound ``C·eps·|y|/h_0``
    #: neither their column nor their one-sided slopes show small: zero within it only if
    #: their row's or column's derivatives are far larger (:func:`settle`); ``alone[k]``: the bound is small against ``|f| / max(1, |x|)``, used
    #: when nothing in the row or column moved; ``bound``: of each entry settle marked, else 0
    still: list[torch.Tensor] | None = None
    alone: list[torch.Tensor] | None = None
    bound: list[torch.Tensor] | None = None


def upcast(xs: Sequence[torch.Tensor]) -> tuple[torch.Tensor, ...]:
    """float64 (complex128) copies of low-precision inputs; others unchanged."""
    out = []
    for x in xs:
        if x.dtype in _LOW:
            x = x.to(torch.float64)
        elif x.dtype == torch.complex64:
            x = x.to(torch.complex128)
        out.append(x.detach())
    return tuple(out)


def base_outputs(fn: Callable[..., Any], xs: Sequence[torch.Tensor]):
    """``(xs_eval, f(xs_eval))``, on float64 copies when ``fn`` accepts them.

    The CPU generator is left as it was: every later evaluation replays the same draws.
    """
    xs = tuple(x.detach() for x in xs)
    up = upcast(xs)
    state = torch.get_rng_state()
    try:
        if any(a is not b for a, b in zip(up, xs, strict=True)):
            try:
                with torch.no_grad():
                    outs = call(fn, copies(up))[0]
                return up, outs
            except (RuntimeError, TypeError):  # e.g. a matmul with a captured float32 weight
                torch.set_rng_state(state)
        with torch.no_grad():
            outs = call(fn, copies(xs))[0]
        return xs, outs
    finally:
        torch.set_rng_state(state)


def _eps(outs: Sequence[torch.Tensor]) -> float:
    return max(torch.finfo(y.real.dtype if y.is_complex() else y.dtype).eps for y in outs)


def _ridders(evaluate, f0, h0: torch.Tensor, xscale: torch.Tensor, steps: int, eps: float,
             finer: str = "noise", crossings: bool = False):
    """The core: ``evaluate(h) -> (plus, minus, h_plus, h_minus)`` for a step per column.

    ``xscale[c]`` is the size of the inputs moved by column ``c``: rounding ``x + h`` (or the
    function's own products with ``x``) perturbs ``f`` by about ``eps * |x| * |f'|``.
    ``finer``: how the chosen estimate is tested against every finer step's (the module
    docstring): ``"noise"``, within the finer step's rounding bound; ``"error"``, within its
    whole error estimate, along random directions (:func:`directional`, the checker's
    probes), where an output sums the rounding of every moved input, more than the noise
    model allows, so that the first test would leave right probes unchecked.
    ``crossings``: entries left unresolved step past poles crossed with finite values too,
    not only past non-finite values (:mod:`.fd_edge`; ``jacobian(method="finite-difference")``
    asks for it, the checkers do not).
    """
    rows = [evaluate(h0 / 2**k) for k in range(steps)]
    kept: dict[int, torch.Tensor] = {}  # each output's steady terms, from the whole table
    first = _table(rows, evaluate, f0, h0, xscale, eps, finer, kept)
    def analyse(r, ev, h, xsc):
        return _table(r, ev, f0, h, xsc, eps, finer, kept)
    out = past_nonfinite(first, rows, evaluate, f0, h0, xscale, C_ROUND * eps, analyse,
                         crossings=crossings)  # loose entries: jacobian only, as crossings
    return past_loose(out, rows, evaluate, f0, h0, xscale, C_ROUND * eps, analyse,
                      LOOSE) if crossings else out


def _table(rows, evaluate, f0, h0: torch.Tensor, xscale: torch.Tensor, eps: float,
           finer: str, kept: dict[int, torch.Tensor]):
    """The Richardson table of :func:`_ridders` over ``rows[k] = (plus, minus, h_plus,
    h_minus)`` at the steps ``h0 / 2**k``: ``(value, error, kink, still, alone)``, a tensor per
    output; ``kept``: each output's steady terms from the first table (later ones see fewer)."""
    steps = len(rows)
    n = h0.shape[0]
    D: list[list[torch.Tensor]] = [[] for _ in f0]
    gaps: list[list[torch.Tensor]] = [[] for _ in f0]
    sides: list[list[tuple[torch.Tensor, torch.Tensor]]] = [[] for _ in f0]  # one-sided
    sizes: list[list[torch.Tensor]] = [[] for _ in f0]  # |f| at the moved points
    slopes: list[torch.Tensor] = []  # per output: the one-sided slopes at the coarsest step
    hs: list[Any] = []
    for k in range(steps):
        plus, minus, hp, hm = rows[k]
        hs.append((hp + hm) / 2)
        for i, (p, m, y) in enumerate(zip(plus, minus, f0, strict=True)):
            shape = (n,) + (1,) * y.dim()
            hp_, hm_ = hp.reshape(shape).to(p.real.dtype), hm.reshape(shape).to(p.real.dtype)
            D[i].append((p - m) / (hp_ + hm_))
            sides[i].append(((p - y) / hp_, (y - m) / hm_))
            gaps[i].append((sides[i][-1][0] - sides[i][-1][1]).abs())
            sizes[i].append(torch.maximum(p.abs(), m.abs()))
            if k == 0:
                slopes.append(torch.maximum((p - y).abs() / hp_, (y - m).abs() / hm_))
    value, error, kink, loose, alone = [], [], [], [], []
    chosen: list[Chosen] = []  # for the off-grid self-check (:mod:`.fd_alias`)
    probe: list[Any] = []  # f one spacing of x away, evaluated where a kink was seen

    def next_floats():
        if not probe:
            probe.append(evaluate(spacing(xscale.reshape(n)).to(h0.dtype)))
        return probe[0]

    actual = torch.stack([h.reshape(n).double() for h in hs])  # (K, n)
    nominal = torch.stack([(h0 / 2**k).reshape(-1).double().expand(n) for k in range(steps)])
    on_grid = ((actual / nominal - 1).abs() <= 0.01) & (actual > 0)
    geometric = on_grid[:-3] & on_grid[1:-2] & on_grid[2:-1] & on_grid[3:]  # (K - 3, n)
    for i, y in enumerate(f0):
        shape = (n,) + (1,) * y.dim()
        d = torch.stack(D[i])  # (K, n, *y)
        r = d[1:] + (d[1:] - d[:-1]) / 3  # R_0 .. R_{K-2}
        scale = C_ROUND * eps * y.abs().unsqueeze(0)
        xs_ = xscale.reshape(shape).to(scale.dtype)
        # the rounding of f between two steps: of its terms, not of |f| alone, where they
        # cancel (columns along input elements only); an output that never moved keeps its
        # own bound (``seen`` below: no sum changed there)
        wobble = scale
        if finer == "noise":
            terms = C_ROUND * eps * row_terms(d, xs_).unsqueeze(0)
            wobble = torch.where(torch.isfinite(terms), torch.maximum(scale, terms), scale)
        # f's rounding at the moved points, not only at x (a x at x ~ 1e-25 is ~1e-25 there)
        moved = C_ROUND * eps * torch.stack(sizes[i]).to(scale.dtype)
        # and at least the spacing of subnormals (y = a·b = 3e-313 rounds to 5e-324)
        sub = C_ROUND * eps * torch.finfo(scale.dtype).smallest_normal
        noise = torch.stack([
            (torch.maximum(wobble[0], moved[k]) + C_ROUND * eps * xs_ * r[k + 1].abs() + sub)
            / hs[k + 2].reshape(shape).to(scale.dtype)
            for k in range(steps - 3)])
        diff = (r[1:] - r[:-1]).abs()
        err = torch.maximum(diff[:-1], diff[1:]) + noise  # R_1 .. R_{K-3}: by both neighbours
        ok = torch.isfinite(err) & torch.isfinite(r[1:-1])
        # R_{k+1} rests on D_k .. D_{k+3}: their actual steps (x + h rounds to x's grid) must
        # keep the ratio 2 the extrapolation assumes, within 1% (a coarse grid: equal steps)
        ok &= geometric[: steps - 3].reshape((steps - 3, *shape))
        err = torch.where(ok, err, torch.full_like(err, math.inf))
        # an entry whose output never moved is zero within the rounding of f (of its steady
        # terms, fd_terms) over the largest step (cos at x = 1e-15: sin(x)·h is below it)
        still = (d == 0).all(0, keepdim=True)
        steady = C_ROUND * eps * steady_terms(d, xs_).unsqueeze(0) if finer == "noise" else scale
        steady = torch.maximum(scale, torch.maximum(kept.setdefault(i, steady), steady))
        seen = (steady / hs[0].reshape(shape).to(scale.dtype)).expand_as(err[:1])
        err = torch.where(still, seen.expand_as(err), err)
        # every finer step must agree with the chosen estimate within both error bounds
        # (truncation only shrinks with the step; rounding is in the finer one's noise): a
        # difference quotient that only looked converged at coarse steps is caught by the
        # finer ones (sin at x = 1e17, where (f(x+h) - f(x-h)) / 2h ~ 1/h; sin at 1.7e4,
        # whose coarse steps 8π, 4π, 2π agree on about 0).  Where one does not, the coarser
        # candidates are dropped and the best of the rest is taken, a few times over.
        cand = torch.arange(steps - 3).reshape((steps - 3,) + (1,) * (len(shape)))
        dropped = torch.zeros_like(err, dtype=torch.bool)
        for _attempt in range(4):
            best = torch.where(dropped, math.inf, err).argmin(0, keepdim=True)
            val = r[1:-1].gather(0, best).squeeze(0)
            e = err.gather(0, best).squeeze(0)
            later = (cand > best) & ok
            bound = noise if finer == "noise" else err
            far = (r[1:-1] - val.unsqueeze(0)).abs() > DISAGREE * (e.unsqueeze(0) + bound)
            contradicted = (later & far).any(0, keepdim=True)
            if not bool(contradicted.any()):
                break
            dropped |= contradicted & (cand <= best)
        g = torch.stack(gaps[i])  # (K, n, *y)
        g1, g2, g3 = (g.gather(0, (best + o).clamp(max=steps - 1)).squeeze(0) for o in (0, 1, 2))
        hk = torch.stack(hs).reshape((steps, *shape)).to(scale.dtype).expand_as(g)
        n3 = 2 * scale.squeeze(0) / hk.gather(0, (best + 2).clamp(max=steps - 1)).squeeze(0)
        flat_not_shrinking = (g3 >= 0.75 * g2) & (g2 >= 0.75 * g1)
        # and the central estimate stable against that gap (|x| and relu at 0: exactly), not
        # one-sided slopes of a function the steps do not resolve (sin at 3e17)
        kk = (flat_not_shrinking & (g3 > 4 * n3) & (g3 > 2 * e) & torch.isfinite(g3)
              & (e.real.abs() <= UNRESOLVED * g3 if e.is_complex() else e <= UNRESOLVED * g3))
        # a kink at x converges (abs at 0; relu(sin) at 0 to h**4); one beside x within the
        # steps (abs at 1e-12) gives x/h, contradicted by finer steps or with differences
        # growing as h shrinks: unresolved (it was returned as the midpoint, 1.3e-8 for 1)
        d_lo, d_hi = (diff.gather(0, best + o).squeeze(0) for o in (0, 1))
        growing = (d_hi > 1.5 * d_lo) & (d_hi > DISAGREE * noise.gather(0, best).squeeze(0))
        beside = kk & (contradicted.squeeze(0) | growing)
        if bool((kk & ~beside).any()):  # clamp at 1 + 1e-15: every step crosses it
            beside |= kk & ~kink_at_x(next_floats(), i, y, sides[i], best + 2)
        kk &= ~beside
        vabs = val.abs()
        # the size of the derivatives of this column (input element or direction): all of
        # its outputs, so that an entry near zero beside larger ones is judged by those
        fin = torch.where(torch.isfinite(vabs), vabs, torch.zeros_like(vabs))
        size = (fin.reshape(n, -1).amax(1) if fin.numel() else fin.new_zeros(n)).reshape(
            (n,) + (1,) * y.dim())
        ereal = e.real if e.is_complex() else e
        # a bound at the rounding level is resolution enough (a flat function such as sign
        rounding = noise.gather(0, best.clamp(max=steps - 4)).squeeze(0)
        # between its jumps: the estimate is 0 within rounding), when that rounding is small
        # against the derivatives f can have on its scale, |f| / max(1, |x|) (not so for sin
        # at 3e17, whose rounding bound exceeds every difference quotient)
        fscale = y.abs().unsqueeze(0) / xs_.clamp_min(1.0)
        at_rounding = (ereal <= DISAGREE * rounding) & (ereal <= UNRESOLVED * fscale)
        # the bound is judged against the derivatives f shows near x, not against the
        # estimate alone: where the derivative vanishes at a smooth point (t**3 at 0, cos at
        # 0) the estimate is 0 within a bound far below the slope of f over the coarsest
        # step; a difference quotient the steps do not resolve has a bound of the size of
        # that slope (1/h for sin at 1e17; about 0 where the coarse steps alias a period)
        coarse = slopes[i].abs()
        coarse = torch.where(torch.isfinite(coarse) & on_grid[0].reshape(shape), coarse,
                             torch.zeros_like(coarse))
        near = torch.maximum(vabs.clamp_min(size), coarse.to(vabs.dtype))
        large = ~(ereal <= UNRESOLVED * near) & ~at_rounding
        unresolved = ~kk & (contradicted.squeeze(0) | large | beside)
        # the output never moved: zero within its bound ``seen`` (C·eps·|y| / h_0, from this
        # entry's own output and step), which is resolution only against derivatives that
        # are far larger: its own one-sided slopes (an even function at its centre, cos at
        # 0), else those of its row or column, which :func:`settle` sees (sum(x) at x = [0,
        # 1e300]: y never moves along x[0], whose derivative 1 is far below the bound 1e289)
        st = still.squeeze(0)
        # (not a kink beside x: abs at -1e-300 is even about x at every step, its one-sided
        # slopes ±1 do not shrink, and one spacing of x away it has slope -1 on both sides)
        unresolved = (unresolved & ~st) | beside
        sb = seen.squeeze(0).to(ereal.dtype)
        loose.append(st & (sb > 0) & ~(sb <= UNRESOLVED * coarse.to(sb.dtype)))
        alone.append(sb <= UNRESOLVED * fscale.squeeze(0).to(sb.dtype))
        e = torch.where(kk, e + 0.55 * g3, e)
        e = torch.where(unresolved, torch.full_like(e, math.inf), e)
        ereal = e.real if e.is_complex() else e
        chosen.append(Chosen(val, ereal, best, ~kk & ~st & torch.isfinite(ereal), d, noise,
                             near.real if near.is_complex() else near))
        value.append(val)
        error.append(ereal)
        kink.append(kk)
    # the estimates settled on the grid of steps must hold between them (cos(exp(x)) at
    # x = 12.94 looks smooth on the geometric grid, an alias converging to -951 where f' =
    # 3.95e5): where the off-grid estimate disagrees, DISAGREE times their distance joins the
    # bound, unresolved when that is above 1% of the derivatives near the entry (an alias is
    # off by about the derivative; a @ atan(x) at x[0] = 5e-324, off by 1e-8 of 1, is not)
    off = off_grid(evaluate, h0, hs, chosen, xscale, C_ROUND * eps, DISAGREE, finer)
    for i, (gap, c) in enumerate(zip(off, chosen, strict=True)):
        wider = error[i] + DISAGREE * gap  # the distance bounds the larger of two errors
        error[i] = torch.where(gap > 0, torch.where(wider <= UNRESOLVED * c.near, wider,
                                                    torch.full_like(wider, math.inf)), error[i])
    return value, error, kink, loose, alone


def partials(
    fn: Callable[..., Any], xs: Sequence[torch.Tensor], *, xs_eval=None, f0=None,
    crossings: bool = False,
) -> list[list[Estimate]]:
    """Jacobian columns of every input element: ``est[j][d]`` for input ``j`` and direction
    ``d`` (0: real part; 1: imaginary part, complex inputs only).

    ``est[j][d].value[k]`` has shape ``(x_j.numel(), *y_k.shape)``.
    """
    state = torch.get_rng_state()  # the draws of f0 and of every step are the same
    if xs_eval is None:
        xs_eval, f0 = base_outputs(fn, xs)
    eps = _eps(f0)
    out: list[list[Estimate]] = []
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        for j, x in enumerate(xs_eval):
            flat = x.reshape(-1)
            real = flat.real if flat.is_complex() else flat
            a = flat.abs().to(real.dtype)
            s_hi, s_lo = _spans(a)
            h0 = 4 * _root(eps) * s_hi
            steps = n_steps(s_hi / s_lo)
            per_dir = []
            for unit in [1.0] + ([1j] if x.is_complex() else []):

                def evaluate(h, cols=None, unit=unit, j=j, flat=flat, x=x, real=real):
                    # cols: only those elements (:mod:`.fd_edge` shifts some to finer steps)
                    base = flat if cols is None else flat[cols]
                    hv = (h * unit).to(flat.dtype)
                    xp, xm = base + hv, base - hv
                    hp = ((xp - base) / unit).real if x.is_complex() else xp - base
                    hm = ((base - xm) / unit).real if x.is_complex() else base - xm
                    plus, minus = moved_columns(fn, xs_eval, j, flat, xp, xm, x.shape, state,
                                           index=cols)
                    return plus, minus, hp.to(real.dtype), hm.to(real.dtype)

                v, e, kk, lo, al = _ridders(evaluate, f0, h0, a, steps, eps,
                                            crossings=crossings)
                per_dir.append(Estimate(v, e, kk, lo, al))
            out.append(per_dir)
    torch.set_rng_state(state)
    settle([e for per in out for e in per])
    return out


def columns(
    fn: Callable[..., Any], xs_eval: Sequence[torch.Tensor], f0: tuple[torch.Tensor, ...],
    j: int, index: torch.Tensor, *, settled: bool = True, crossings: bool = False,
) -> Estimate:
    """Jacobian columns of some elements of input ``j`` (real inputs): ``value[k]`` has shape
    ``(len(index), *y_k.shape)``, column ``c`` the derivative along element ``index[c]``.

    The same estimate as :func:`partials` for those columns, computed a few columns at a time
    so that the Richardson tables (steps × columns × outputs) stay under ``_TABLE_BUDGET``
    entries each: memory grows with the output size, not with the number of columns.
    ``settled=False``: the entries whose output never moved are left to the caller's
    :func:`settle` over the columns of every input (the rows of the whole Jacobian).
    """
    state = torch.get_rng_state()
    eps = _eps(f0)
    x = xs_eval[j]
    flat_all = x.reshape(-1)
    a_all = flat_all.abs()
    s_hi_all, s_lo_all = _spans(a_all)
    steps = n_steps((s_hi_all / s_lo_all)[index])
    m = max(1, sum(y.numel() for y in f0))
    chunk = max(1, _TABLE_BUDGET // (m * (steps + 2)))
    parts: list[Estimate] = []
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        for start in range(0, index.numel(), chunk):
            idx = index[start:start + chunk]
            a, s_hi = a_all[idx], s_hi_all[idx]

            def evaluate(h, cols=None, idx=idx):
                if cols is not None:  # some of them (:mod:`.fd_edge`)
                    idx = idx[cols]
                xp, xm = flat_all[idx] + h.to(x.dtype), flat_all[idx] - h.to(x.dtype)
                plus, minus = moved_columns(fn, xs_eval, j, flat_all, xp, xm, x.shape, state,
                                       index=idx)
                return plus, minus, xp - flat_all[idx], flat_all[idx] - xm

            v, e, kk, lo, al = _ridders(evaluate, f0, 4 * _root(eps) * s_hi, a, steps, eps,
                                        crossings=crossings)
            parts.append(Estimate(v, e, kk, lo, al))
    torch.set_rng_state(state)
    cat = [[torch.cat([getattr(p, name)[k] for p in parts]) for k in range(len(f0))]
           for name in ("value", "error", "kink", "still", "alone")]
    out = Estimate(*cat)
    if settled:
        settle([out])
    return out


def directional(
    fn: Callable[..., Any],
    xs_eval: Sequence[torch.Tensor],
    f0: tuple[torch.Tensor, ...],
    directions: Sequence[Sequence[torch.Tensor | None]],
) -> Estimate:
    """Derivatives along directions: column ``c`` moves input ``j`` along ``directions[c][j]``
    (``None``: input ``j`` stays put).  ``value[k]`` has shape ``(N, *y_k.shape)``: ``J u``."""
    eps = _eps(f0)
    state = torch.get_rng_state()
    n = len(directions)
    s_hi, s_lo = torch.ones(n, dtype=torch.float64), torch.ones(n, dtype=torch.float64)
    for c, us in enumerate(directions):
        umax, xmax, lo = 0.0, 1.0, math.inf
        for x, u in zip(xs_eval, us, strict=True):
            if u is None or u.numel() == 0:
                continue
            ua, xa = u.abs().double(), x.abs().double()
            umax = max(umax, float(ua.max()))
            xmax = max(xmax, float(xa.max()))
            mask = (ua > 0) & (xa > 0)
            if mask.any():
                lo = min(lo, float((xa[mask] / ua[mask]).min()))
        umax = umax or 1.0
        s_hi[c] = xmax / umax
        # a step h moves x by h·u: a fixed scale of 1 in x is 1/umax in h
        s_lo[c] = min(lo, 1.0 / umax, s_hi[c].item())
    h0 = 4 * _root(eps) * s_hi
    steps = n_steps(s_hi / s_lo)

    def evaluate(h, cols=None):
        # cols: only those directions (:mod:`.fd_edge` shifts some to finer steps)
        dirs = directions if cols is None else [directions[c] for c in cols.tolist()]
        n = len(dirs)
        rows_p, rows_m = {}, {}
        for j, x in enumerate(xs_eval):
            if all(us[j] is None for us in directions):
                continue
            u = torch.stack([us[j] if us[j] is not None else torch.zeros_like(x)
                             for us in dirs]).to(x.dtype)
            hv = h.to(x.real.dtype if x.is_complex() else x.dtype).reshape(
                (n,) + (1,) * x.dim())
            rows_p[j], rows_m[j] = x + hv * u, x - hv * u
        rows = {j: torch.cat([rows_p[j], rows_m[j]]) for j in rows_p}
        with torch.no_grad():
            res = evaluate_rows(fn, xs_eval, rows, state)
        return (tuple(r[:n] for r in res), tuple(r[n:] for r in res), h, h)

    with torch.random.fork_rng(devices=[]):
        # the finer steps within their whole error along directions (see _ridders)
        v, e, kk, lo, al = _ridders(evaluate, f0, h0, s_hi, steps, eps, finer="error")
    torch.set_rng_state(state)
    coarse = coarse_directions(xs_eval, directions, h0, steps)  # unresolved: their error inf
    e = [torch.where(coarse.reshape((-1,) + (1,) * (t.dim() - 1)), math.inf, t) for t in e]
    out = Estimate(v, e, kk, lo, al)
    settle([out])
    return out
