"""Draw a watched step module by module: one box per ``nn.Module`` call, collapsible.

The layout is a vertical stack in forward order (the model's input at the top, its output at
the bottom); the gradient goes back up. Each box shows the module's name and class, the shape
and norm of the cotangent (upstream gradient) that arrived at its output and of the one that
left toward its input, and the norm of its parameters' gradients. The modules inside a box are
collapsed; :func:`draw_modules` ``expand=[name, ...]`` opens a box into its submodules.

Edges follow the data: module A feeds module B when an output of A reaches an input of B, also
through functional operations (``x + attn(x)``). An edge between neighbours is a short vertical
arrow; a longer one (a skip connection) runs in a lane to the right of every box, so no edge
crosses a box. Text is 12-13 px (never below 11 px) and the SVG keeps its natural size: wider
than the page, it scrolls in its frame instead of shrinking.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["ModuleBox", "draw_modules", "module_layout"]

CHAR_W = 7.3  # one character at 12 px monospace
NAME_W = 7.9  # at 13 px
BOX_H = 54
GAP = 22
HEADER_H = 24
INDENT = 18
LANE_GAP = 12
MARGIN = 12
TOP = 44

STYLE = """
.ga-modules { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12px; }
.ga-modules text { fill: currentColor; }
.ga-modules .ga-name { font-size: 13px; font-weight: bold; }
.ga-modules .ga-kind { font-size: 12px; fill-opacity: 0.75; }
.ga-modules .ga-box { fill: none; stroke: currentColor; stroke-width: 1.2; }
.ga-modules .ga-collapsed .ga-box { stroke-width: 2; }
.ga-modules .ga-group { stroke: currentColor; stroke-opacity: 0.5; stroke-width: 1.5;
  fill: none; }
.ga-modules .ga-edge { stroke: currentColor; stroke-opacity: 0.6; stroke-width: 1.3;
  fill: none; }
.ga-modules .ga-head { fill: currentColor; fill-opacity: 0.75; }
.ga-modules .ga-cot { fill: #1c7ed6; }
.ga-modules text.ga-zero { fill: #e8590c; font-weight: bold; }
.ga-modules text.ga-bad { fill: #e03131; font-weight: bold; }
.ga-modules .ga-flag-zero .ga-box { stroke: #e8590c; stroke-width: 2.5; }
.ga-modules .ga-flag-bad .ga-box { stroke: #e03131; stroke-width: 3; }
"""


@dataclass(frozen=True)
class ModuleBox:
    """One box of a module drawing (or the header of an expanded module).

    Attributes
    ----------
    name : str
        The module's qualified name.
    call : int
        ``index`` of its :class:`~gradarg.ModuleRecord`.
    x, y, width, height : float
        Position and size in SVG pixels.
    header : bool
        True for the header line of an expanded module (its submodules follow below it).
    """

    name: str
    call: int
    x: float
    y: float
    width: float
    height: float
    header: bool = False


def _norm_text(v: float | None) -> tuple[str, str]:
    from ...show.render import fmt

    if v is None:
        return "—", ""
    if math.isnan(v) or math.isinf(v):
        return ("NaN" if math.isnan(v) else "Inf"), "ga-bad"
    if v == 0:
        return "0", "ga-zero"
    return fmt(v, digits=3), ""


def _shape(shape: tuple[int, ...] | None) -> str:
    return "—" if shape is None else "×".join(map(str, shape)) or "scalar"


def _display_items(calls, expand: set[str]) -> list[tuple[int, bool]]:
    """``(call index, is_header)`` in forward order: expanded calls become headers."""
    roots = [c.index for c in calls if c.parent is None]
    items: list[tuple[int, bool]] = []

    def visit(i: int) -> None:
        c = calls[i]
        if c.children and (c.name in expand or c.parent is None):
            if c.parent is not None:
                items.append((i, True))
            for ch in c.children:
                visit(ch)
        else:
            items.append((i, False))

    for r in roots:
        visit(r)
    if not items and roots:
        items = [(roots[0], False)]
    return items


def _expand_set(names: Iterable[str] | None, depth: int | None, calls) -> set[str]:
    out: set[str] = set()
    for n in names or ():
        parts = n.split(".")
        out.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
    if depth is not None:
        out.update(c.name for c in calls if c.depth <= depth)
    return out


def _lines(c, calls, shared: int = 1) -> list[tuple[str, str]]:
    """The two detail lines of a box: ``(text, css class of the highlighted number)``."""
    out_t, out_cls = _norm_text(c.grad_out)
    in_t, in_cls = _norm_text(c.grad_in)
    sub = ""
    n_sub = _count_descendants(c, calls)
    if n_sub:
        sub = f"  [{n_sub} submodule{'s' if n_sub > 1 else ''}]"
    earlier = [d for d in calls[:c.index] if d.name == c.name]
    if earlier and not c.params:
        p_t, p_cls = "counted at call 1", ""
    else:
        p_t, p_cls = _norm_text(_subtree_param_norm(c, calls))
    line1 = (f"↑ from output {_shape(c.out_shape)}  ‖·‖={out_t}", out_cls)
    if c.in_shape is None:
        to_input = "↑ to input: none (no input needs a gradient)"
    else:
        total = f" (total of {shared} calls)" if shared > 1 else ""
        to_input = f"↑ to input {_shape(c.in_shape)}  ‖·‖={in_t}{total}"
    line2 = (f"{to_input}  params ‖·‖={p_t}{sub}", in_cls or p_cls)
    return [line1, line2]


def _call_label(c, calls) -> str:
    """The module's name, with ``(call k)`` when the same module ran more than once."""
    same = [d.index for d in calls if d.name == c.name]
    return c.name if len(same) == 1 else f"{c.name} (call {same.index(c.index) + 1})"


def _subtree(c, calls) -> list[int]:
    out, todo = [], [c.index]
    while todo:
        i = todo.pop()
        out.append(i)
        todo.extend(calls[i].children)
    return out


def _count_descendants(c, calls) -> int:
    return len(_subtree(c, calls)) - 1


def _subtree_param_norm(c, calls) -> float | None:
    vals = [calls[i].param_norm for i in _subtree(c, calls) if calls[i].param_norm is not None]
    if not vals:
        return None
    if any(math.isnan(v) for v in vals):
        return math.nan
    return math.sqrt(sum(v * v for v in vals))


def module_layout(record: Any, expand: Iterable[str] | None = None, *,
                  depth: int | None = None) -> dict[str, Any]:
    """Boxes and edge routes of the module drawing, without the SVG (for tests and tools).

    Returns
    -------
    dict
        ``boxes``: list of :class:`ModuleBox`; ``edges``: list of ``(src call, dst call,
        points)``, each route a list of ``(x, y)`` from the consumer (below) up to the producer;
        ``width``, ``height``: the drawing's natural size in pixels; ``lines``: the text lines
        of each box by call index.
    """
    # the record of gradarg.watch: a GradWatch (checked by its `modules` property, so that this
    # module need not import watching, which imports this one for GradWatch.draw)
    if not isinstance(getattr(type(record), "modules", None), property):
        raise TypeError(
            f"draw_modules takes the record of gradarg.watch(model), got "
            f"{type(record).__name__}; for a BackwardTrace use trace.draw() (one box per "
            f"operation)"
        )
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                              or depth < 0):
        raise ValueError(f"depth must be None or a nesting depth >= 0 (0: the model's direct "
                         f"submodules), got {depth!r}")
    if isinstance(expand, str):
        raise TypeError(f"expand must be a sequence of module names, got the string "
                        f"{expand!r}; for one module write expand=[{expand!r}]")
    calls = record.modules
    if not calls:
        raise ValueError("the watch recorded no module call: run the model's forward (and "
                         "backward) inside the with block first")
    known = {c.name for c in calls}
    unknown = [n for n in (expand or ()) if n not in known]
    if unknown:
        raise KeyError(f"no module call named {unknown[0]!r} in the record; modules that ran: "
                       f"{', '.join(sorted(known)[:12])}...")
    items = _display_items(calls, _expand_set(expand, depth, calls))
    shown = {i for i, _ in items}
    lines = {i: _lines(calls[i], calls, record.calls.shared_total(i))
             for i, header in items if not header}
    base_depth = min(calls[i].depth for i, _ in items)
    text_w = 0.0
    for i, _ in items:
        c = calls[i]
        indent = INDENT * (c.depth - base_depth)
        head = (len(_call_label(c, calls)) + len(c.kind) + 3) * NAME_W
        body = max((len(t) for t, _ in lines.get(i, [])), default=0) * CHAR_W
        text_w = max(text_w, indent + max(head, body) + 24)
    right = MARGIN + text_w
    boxes: list[ModuleBox] = []
    y = TOP
    for i, header in items:
        c = calls[i]
        x = MARGIN + INDENT * (c.depth - base_depth)
        h = HEADER_H if header else BOX_H
        boxes.append(ModuleBox(c.name, i, x, y, right - x, h, header))
        y += h + (10 if header else GAP)
    height = y - GAP + MARGIN + 8

    def shown_box(i: int) -> int | None:
        while i is not None and i not in shown:
            i = calls[i].parent
        return i

    pos = {b.call: k for k, b in enumerate(boxes)}
    edges_set: dict[tuple[int, int], None] = {}
    for k, b in enumerate(boxes):
        if b.header:
            continue
        for j in _subtree(calls[b.call], calls):
            for p in calls[j].producers:
                src = shown_box(p)
                if src is None or src == b.call or src not in pos:
                    continue
                if boxes[pos[src]].header:
                    # an expanded module's output comes from its last box shown inside it
                    inner = [q for q in _subtree(calls[src], calls)
                             if q in pos and not boxes[pos[q]].header and pos[q] < k]
                    if not inner:
                        continue
                    src = max(inner, key=lambda q: pos[q])
                    if src == b.call:
                        continue
                if pos[src] > k:
                    continue
                edges_set[(src, b.call)] = None
    edges = []
    lanes: list[list[tuple[float, float]]] = []
    lane_right = right
    for src, dst in sorted(edges_set, key=lambda e: pos[e[1]] - pos[e[0]]):
        a, b = boxes[pos[src]], boxes[pos[dst]]
        between = [bb for bb in boxes[pos[src] + 1: pos[dst]]]
        if not between:
            x = max(a.x, b.x) + 40  # inside both boxes' horizontal extent: a straight arrow
            pts = [(x, b.y), (x, a.y + a.height)]
        else:
            y0, y1 = a.y + a.height / 2, b.y + b.height / 2
            lane = 0
            while lane < len(lanes) and any(not (y1 < s or y0 > e) for s, e in lanes[lane]):
                lane += 1
            if lane == len(lanes):
                lanes.append([])
            lanes[lane].append((y0 - 4, y1 + 4))
            lx = right + 14 + LANE_GAP * lane
            lane_right = max(lane_right, lx)
            pts = [(b.x + b.width, y1), (lx, y1), (lx, y0), (a.x + a.width, y0)]
        edges.append((src, dst, pts))
    width = max(lane_right + MARGIN + 8, 320.0)
    return {"boxes": boxes, "edges": edges, "width": width, "height": height,
            "lines": lines}


def draw_modules(record: Any, expand: Iterable[str] | None = None, *,
                 depth: int | None = None, title: str | None = None):
    """Draw a watched step with one box per module, in forward order.

    Parameters
    ----------
    record : GradWatch
        What :func:`gradarg.watch` recorded (after a backward pass, for the norms).
    expand : sequence of str, optional
        Names of modules to open into their submodules (their parents open too), e.g.
        ``["layers.0", "layers.0.self_attn"]``. Everything else stays collapsed: the model's
        direct submodules are the boxes.
    depth : int, optional
        Open every module down to this nesting depth (0: the model's direct submodules).
    title : str, optional
        A line above the drawing; defaults to the record's one-line summary.

    Returns
    -------
    gradarg.Drawing
        SVG text, shown inline by notebooks (natural size; a wide drawing scrolls).

    Raises
    ------
    TypeError
        ``record`` is not the record of :func:`gradarg.watch`.
    ValueError
        Nothing was recorded (the model did not run inside the watch).
    KeyError
        A name in ``expand`` is not a module that ran.

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
    ...                           torch.nn.Linear(8, 1))
    >>> from gradarg import watch
    >>> with watch(net) as w:
    ...     net(torch.randn(16, 4)).pow(2).mean().backward()
    >>> svg = draw_modules(w).svg
    >>> svg.count('<rect class="ga-box"')    # one box per module
    3
    """
    from .drawing import Drawing, scroll_frame

    lay = module_layout(record, expand, depth=depth)
    calls = record.modules
    title = record.summary(checks=False) if title is None else title
    # the line drawn: a long summary's first clause (all of it stays in aria-label)
    shown = title if len(title) <= 100 else title.split(" (", 1)[0]
    width = math.ceil(max(lay["width"], MARGIN * 2 + CHAR_W * max(len(shown), 70)))
    height = math.ceil(lay["height"])
    out = [
        (f'<svg xmlns="http://www.w3.org/2000/svg" class="ga-modules" width="{width}" '
         f'height="{height}" viewBox="0 0 {width} {height}" '
         f'style="max-width:none;height:auto" role="img" '
         f'aria-label="{html.escape(title)}">'),
        f"<style>{STYLE}</style>",
        f'<text x="{MARGIN}" y="18">{html.escape(shown)}</text>',
        (f'<text x="{MARGIN}" y="34" class="ga-kind">input at the top, output at the '
         f'bottom; arrows: the gradient going back</text>'),
    ]
    for b in lay["boxes"]:
        c = calls[b.call]
        if b.header:
            out.append(
                f'<g class="ga-header" data-module="{html.escape(c.name)}">'
                f'<path class="ga-group" d="M{b.x:.1f},{b.y + b.height:.1f} '
                f'V{b.y + 4:.1f} H{b.x + 10:.1f}"/>'
                f'<text x="{b.x + 14:.1f}" y="{b.y + 16:.1f}"><tspan class="ga-name">'
                f'▾ {html.escape(c.name)}</tspan> <tspan class="ga-kind">'
                f'({html.escape(c.kind)})</tspan></text></g>')
            continue
        flag = ""
        states = [c.grad_out, c.grad_in, c.param_norm]
        if any(v is not None and not math.isfinite(v) for v in states):
            flag = " ga-flag-bad"
        elif any(v == 0 for v in states):
            flag = " ga-flag-zero"
        collapsed = " ga-collapsed" if c.children else ""
        out.append(f'<g class="ga-module{collapsed}{flag}" data-module="{html.escape(c.name)}">')
        out.append(f'<rect class="ga-box" x="{b.x:.1f}" y="{b.y:.1f}" width="{b.width:.1f}" '
                   f'height="{b.height:.1f}" rx="5"/>')
        mark = "▸ " if c.children else ""
        out.append(f'<text x="{b.x + 10:.1f}" y="{b.y + 18:.1f}"><tspan class="ga-name">'
                   f'{mark}{html.escape(_call_label(c, calls))}</tspan> <tspan class="ga-kind">'
                   f'({html.escape(c.kind)})</tspan></text>')
        for k, (text, cls) in enumerate(lay["lines"][b.call]):
            cls_attr = f' class="{cls}"' if cls else ' class="ga-cot"'
            out.append(f'<text x="{b.x + 10:.1f}" y="{b.y + 34 + 14 * k:.1f}"{cls_attr}>'
                       f'{html.escape(text)}</text>')
        out.append("</g>")
    for _, _, pts in lay["edges"]:
        d = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        out.append(f'<path class="ga-edge" d="{d}"/>')
        (x1, y1), (x0, y0) = pts[-1], pts[-2]
        out.append(_arrow_head(x0, y0, x1, y1))
    out.append("</svg>")
    svg = "\n".join(out)
    frame = scroll_frame(svg, "gradarg-modules")  # scrolls sideways, reachable by keyboard
    return Drawing(svg, frame)


def _arrow_head(x0: float, y0: float, x1: float, y1: float) -> str:
    ang = math.atan2(y1 - y0, x1 - x0)
    size = 7
    pts = [(x1, y1)]
    for s in (-1, 1):
        a = ang + math.pi - s * 0.45
        pts.append((x1 + size * math.cos(a), y1 + size * math.sin(a)))
    coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
    return f'<polygon class="ga-head" points="{coords}"/>'
