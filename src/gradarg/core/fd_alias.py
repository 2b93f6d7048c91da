"""Does the derivative that the steps of :mod:`.fd_error` settled on hold between them?

The steps of the Richardson table are a geometric sequence of ratio 2.  A function that
oscillates on a scale far below every step can look smooth on such a grid: ``cos(exp(x))`` at
``x = 12.94`` (float32's value) has a period of ``2π / e^x ≈ 1.5e-5`` in ``x``, and its finest
steps ``h_k ≈ 1.2e-3 ... 1.5e-4`` are (within 1e-3 of a period) 80, 40, 20, 10 periods.  At
every such step the samples ``f(x ± h_k)`` are exactly those of the smooth alias ``g(h) =
cos(e^x e^h - ω h)`` with ``ω = 2π·10 / h_8``, whose central differences converge at rate
``h²`` as those of a smooth function do (differences 241, 62, 15.6 between consecutive ones)
to ``g'(0) = -951``, where ``f'`` is ``3.95e5``.  No test on the grid can see it: the
samples are those of a smooth function, whose own derivative (``g'' ≈ 4e5``) changes over the
steps used by less than the derivative.  (The long hypothesis profile found it, issue 44:
a correct float32 backward was called WRONG.)

The self-check is one more central difference, off the grid: at ``h_c = φ·h_{b+2}`` (``φ``
the golden ratio, between the two finer steps ``h_{b+1}``, ``h_{b+2}`` of the chosen estimate
``R_{b+1}``), extrapolated with ``D(h_{b+2})`` over the step ratio ``ρ = h_c / h_{b+2}``,
``R_c = D(h_{b+2}) + (D(h_{b+2}) - D(h_c)) / (ρ² - 1)`` (Richardson for any ratio).  For a
smooth ``f`` its truncation error is ``ρ² / 4`` (0.65) times that of the chosen estimate and
its rounding about 4/3 times, so it agrees with the chosen estimate within ``DISAGREE`` times
the chosen error bound plus twice the chosen rounding bound.  An alias of the grid does not:
``ω h_c`` is ``φ`` times a whole number of periods, and no multiple of the golden ratio lies
close to a whole number (it is the number worst approximated by fractions), so ``f(x ± h_c)``
is off the alias by a sizeable phase.  Where ``R_c`` disagrees (or is not finite) the entry is
unresolved when ``DISAGREE`` times that distance (which bounds the larger of the two errors
from below), added to its error bound, makes the bound larger than 1% of
the derivatives near it (``UNRESOLVED``, as for every estimate): ``jacobian(method=
"finite-difference")`` returns NaN there with a warning, and the checkers say they could not
check it (``f`` varies on a scale below the steps tried).  An alias is off by about the
derivative itself.  A smaller disagreement is rounding that the noise model misses, such as
an intermediate that cancels (``a @ atan(x)`` at ``x[0] = 5e-324``, whose finest steps all
round ``atan(h) + π/4`` to the same grid and agree on 1 - 9e-9 with a bound of 1e-14): the
entry stays resolved, with that much added to its bound (a correct backward was called
WRONG there by 9e-9).

``jacobian(method="finite-difference")`` then estimates such an entry again on finer steps
when its one-sided differences change sign between the steps, as those of an oscillation do
(:mod:`.fd_edge`, ``crossings=True``; the checkers do not): at ``x = 12.94`` the finer steps
resolve the period (3.95e5 within 1e-5); at ``x = 30`` (a period of 6e-13, below the
precision floor) it stays unresolved.

Cost: one evaluation of ``f`` at ``x ± h_c`` per column for each distinct chosen step among
the column's entries (one for a scalar or elementwise function), against the 9 to 24 of the
table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

GOLDEN = (1 + math.sqrt(5.0)) / 2  # the off-grid step ratio: badly approximable by fractions


@dataclass
class Chosen:
    """One output's chosen estimates, as :func:`.fd_error._ridders` settled them.

    ``value``, ``error`` have shape ``(N, *y.shape)``; ``best`` has shape ``(1, N, *y.shape)``
    and indexes the table's estimates ``R_1 .. R_{K-3}`` (``R_{best+1}`` rests on the central
    differences at steps ``best`` to ``best + 3``); ``check`` marks the entries to test
    (resolved, not a kink, output moved); ``d`` is the table of central differences, shape
    ``(K, N, *y.shape)``; ``rounding`` the rounding bound of each estimate, shape
    ``(K - 3, N, *y.shape)``; ``near`` the size of the derivatives near each entry (its own,
    its column's, its one-sided slopes at the coarsest step), against which an error bound
    is judged.
    """

    value: torch.Tensor
    error: torch.Tensor
    best: torch.Tensor
    check: torch.Tensor
    d: torch.Tensor
    rounding: torch.Tensor
    near: torch.Tensor


def off_grid(evaluate: Callable, h0: torch.Tensor, hs: Sequence[torch.Tensor],
             chosen: Sequence[Chosen], xscale: torch.Tensor, rounding: float,
             disagree: float, finer: str) -> list[torch.Tensor]:
    """How far an off-grid estimate is from each chosen estimate that it contradicts: a real
    tensor per output, shape ``(N, *y.shape)``, 0 where they agree or nothing was tested,
    inf where the off-grid estimate is not finite (the module docstring).

    ``evaluate(h) -> (plus, minus, h_plus, h_minus)`` with a nominal step per column ``h``
    (shape ``(N,)``); ``hs[k]`` the actual steps of the table, shape ``(N,)``; ``xscale[c]``
    the size of the inputs column ``c`` moves and ``rounding`` the rounding of one operation
    (``C_ROUND * eps``): ``x + h`` rounds by ``rounding * |x|``, which moves each difference
    quotient by about ``rounding * |x| * |f'| / h``, where ``f'`` is that at the moved points
    (``(x - 9)**3`` at 9: ``f'(x) = 0``, ``f'(x ± h) = 3h²``, the size of the quotients), not
    seen by the table when its steps round alike (along directions the steps are nominal);
    ``finer`` as in
    :func:`.fd_error._ridders`: with ``"error"`` (random directions, whose rounding the noise
    model underestimates) the chosen error bound is allowed once more.
    """
    out = [torch.zeros_like(c.error) for c in chosen]
    if not chosen or not any(bool(c.check.any()) for c in chosen):
        return out
    n = hs[0].reshape(-1).shape[0]
    n_est = chosen[0].rounding.shape[0]
    need = torch.zeros(n_est, n, dtype=torch.bool)
    for c in chosen:
        if not bool(c.check.any()):  # also an empty output
            continue
        hit = torch.zeros((n_est, *c.check.shape), dtype=torch.bool)
        hit.scatter_(0, c.best, c.check.unsqueeze(0))
        need |= hit.reshape(n_est, n, -1).any(2)
    table = torch.stack([h.reshape(n).double() for h in hs])  # (K, N) actual steps
    pos = need.cumsum(0)
    for t in range(int(pos[-1].max())):
        sel = need & (pos == t + 1)
        has = sel.any(0)  # (N,)
        b = sel.int().argmax(0)  # (N,): the chosen estimate R_{b+1}, steps b .. b+3
        h2 = table.gather(0, (b + 2).unsqueeze(0)).squeeze(0)
        hc_nominal = (GOLDEN * h2).to(h0.dtype)
        plus, minus, hp, hm = evaluate(hc_nominal)
        hc = (hp.reshape(n).double() + hm.reshape(n).double()) / 2
        rho = hc / h2
        usable = has & ((rho / GOLDEN - 1).abs() <= 0.01)
        for i, c in enumerate(chosen):
            shape = (n,) + (1,) * (c.check.dim() - 1)
            real = plus[i].real.dtype
            hp_, hm_ = hp.reshape(shape).to(real), hm.reshape(shape).to(real)
            dc = (plus[i] - minus[i]) / (hp_ + hm_)
            here = c.check & (c.best.squeeze(0) == b.reshape(shape)) & usable.reshape(shape)
            if not bool(here.any()):
                continue
            d2 = c.d.gather(0, c.best + 2).squeeze(0)
            r2 = (rho * rho - 1).reshape(shape).to(real)
            rc = d2 + (d2 - dc) / r2
            size = torch.maximum(torch.maximum(d2.abs(), dc.abs()), c.value.abs())
            moved = (rounding * xscale.reshape(shape).double() / h2.reshape(shape)).to(
                size.dtype) * size
            noise = 2 * c.rounding.gather(0, c.best).squeeze(0) + moved
            bound = c.error + noise + (c.error if finer == "error" else 0)
            dist = (rc - c.value).abs().to(c.error.dtype)
            agree = dist <= disagree * bound
            dist = torch.where(torch.isfinite(dist), dist, torch.full_like(dist, math.inf))
            out[i] = torch.where(here & ~agree, dist, out[i])
    return out
