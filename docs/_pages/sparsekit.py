"""Figures for the sparse-Jacobians guide: a coloured pattern, its compressed matrix and the
recovered Jacobian side by side; time and passes against n. Page plumbing, not gradarg."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pagekit  # noqa: F401  (sets the opaque white figure style)

# Colours that read on white, one per pass (tab10 without its grey)
PASS_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                "#e377c2", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31"]


def _rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])


def compression_figure(pattern: Any, colors: Any, compressed: Any, jac: Any, title: str):
    """Three heatmaps: the pattern with each row in its pass's colour; the compressed matrix
    (one column per backward pass, ``n × passes``); the Jacobian read off it (``m × n``)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    pat = np.asarray(pattern, dtype=bool)
    colors = np.asarray(colors)
    comp = np.asarray(compressed, dtype=float)          # passes × n
    mat = np.asarray(jac, dtype=float)
    m, n = pat.shape
    k = comp.shape[0]
    img = np.ones((m, n, 3))
    for i in range(m):
        img[i, pat[i]] = _rgb(PASS_COLOURS[colors[i] % len(PASS_COLOURS)])
    vmax = float(np.abs(mat).max()) or 1.0
    fig = plt.figure(figsize=(11, 3.9))
    grid = fig.add_gridspec(1, 3, width_ratios=[n, max(1.6 * k, 3), n], wspace=0.35)
    ax0 = fig.add_subplot(grid[0])
    ax0.imshow(img, interpolation="nearest", aspect="auto")
    ax0.set_title(f"pattern, rows coloured by pass\n{m} × {n}", fontsize=9)
    ax0.set_xlabel("input j")
    ax0.set_ylabel("output i")
    handles = [Patch(color=PASS_COLOURS[c % len(PASS_COLOURS)], label=f"pass {c}")
               for c in range(k)]
    ax0.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(-0.02, -0.18),
               ncol=min(k, 4), frameon=False)
    ax1 = fig.add_subplot(grid[1])
    ax1.imshow(comp.T, cmap="RdBu_r", vmin=-vmax, vmax=vmax, interpolation="nearest",
               aspect="auto")
    ax1.set_title(f"compressed (vᵀJ per pass)\n{n} × {k}", fontsize=9)
    ax1.set_xticks(range(k))
    for c, label in enumerate(ax1.get_xticklabels()):
        label.set_color(PASS_COLOURS[c % len(PASS_COLOURS)])
        label.set_fontweight("bold")
    ax1.set_xlabel("pass")
    ax1.set_ylabel("input j")
    ax2 = fig.add_subplot(grid[2])
    shown = np.where(pat, mat, np.nan)
    cmap = plt.get_cmap("RdBu_r").copy()
    cmap.set_bad("white")
    im = ax2.imshow(shown, cmap=cmap, vmin=-vmax, vmax=vmax, interpolation="nearest",
                    aspect="auto")
    ax2.set_title(f"recovered Jacobian\n{m} × {n}", fontsize=9)
    from matplotlib.ticker import MaxNLocator

    for ax in (ax0, ax1, ax2):
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    for ax in (ax0, ax2):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax2.set_xlabel("input j")
    ax2.set_ylabel("output i")
    fig.colorbar(im, ax=ax2, shrink=0.8)
    fig.suptitle(title, fontsize=10, y=1.02)
    return fig


def median_times(calls: dict[str, Callable[[], Any]], repeats: int = 5,
                 min_sample: float = 0.01) -> dict[str, float]:
    """Median CPU seconds per call of each route (``time.process_time``: with one torch thread
    it counts the work of the call, not the moments another process had the CPU). Every repeat
    runs every route once, in turn; a fast call is repeated inside one sample until the sample
    lasts ``min_sample`` seconds, so the clock's resolution matters less."""
    clock = time.process_time
    number = {}
    for name, call in calls.items():
        t0 = clock()
        call()                                  # warm-up, and an estimate of its time
        number[name] = max(1, int(min_sample / max(clock() - t0, 1e-6)))
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            t0 = clock()
            for _ in range(number[name]):
                call()
            samples[name].append((clock() - t0) / number[name])
    return {name: statistics.median(v) for name, v in samples.items()}


def sweep_figure(sizes, times, passes, title: str):
    """Time (left) and passes (right) against n, log-log, one line per route."""
    import matplotlib.pyplot as plt

    styles = {"compressed": ("#d62728", "o"), "jacrev": ("#1f77b4", "s"),
              "jacfwd": ("#2ca02c", "^"), "AF vectorize": ("#9467bd", "D")}
    fig, (ax_t, ax_p) = plt.subplots(1, 2, figsize=(10, 3.8))
    for route, per_n in times.items():
        colour, marker = styles[route]
        ns = [n for n in sizes if n in per_n]
        ax_t.plot(ns, [per_n[n] * 1e3 for n in ns], marker=marker, color=colour, label=route)
    for route, per_n in passes.items():
        colour, marker = styles[route]
        ns = [n for n in sizes if n in per_n]
        ax_p.plot(ns, [per_n[n] for n in ns], marker=marker, color=colour, label=route)
    for ax in (ax_t, ax_p):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("n (tridiagonal Jacobian, n × n)")
        ax.grid(alpha=0.3, which="both")
    ax_t.set_ylabel("CPU time per Jacobian (ms)")
    ax_p.set_ylabel("VJP / JVP passes")
    ax_t.legend(fontsize=8)
    ax_p.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


_COMPILE_RUN = """\
import time
import torch
import gradarg
torch.set_num_threads(1)
{source}
x = torch.zeros({n}, dtype=torch.float64)
sj = gradarg.SparseJacobian(gradarg.jacobian_sparsity({name}, x))
start = time.perf_counter()
torch.compile(torch.sin, fullgraph=True)(torch.zeros(3))
startup = time.perf_counter() - start
jac = sj.compile({name}, package=False)
jac(x)
print(startup, jac.compile_seconds)
"""


_PACKAGE_RUN = """\
import time
import torch
import gradarg
torch.set_num_threads(1)
{source}
x = torch.zeros({n}, dtype=torch.float64)
pattern = torch.load({pattern!r}) if {later} else gradarg.jacobian_sparsity({name}, x)
torch.save(pattern, {pattern!r})
jac = gradarg.SparseJacobian(pattern).compile({name})
jac(x)
import sys
print(time.time(), jac.compile_seconds, jac.artifact, "torch._dynamo" in sys.modules)
"""


def package_in_new_processes(fn: Callable[..., Any], n: int) -> dict[str, Any]:
    """``SparseJacobian.compile(fn)`` (which packages) at ``n`` float64 unknowns in two fresh
    Python processes sharing one new inductor cache folder: the first detects the pattern,
    keeps it in a file and compiles (``first_s``: its ``compile_seconds``); the second, a
    second run of a script that keeps its pattern, reads it and loads the package
    (``later_s``: seconds from the moment it was started to its first Jacobian, Python's own
    start and the imports included; ``artifact``; ``dynamo``: whether it imported Dynamo)."""
    import inspect
    import os
    import subprocess
    import sys
    import tempfile
    import textwrap

    source = textwrap.dedent(inspect.getsource(fn))
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="inductor-page-") as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "OMP_NUM_THREADS": "1"}
        pattern = os.path.join(cache, "pattern.pt")
        for later in (False, True):
            script = _PACKAGE_RUN.format(source=source, n=n, name=fn.__name__,
                                         pattern=pattern, later=later)
            started = time.time()
            done = subprocess.run([sys.executable, "-c", script], capture_output=True,
                                  text=True, env=env, check=True)
            finished, seconds, artifact, dynamo = done.stdout.split()[-4:]
            if later:
                out.update(later_s=float(finished) - started, artifact=artifact,
                           dynamo=dynamo == "True")
            else:
                out["first_s"] = float(seconds)
    return out


def compile_in_new_processes(fn: Callable[..., Any], n: int, runs: int = 2
                             ) -> list[tuple[float, float]]:
    """``(torch.compile's start-up, compile_seconds)`` of ``SparseJacobian.compile(fn,
    package=False)`` at
    ``n`` float64 unknowns in ``runs`` fresh Python processes, one after the other, sharing one
    new, empty inductor cache folder: the first as on a machine that never compiled ``fn``, the
    later ones as a second run of the same script. ``fn``'s source is read with
    ``inspect.getsource`` (it must not use names defined elsewhere on the page)."""
    import inspect
    import os
    import subprocess
    import sys
    import tempfile
    import textwrap

    script = _COMPILE_RUN.format(source=textwrap.dedent(inspect.getsource(fn)), n=n,
                                 name=fn.__name__)
    out = []
    with tempfile.TemporaryDirectory(prefix="inductor-page-") as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "OMP_NUM_THREADS": "1"}
        for _ in range(runs):
            done = subprocess.run([sys.executable, "-c", script], capture_output=True,
                                  text=True, env=env, check=True)
            startup, seconds = done.stdout.split()[-2:]
            out.append((float(startup), float(seconds)))
    return out
