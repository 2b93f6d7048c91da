"""Compressed sparse Jacobians (``gradarg.SparseJacobian``) against PyTorch's dense routes.

Run as ``python benchmarks/sparse.py`` (``nox -s bench`` runs it after ``benchmarks/jacobian.py``
with ``OMP_NUM_THREADS=1``).  Flags: ``--quick`` (fewer repeats), ``--markdown``,
``--clock cpu``, ``--repeats N``.

Cases (each checked against ``torch.func.jacrev`` before timing):

* ``tridiagonal``: 1-D stencil ``f(u)_i = u_{i-1} - 2u_i + u_{i+1} + sin(u_i)``, n = 4096, float64;
* ``5-point``: 2-D stencil (5-point Laplacian plus ``u³``) on a 64 × 64 grid, float64;
* ``per-sample MLP``: ``Linear(16, 32)-tanh-Linear(32, 16)`` applied to a batch of 256
  (a block-diagonal 4096 × 4096 Jacobian), float32.

Dense routes: ``jacrev``, ``jacfwd`` (``torch.func``) and ``AF vec``
(``torch.autograd.functional.jacobian(vectorize=True)``).  The compressed route is a call of a
``SparseJacobian`` built (and coloured) before timing, returning sparse COO; its colouring time
is reported on its own.  Times are medians of interleaved repeats (every repeat calls every
route once, in a shuffled order); ratios are against the fastest dense route of the same run.

Peak memory is measured in a fresh subprocess per size: after building the pattern and its
colouring, freed memory is returned to the OS (``malloc_trim``), the kernel's peak-RSS counter
is reset (``/proc/self/clear_refs``) and the rise of ``VmHWM`` over one call is reported.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from timing import sample, use_clock
from torch.autograd.functional import jacobian as af_jacobian

import gradarg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sparse"))
from problems import stencil_1d, stencil_2d

DENSE = ("jacrev", "jacfwd", "AF vec")


# --------------------------------------------------------------------------- problems


def tridiagonal(n: int) -> torch.Tensor:
    i = torch.arange(n)
    idx = torch.stack([torch.cat([i, i[1:], i[:-1]]), torch.cat([i, i[:-1], i[1:]])])
    return torch.sparse_coo_tensor(
        idx, torch.ones(idx.shape[1], dtype=torch.bool), (n, n), check_invariants=True
    )


def five_point(s: int) -> torch.Tensor:
    """COO pattern of shape (s, s, s, s): output (a, b) reads (a±1, b) and (a, b±1)."""
    a, b = torch.meshgrid(torch.arange(s), torch.arange(s), indexing="ij")
    a, b = a.flatten(), b.flatten()
    parts = []
    for da, db in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
        ok = (a + da >= 0) & (a + da < s) & (b + db >= 0) & (b + db < s)
        parts.append(torch.stack([a[ok], b[ok], a[ok] + da, b[ok] + db]))
    idx = torch.cat(parts, 1)
    return torch.sparse_coo_tensor(
        idx, torch.ones(idx.shape[1], dtype=torch.bool), (s, s, s, s), check_invariants=True
    ).coalesce()


def mlp(d_in: int = 16, hidden: int = 32, d_out: int = 16):
    g = torch.Generator().manual_seed(0)
    w1 = torch.randn(hidden, d_in, generator=g) / d_in**0.5
    w2 = torch.randn(d_out, hidden, generator=g) / hidden**0.5

    def f(xb: torch.Tensor) -> torch.Tensor:
        return torch.tanh(xb @ w1.T) @ w2.T

    return f


def per_sample(batch: int, d_in: int, d_out: int) -> torch.Tensor:
    """COO pattern (batch, d_out, batch, d_in): output row b reads input row b only."""
    b, o, i = torch.meshgrid(
        torch.arange(batch), torch.arange(d_out), torch.arange(d_in), indexing="ij"
    )
    idx = torch.stack([b.flatten(), o.flatten(), b.flatten(), i.flatten()])
    return torch.sparse_coo_tensor(
        idx, torch.ones(idx.shape[1], dtype=torch.bool), (batch, d_out, batch, d_in),
        check_invariants=True,
    )


@dataclass
class Case:
    name: str
    size: str
    fn: Callable[[torch.Tensor], torch.Tensor]
    x: torch.Tensor
    pattern: torch.Tensor
    target: float  # required speed-up over the reference
    reference: str  # "best" (fastest dense route) or a route name
    sj: gradarg.SparseJacobian | None = None
    times: dict[str, float] = field(default_factory=dict)


def build_cases() -> list[Case]:
    g = torch.Generator().manual_seed(1)
    n, s = 4096, 64
    return [
        Case("tridiagonal", f"n={n}", stencil_1d,
             torch.randn(n, generator=g, dtype=torch.float64), tridiagonal(n), 100, "best"),
        Case("5-point", f"{s}x{s}", stencil_2d,
             torch.randn(s, s, generator=g, dtype=torch.float64), five_point(s), 50, "best"),
        Case("per-sample MLP", "256 x (16->16)", mlp(),
             torch.randn(256, 16, generator=g), per_sample(256, 16, 16), 20, "jacrev"),
    ]


# --------------------------------------------------------------------------- timing



def routes(case: Case) -> dict[str, Callable[[], object]]:
    fn, x, sj = case.fn, case.x, case.sj
    assert sj is not None
    return {
        "jacrev": lambda: torch.func.jacrev(fn)(x),
        "jacfwd": lambda: torch.func.jacfwd(fn)(x),
        "AF vec": lambda: af_jacobian(fn, x, vectorize=True),
        "compressed": lambda: sj(fn, x),
        # the obvious loop: the pattern passed every call (its colouring is kept after the first)
        "jacobian(P)": lambda: gradarg.jacobian(fn, x, sparsity=case.pattern),
    }


def measure(case: Case, repeats: int, min_sample: float) -> None:
    start = time.perf_counter()
    case.sj = gradarg.SparseJacobian(case.pattern, case.x.shape)
    case.times["build"] = time.perf_counter() - start
    impls = routes(case)
    ref = impls["jacrev"]()
    tol = 1e-12 if case.x.dtype == torch.float64 else 1e-5
    for name, call in impls.items():
        got = call()
        dense = got.to_dense() if got.layout != torch.strided else got
        if not torch.allclose(dense, ref, rtol=tol, atol=tol):
            raise AssertionError(f"{case.name}: {name} differs from jacrev")
        del got, dense
    del ref
    names = list(impls)
    first = {k: sample(impls[k], 1) for k in names}
    number = {k: max(1, int(min_sample / max(first[k], 1e-7)) + 1) for k in names}
    results: dict[str, list[float]] = {k: [] for k in names}
    rng = random.Random(case.name)
    gc.collect()
    for _ in range(repeats):
        order = names[:]
        rng.shuffle(order)
        for k in order:
            results[k].append(sample(impls[k], number[k]))
    for k in names:
        case.times[k] = statistics.median(results[k])


# --------------------------------------------------------------------------- memory


def _vm(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def memory_probe(route: str, n: int) -> dict[str, float]:
    """Peak RSS rise over one Jacobian of the 1-D stencil at size n (run in a fresh process)."""
    torch.set_num_threads(1)
    x = torch.randn(n, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    if route == "compressed":
        sj = gradarg.SparseJacobian(tridiagonal(n))
        sj(stencil_1d, x)  # warm-up at a tiny size would not load the same kernels

        def call():
            return sj(stencil_1d, x)
    else:
        torch.func.jacrev(stencil_1d)(x[:8])  # warm-up (loads vmap's decompositions)

        def call():
            return torch.func.jacrev(stencil_1d)(x)
    gc.collect()
    with contextlib.suppress(OSError):  # hand freed memory back to the OS
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset the peak-RSS counter VmHWM to the current RSS
    base = _vm("VmRSS")
    out = call()
    peak = _vm("VmHWM")
    nnz = out._nnz() if out.layout == torch.sparse_coo else out.numel()
    return {"route": route, "n": n, "peak": peak - base, "nnz": nnz}


def memory_table(quick: bool) -> list[dict[str, float]]:
    sizes = {"compressed": [4096, 16384, 65536] + ([] if quick else [262144]),
             "jacrev": [1024, 2048] + ([] if quick else [4096])}
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    rows = []
    for route, ns in sizes.items():
        for n in ns:
            out = subprocess.run(
                [sys.executable, __file__, "--memory-probe", route, str(n)],
                capture_output=True, text=True, env=env, check=True,
            )
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return rows


def coloring_times() -> list[tuple[str, int, int, float]]:
    out = []
    for label, pattern, shape in (
        ("tridiagonal n=16384", tridiagonal(16384), None),
        ("5-point 128x128 (n=16384)", five_point(128), (128, 128)),
        ("per-sample 1024 x (16->16) (n=16384)", per_sample(1024, 16, 16), (1024, 16)),
    ):
        for method in ("reverse", "forward"):
            sj = gradarg.SparseJacobian(pattern, shape, method=method)
            out.append((label, method, sj.passes, sj.coloring_seconds))
    return out


# --------------------------------------------------------------------------- report


def table(headers: list[str], body: list[list[str]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(headers) + " |")
        print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|")
        for r in body:
            print("| " + " | ".join(r) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(headers)]
    print("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in
                    enumerate(zip(headers, widths, strict=True))))
    for r in body:
        print("  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in
                        enumerate(zip(r, widths, strict=True))))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    p.add_argument("--memory-probe", nargs=2, metavar=("ROUTE", "N"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.memory_probe:
        print(json.dumps(memory_probe(args.memory_probe[0], int(args.memory_probe[1]))))
        return 0
    use_clock(args.clock)
    repeats = args.repeats or (3 if args.quick else 7)
    print(
        f"\nSparse Jacobians by compression | gradarg {gradarg.__version__} | torch "
        f"{torch.__version__} | Python {platform.python_version()} | torch threads "
        f"{torch.get_num_threads()} (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})"
    )
    print(
        f"{args.clock}-clock ms per Jacobian, median of {repeats} interleaved repeats; "
        f"compressed = SparseJacobian call (coloured beforehand), sparse COO result; "
        f"every route allclose to jacrev before timing\n"
    )
    start = time.perf_counter()
    cases = build_cases()
    for c in cases:
        print(f"[{c.name}]", file=sys.stderr, flush=True)
        measure(c, repeats, 0.002)
    headers = ["case", "size", "nnz", "passes", *DENSE, "compressed", "reference",
               "speed-up", "target", "colouring ms"]
    body, verdicts = [], []
    for c in cases:
        t = c.times
        assert c.sj is not None
        ref_name = min(DENSE, key=lambda k: t[k]) if c.reference == "best" else c.reference
        speedup = t[ref_name] / t["compressed"]
        verdicts.append((c, ref_name, speedup))
        body.append([c.name, c.size, str(c.sj.nnz), f"{c.sj.passes} ({c.sj.mode})",
                     *(f"{t[k] * 1e3:.2f}" for k in DENSE), f"{t['compressed'] * 1e3:.3f}",
                     ref_name, f"{speedup:.0f}x", f">= {c.target:.0f}x",
                     f"{c.sj.coloring_seconds * 1e3:.0f}"])
    table(headers, body, args.markdown)
    print("\ngradarg.jacobian(fn, x, sparsity=P) called with the same P every time (colour once):")
    table(["case", "jacobian(P) ms", "SparseJacobian call ms", "ratio"],
          [[c.name, f"{c.times['jacobian(P)'] * 1e3:.3f}", f"{c.times['compressed'] * 1e3:.3f}",
            f"{c.times['jacobian(P)'] / c.times['compressed']:.2f}"] for c in cases],
          args.markdown)
    print("\nColouring time at n = 16384 (networkx greedy_color, largest_first, with the "
          "intersection graph's construction), paid once per pattern:")
    table(["pattern", "side", "colours", "seconds"],
          [[lab, side, str(k), f"{sec:.3f}"] for lab, side, k, sec in coloring_times()],
          args.markdown)
    print("\nPeak memory of one Jacobian of the 1-D stencil (float64), fresh process per row "
          "(rise of VmHWM over the call):")
    mem = memory_table(args.quick)
    table(["route", "n", "entries kept", "peak MB", "bytes / entry", "8 n^2 MB"],
          [[r["route"], str(r["n"]), str(r["nnz"]), f"{r['peak'] / 2**20:.1f}",
            f"{r['peak'] / r['nnz']:.0f}", f"{8 * r['n'] ** 2 / 2**20:.0f}"] for r in mem],
          args.markdown)
    comp = [r for r in mem if r["route"] == "compressed"]
    grow = (comp[-1]["peak"] / comp[0]["peak"]) / (comp[-1]["nnz"] / comp[0]["nnz"])
    print(f"\nTotal {time.perf_counter() - start:.0f} s.\n\nSummary")
    ok = True
    for c, ref_name, s in verdicts:
        holds = s >= c.target
        ok &= holds
        print(f"- {c.name} {c.size}: {s:.0f}x faster than {ref_name} with {c.sj.passes} "
              f"passes (target >= {c.target:.0f}x): {'HOLDS' if holds else 'FAILS'}")
    tri = cases[0].sj
    print(f"- tridiagonal in 3 passes: {'HOLDS' if tri.passes == 3 else 'FAILS'}")
    print(f"- compressed peak memory from n = {comp[0]['n']} to {comp[-1]['n']}: grows "
          f"{comp[-1]['peak'] / comp[0]['peak']:.1f}x for {comp[-1]['nnz'] / comp[0]['nnz']:.0f}x "
          f"the entries (ratio {grow:.2f}; n^2 grew {(comp[-1]['n'] / comp[0]['n']) ** 2:.0f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
