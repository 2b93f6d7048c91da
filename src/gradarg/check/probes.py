"""The random probes of ``check_backward``: for random ``v`` and ``u``, the scalar ``vᵀ J u`` from
one backward pass per output against the same scalar from the reference, one Jacobian–vector
product per input (or, against an intended backward, its VJP).  Cheaper than any full Jacobian;
the tolerance of each probe is :func:`~.tolerance.probe_tolerance`.

For low-precision inputs, :func:`linearity_probes` then looks once more at the pairs whose
probes agree: a backward is linear in ``v``, so ``g(v1) + g(v2) - g(v1 + v2)`` is rounding
only, which the float64 twin of the backward measures; a backward that rounds through a lower
precision than its function departs from linearity by far more (a bfloat16 sum in a float32
RMSNorm: 10 to 5,000 times the allowance, where right backwards stay below a tenth of it).
No reference is needed, and the measure is a norm, not one random projection, so it does not
miss by chance where ``vᵀJu`` can."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from .results import ProbeCheck
from .tolerance import linearity_tolerance, probe_rounding, probe_tolerance

if TYPE_CHECKING:
    from .references import Reference
    from .under_test import BackwardUnderTest

__all__ = ["LINEARITY_TRIALS", "linearity_probes", "random_probes"]

LINEARITY_TRIALS = 2  # pairs (v1, v2) per output in a linearity probe


def random_probes(bwd: BackwardUnderTest, ref: Reference, n: int) -> list[ProbeCheck]:
    """``n`` probes per (output, input) pair, drawn from the check's generator."""
    out: list[ProbeCheck] = []
    if n <= 0:
        return out
    xs = bwd.s.xs
    nin = len(xs)
    dirs, vss = [], []
    for _ in range(n):
        us = [torch.randn(x.shape, generator=bwd.gen, dtype=torch.float64).to(x.dtype)
              for x in xs]
        vss.append((bwd.random_vs(), us))
        for j in range(nin):
            dirs.append([us[jj] if jj == j else None for jj in range(nin)])
    if not ref.by_rows:
        ref_vals, ref_errs = ref.directional_chunked(dirs, sum(y.numel() for y in bwd.outs))
    for p, (vs, us) in enumerate(vss):
        for k in range(len(bwd.outs)):
            grads, _ = bwd.backward({k: vs[k]})
            grads64 = bwd.backward64({k: vs[k]})
            v64 = vs[k].double()
            if ref.by_rows:
                want = ref.vjp({k: vs[k]})
            for j in range(nin):
                g, u = grads[j].double(), us[j].double()
                got = float((g * u).sum())
                if ref.by_rows:
                    e = want[j].double()
                    expected = float((e * u).sum())
                    scale = float((g * u).abs().sum()) + float((e * u).abs().sum())
                    tol = probe_tolerance(0.0, bwd.rtol * scale, bwd.floor * float(u.abs().sum()))
                else:
                    jv, je = ref_vals[p * nin + j][k], ref_errs[p * nin + j][k]
                    expected = float((v64 * jv).sum())
                    err = float((v64.abs() * je).sum())
                    if grads64 is not None:
                        g64 = grads64[j]
                        rounding = probe_rounding(float((g - g64).norm()),
                                                  bwd.forward_rounding, float(g64.norm()))
                    else:
                        scale = float((g * u).abs().sum()) + float((v64 * jv).abs().sum())
                        rounding = bwd.rtol * scale
                    tol = probe_tolerance(err, rounding, bwd.floor * float(u.abs().sum()))
                if not (bool(torch.isfinite(xs[j]).all())
                        and bool(torch.isfinite(bwd.outs[k]).all())):
                    tol = math.inf  # NaN/inf in or out: blocks.unchecked_columns, _rows
                out.append(ProbeCheck(bwd.out_names[k], bwd.s.names[j], got, expected, tol))
    return out


def linearity_probes(bwd: BackwardUnderTest, probes: list[ProbeCheck],
                     affine: dict[str, bool]) -> list[ProbeCheck]:
    """Linearity probes of the pairs whose ``vᵀJu`` probes all agree, for inputs with a
    float64 twin (:meth:`~.under_test.BackwardUnderTest.backward64`); only the failed ones
    are returned (``kind="linearity"``: ``got`` is ``‖g(v1) + g(v2) - g(v1 + v2) - g(0)‖``
    summed over ``LINEARITY_TRIALS`` pairs, ``expected`` 0, the tolerance
    :func:`~.tolerance.linearity_tolerance`).  ``g(0)`` is taken off for inputs whose
    backward adds a term that does not depend on ``v`` (``affine``)."""
    if bwd.twin is None:
        return []
    bad = {(p.output, p.input) for p in probes if not p.agree}
    nin = len(bwd.s.xs)
    out: list[ProbeCheck] = []
    for k, y in enumerate(bwd.outs):
        if all((bwd.out_names[k], nm) in bad for nm in bwd.s.names):
            continue
        dev, delta, size = [0.0] * nin, [0.0] * nin, [0.0] * nin
        zero = bwd.backward({k: torch.zeros_like(y).detach()})[0]
        for _ in range(LINEARITY_TRIALS):
            v1, v2 = bwd.random_vs()[k], bwd.random_vs()[k]
            gs = [bwd.backward({k: v})[0] for v in (v1, v2, v1 + v2)]
            maybe64 = [bwd.backward64({k: v}) for v in (v1, v2, v1 + v2)]
            g64 = [g for g in maybe64 if g is not None]
            if len(g64) < len(maybe64):
                return out
            for j, nm in enumerate(bwd.s.names):
                g0 = zero[j].double() if affine.get(nm) else 0.0
                d = gs[0][j].double() + gs[1][j].double() - gs[2][j].double() - g0
                dev[j] += float(d.norm())
                delta[j] += sum(float((g[j].double() - h[j]).norm())
                                for g, h in zip(gs, g64, strict=True))
                size[j] += sum(float(h[j].norm()) for h in g64)
        for j, nm in enumerate(bwd.s.names):
            if (bwd.out_names[k], nm) in bad:
                continue
            tol = linearity_tolerance(delta[j], bwd.forward_rounding, size[j])
            if dev[j] > tol:
                out.append(ProbeCheck(bwd.out_names[k], nm, dev[j], 0.0, tol,
                                      kind="linearity"))
    return out
