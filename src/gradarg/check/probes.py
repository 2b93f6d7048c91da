"""The random probes of ``check_backward``: for random ``v`` and ``u``, the scalar ``vᵀ J u`` from
one backward pass per output against the same scalar from the reference, one Jacobian–vector
product per input (or, against an intended backward, its VJP).  Cheaper than any full Jacobian;
the tolerance of each probe is :func:`~.tolerance.probe_tolerance`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .results import ProbeCheck
from .tolerance import probe_rounding, probe_tolerance

if TYPE_CHECKING:
    from .references import Reference
    from .under_test import BackwardUnderTest

__all__ = ["random_probes"]


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
                    tol = probe_tolerance(0.0, bwd.rtol * scale)
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
                    tol = probe_tolerance(err, rounding)
                out.append(ProbeCheck(bwd.out_names[k], bwd.s.names[j], got, expected, tol))
    return out
