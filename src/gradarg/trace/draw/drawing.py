"""Draw a :class:`~gradarg.trace.BackwardTrace`: the backward graph with a cotangent on every edge.

The layout is layered from the output (top) to the leaves (bottom): the layers are networkx's
``topological_generations`` of the graph, and within a layer nodes sit below the mean position
of the nodes that feed them. The picture is plain SVG text: selectable, crisp at any zoom, and
coloured through CSS with ``currentColor`` (the page's text colour) and mid-tone accents, so it
reads on light and dark backgrounds alike. DOT text (:func:`trace_dot`) needs no Graphviz.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ...show.render import fmt
from ..graph.values import SHOWN_ENTRIES, dense_values
from .arguments import check_text, check_trace

__all__ = ["Drawing", "side_by_side", "trace_dot", "trace_svg"]

CHAR_W = 7.3  # width of one character at 12 px monospace
SMALL_W = 6.7  # at 11 px (second line of a box)
LABEL_W = 6.7  # at 11 px (edge labels)
LAYER_GAP = 78
BOX_H = 38

STYLE = """
.ga-trace { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12px; }
.ga-trace text { fill: currentColor; }
.ga-trace .ga-sub { font-size: 11px; fill-opacity: 0.75; }
.ga-trace .ga-box { fill: none; stroke: currentColor; stroke-width: 1.2; }
.ga-trace .ga-leaf .ga-box { stroke-width: 2; }
.ga-trace .ga-skipped { opacity: 0.45; }
.ga-trace .ga-skipped .ga-box { stroke-dasharray: 4 3; }
.ga-trace .ga-source .ga-box { stroke: #1c7ed6; stroke-dasharray: 5 3; stroke-width: 1.6; }
.ga-trace .ga-source text { fill: #1c7ed6; }
.ga-trace .ga-edge { stroke: currentColor; stroke-opacity: 0.55; stroke-width: 1.3;
  fill: none; }
.ga-trace .ga-head { fill: currentColor; fill-opacity: 0.7; }
.ga-trace .ga-cot { fill: #1c7ed6; }
.ga-trace .ga-grad { fill: #2f9e44; font-weight: bold; }
.ga-trace .ga-zero, .ga-trace text.ga-zero { fill: #e8590c; font-weight: bold; }
.ga-trace line.ga-zero { stroke: #e8590c; stroke-opacity: 1; }
.ga-trace .ga-bad, .ga-trace text.ga-bad { fill: #e03131; font-weight: bold; }
.ga-trace line.ga-bad { stroke: #e03131; stroke-opacity: 1; stroke-width: 2; }
.ga-trace .ga-first .ga-box { stroke: #e03131; stroke-width: 3; }
"""


class Drawing:
    """SVG text that notebooks show inline (``_repr_html_``/``_repr_svg_``).

    Attributes
    ----------
    svg : str
        The SVG document (or several side by side, for :func:`gradarg.side_by_side`).
    """

    def __init__(self, svg: str, html_text: str | None = None):
        self.svg = svg
        self._html = html_text

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_html_(self) -> str:
        return self._html or framed(self.svg)

    def __str__(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        size = re.search(r'width="([0-9.]+)" height="([0-9.]+)"', self.svg)
        dims = f" {float(size[1]):.0f} × {float(size[2]):.0f} px" if size else ""
        return (f"<Drawing: SVG{dims}; .save('drawing.svg') writes it, a notebook shows it, "
                f"str() is the SVG text>")

    def save(self, path: str) -> str:
        """Write the drawing to ``path``: an SVG file (a ``.html`` name writes a page with the
        drawing and its legend); return the path written.

        Examples
        --------
        >>> import torch, tempfile, pathlib, gradarg
        >>> x = torch.tensor(2.0, requires_grad=True)
        >>> drawing = gradarg.trace_backward(x * x, names={"x": x}).draw()
        >>> out = drawing.save(pathlib.Path(tempfile.mkdtemp()) / "trace.svg")
        >>> pathlib.Path(out).read_text().startswith("<svg")
        True
        """
        target = Path(path)
        if self.svg.count("<svg") > 1 and target.suffix.lower() not in (".html", ".htm"):
            raise ValueError(f"this drawing holds {self.svg.count('<svg')} SVG drawings side "
                             f"by side; save it under a .html name, got {target.name!r}")
        if target.suffix.lower() in (".html", ".htm"):
            target.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
                              + self._repr_html_() + "</body></html>", encoding="utf-8")
        else:
            target.write_text(self.svg, encoding="utf-8")
        return str(target)


LEGEND = (
    '<details class="ga-legend" style="font-size:0.85em;margin:0.2em 0 0.6em">'
    "<summary>Arrows run backward, opposite to the forward pass: output at the top, leaves "
    "at the bottom (how to read the drawing)</summary>"
    "An edge label is the upstream gradient (cotangent) sent along that edge, after the "
    "node's local factor (× f) when both ends are scalars; a tensor of up to "
    f"{SHOWN_ENTRIES} entries shows them, a larger one its shape and norm. "
    "An input used twice gets two edges. A leaf box shows its .grad. "
    '<span style="color:#e8590c;font-weight:bold">Orange</span>: all zero; '
    '<span style="color:#e03131;font-weight:bold">red</span>: NaN or Inf.</details>'
)


_ARIA_LABEL = re.compile(r'aria-label="([^"]*)"')


def scroll_frame(svg: str, cls: str = "", style: str = "") -> str:
    """``svg`` in a ``<div>`` that scrolls sideways when the drawing is wider than the column.

    The frame is a tab stop (``tabindex="0"``: a keyboard reader focuses it and scrolls with the
    arrow keys) and a named region, named after the drawing's own ``aria-label`` (WCAG 2.1.1;
    axe-core's ``scrollable-region-focusable``). ``cls``: its class; ``style``: CSS added to
    ``overflow-x:auto;max-width:100%``.
    """
    found = _ARIA_LABEL.search(svg)
    name = f"drawing: {found.group(1)}" if found else "drawing"  # already escaped
    attrs = f' class="{cls}"' if cls else ""
    return (f'<div{attrs} style="{style}overflow-x:auto;max-width:100%" tabindex="0" '
            f'role="region" aria-label="{name}">{svg}</div>')


def framed(svg: str) -> str:
    """``svg`` at its natural size in a frame that scrolls sideways, followed by the legend.

    The drawing is never scaled down to fit a narrow column (its text would shrink below
    11 px); a frame wider than the column scrolls instead (:func:`scroll_frame`: reachable
    with the keyboard).
    """
    return scroll_frame(svg, "gradarg-trace") + LEGEND


def _classes(t: torch.Tensor | None) -> str:
    if t is None:
        return ""
    vals = dense_values(t)  # sparse gradients (nn.Embedding(sparse=True)): stored values
    if (t.is_floating_point() or t.is_complex()) and not bool(torch.isfinite(vals).all()):
        return "ga-bad"
    if t.numel() > 0 and not bool((vals != 0).any()):
        return "ga-zero"
    return ""


def _norm(t: torch.Tensor) -> torch.Tensor:
    vals = dense_values(t.detach())
    return (vals.abs() if vals.is_complex() else vals).double().norm()


def cotangent_text(t: torch.Tensor | None) -> str:
    """An edge label: the number, the values of a small tensor, or shape and norm.

    Examples
    --------
    >>> import torch
    >>> cotangent_text(torch.tensor(0.005))
    '0.005'
    >>> cotangent_text(torch.tensor([1.0, 0.5]))
    '[1, 0.5]'
    >>> cotangent_text(torch.ones(64, 256))
    'shape (64, 256), norm 128'
    """
    if t is None:
        return "—"
    if t.numel() <= SHOWN_ENTRIES:
        return fmt(t.to_dense() if t.layout != torch.strided else t)
    shape = f"shape {tuple(t.shape)}"
    if not bool((dense_values(t) != 0).any()):  # != 0: complex any() warns in torch 2.1
        return f"{shape}, all 0"
    return f"{shape}, norm {fmt(_norm(t))}"


def _factor(received: torch.Tensor | None, sent: torch.Tensor | None) -> str:
    """``"× f "`` with ``f = sent / received`` when both are finite non-zero real scalars: the
    node's local derivative along this edge (``∂out/∂in``), read off the live cotangents."""
    if received is None or sent is None or received.numel() != 1 or sent.numel() != 1:
        return ""
    if received.is_complex() or sent.is_complex() or received.layout != torch.strided:
        return ""
    r, c = float(received), float(sent)
    if r == 0 or not (math.isfinite(r) and math.isfinite(c)):
        return ""
    return f"× {fmt(c / r)} = "


class _Edge:
    """One edge per use: an input used twice (``a * a``) gets two edges, each with its share."""

    def __init__(self, src: int, dst: int, part: torch.Tensor | None, received=None,
                 lane: int = 0, lanes: int = 1):
        self.src, self.dst, self.total = src, dst, part
        self.text = _factor(received, part) + cotangent_text(part)
        self.cls = _classes(part)
        self.lane, self.lanes = lane, lanes


def _merged_edges(trace) -> list[_Edge]:
    """The trace's edges, parallel ones (same source and target) numbered as lanes."""
    arrived = {n.key: n.arrived for n in trace.nodes}
    groups: dict[tuple[int, int], list] = {}
    for e in trace.edges:
        groups.setdefault((e.src, e.dst), []).append(e.cotangent)
    return [_Edge(s, d, part, arrived.get(s), i, len(parts))
            for (s, d), parts in groups.items() for i, part in enumerate(parts)]


def _node_lines(n) -> tuple[str, str, str]:
    label = n.label
    value = getattr(n, "value", None)
    if value is not None:  # a named scalar: its forward value (a = 5, c = 8 * b = 200)
        label += f" = {fmt(value)}"
    if n.is_leaf:
        if n.grad is None:
            return label, ".grad: None", ""
        return label, f".grad = {cotangent_text(n.grad)}", "ga-grad " + _classes(n.grad)
    if n.name is not None and n.arrived is not None:  # a named tensor: what reached it
        return label, f"received {cotangent_text(n.arrived)}", "ga-cot " + _classes(n.arrived)
    return label, n.grad_fn, ""


def _layout(trace, edges: list[_Edge], widths: dict[int, float]) -> dict[int, tuple[float, float]]:
    import networkx as nx  # imported when used: import gradarg stays light
    g = nx.DiGraph()
    g.add_node(-1)
    g.add_nodes_from(n.key for n in trace.nodes)
    g.add_edge(-1, 0)
    g.add_edges_from((e.src, e.dst) for e in edges)
    pos: dict[int, tuple[float, float]] = {}
    for depth, layer in enumerate(nx.topological_generations(g)):
        want = {}
        for k in layer:
            preds = [pos[p][0] for p in g.predecessors(k) if p in pos]
            want[k] = sum(preds) / len(preds) if preds else 0.0
        ordered = sorted(layer, key=lambda k: (want[k], k))
        xs, cursor = [], 0.0
        for k in ordered:
            xs.append(cursor + widths[k] / 2)
            cursor += widths[k]
        shift = sum(want.values()) / len(want) - (cursor / 2)
        for k, x in zip(ordered, xs, strict=True):
            pos[k] = (x + shift, depth * LAYER_GAP)
    return pos


def trace_svg(trace, *, source: str = "gradient", title: str | None = None) -> str:
    """The trace as an SVG drawing: output at the top, leaves at the bottom.

    Parameters
    ----------
    trace : gradarg.BackwardTrace
        From :func:`gradarg.trace_backward`.
    source : str
        Text of the box the upstream gradient ``v`` comes from (drawn dashed above the output),
        e.g. ``"black box"`` when ``v`` is computed outside the graph.
    title : str, optional
        A caption drawn above the graph.

    Returns
    -------
    str
        An ``<svg>`` element. Each edge carries the cotangent sent along it (a number, the values
        of a tensor of at most 6 entries, or its shape and norm); each leaf shows its
        ``.grad``. All-zero cotangents are orange, NaN/Inf red; the node where NaN/Inf first
        appears is outlined in red and pointed out.

    Examples
    --------
    >>> import torch, gradarg
    >>> a = torch.tensor(5.0, requires_grad=True)
    >>> svg = gradarg.trace_backward(torch.log(8 * a * a), names={"a": a}).to_svg()
    >>> svg.startswith("<svg") and "0.4" in svg
    True
    """
    check_trace("trace", trace)
    check_text("source", source)
    check_text("title", title)
    edges = _merged_edges(trace)
    by_key = {n.key: n for n in trace.nodes}
    lines = {n.key: _node_lines(n) for n in trace.nodes}
    lines[-1] = (source, "", "")
    v_text = cotangent_text(trace.gradient)
    box_w = {k: max(len(a) * CHAR_W, len(b) * SMALL_W) + 18 for k, (a, b, _) in lines.items()}
    label_w: dict[int, float] = {}
    for e in edges:
        w = (len(e.text) * LABEL_W + 10) * e.lanes
        label_w[e.dst] = max(label_w.get(e.dst, 0.0), w)
    label_w[0] = max(label_w.get(0, 0.0), len(v_text) * LABEL_W + 10)
    widths = {k: max(box_w[k], 2 * label_w.get(k, 0.0)) + 26 for k in lines}
    pos = _layout(trace, edges, widths)

    first = trace.first_nonfinite
    parts: list[str] = []
    xs: list[float] = []
    ys: list[float] = []

    def box(k: int) -> tuple[float, float, float]:
        x, y = pos[k]
        return x, y, box_w[k]

    # edges (drawn first, under the boxes)
    all_edges = [(-1, 0, v_text, _classes(trace.gradient), 0, 1)]
    all_edges += [(e.src, e.dst, e.text, e.cls, e.lane, e.lanes) for e in edges]
    # edges converging on one node end at points spread over its top side, in the order of
    # their sources, and are labelled near their source; other edges near their end
    incoming: dict[int, list[int]] = {}
    for src, dst, *_ in all_edges:
        if src not in incoming.get(dst, []):
            incoming.setdefault(dst, []).append(src)
    for srcs in incoming.values():
        srcs.sort(key=lambda k: pos[k][0])
    for src, dst, text, cls, lane, lanes in all_edges:
        (x1, y1, w1), (x2, y2, w2) = box(src), box(dst)
        fan_in = len(incoming[dst])
        if fan_in > 1:
            spread = min(w2 - 20, 24.0 * (fan_in - 1))
            x2 += -spread / 2 + spread * incoming[dst].index(src) / (fan_in - 1)
        if lanes > 1:  # the same input used several times: side-by-side parallel edges
            off = (lane - (lanes - 1) / 2) * min(28.0, (min(w1, w2) - 16) / (lanes - 1))
            x1, x2 = x1 + off, x2 + off
        y1, y2 = y1 + BOX_H / 2, y2 - BOX_H / 2 - 2
        at = 0.3 if fan_in > 1 else 0.62
        parts.append(f'<line class="ga-edge {cls}" x1="{x1:.1f}" y1="{y1:.1f}" '
                     f'x2="{x2:.1f}" y2="{y2:.1f}"/>')
        ang = math.atan2(y2 - y1, x2 - x1)
        hx = [x2 - 8 * math.cos(ang - s) for s in (0.4, -0.4)]
        hy = [y2 - 8 * math.sin(ang - s) for s in (0.4, -0.4)]
        parts.append(f'<polygon class="ga-head" points="{x2:.1f},{y2:.1f} {hx[0]:.1f},'
                     f'{hy[0]:.1f} {hx[1]:.1f},{hy[1]:.1f}"/>')
        # near the receiving end, so labels of edges that fan out from one node separate
        mx, my = x1 + at * (x2 - x1) + 6, y1 + at * (y2 - y1) + 4
        tcls = cls or "ga-cot"
        anchor = ""
        if lanes > 1 and lane < (lanes - 1) / 2:  # left lanes: label to the left of the line
            mx -= 12
            anchor = ' text-anchor="end"'
            xs.append(mx - len(text) * LABEL_W)
        parts.append(f'<text class="{tcls}" x="{mx:.1f}" y="{my:.1f}" font-size="11"{anchor}>'
                     f'{html.escape(text)}</text>')
        end = mx if anchor else mx + len(text) * LABEL_W
        xs.append(end)

    # boxes
    for k, (l1, l2, cls2) in lines.items():
        x, y, w = box(k)
        n = by_key.get(k)
        gcls = ["ga-node"]
        if k == -1:
            gcls.append("ga-source")
        elif n is not None:
            if n.is_leaf:
                gcls.append("ga-leaf")
            if n.order is None:
                gcls.append("ga-skipped")
            if first is not None and n.key == first.key:
                gcls.append("ga-first")
        tip = ""
        if n is not None:
            shape = "" if n.shape is None else f" shape {n.shape}, {n.dtype}"
            ran = "did not run" if n.order is None else f"step {n.order}"
            tip = f"<title>{html.escape(n.grad_fn)}:{html.escape(shape)}, {ran}</title>"
        h = BOX_H if l2 else 24
        parts.append(f'<g class="{" ".join(gcls)}" data-key="{k}">{tip}'
                     f'<rect class="ga-box" x="{x - w / 2:.1f}" '
                     f'y="{y - h / 2:.1f}" width="{w:.1f}" height="{h}" rx="6"/>')
        ty = y - 3 if l2 else y + 4
        parts.append(f'<text x="{x:.1f}" y="{ty:.1f}" text-anchor="middle">'
                     f'{html.escape(l1)}</text>')
        if l2:
            sub_cls = cls2 if cls2 else "ga-sub"
            parts.append(f'<text class="{sub_cls}" x="{x:.1f}" y="{y + 12:.1f}" '
                         f'text-anchor="middle" font-size="11">{html.escape(l2)}</text>')
        parts.append("</g>")
        xs.extend([x - w / 2, x + w / 2])
        ys.extend([y - h / 2, y + h / 2])
        if n is not None and first is not None and n.key == first.key:
            note = "← NaN/Inf first appears here"
            parts.append(f'<text class="ga-bad" x="{x + w / 2 + 8:.1f}" y="{y + 4:.1f}">'
                         f'{note}</text>')
            xs.append(x + w / 2 + 8 + len(note) * CHAR_W)

    x0, x1 = float(min(xs) - 10), float(max(xs) + 10)
    y0, y1 = min(ys) - 10, max(ys) + 10
    if title:
        parts.insert(0, f'<text x="{x0 + 10:.1f}" y="{y0 - 4:.1f}" font-weight="bold">'
                        f'{html.escape(title)}</text>')
        y0 -= 24
        x1 = max(x1, x0 + 20 + len(title) * CHAR_W)
    width, height = x1 - x0, y1 - y0
    label = html.escape(f"backward graph of {trace.output_name or trace.nodes[0].label}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ga-trace" role="img" '
        f'aria-label="{label}" viewBox="{x0:.1f} {y0:.1f} {width:.1f} {height:.1f}" width="{width:.0f}" '
        f'height="{height:.0f}" style="max-width:none;height:auto">'
        f"<style>{STYLE}</style>{''.join(parts)}</svg>"
    )


def side_by_side(traces: Sequence[Any], titles: Sequence[str] | None = None,
                 **kwargs: Any) -> Drawing:
    """Several trace drawings in one row (wrapping on narrow screens).

    Parameters
    ----------
    traces : sequence of gradarg.BackwardTrace
    titles : sequence of str, optional
        One caption per drawing.
    **kwargs
        Passed to :func:`gradarg.trace_svg`.

    Returns
    -------
    gradarg.Drawing
        Shown inline by notebooks; ``.svg`` holds the drawings concatenated.

    Raises
    ------
    TypeError
        ``traces`` is not a sequence of traces; ``titles`` is a string.
    ValueError
        ``titles`` does not have one entry per trace.
    """
    if isinstance(traces, (str, bytes)) or not isinstance(traces, Sequence):
        raise TypeError(f"traces must be a sequence of gradarg.BackwardTrace, got "
                        f"{type(traces).__name__}")
    for k, t in enumerate(traces):
        check_trace(f"traces[{k}]", t)
    if isinstance(titles, str):
        raise TypeError("titles must be a sequence of strings, one per trace, got a string")
    titles = list(titles) if titles is not None else [""] * len(traces)
    if len(titles) != len(traces):
        raise ValueError(f"got {len(traces)} traces but {len(titles)} titles; expected one each")
    svgs = [trace_svg(t, title=ti, **kwargs) for t, ti in zip(traces, titles, strict=True)]
    cells = "".join(scroll_frame(s, style="flex:0 1 auto;") for s in svgs)
    page = (f'<div class="gradarg-trace" style="display:flex;flex-wrap:wrap;gap:12px">{cells}'
            f"</div>{LEGEND}")
    return Drawing("".join(svgs), page)


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def trace_dot(trace) -> str:
    """The trace as Graphviz DOT text (no Graphviz needed to produce it).

    Examples
    --------
    >>> import torch, gradarg
    >>> a = torch.tensor(2.0, requires_grad=True)
    >>> trace = gradarg.trace_backward(3 * a, names={"a": a})
    >>> print(trace.to_dot())  # doctest: +ELLIPSIS
    digraph backward {
    ...
      v -> n0 [label="1"];
    ...
    """
    check_trace("trace", trace)
    out = ["digraph backward {", "  rankdir=TB;", "  node [shape=box, style=rounded];",
           '  v [label="gradient", style=dashed];']
    first = trace.first_nonfinite
    for n in trace.nodes:
        l1, l2, _ = _node_lines(n)
        attrs = [f'label="{_dot_escape(l1)}\\n{_dot_escape(l2)}"']
        if n.order is None:
            attrs.append("style=dashed")
        if first is not None and n.key == first.key:
            attrs.append("color=red, penwidth=3")
        out.append(f"  n{n.key} [{', '.join(attrs)}];")
    out.append(f'  v -> n0 [label="{_dot_escape(cotangent_text(trace.gradient))}"];')
    for e in _merged_edges(trace):
        color = {"ga-bad": ", color=red", "ga-zero": ", color=orange"}.get(e.cls, "")
        out.append(f'  n{e.src} -> n{e.dst} [label="{_dot_escape(e.text)}"{color}];')
    out.append("}")
    return "\n".join(out)
