"""Step through a recorded backward pass, node by node, in the order autograd ran them.

:class:`BackwardPlayer` turns a :class:`~gradarg.BackwardTrace` (the live record
of one ``backward``) into steps: at each node, the upstream gradient that arrived, the local
derivative the node applied (the factor for one-element tensors; the formula and shapes for
larger ones), what it sent along each edge, and at a leaf what was added to ``.grad``; the last
step shows every leaf's ``.grad``.  In a notebook or on a page it is the trace's drawing with
"previous / next / play" buttons (arrow keys too), the current node highlighted and the step
announced to screen readers; plain inline JavaScript, no kernel, no network.  Every number comes
from the trace: nothing is recomputed here.

May import: torch, :mod:`gradarg.show` and the trace room's own ``drawing``, ``operators``
(the rule each operation applies, in words), ``traced`` and ``values``.
"""

from __future__ import annotations

import html
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from ...show.render import fmt
from ..graph.operators import row
from .arguments import check_text, check_trace
from .drawing import LEGEND, cotangent_text, scroll_frame, trace_svg

if TYPE_CHECKING:
    from ..tape.traced import BackwardTrace, TracedNode

__all__ = ["BackwardPlayer", "Step"]


@dataclass(frozen=True)
class Step:
    """One step of the player: one node of the backward graph as it ran (or the final step).

    Attributes
    ----------
    index : int
        0 for the first node autograd ran.
    key : int or None
        The node's ``key`` in the trace (``None`` for the final step).
    title : str
        The node's label, e.g. ``"c = 8 * b"``, and its ``grad_fn`` class.
    arrived : str
        The upstream gradient that arrived at the node (values, or shape and norm).
    local : str
        The local derivative the node applied: ``"× 8"`` for one-element tensors, else the
        formula of its vector–Jacobian product with the shapes.
    sent : tuple of str
        What the node sent along each edge, one phrase per next node.
    text : str
        The whole step as one sentence (what a screen reader announces).
    """

    index: int
    key: int | None
    title: str
    arrived: str
    local: str
    sent: tuple[str, ...]
    text: str


def _shape(t: torch.Tensor | None) -> str:
    return "()" if t is None else str(tuple(t.shape))


def _factor(arrived: torch.Tensor | None, sent: torch.Tensor | None) -> str | None:
    """``"× 8"`` when both are one-element tensors and the factor is defined."""
    if arrived is None or sent is None or arrived.numel() != 1 or sent.numel() != 1:
        return None
    a = arrived.detach().reshape(()).to(torch.complex128 if arrived.is_complex() else
                                        torch.float64)
    if a == 0:
        return None
    return f"× {fmt(sent.detach().reshape(()).to(a.dtype) / a)}"


def _local(node: TracedNode) -> str:
    arrived = node.arrived
    sent = [g for g in node.grad_inputs if g is not None]
    factors = [_factor(arrived, g) for g in sent]
    if sent and all(f is not None for f in factors):
        if len(set(factors)) == 1:
            return f"local derivative {factors[0]}"
        return "local derivatives " + ", ".join(f for f in factors if f)
    rule = row(node.op).rule or f"the vector–Jacobian product of {node.op}"
    shapes = ", ".join(_shape(g) for g in sent) or "nothing"
    return f"{rule}: g {_shape(arrived)} → {shapes}"


def _steps(trace: BackwardTrace) -> list[Step]:
    by_key = {n.key: n for n in trace.nodes}
    steps: list[Step] = []
    for n in trace.executed:
        arrived = cotangent_text(n.arrived)
        title = f"{n.label} ({n.grad_fn})"
        if n.is_leaf:
            got = n.grad if n.grad is not None else n.arrived
            local = "a leaf: accumulates into .grad"
            added = f"added to {n.name or n.label}.grad: {cotangent_text(n.arrived)}"
            sent: tuple[str, ...] = (added,)
            text = (f"Step {len(steps) + 1}: {n.name or n.label} is a leaf. {arrived} arrived "
                    f"and is added to its .grad"
                    + (f", which now holds {cotangent_text(got)}." if got is not None else "."))
        else:
            local = _local(n)
            sent_list = []
            for g, child in zip(n.grad_inputs, n.children, strict=False):
                if child is None or g is None:
                    continue
                dst = by_key.get(child)
                name = "?" if dst is None else (dst.name or dst.label)
                sent_list.append(f"to {name}: {cotangent_text(g)}")
            sent = tuple(sent_list) or ("nothing (no input needs a gradient)",)
            text = (f"Step {len(steps) + 1}: {title}. Arrived: {arrived}. Applied: {local}. "
                    f"Sent {'; '.join(sent)}.")
        steps.append(Step(len(steps), n.key, title, arrived, local, sent, text))
    leaves = [(name, g) for name, g in trace.leaves.items()]
    final = "; ".join(f"{name}.grad = {cotangent_text(g) if g is not None else 'None'}"
                      for name, g in leaves)
    steps.append(Step(len(steps), None, "done: the gradients of the leaves",
                      "", "", tuple(f"{name}.grad = {cotangent_text(g) if g is not None else 'None'}"
                                    for name, g in leaves),
                      f"Done. {final}."))
    return steps


_STYLE = """
.ga-player{font-size:14px;max-width:100%;display:flex;flex-wrap:wrap;gap:4px 16px;
  align-items:flex-start}
.ga-player .ga-player-drawing{flex:0 1 auto;max-width:100%}
.ga-player .ga-player-side{flex:1 1 260px;min-width:0}
.ga-player .ga-player-bar{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin:6px 0}
.ga-player button{font-size:14px;padding:3px 10px;cursor:pointer}
.ga-player .ga-player-count{font-size:13px;margin-left:6px}
.ga-player .ga-player-panel{font-size:13px;line-height:1.45;border-left:3px solid #1c7ed6;
  padding:4px 10px;margin:4px 0;overflow-wrap:anywhere;min-height:5.5em}
.ga-player .ga-player-panel b{font-weight:600}
.ga-player svg .ga-node.ga-current rect{stroke:#e8590c;stroke-width:3}
.ga-player .ga-player-drawing .gradarg-trace{margin:0}
.ga-player:focus{outline:2px solid #1c7ed6;outline-offset:2px}
"""

_SCRIPT = """(function (root) {
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  var steps = JSON.parse(root.dataset.steps), i = 0, timer = null;
  var panel = root.querySelector(".ga-player-panel");
  var live = root.querySelector(".ga-player-live");
  var count = root.querySelector(".ga-player-count");
  var play = root.querySelector(".ga-player-play");
  function esc(s) { return String(s).replace(/[&<>]/g, function (c) {
    return {"&": "&amp;", "<": "&lt;", ">": "&gt;"}[c]; }); }
  function show(k) {
    i = Math.max(0, Math.min(steps.length - 1, k));
    var s = steps[i], rows = [];
    rows.push("<b>" + esc(s.title) + "</b>");
    if (s.arrived) rows.push("arrived: " + esc(s.arrived));
    if (s.local) rows.push(esc(s.local));
    s.sent.forEach(function (t) { rows.push(esc(t)); });
    panel.innerHTML = rows.join("<br>");
    count.textContent = "step " + (i + 1) + " of " + steps.length;
    live.textContent = s.text;
    root.querySelectorAll("svg .ga-node").forEach(function (g) {
      g.classList.toggle("ga-current", s.key !== null && g.dataset.key === String(s.key));
    });
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; play.textContent = "play"; } }
  root.querySelector(".ga-player-prev").addEventListener("click", function () {
    stop(); show(i - 1); });
  root.querySelector(".ga-player-next").addEventListener("click", function () {
    stop(); show(i + 1); });
  play.addEventListener("click", function () {
    if (timer) { stop(); return; }
    if (i >= steps.length - 1) show(0);
    play.textContent = "pause";
    timer = setInterval(function () {
      if (i >= steps.length - 1) { stop(); return; }
      show(i + 1); }, 1200);
  });
  root.addEventListener("keydown", function (e) {
    // in the drawing's own frame (a tab stop) the arrow keys scroll the drawing
    if (e.target.closest(".ga-player-drawing")) return;
    if (e.key === "ArrowRight") { stop(); show(i + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { stop(); show(i - 1); e.preventDefault(); }
    else if (e.key === "Home") { stop(); show(0); e.preventDefault(); }
    else if (e.key === "End") { stop(); show(steps.length - 1); e.preventDefault(); }
  });
  show(0);
})(document.getElementById("__ID__"));"""


class BackwardPlayer:
    """A recorded backward pass, step by step; from :meth:`gradarg.BackwardTrace.player`.

    Parameters
    ----------
    trace : BackwardTrace
        The record of one backward pass (:func:`gradarg.trace_backward`).
    source : str
        Label of the drawing's source box (``"gradient"``: the ``v`` the pass started from).

    Attributes
    ----------
    steps : list
        ``Step`` records (``title``, ``arrived``, ``local``, ``sent``, ``text``, ``key``): one
        per node autograd ran, in that order, then a final step with every leaf's ``.grad``.

    Examples
    --------
    >>> import torch, gradarg
    >>> a = torch.tensor(5.0, requires_grad=True)
    >>> b = a * a; c = 8 * b; d = torch.log(c)
    >>> trace = gradarg.trace_backward(d, names={"a": a, "b": b, "c": c, "d": d})
    >>> p = trace.player()
    >>> [s.local for s in p.steps[:3]]
    ['local derivative × 0.005', 'local derivative × 8', 'local derivative × 5']
    >>> p.steps[-1].sent
    ('a.grad = 0.4',)
    """

    def __init__(self, trace: BackwardTrace, *, source: str = "gradient") -> None:
        check_trace("trace", trace)
        check_text("source", source)
        self.trace = trace
        self.source = source
        self.steps: list[Step] = _steps(trace)

    def _repr_html_(self) -> str:
        uid = f"ga-player-{uuid.uuid4().hex[:12]}"
        data = json.dumps([{"key": s.key, "title": s.title, "arrived": s.arrived,
                            "local": s.local, "sent": list(s.sent), "text": s.text}
                           for s in self.steps])
        svg = trace_svg(self.trace, source=self.source)
        return (
            f'<div class="ga-player" id="{uid}" tabindex="0" role="group" '
            f'aria-label="Backward pass, step by step: use the buttons or the arrow keys" '
            f'data-steps="{html.escape(data, quote=True)}">'
            f"<style>{_STYLE}</style>"
            f'{scroll_frame(svg, "ga-player-drawing")}<div class="ga-player-side">'
            f'<div class="ga-player-bar">'
            f'<button type="button" class="ga-player-prev" aria-label="previous step">'
            f"previous</button>"
            f'<button type="button" class="ga-player-next" aria-label="next step">next</button>'
            f'<button type="button" class="ga-player-play">play</button>'
            f'<span class="ga-player-count" aria-hidden="true"></span></div>'
            f'<div class="ga-player-panel"></div>{LEGEND}'
            f'<div class="ga-player-live" aria-live="polite" '
            f'style="position:absolute;width:1px;height:1px;overflow:hidden;'
            f'clip:rect(0 0 0 0)"></div>'
            f"</div><script>{_SCRIPT.replace('__ID__', uid)}</script></div>"
        )

    def save(self, path: str) -> str:
        """Write the player as a standalone HTML page (opens offline in any browser); return
        the path written.  ``path``: a file name (a ``pathlib.Path`` works too)."""
        target = Path(path)
        target.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'>"
                        "<title>backward pass, step by step</title></head><body>"
                        + self._repr_html_() + "</body></html>", encoding="utf-8")
        return str(target)

    def __repr__(self) -> str:
        lines = [f"BackwardPlayer: {len(self.steps) - 1} nodes, then the leaves' .grad"]
        lines += [f"  {s.index + 1}. {s.title}: {s.local}" if s.local else
                  f"  {s.index + 1}. {s.title}" for s in self.steps]
        return "\n".join(lines)

