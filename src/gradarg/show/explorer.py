"""An interactive ``vᵀJ`` explorer: edit ``v`` in the browser, see the rows of ``J`` it combines.

:func:`explorer` computes the Jacobian once, in Python, and returns a :class:`VJPExplorer`
whose HTML (``_repr_html_``) carries that Jacobian as data and a few lines of inline JavaScript.
The page multiplies ``v`` by the stored ``J`` itself: no kernel, no network, and since
``backward`` is linear in ``v`` the product it shows is exactly ``y.backward(gradient=v)``
(up to floating-point rounding).
"""

from __future__ import annotations

import html
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .._validate import as_input_tuple, check_callable, check_cotangent, check_single_output
from ..core.dense import jacobian
from .render import fmt

__all__ = ["VJPExplorer", "explorer"]

MAX_OUTPUTS = 16  # entries of y (one input box each); J may have 16 times as many entries

_SCRIPT = """(function (root) {
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  var J = JSON.parse(root.dataset.jacobian), xShape = JSON.parse(root.dataset.xShape);
  var digits = JSON.parse(root.dataset.digits);
  var inputs = root.querySelectorAll("input.gradarg-explorer-v");
  var live = root.querySelector(".gradarg-explorer-result");
  function trim(s) {
    return s.indexOf(".") < 0 ? s : s.replace(/0+$/, "").replace(/\\.$/, "");
  }
  function fmt(a) {  /* Python's format(a, ".4g"), as gradarg.fmt writes it */
    if (!isFinite(a)) return String(a);
    var e = a.toExponential(digits - 1).split("e"), p = parseInt(e[1], 10), s;
    if (p < -4 || p >= digits) s = trim(e[0]) + "e" + p;
    else s = trim(a.toFixed(digits - 1 - p));
    return s === "-0" ? "0" : s;
  }
  function nest(flat, shape) {  /* "[[a, b]]" in x's shape */
    if (shape.length === 0) return fmt(flat[0]);
    var step = flat.length / shape[0], parts = [];
    for (var i = 0; i < shape[0]; i++)
      parts.push(nest(flat.slice(i * step, (i + 1) * step), shape.slice(1)));
    return "[" + parts.join(", ") + "]";
  }
  function update() {
    var n = J[0].length, sum = [], bad = [];
    for (var j = 0; j < n; j++) sum.push(0);
    for (var i = 0; i < inputs.length; i++) {
      var raw = inputs[i].value.trim(), v = Number(raw);
      var ok = raw !== "" && isFinite(v);
      inputs[i].setAttribute("aria-invalid", ok ? "false" : "true");
      if (!ok) bad.push(inputs[i].dataset.label);
      for (var k = 0; k < n; k++) {
        var cell = root.querySelector('[data-row="' + i + '"][data-col="' + k + '"]');
        var t = v * J[i][k];
        cell.textContent = ok ? fmt(t) : "?";
        sum[k] += t;
      }
    }
    for (var c = 0; c < n; c++)
      root.querySelector('[data-row="sum"][data-col="' + c + '"]').textContent =
        bad.length ? "?" : fmt(sum[c]);
    live.textContent = bad.length
      ? "Enter a number for " + bad.join(", ") + "."
      : "x.grad = vᵀJ = " + nest(sum, xShape);
  }
  for (var i = 0; i < inputs.length; i++) inputs[i].addEventListener("input", update);
  update();
})(document.currentScript && document.currentScript.closest(".gradarg-explorer"));"""

# Colours are inherited, never set: in dark mode the book theme shows HTML outputs on a light box
# with dark text (pydata-sphinx-theme, ``.cell_output .text_html``), in light mode the reverse,
# and a notebook has its own colours. Lines and borders use ``currentColor``.
_STYLE = """.gradarg-explorer { color: inherit; max-width: 100%; margin: 0.5em 0 1em; }
.gradarg-explorer-scroll { overflow-x: auto; max-width: 100%; }
.gradarg-explorer table { border-collapse: collapse; margin: 0; color: inherit; }
.gradarg-explorer caption { caption-side: top; text-align: left; padding: 0 0 0.3em;
  color: inherit; }
.gradarg-explorer th, .gradarg-explorer td { padding: 0.2em 0.5em; text-align: right;
  color: inherit; background: transparent; white-space: nowrap;
  border: 0; border-bottom: 1px solid color-mix(in srgb, currentColor 35%, transparent);
  font-variant-numeric: tabular-nums; }
.gradarg-explorer th { font-weight: 600; }
.gradarg-explorer tr.gradarg-explorer-sum > * { border-top: 2px solid currentColor;
  font-weight: 700; }
.gradarg-explorer label { display: inline-flex; gap: 0.4em; align-items: center; }
.gradarg-explorer input { width: 5.5em; font: inherit; color: inherit; padding: 0.1em 0.3em;
  background: transparent; border: 1px solid currentColor; border-radius: 3px; }
.gradarg-explorer input:focus { outline: 2px solid var(--pst-color-primary, #1a73e8);
  outline-offset: 1px; }
.gradarg-explorer input[aria-invalid="true"] { border: 2px dashed currentColor; }
.gradarg-explorer-result { font-family: var(--pst-font-family-monospace, monospace);
  margin: 0.4em 0 0; overflow-wrap: anywhere; }
.gradarg-explorer-note { font-size: 0.85em; margin: 0.2em 0 0; opacity: 0.85; }
@media (max-width: 40em) {
  .gradarg-explorer label { flex-direction: column; align-items: flex-end; gap: 0.1em; }
  .gradarg-explorer th, .gradarg-explorer td { padding: 0.2em 0.3em; }
  .gradarg-explorer thead th { white-space: normal; }
  .gradarg-explorer input { width: 4.5em; }
}"""


def _index(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, idx)) + "]" if idx else ""


def _indices(shape: Sequence[int]) -> list[tuple[int, ...]]:
    """Every index of ``shape`` in row-major order (``[()]`` for a 0-d shape)."""
    return list(itertools.product(*(range(s) for s in shape)))


@dataclass(frozen=True)
class VJPExplorer:
    """An interactive ``vᵀJ`` for one function at one point; made by :func:`explorer`.

    Displayed in a notebook or on a MyST-NB page, it shows one labelled number box per entry
    of ``v``, each row of ``J`` scaled by its entry of ``v``, and their sum ``vᵀJ``, which is
    what ``y.backward(gradient=v)`` puts in ``x.grad``. Editing a box updates the rows and the
    sum at once, in the browser.

    Attributes
    ----------
    jacobian : torch.Tensor
        ``J`` as a matrix, float64, shape ``(y.numel(), x.numel())``: row ``i`` is the
        gradient of ``y.flatten()[i]`` (row-major flattening, as
        :func:`torch.autograd.functional.jacobian`).
    x_shape, y_shape : tuple of int
        Shapes of the input and of the output (and of ``v``).
    v : torch.Tensor
        The upstream gradient shown first, float64, shape ``y_shape``.
    name : str
        What the explorer explores: shown in its caption and stored in ``data-example``.
    digits : int
        Significant digits of the numbers shown.
    """

    jacobian: torch.Tensor
    x_shape: tuple[int, ...]
    y_shape: tuple[int, ...]
    v: torch.Tensor
    name: str
    digits: int = 4

    def vjp(self, v: Any = None) -> torch.Tensor:
        """``vᵀJ`` with the stored Jacobian, shaped like ``x``: what the page computes.

        Parameters
        ----------
        v : torch.Tensor, array-like or None
            Upstream gradient of shape ``y_shape``; ``None`` uses :attr:`v`.

        Returns
        -------
        torch.Tensor
            float64, shape ``x_shape``.

        Raises
        ------
        ValueError
            ``v`` does not have the shape of ``y``.
        """
        v = self.v if v is None else _as_v(v)
        v = check_cotangent(v, torch.empty(self.y_shape, dtype=torch.float64))
        return (v.reshape(-1) @ self.jacobian).reshape(self.x_shape)

    def data(self) -> dict[str, Any]:
        """What the HTML embeds as ``data-*`` attributes (each value JSON-encoded)."""
        return {
            "example": self.name,
            "jacobian": self.jacobian.tolist(),
            "x-shape": list(self.x_shape),
            "y-shape": list(self.y_shape),
            "v": self.v.reshape(-1).tolist(),
            "digits": self.digits,
        }

    def _repr_html_(self) -> str:
        esc = html.escape
        d = self.digits
        attrs = " ".join(
            f'data-{key}="{esc(value if isinstance(value, str) else json.dumps(value))}"'
            for key, value in self.data().items()
        )
        x_idx, y_idx = _indices(self.x_shape), _indices(self.y_shape)
        head = "".join(f'<th scope="col">x{esc(_index(j))}</th>' for j in x_idx)
        rows = []
        vflat = self.v.reshape(-1).tolist()
        for i, (yi, vi) in enumerate(zip(y_idx, vflat, strict=True)):
            label = f"v{_index(yi)}"
            row_of_j = self.jacobian[i]
            cells = "".join(
                f'<td data-row="{i}" data-col="{k}">{fmt(vi * float(jk), d)}</td>'
                for k, jk in enumerate(row_of_j.tolist())
            )
            rows.append(
                f'<tr><th scope="row"><label><span>{esc(label)}</span>'
                f'<input class="gradarg-explorer-v" type="number" step="any" '
                f'data-label="{esc(label)}" value="{vi!r}" '
                f'aria-label="{esc(label)}, entry of the upstream gradient v"></label></th>'
                f"<td>{esc(fmt(row_of_j, d))}</td>{cells}</tr>"
            )
        total = self.vjp()
        sums = "".join(
            f'<td data-row="sum" data-col="{k}">{fmt(t, d)}</td>'
            for k, t in enumerate(total.reshape(-1).tolist())
        )
        caption = (
            f"vᵀJ for {esc(self.name)}: v is shaped like y {self.y_shape}, "
            f"vᵀJ like x {self.x_shape}. Each row of J is scaled by its entry of v; "
            f"the sum is vᵀJ."
        )
        return (
            f'<div class="gradarg-explorer" {attrs}><style>{_STYLE}</style>'
            f'<div class="gradarg-explorer-scroll"><table><caption>{caption}</caption>'
            f'<thead><tr><th scope="col">v</th><th scope="col">row of J</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}"
            f'<tr class="gradarg-explorer-sum"><th scope="row" colspan="2">sum = vᵀJ</th>'
            f"{sums}</tr></tbody></table></div>"
            f'<p class="gradarg-explorer-result" aria-live="polite">'
            f"x.grad = vᵀJ = {fmt(total, d)}</p>"
            f'<p class="gradarg-explorer-note">J was computed by torch; your browser '
            f"multiplies it by v.</p>"
            f"<script>{_SCRIPT}</script></div>"
        )

    def __str__(self) -> str:
        return f"VJPExplorer({self.name}: y {self.y_shape}, x {self.x_shape})"


def _as_v(v: Any) -> torch.Tensor:
    """``v`` as a tensor: a tensor as it is, numbers and nested lists of them as float64 (a
    complex number kept complex, for :func:`check_cotangent` to refuse by name)."""
    if isinstance(v, torch.Tensor):
        return v
    try:
        t = torch.as_tensor(v)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"v must be a tensor, a number or nested lists of numbers, got "
                        f"{type(v).__name__}") from None
    return t if t.is_complex() else t.to(torch.float64)


def explorer(
    fn: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    v: Any = None,
    *,
    name: str | None = None,
    digits: int = 4,
) -> VJPExplorer:
    """An interactive ``vᵀJ`` for ``fn`` at ``x``: edit ``v`` in the page, see ``x.grad``.

    The Jacobian is computed here, once, by reverse mode (:func:`gradarg.jacobian`); the HTML
    the result displays embeds it and multiplies it by the ``v`` typed in the page, with no
    kernel and no network. Because ``y.backward(gradient=v)`` is linear in ``v``
    (https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html), that product is
    exactly what ``backward`` would put in ``x.grad``, up to floating-point rounding.

    Parameters
    ----------
    fn : callable
        ``fn(x) -> y``, one real floating tensor with 1 to 16 entries.
    x : torch.Tensor
        Real floating input, any shape, with at most 256 entries in ``J`` altogether.
        Never modified.
    v : torch.Tensor, array-like or None
        The upstream gradient shown first, shaped like ``y``; ``None`` (default) is all ones,
        which gives the gradient of ``y.sum()``.
    name : str or None
        Caption and identifier (``data-example``); defaults to ``fn.__name__``
        (``"fn"`` for a lambda).
    digits : int
        Significant digits shown (``gradarg.fmt``'s rule).

    Returns
    -------
    VJPExplorer
        Displays as the explorer in Jupyter and on MyST-NB pages (``_repr_html_``: one
        self-contained ``<div>``, inline style and script, no external assets).

    Raises
    ------
    TypeError
        ``x`` is not a real floating dense tensor (sparse ``x`` refused: pass
        ``x.to_dense()``), or ``fn`` does not return one tensor; ``digits`` is not an int;
        ``name`` is not a string; ``v`` is complex.
    ValueError
        ``v`` does not have the shape of ``y`` or holds NaN or Inf; ``y`` has more than 16
        entries or ``J`` more than 256; ``x`` is empty or on the meta device; ``J`` holds
        NaN or Inf; ``digits`` is not from 1 to 17.

    Examples
    --------
    >>> import torch
    >>> M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> ex = explorer(lambda x: x @ M, torch.tensor([[2.0, 1.0]]), v=[[1.0, 0.0]])
    >>> ex.y_shape, ex.x_shape
    ((1, 2), (1, 2))
    >>> ex.jacobian            # row i: the gradient of y[0, i]; here M transposed
    tensor([[1., 3.],
            [2., 4.]], dtype=torch.float64)
    >>> ex.vjp()               # v = [[1, 0]] picks row 1
    tensor([[1., 3.]], dtype=torch.float64)
    >>> ex.vjp([[1.0, 1.0]])   # the page, after you type 1 into v[0, 1]
    tensor([[3., 7.]], dtype=torch.float64)
    >>> 'data-jacobian="[[1.0, 3.0], [2.0, 4.0]]"' in ex._repr_html_()
    True
    """
    check_callable("fn", fn)
    (x,), _ = as_input_tuple("x", x)
    if x.is_complex():
        raise TypeError(
            f"x has dtype {x.dtype}; the explorer shows real numbers only: "
            f"pass a real floating tensor (torch.float32 or torch.float64)"
        )
    if isinstance(digits, bool) or not isinstance(digits, int):
        raise TypeError(f"digits must be an int from 1 to 17, got {digits!r} "
                        f"({type(digits).__name__})")
    if not 1 <= digits <= 17:
        raise ValueError(f"digits must be an int from 1 to 17, got {digits!r}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a string or None, got {type(name).__name__}")
    if x.numel() == 0:
        raise ValueError("x has no entries; the explorer needs at least one")
    with torch.no_grad():
        y = check_single_output(fn, fn(x.detach().clone()))
    if y.is_complex() or not y.is_floating_point():
        raise TypeError(f"fn returned a tensor of dtype {y.dtype}; expected a real floating one")
    m, n = y.numel(), x.numel()
    if m == 0 or m > MAX_OUTPUTS or m * n > 16 * MAX_OUTPUTS:
        raise ValueError(
            f"y has shape {tuple(y.shape)} ({m} entries) and x {tuple(x.shape)} ({n}): the "
            f"explorer shows 1 to {MAX_OUTPUTS} entries of v and at most "
            f"{16 * MAX_OUTPUTS} entries of J; explore a slice, e.g. lambda t: fn(t)[:4]"
        )
    v = torch.ones(y.shape, dtype=torch.float64) if v is None else v
    v = _as_v(v)
    v = check_cotangent(v, y.to(torch.float64))
    if not bool(torch.isfinite(v).all()):
        raise ValueError("v holds NaN or Inf; expected finite numbers")
    jac = jacobian(fn, x, method="reverse").detach().to(torch.float64).reshape(m, n)
    if not bool(torch.isfinite(jac).all()):
        raise ValueError(f"the Jacobian of fn at x holds NaN or Inf: {fmt(jac)}")
    if name is None:
        name = getattr(fn, "__name__", "fn")
        name = "fn" if name == "<lambda>" else name
    return VJPExplorer(
        jacobian=jac, x_shape=tuple(x.shape), y_shape=tuple(y.shape),
        v=v.detach().to(torch.float64).clone(), name=str(name), digits=digits,
    )
