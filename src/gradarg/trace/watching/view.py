"""Views of a watched step: the gradient-flow rows, an aligned text table and a plot.

Reads a :class:`~gradarg.trace.watching.watch.GradWatch` record; adds no hook and changes nothing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..graph.values import fmt_norm as _f
from ..graph.values import state

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["plot", "rows", "table"]


def rows(w: GradWatch) -> list[dict[str, Any]]:
    """The gradient-flow table as dicts, one per innermost module call in forward order.

    Keys: ``module``, ``call`` (1, 2, ... for a module that ran several times, else None),
    ``type``, ``shape`` (output), ``grad_out`` (norm of the gradient arriving at the output),
    ``grad_in`` (norm of the gradient with respect to the input: when several calls take the
    same input tensor, the total over them, flagged), ``params`` (norm of the module's
    parameter gradients), ``flags``.
    """
    rows = []
    calls = w.modules
    number = {c.index: [d.index for d in calls if d.name == c.name] for c in calls}
    for c in w.layers():
        flags = []
        for what, v in (("out", c.grad_out), ("in", c.grad_in), ("params", c.param_norm)):
            s = state(v)
            if s in ("zero", "nonfinite"):
                flags.append(f"{what} {'0' if s == 'zero' else 'NaN/Inf'}")
        missing = [p for p in c.params if w.parameters[p].requires_grad and
                   w.parameters[p].grad is None]
        if missing:
            flags.append(f"no grad: {', '.join(p.rsplit('.', 1)[-1] for p in missing)}")
        if c.dead_units and c.dead_units[0]:
            flags.append(f"dead {c.dead_units[0]}/{c.dead_units[1]}")
        shared = w.calls.shared_total(c.index)
        if shared > 1:
            flags.append(f"input shared by {shared} calls: ‖grad in‖ is their total")
        if c.index in w.calls.late:
            flags.append("ran after the backward (recomputed by checkpointing?)")
        same = number[c.index]
        rows.append({"module": c.name, "call": same.index(c.index) + 1 if len(same) > 1 else None,
                     "type": c.kind,
                     "shape": "×".join(map(str, c.out_shape)) if c.out_shape else "",
                     "grad_out": c.grad_out, "grad_in": c.grad_in,
                     "params": c.param_norm, "flags": "; ".join(flags)})
    return rows


def table(w: GradWatch) -> str:
    """The gradient-flow table as aligned text (innermost modules in forward order)."""
    head = ["module", "type", "shape", "‖grad out‖", "‖grad in‖", "‖param grads‖", "flags"]
    body = [[r["module"] + (f" (call {r['call']})" if r["call"] else ""), r["type"],
             r["shape"], _f(r["grad_out"]), _f(r["grad_in"]), _f(r["params"]), r["flags"]]
            for r in rows(w)]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=True)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
             for row in [head, *body]]
    if not w.detail.full:
        lines.append(f"(the modules inside the model not recorded: {w.detail.why_light()})")
    return "\n".join(lines)


def plot(w: GradWatch, ax: Any = None, *, title: str | None = None) -> Any:
    """Gradient norms per module in forward order, log scale, zero and NaN/Inf marked.

    Draws, for each innermost module, the norm of the gradient arriving at its output
    (line) and of its parameters' gradients (bars). A zero norm cannot sit on a log axis:
    it is drawn as a triangle on the bottom edge; NaN/Inf as a cross on the top edge.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure if omitted.
    title : str, optional
        Defaults to :meth:`summary`.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ImportError
        matplotlib is not installed (``pip install gradarg[plot]``).
    """
    from ...show.plot import pyplot

    plt = pyplot("GradWatch.plot()")

    rows_ = rows(w)
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(6.0, 0.32 * len(rows_) + 2), 3.6),
                               layout="constrained")
    else:
        fig = ax.figure
    xs = list(range(len(rows_)))
    finite = [v for r in rows_ for v in (r["grad_out"], r["params"])
              if v is not None and math.isfinite(v) and v > 0]
    lo = min(finite) / 10 if finite else 1e-12
    hi = max(finite) * 10 if finite else 1.0
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    pb = [(x, r["params"]) for x, r in zip(xs, rows_, strict=True)
          if r["params"] is not None and math.isfinite(r["params"]) and r["params"] > 0]
    if pb:
        ax.bar([x for x, _ in pb], [v for _, v in pb], bottom=lo, color="#74c0fc",
               alpha=0.7, label="‖param grads‖")
    line = [(x, r["grad_out"]) for x, r in zip(xs, rows_, strict=True)
            if r["grad_out"] is not None and math.isfinite(r["grad_out"]) and
            r["grad_out"] > 0]
    if line:
        ax.plot([x for x, _ in line], [v for _, v in line], "o-", color="#1c7ed6",
                label="‖grad at output‖")
    zero = [x for x, r in zip(xs, rows_, strict=True)
            if state(r["grad_out"]) == "zero" or state(r["params"]) == "zero"]
    bad = [x for x, r in zip(xs, rows_, strict=True)
           if state(r["grad_out"]) == "nonfinite" or state(r["params"]) == "nonfinite"]
    if zero:
        ax.plot(zero, [lo] * len(zero), "v", color="#e8590c", markersize=10,
                clip_on=False, label="zero")
    if bad:
        ax.plot(bad, [hi] * len(bad), "X", color="#e03131", markersize=10,
                clip_on=False, label="NaN/Inf")
    ax.set_xticks(xs, [r["module"] for r in rows_], rotation=60, ha="right",
                  fontsize=8 if len(rows_) > 16 else 9)
    ax.set_xlabel("module (forward order: input → output)")
    ax.set_ylabel("gradient norm")
    ax.set_title(title if title is not None else w.summary(checks=False), fontsize=9, loc="left")
    ax.legend(fontsize=8, loc="best")
    ax.grid(True, which="major", axis="y", alpha=0.3)
    return fig
