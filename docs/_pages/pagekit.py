"""Page plumbing for the gradarg site, imported by hidden cells only.

Glue helpers (live numbers, formulas, tables into prose), one figure style that reads in the
book theme's light and dark mode, live error messages, and the timing and peak-memory
helpers of the measurement pages. Nothing here is part of the ``gradarg`` package.
"""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from IPython.display import Markdown, Math
from myst_nb import glue

import gradarg

__all__ = [
    "docstring_sentence",
    "error_message",
    "glue_math",
    "glue_md",
    "glue_table",
    "glue_text",
    "human_bytes",
    "median_times",
    "peak_bytes",
    "raises",
    "torchrun",
    "vjp_figure",
]


# --------------------------------------------------------------------------- glue


def glue_text(name: str, value: Any, digits: int = 4) -> None:
    """Glue ``value`` for ``{glue:text}``: numbers and tensors through ``gradarg.fmt``."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        text = str(tuple(value))                    # a shape
    else:
        text = gradarg.fmt(value, digits)
    glue(name, text, display=False)


def glue_math(name: str, latex: str) -> None:
    """Glue a display formula for ``{glue:math}``."""
    glue(name, Math(latex), display=False)


def glue_lines(name: str, *rows: str) -> None:
    """Glue a display formula set over several aligned lines (``&=`` marks where they align),
    for an equation too wide for the column on one line."""
    glue_math(name, r"\begin{aligned} " + r" \\ ".join(rows) + r" \end{aligned}")


def glue_md(name: str, markdown: str) -> None:
    """Glue Markdown for ``{glue:md}`` (inline role or directive with ``:format: myst``)."""
    glue(name, Markdown(markdown), display=False)


def glue_table(name: str, rows: Sequence[Sequence[Any]], headers: Sequence[str],
               digits: int = 4) -> None:
    """Glue ``gradarg.markdown_table(rows, headers)``; show it with the directive
    ``{glue:md} name`` and the option ``:format: myst``."""
    glue_md(name, gradarg.markdown_table(rows, headers, digits))


# --------------------------------------------------------------------------- processes


def torchrun(script: str, processes: int = 2) -> dict[int, str]:
    """Run ``docs/guide/scripts/<script>`` with ``torchrun --standalone`` on ``processes``
    processes (CPU, one thread each); return what each process printed, by rank (torchrun
    writes each process's standard output to its own file).  A failure fails the build with
    the script's error output."""
    import subprocess
    import tempfile
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "guide" / "scripts" / script
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as logs:
        done = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--standalone",
             f"--nproc-per-node={processes}", f"--log-dir={logs}", "--redirects=1",
             str(path)],
            capture_output=True, text=True, timeout=300, env=env, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{script} failed:\n{done.stderr[-4000:]}")
        return {rank: next(Path(logs).glob(f"**/{rank}/stdout.log")).read_text()
                for rank in range(processes)}


# --------------------------------------------------------------------------- errors, docs


def raises(expected: type[BaseException], action: Callable[[], Any]) -> BaseException:
    """Run ``action()``; it must raise ``expected``. Print ``Type: message``, return it."""
    try:
        action()
    except expected as err:
        print(f"{type(err).__name__}: {err}")
        return err
    raise AssertionError(f"expected {expected.__name__}, but nothing was raised")


def error_message(expected: type[BaseException], action: Callable[[], Any],
                  must_contain: str) -> str:
    """The live message of the exception ``action()`` raises, checked to contain a phrase."""
    try:
        action()
    except expected as err:
        message = str(err)
    else:
        raise AssertionError(f"expected {expected.__name__}, but nothing was raised")
    assert must_contain in message, (must_contain, message)
    return message


def docstring_sentence(doc: str, phrase: str) -> str | None:
    """The first sentence of a docstring containing ``phrase``, whitespace collapsed."""
    text = " ".join(doc.split())
    sentences = re.split(r"(?<!w\.r\.t\.)(?<=[.!?)])\s+(?=[A-Z`])", text)
    return next((s for s in sentences if phrase in s), None)


# --------------------------------------------------------------------------- figures


def _figure_style() -> None:
    """Opaque white figures: the inline backend's default is transparent, unreadable on the
    dark theme's background."""
    import matplotlib.pyplot as plt  # activates the inline backend first, then we override

    plt.rcParams.update({
        "figure.facecolor": "white",
        "figure.edgecolor": "white",
        "savefig.facecolor": "white",
        "savefig.edgecolor": "white",
        "savefig.transparent": False,
        "axes.facecolor": "white",
        "text.color": "#222222",
        "axes.labelcolor": "#222222",
        "xtick.color": "#222222",
        "ytick.color": "#222222",
        "figure.dpi": 100,
    })


with contextlib.suppress(ImportError):
    _figure_style()


# --------------------------------------------------------------------------- measuring


def median_times(*calls: Callable[[], Any], repeats: int = 3) -> list[float]:
    """Median time of each call; the calls alternate, so a busy moment hits all of them."""
    for call in calls:
        call()                                  # warm-up
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeats):
        for call, record in zip(calls, times, strict=True):
            t0 = time.perf_counter()
            call()
            record.append(time.perf_counter() - t0)
    return [statistics.median(record) for record in times]


@contextlib.contextmanager
def _quiet_stderr():
    """Drop what C++ code writes to the process's stderr (the profiler logs two lines)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def peak_bytes(call: Callable[[], Any]) -> int:
    """Peak of the bytes held by tensors allocated while ``call()`` runs (CPU).

    The autograd profiler with ``profile_memory=True`` records every allocation and free of
    the CPU allocator; the running sum of those events, in order, is the memory held by
    tensors created during the call, and its maximum the peak. Deterministic: bytes
    requested from torch's allocator, not the process's resident memory.
    """
    from torch.autograd import profiler

    with _quiet_stderr(), profiler.profile(use_cpu=True, profile_memory=True) as prof:
        call()
    events = [e for e in prof.kineto_results.events() if e.name() == "[memory]"]
    held = peak = 0
    for e in sorted(events, key=lambda e: e.start_ns()):
        held += e.nbytes()                      # > 0 for an allocation, < 0 for a free
        peak = max(peak, held)
    return peak


def human_bytes(nbytes: float) -> str:
    """``1536`` -> ``'1.5 KiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if nbytes < 1024 or unit == "GiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.3g} {unit}"
        nbytes /= 1024
    raise AssertionError("unreachable")


def vjp_figure(v: Any, jac: Any, result: Any, digits: int = 3):
    """The picture of ``vᵀJ``: ``v`` as a column beside the rows of ``J`` it weighs, and the
    result as a row under the columns it sums. Heatmaps with every entry written in."""
    import matplotlib.pyplot as plt
    import numpy as np

    v = np.asarray(v, dtype=float).reshape(-1)
    mat = np.asarray(jac, dtype=float).reshape(v.size, -1)
    res = np.asarray(result, dtype=float).reshape(1, -1)
    m, n = mat.shape
    fig = plt.figure(figsize=(1.6 + 0.9 * (n + 1), 1.4 + 0.6 * (m + 1)))
    grid = fig.add_gridspec(2, 2, width_ratios=[1, n], height_ratios=[m, 1],
                            wspace=0.08, hspace=0.35)
    panels = [(grid[0, 0], v.reshape(-1, 1), "v  (like y)"),
              (grid[0, 1], mat, "J = ∂y/∂x  (rows: y, columns: x)"),
              (grid[1, 1], res, "vᵀJ = x.grad  (like x)")]
    for spec, data, title in panels:
        ax = fig.add_subplot(spec)
        vmax = float(np.abs(data).max()) or 1.0
        ax.imshow(data, cmap="RdBu_r", vmin=-vmax, vmax=vmax, aspect="auto")
        for (i, j), val in np.ndenumerate(data):
            ax.text(j, i, gradarg.fmt(val, digits), ha="center", va="center", fontsize=10,
                    color="white" if abs(val) > 0.6 * vmax else "black")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(title, fontsize=9)
    return fig
