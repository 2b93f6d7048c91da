"""Where an elementwise operator's derivative is not smooth, and what torch returns there.

For every entry of PyTorch's OpInfo database (the registry ``opsupport`` reads) that can be
called as ``op(x)`` on a float64 vector and acts elementwise (:func:`candidates`), the
derivative torch computes (``torch.autograd.grad`` of the sum) is taken at a fixed set of
points (:data:`POINTS`: integers and halves from -6 to 6, and both signed zeros) and
compared with the one-sided difference quotients of the operator's own values,

    left = (f(p) - f(p - h)) / h,    right = (f(p + h) - f(p)) / h,

at two steps (``h`` and ``h / 10``), which estimate the one-sided derivatives independently
of torch's backward formulas (:func:`special`).  A point is listed when the two sides
disagree (a kink), when the function jumps there (a step: ``floor``, ``sign``), when a
one-sided derivative is infinite or undefined (``sqrt`` and ``log`` at 0, ``acos`` at 1), or
when torch's value is infinite, NaN or neither side.  Points where the value itself is NaN
(outside the domain) are reported apart (:func:`markdown_outside`).  Operators of two
tensors (:func:`candidates2`) are probed the same way at ties ``x = y = p``, one partial
derivative at a time (:func:`ties`).  Page plumbing, not part of ``gradarg``; imports torch
only (the OpInfo entries are passed in).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch

POINTS = (-6.0, -3.0, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, 6.0)
H = 1e-6  # the larger step; the smaller is H / 10
# elementwise in shape only: copies, views and conversions (their derivative is 1 everywhere)
PLUMBING = {"alias_copy", "atleast_1d", "cartesian_prod", "clone", "conj", "conj_physical",
            "contiguous", "double", "flatten", "positive", "ravel", "real", "resolve_conj",
            "resolve_neg", "slice", "T", "t", "t_copy", "to", "zero_"}


@dataclass
class Side:
    """A one-sided derivative as the differences show it: a finite ``value``, or ``kind``
    ``"inf"`` (the quotient grows as the step shrinks), ``"jump"`` (the values themselves
    jump), ``"undefined"`` (NaN or outside the domain on that side)."""

    kind: str
    value: float = math.nan  # the derivative, or the sign of an infinite one (±inf)

    def text(self) -> str:
        if self.kind == "finite":
            return _num(self.value)
        if self.kind == "inf":
            return "+∞" if self.value > 0 else "−∞" if self.value < 0 else "±∞"
        return {"jump": "jump", "undefined": "undefined"}[self.kind]


@dataclass
class Point:
    op: str
    x: float
    torch_grad: float
    left: Side
    right: Side
    verdict: str
    value: float  # f(x) itself


def _num(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0 or abs(v) < 1e-12:  # a difference quotient of a flat side: no sign to show
        return "0"
    if abs(v - round(v)) < 1e-9 and abs(v) < 1e6:
        return str(round(v))
    return f"{v:.4g}"


def _point(x: float) -> str:
    """A point of :data:`POINTS`, signed zeros told apart."""
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return _num(x)


# the verdicts as the tables print them (short: the column is narrow)
SHOWN = {"left side": "left", "right side": "right", "mean of the sides": "mean",
         "both sides": "both", "that side's ∞": "∞, as the side", "∞ of the other sign":
         "∞, sign flipped"}


def _shown(verdict: str) -> str:
    return SHOWN.get(verdict, verdict)


def _where(points: list[float]) -> str:
    """The points of one row: "every point", "every integer", the two zeros as "±0.0"."""
    xs = sorted(points)
    ints = [p for p in POINTS if p == round(p)]
    if len(xs) == len(POINTS):
        return "every point"
    if len(xs) == len(ints) and all(p == round(p) for p in xs):
        return "every integer"
    words, zeros = [], [p for p in xs if p == 0]
    for p in xs:
        if p == 0 and len(zeros) == 2:
            if "±0.0" not in words:
                words.append("±0.0")
            continue
        words.append(_point(p))
    return ", ".join(words)


def _name(op: str) -> str:
    """``F.relu`` for ``nn.functional.relu`` (``F`` is ``torch.nn.functional``)."""
    return "F." + op.removeprefix("nn.functional.") if op.startswith("nn.functional.") else op


def _side(f0: float, f1: float, f2: float, h: float, sign: int) -> Side:
    """One side from ``f(p)``, ``f(p + sign·h)`` and ``f(p + sign·h/10)``."""
    if not all(math.isfinite(v) for v in (f1, f2)):
        return Side("undefined")
    if not math.isfinite(f0):  # the value itself is infinite (log at 0) or NaN there
        if math.isinf(f0) and math.isfinite(f1):
            # a pole or a domain edge where the value is ±inf: the slope between the two
            # nearby points (p + sign·h/10 and p + sign·h) gives the side's sign
            return Side("inf", math.copysign(math.inf, (f2 - f1) / (sign * (h / 10 - h))))
        return Side("undefined")
    q1, q2 = sign * (f1 - f0) / h, sign * (f2 - f0) / (h / 10)
    # the values move by a step that does not shrink with h: a jump
    if abs(f1 - f0) > 1e-3 and abs(f2 - f0) > 0.5 * abs(f1 - f0):
        return Side("jump")
    # the quotient keeps growing as the step shrinks: sqrt at 0 (×√10 per step), or slowly,
    # x log x at 0 (+log 10 per step); a smooth side moves by about h·f''/2 only
    if abs(q2) > abs(q1) and abs(q2 - q1) > 0.05 * (1.0 + abs(q2)):
        return Side("inf", math.copysign(math.inf, q2))
    # a quotient below 1e-6 is the rounding of the values (a last-bit change), not a slope
    return Side("finite", 0.0 if abs(q2) < 1e-6 else q2)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-4 * (1.0 + abs(a) + abs(b))


def _verdict(g: float, left: Side, right: Side) -> str:
    if math.isfinite(g) and abs(g) > 1e20:
        return "huge"
    if math.isnan(g):
        return "nan"
    if math.isinf(g):
        same = [s for s in (left, right) if s.kind == "inf" and s.value == g]
        return "that side's ∞" if same else "∞ of the other sign" if any(
            s.kind == "inf" and not math.isnan(s.value) for s in (left, right)) else "∞"
    fl, fr = left.kind == "finite", right.kind == "finite"
    if fl and fr:
        if _close(left.value, right.value):
            return "both sides" if _close(g, left.value) else "other"
        if _close(g, left.value):
            return "left side"
        if _close(g, right.value):
            return "right side"
        if _close(g, (left.value + right.value) / 2):
            return "mean of the sides"
        return "0" if g == 0 else "other"
    if fl and _close(g, left.value):
        return "left side"
    if fr and _close(g, right.value):
        return "right side"
    return "0" if g == 0 else "other"


def special(op_name: str, fn, points=POINTS) -> list[Point]:
    """The listed points of one elementwise ``fn`` (see the module docstring)."""
    x = torch.tensor(points, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = fn(x)
        (g,) = torch.autograd.grad(y.sum(), x)
        with torch.no_grad():
            base = x.detach()
            f0 = fn(base)
            vals = {s: fn(base + s) for s in (H, H / 10, -H, -H / 10)}
    out = []
    for i, p in enumerate(points):
        left = _side(float(f0[i]), float(vals[-H][i]), float(vals[-H / 10][i]), H, -1)
        right = _side(float(f0[i]), float(vals[H][i]), float(vals[H / 10][i]), H, 1)
        gi = float(g[i])
        kink = (left.kind != "finite" or right.kind != "finite"
                or not _close(left.value, right.value))
        verdict = _verdict(gi, left, right)
        if kink or verdict in ("nan", "other", "huge") or math.isinf(gi):
            out.append(Point(op_name, p, gi, left, right, verdict, float(f0[i])))
    return out


def _elementwise(fn) -> bool:
    """``fn`` maps a float64 vector to one of the same shape, entry by entry."""
    a = torch.tensor([0.3, -0.7, 1.3], dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = fn(a)
        if not isinstance(y, torch.Tensor) or y.shape != a.shape or y.dtype != a.dtype:
            return False
        a_req = a.clone().requires_grad_(True)
        if not fn(a_req).requires_grad:
            return False
        single = torch.stack([fn(a[i:i + 1])[0] for i in range(3)])
        wide = torch.linspace(-2.9, 2.9, 32, dtype=torch.float64)
        first, again = fn(wide), fn(wide)
    # a random operator (dropout) gives other values at every call: its differences mean nothing
    same = torch.allclose(first, again, rtol=0.0, atol=0.0, equal_nan=True)
    return same and torch.allclose(y, single, equal_nan=True)


def _select(ops, acts_elementwise, keep) -> list[tuple[str, object]]:
    """``(name, fn)`` of the OpInfo entries (each name once, variants with arguments left out)
    that support autograd, pass ``acts_elementwise(fn)`` and ``keep(name)``."""
    out, seen = [], set()
    for op in ops:
        if op.variant_test_name or op.name in seen or not op.supports_autograd:
            continue
        fn = op.get_op()
        try:
            ok = acts_elementwise(fn)
        except Exception:  # noqa: BLE001, S112  (other arguments, refuses float64, ...)
            continue
        if ok and "dropout" not in op.name and keep(op.name):
            seen.add(op.name)
            out.append((op.name, fn))
    return out


def _rows(todo, probe) -> list:
    """``probe(name, fn, ...)`` over ``todo``, skipping operators whose backward raises (the
    operators table says which)."""
    rows = []
    for item in todo:
        try:
            rows.extend(probe(*item))
        except Exception:  # noqa: BLE001, S112  (a backward that raises)
            continue
    return rows


def candidates(ops) -> list[tuple[str, object]]:
    """``(name, fn)`` of the OpInfo entries callable as ``op(x)`` that act elementwise (each
    name once: variants with arguments are left out)."""
    return _select(ops, _elementwise, lambda name: name not in PLUMBING)


# Common calls with a threshold or bound of their own, which the database's op(x) form does
# not take: (label, fn, the points where their kinks sit, tried beside POINTS).
WITH_ARGUMENTS = [
    ("clamp(x, 0, 1)", lambda t: torch.clamp(t, 0.0, 1.0), ()),
    ("clamp(x, min=0)", lambda t: torch.clamp(t, min=0.0), ()),
    ("F.threshold(x, 0.5, 0)", lambda t: torch.nn.functional.threshold(t, 0.5, 0.0), ()),
    ("F.hardtanh(x, -2, 2)", lambda t: torch.nn.functional.hardtanh(t, -2.0, 2.0), ()),
    ("F.leaky_relu(x, 0.2)", lambda t: torch.nn.functional.leaky_relu(t, 0.2), ()),
    ("F.elu(x, alpha=2)", lambda t: torch.nn.functional.elu(t, alpha=2.0), ()),
    ("F.softshrink(x, 1)", lambda t: torch.nn.functional.softshrink(t, 1.0), ()),
    ("torch.logit(x, eps=1e-3)", lambda t: torch.logit(t, eps=1e-3), (1e-3, 1 - 1e-3)),
]


def table(elementwise: list[tuple[str, object]], extra: bool = False) -> list[Point]:
    """The listed points of every ``(name, fn)`` of :func:`candidates`; with ``extra`` also
    those of :data:`WITH_ARGUMENTS`, each at its own kink points too."""
    todo = [(name, fn, POINTS) for name, fn in elementwise]
    if extra:
        todo += [(name, fn, tuple(sorted((*POINTS, *more)))) for name, fn, more in WITH_ARGUMENTS]
    return _rows(todo, special)


def outside(rows: list[Point]) -> list[Point]:
    """The rows at points outside the operator's domain: its value is NaN there."""
    return [r for r in rows if math.isnan(r.value)]


def merged(rows: list[Point]) -> list[tuple[list[Point], str]]:
    """The rows where the value is a number or ±inf, those of one operator that read the same
    (torch's derivative, both sides, the verdict) merged into one: ``(points, f(x) text)``."""
    groups: dict[tuple, list[Point]] = {}
    for r in rows:
        if math.isnan(r.value):
            continue
        key = (r.op, _num(r.torch_grad), r.left.text(), r.right.text(), r.verdict)
        groups.setdefault(key, []).append(r)
    out = []
    for pts in groups.values():
        values = [_num(p.value) for p in pts]
        if len(set(values)) == 1:
            text = values[0]
        elif all(p.value == p.x for p in pts):
            text = "x (each)"
        else:
            text = ", ".join(values)
        out.append((pts, text))
    return out


def markdown(rows: list[Point]) -> str:
    """The points where the value is a number or ±inf: kinks, steps, poles, domain edges."""
    head = ("| operator | x | f(x) | torch's derivative | from the left | from the right | "
            "torch takes |")
    lines = [head, "|---|---|---|---|---|---|---|"]
    for pts, value in merged(rows):
        r = pts[0]
        where = _where([p.x for p in pts])
        lines.append(f"| `{_name(r.op)}` | {where} | {value} | {_num(r.torch_grad)} | "
                     f"{r.left.text()} | {r.right.text()} | {_shown(r.verdict)} |")
    return "\n".join(lines)


def markdown_outside(rows: list[Point]) -> str:
    """Per operator, the points tried outside its domain and torch's derivative there."""
    by_op: dict[str, list[Point]] = {}
    for r in outside(rows):
        by_op.setdefault(r.op, []).append(r)
    lines = ["| operator | x (f(x) is nan) | torch's derivative there |", "|---|---|---|"]
    for op, pts in by_op.items():
        finite = [p for p in pts if math.isfinite(p.torch_grad)]
        what = ("nan" if not finite else
                "a number: " + ", ".join(f"{_num(p.torch_grad)} at {_num(p.x)}"
                                         for p in finite[:3]) + (" ..." if len(finite) > 3 else "")
                + ("" if len(finite) == len(pts) else "; nan or inf at the others"))
        lines.append(f"| `{_name(op)}` | {_where([p.x for p in pts])} | {what} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- two inputs


@dataclass
class Tie:
    """``f(x, y)`` at ``x = y = p``: torch's two partial derivatives and the one-sided
    slopes of each (the other input held at ``p``)."""

    op: str
    p: float
    value: float
    grads: tuple[float, float]
    sides: tuple[tuple[Side, Side], tuple[Side, Side]]
    verdicts: tuple[str, str]


def ties(op_name: str, fn, points=POINTS) -> list[Tie]:
    """The points ``x = y = p`` where a partial derivative of ``fn(x, y)`` has a kink, a jump
    or an infinite side, or where torch's value is infinite, NaN or neither side; points
    where the value is NaN (outside the domain) are left out."""
    x = torch.tensor(points, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(points, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gx, gy = torch.autograd.grad(fn(x, y).sum(), (x, y), allow_unused=True)
        with torch.no_grad():
            base = x.detach()
            f0 = fn(base, base)
            moved = [{s: (fn(base + s, base) if k == 0 else fn(base, base + s))
                      for s in (H, H / 10, -H, -H / 10)} for k in (0, 1)]
    grads = [torch.zeros_like(base) if g is None else g for g in (gx, gy)]
    out = []
    for i, p in enumerate(points):
        v = float(f0[i])
        if math.isnan(v):
            continue
        sides, verdicts, listed = [], [], False
        for k in (0, 1):
            vals = moved[k]
            left = _side(v, float(vals[-H][i]), float(vals[-H / 10][i]), H, -1)
            right = _side(v, float(vals[H][i]), float(vals[H / 10][i]), H, 1)
            g = float(grads[k][i])
            verdict = _verdict(g, left, right)
            kink = (left.kind != "finite" or right.kind != "finite"
                    or not _close(left.value, right.value))
            listed = listed or kink or verdict in ("nan", "other", "huge") or math.isinf(g)
            sides.append((left, right))
            verdicts.append(verdict)
        if listed:
            out.append(Tie(op_name, p, v, (float(grads[0][i]), float(grads[1][i])),
                           (sides[0], sides[1]), (verdicts[0], verdicts[1])))
    return out


def _elementwise2(fn) -> bool:
    """``fn(x, y)`` maps two float64 vectors to one of their shape, entry by entry, and
    depends on both."""
    a = torch.tensor([0.3, -0.7, 1.3], dtype=torch.float64)
    b = torch.tensor([1.1, 0.4, -0.9], dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(a, b)
        if not isinstance(out, torch.Tensor) or out.shape != a.shape or out.dtype != a.dtype:
            return False
        single = torch.stack([fn(a[i:i + 1], b[i:i + 1])[0] for i in range(3)])
        ar, br = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
        res = fn(ar, br)
        if not res.requires_grad:
            return False
        used = torch.autograd.grad(res.sum(), (ar, br), allow_unused=True)
        again = fn(a, b)
    return (all(g is not None for g in used)
            and torch.allclose(out, again, rtol=0.0, atol=0.0, equal_nan=True)
            and torch.allclose(out, single, equal_nan=True))


def candidates2(ops) -> list[tuple[str, object]]:
    """``(name, fn)`` of the OpInfo entries callable as ``op(x, y)`` on two tensors that act
    elementwise and depend on both (each name once)."""
    # the reflected forms (__rpow__, rsub) repeat their operator with the inputs swapped
    return _select(ops, _elementwise2, lambda name: not name.startswith(("__r", "rsub")))


def table2(pairs: list[tuple[str, object]]) -> list[Tie]:
    """The listed ties of every ``(name, fn)`` of :func:`candidates2`."""
    return _rows(pairs, ties)


def markdown2(rows: list[Tie]) -> str:
    """One row per operator and tie point, points with the same answer merged."""
    head = ("| operator | x = y | f | ∂f/∂x: torch | left, right | torch takes "
            "| ∂f/∂y: torch | left, right | torch takes |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    groups: dict[tuple, list[Tie]] = {}
    for r in rows:
        key = (r.op, *(_num(g) for g in r.grads),
               *(s.text() for pair in r.sides for s in pair), *r.verdicts)
        groups.setdefault(key, []).append(r)
    for pts in groups.values():
        r = pts[0]
        values = [_num(p.value) for p in pts]
        value = (values[0] if len(set(values)) == 1 else "x (each)"
                 if all(p.value == p.p for p in pts) else ", ".join(values))
        cells = [f"{_num(g)} | {a.text()}, {b.text()} | {_shown(v)}"
                 for g, (a, b), v in zip(r.grads, r.sides, r.verdicts, strict=True)]
        lines.append(f"| `{_name(r.op)}` | {_where([p.p for p in pts])} | {value} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)
