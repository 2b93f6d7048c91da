"""How a :class:`gradarg.BackwardCheck` shows itself: text (:func:`text`), HTML tables
(:func:`html_report`) and a heatmap of the errors (:func:`figure`).  A new line or column of the
report goes here; the sentences on a wrong block come from :mod:`.verdict`."""

from __future__ import annotations

import base64
import html
import io
import math
import textwrap
from typing import TYPE_CHECKING, Any, cast

import torch

from ..show.render import fmt, summarize
from .localize import unravel

if TYPE_CHECKING:
    from .results import BackwardCheck

_WIDTH = 78  # text reports fit an 80-column terminal and the site's code box
_MAX_SHOWN = 12  # a gradient with more entries is shown by its largest differences


def _index(ix: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in ix) + "]"


# ------------------------------------------------------------------ text


def _pair_rows(r: BackwardCheck) -> list[list[str]]:
    rows = []
    for p in r.pairs:
        if p.got is None:  # only the random probes looked at this pair
            count, err = "(random probes)", "-"
        elif p.n_checked < p.n_entries:
            count = f"{p.n_wrong} / {p.n_checked} compared of {p.n_entries}"
            err = f"{p.max_abs_error:.2e}"
        else:
            count, err = f"{p.n_wrong} / {p.n_entries}", f"{p.max_abs_error:.2e}"
        rows.append([f"∂{p.output}/∂{p.input}", "agree" if p.agree else "WRONG",
                     err, count, p.sentence if not p.agree else ""])
    return rows


def _entry_rows(r: BackwardCheck) -> list[list[str]]:
    rows = []
    for p in r.wrong_pairs:
        for e in p.worst:
            rows.append([f"∂{p.output}/∂{p.input}", _index(e.output_index),
                         _index(e.input_index), fmt(e.expected, 6), fmt(e.got, 6),
                         f"{e.error:.2e}"])
    return rows


def _example_lines(r: BackwardCheck) -> list[str]:
    ex = r.example
    if ex is None:
        return []
    lines = [(f"v = one-hot at {ex.output}{_index(ex.index)} (zeros elsewhere): "
              f"{ex.output}.backward(gradient=v) gives")]
    for name in ex.got:
        got, exp = ex.got[name], ex.expected[name]
        if ex.right.get(name, False):
            lines.append(f"  {name}.grad = {summarize(got)}: right")
            continue
        known = torch.isfinite(exp.double()).reshape(-1)
        if got.numel() <= _MAX_SHOWN and bool(known.all()):
            lines.append(f"  {name}.grad = {summarize(got, max_entries=_MAX_SHOWN)}")
            lines.append(f"  should be  {summarize(exp, max_entries=_MAX_SHOWN)}")
            continue
        diff = (got.double() - exp.double()).abs().reshape(-1)
        diff = torch.where(known, diff, torch.full_like(diff, -1.0))
        should = (f"should be {fmt(float(exp.double().norm()), 4)}" if bool(known.all())
                  else f"expected known at the {int(known.sum())} compared elements")
        lines.append(f"  {name}.grad: shape {tuple(got.shape)}, norm "
                     f"{fmt(float(got.double().norm()), 4)}, {should}")
        for i in torch.topk(diff, min(3, diff.numel())).indices.tolist():
            if diff[i] <= 0:
                break
            ix = _index(unravel(i, tuple(got.shape)))
            lines.append(f"    {name}.grad{ix} = {fmt(float(got.reshape(-1)[i]), 6)}, "
                         f"should be {fmt(float(exp.reshape(-1)[i]), 6)}")
    return lines


def text(r: BackwardCheck) -> str:
    """The report as ``print`` shows it, lines of at most 78 characters."""
    wrap = textwrap.TextWrapper(_WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    lines = wrap.wrap(r.summary)
    lines += wrap.wrap(f"reference: {r.reference}; inputs: {', '.join(r.inputs)}; "
                       f"outputs: {', '.join(r.outputs)}")
    for s in [f"skipped: {s}" for s in r.skipped] + [f"note: {n}" for n in r.notes]:
        lines += wrap.wrap(s)
    vju = [p for p in r.probes if p.kind == "vJu"]
    if vju:
        bad = sum(not p.agree for p in vju)
        lines.append(f"random probes vᵀJu: {len(vju) - bad} of {len(vju)} agree")
    for p in r.probes:
        if p.kind == "linearity":
            lines += wrap.wrap(
                f"linearity in v, ∂{p.output}/∂{p.input}: ‖g(v1) + g(v2) - g(v1 + v2)‖ = "
                f"{p.got:.2e}, beyond {p.tolerance:.2e}, the rounding measured on float64 "
                f"copies (the backward rounds through a lower precision)")
    if r.pairs:
        head = ["pair", "verdict", "max error", "wrong entries"]
        lines += _text_table(head, [row[:4] for row in _pair_rows(r)])
        for pair in r.wrong_pairs:
            lines += wrap.wrap(f"∂{pair.output}/∂{pair.input}: {pair.sentence}")
    entries = _entry_rows(r)
    if entries:
        lines.append("largest errors:")
        lines += _text_table(["pair", "output index", "input index", "expected", "got",
                              "error"], entries)
    lines += _example_lines(r)
    return "\n".join(lines)


# ------------------------------------------------------------------ notebook


def html_report(r: BackwardCheck) -> str:
    """The report as a notebook shows it: tables, the example and the heatmap."""
    cls = "agree" if r.status == "agree" else "wrong"
    parts = [f'<div class="gradarg-check gradarg-check-{cls}">',
             f"<p><strong>{html.escape(r.summary)}</strong></p>",
             f"<p>reference: {html.escape(r.reference)}</p>"]
    extra = [f"skipped: {s}" for s in r.skipped] + [f"note: {n}" for n in r.notes]
    if extra:
        parts.append("<ul>" + "".join(f"<li>{html.escape(e)}</li>" for e in extra) + "</ul>")
    if r.pairs:
        parts.append(_html_table(["pair", "verdict", "max error", "wrong entries", "what"],
                                 _pair_rows(r)))
    entries = _entry_rows(r)
    if entries:
        parts.append("<p>largest errors</p>")
        parts.append(_html_table(["pair", "output index", "input index", "expected", "got",
                                  "error"], entries))
    ex = _example_lines(r)
    if ex:
        parts.append("<pre>" + html.escape("\n".join(ex)) + "</pre>")
    if r.wrong_pairs:  # the wrong blocks only: the table already says the others agree
        png = _png(r)
        if png:
            parts.append(f'<img alt="error heatmap" src="data:image/png;base64,{png}"/>')
    parts.append("</div>")
    return "".join(parts)


def _png(r: BackwardCheck) -> str | None:
    try:
        from ..show.plot import pyplot

        plt = pyplot("this figure")
    except ImportError:  # pragma: no cover - matplotlib is optional
        return None
    fig = figure(r, pairs="wrong")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, facecolor="white", bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def figure(r: BackwardCheck, pairs: str = "all") -> Any:
    """:meth:`BackwardCheck.figure <gradarg.BackwardCheck.figure>`: the heatmap of the errors."""
    from ..show.plot import pyplot

    plt = pyplot("this figure")

    chosen = [p for p in r.pairs if (pairs == "all" or not p.agree)
              and p.got is not None]
    if not chosen:
        raise ValueError("no Jacobian blocks to draw: the full Jacobians were not compared "
                         "(run check_backward(..., localize=True))")
    ncol = min(3, len(chosen))
    nrow = math.ceil(len(chosen) / ncol)
    size = (5.6, 4.4) if ncol == 1 else (4.2, 3.4)
    fig, axes = plt.subplots(nrow, ncol, figsize=(size[0] * ncol, size[1] * nrow),
                             squeeze=False, facecolor="white")
    for ax in axes.flat[len(chosen):]:
        ax.set_visible(False)
    # one colour scale for all panels: a right block stays white next to a wrong one
    got = {id(p): cast(torch.Tensor, p.got) for p in chosen}
    exp = {id(p): cast(torch.Tensor, p.expected) for p in chosen}
    top = max(float((got[id(p)] - exp[id(p)]).abs().max()) for p in chosen) or 1.0
    for ax, p in zip(axes.flat, chosen, strict=False):
        err = (got[id(p)] - exp[id(p)]).abs().numpy()
        im = ax.imshow(err, cmap="Reds", vmin=0, vmax=top, aspect="auto",
                       interpolation="nearest")
        wrong = ((got[id(p)] - exp[id(p)]).abs() > cast(torch.Tensor, p.tolerance)).numpy()
        if wrong.any() and wrong.size <= 4096:
            ii, jj = wrong.nonzero()
            ax.scatter(jj, ii, s=12, facecolors="none", edgecolors="black", linewidths=0.6)
        fig.colorbar(im, ax=ax, shrink=0.85, label="|got − expected|")
        state = "agree" if p.agree else f"{p.n_wrong} wrong"
        ax.set_title(f"∂{p.output}/∂{p.input}: {state}", fontsize=10)
        ax.set_xlabel(f"{p.input} element (flattened)" if p.columns is None
                      else f"sampled {p.input} elements ({p.columns.numel()})")
        ax.set_ylabel(f"{p.output} element (flattened)" if p.rows is None
                      else f"sampled {p.output} elements ({p.rows.numel()})")
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    return fig


def _text_table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    def line(r):
        return "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
    return [line(head)] + [line(r) for r in rows]


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    h = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
                for r in rows)
    return f'<table class="gradarg-table"><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table>'
