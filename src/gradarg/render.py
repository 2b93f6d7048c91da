"""Turn live tensors into LaTeX and Markdown, so formulas on a page are built from the run.

Numbers are printed with :func:`fmt` (``digits`` significant digits, trailing zeros dropped,
integers without a decimal point), the same everywhere on the site.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

__all__ = ["fmt", "latex_jacobian", "latex_matrix", "latex_vjp", "markdown_table"]


def fmt(value: Any, digits: int = 4) -> str:
    """Format a number, or a tensor as nested brackets, for prose and formulas.

    Parameters
    ----------
    value : number, torch.Tensor or numpy.ndarray
        A scalar, or a tensor of any shape (shown as nested lists).
    digits : int
        Significant digits (``:.{digits}g``).

    Examples
    --------
    >>> fmt(0.4000000059604645), fmt(2.0), fmt(2 / 3), fmt(-0.0), fmt(1 - 2j)
    ('0.4', '2', '0.6667', '0', '1 - 2i')
    >>> fmt(torch.tensor([[3.0, 7.0]]))
    '[[3, 7]]'
    """
    if isinstance(value, (torch.Tensor, np.ndarray)):
        if np.ndim(value) > 0:
            return "[" + ", ".join(fmt(row, digits) for row in value) + "]"
        value = value.item()
    if isinstance(value, (complex, np.complexfloating)):  # np.complex64 is not a complex
        value = complex(value)
        re, im = fmt(value.real, digits), fmt(abs(value.imag), digits)
        if im == "0":
            return re
        sign = "-" if value.imag < 0 else "+"
        if re == "0":
            return f"{im}i" if sign == "+" else f"-{im}i"
        return f"{re} {sign} {im}i"
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    text = f"{value:.{digits}g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant}e{int(exp)}"
    return "0" if text in ("-0", "0") else text


def _numpy(t: torch.Tensor) -> np.ndarray:
    """``t`` as an array, also for conjugate and negative views (``z.conj()``, ``-z`` lazily)."""
    return t.detach().cpu().resolve_conj().resolve_neg().numpy()


def _as_2d(t: Any) -> np.ndarray:
    a = _numpy(t) if isinstance(t, torch.Tensor) else np.asarray(t)
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return a.reshape(a.shape[0], -1) if a.ndim > 2 else a


def latex_matrix(t: Any, digits: int = 4, env: str = "bmatrix") -> str:
    r"""LaTeX for a tensor: a number for 0-d, a row vector for 1-d, a matrix for 2-d.

    Higher-dimensional tensors are shown as the matrix of their first dimension against the
    rest flattened row-major.

    Parameters
    ----------
    t : torch.Tensor or array-like
    digits : int
        Significant digits for each entry.
    env : str
        LaTeX matrix environment (``bmatrix``, ``pmatrix``...).

    Examples
    --------
    >>> latex_matrix(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    '\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}'
    >>> latex_matrix(torch.tensor(0.5))
    '0.5'
    """
    if (isinstance(t, torch.Tensor) and t.dim() == 0) or np.ndim(t) == 0:
        return fmt(t, digits)
    a = _as_2d(t)
    rows = [" & ".join(fmt(complex(x) if np.iscomplexobj(a) else x, digits) for x in row)
            for row in a]
    return rf"\begin{{{env}}} " + r" \\ ".join(rows) + rf" \end{{{env}}}"


def latex_jacobian(jac: torch.Tensor, out_shape: Sequence[int], digits: int = 4) -> str:
    r"""LaTeX for a Jacobian of shape ``y.shape + x.shape`` as its ``m × n`` matrix.

    Rows are output elements and columns input elements, both flattened row-major.

    Examples
    --------
    >>> J = torch.eye(2).reshape(1, 2, 1, 2)
    >>> latex_jacobian(J, (1, 2))
    '\\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}'
    """
    m = math.prod(out_shape)
    return latex_matrix(jac.reshape(m, -1) if m else jac.reshape(0, 0), digits)


def latex_vjp(v: torch.Tensor, jac: torch.Tensor, result: torch.Tensor, digits: int = 4) -> str:
    r"""The equation ``vᵀJ = result`` with every entry taken from the run.

    ``jac`` has shape ``v.shape + x.shape`` and is shown as its ``m × n`` matrix, ``v`` as a row.

    Examples
    --------
    >>> v = torch.tensor([1.0, 1.0])
    >>> J = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> latex_vjp(v, J, v @ J)
    'v^\\top J = \\begin{bmatrix} 1 & 1 \\end{bmatrix} \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix} = \\begin{bmatrix} 4 & 6 \\end{bmatrix}'
    """
    vt = latex_matrix(v.reshape(-1), digits)
    return (
        rf"v^\top J = {vt} {latex_jacobian(jac, tuple(v.shape), digits)} = "
        rf"{latex_matrix(result.reshape(-1), digits)}"
    )


def format_cells(rows: Sequence[Sequence[Any]], digits: int = 4) -> list[list[str]]:
    """Every cell as text: tensors as ``[a, b, ...]`` (flattened), numbers with :func:`fmt`.

    Examples
    --------
    >>> format_cells([["x", torch.tensor([1.0, 0.5]), 2 / 3]])
    [['x', '[1, 0.5]', '0.6667']]
    """

    def cell(x: Any) -> str:
        if isinstance(x, (torch.Tensor, np.ndarray)) and np.ndim(x) > 0:
            flat = _numpy(x) if isinstance(x, torch.Tensor) else x
            return "[" + ", ".join(fmt(e, digits) for e in np.ravel(flat)) + "]"
        if isinstance(x, (int, float, complex, torch.Tensor, np.ndarray, np.number)) and not (
            isinstance(x, bool)
        ):
            return fmt(x, digits)
        return str(x)

    return [[cell(x) for x in row] for row in rows]


def markdown_table(
    rows: Sequence[Sequence[Any]], headers: Sequence[str], digits: int = 4
) -> str:
    """A Markdown pipe table; tensors and numbers are formatted with :func:`fmt`.

    A ``|`` inside a cell is escaped, so labels such as ``|z|`` keep the table intact.

    Examples
    --------
    >>> print(markdown_table([["a.grad", torch.tensor(0.4)], ["|z|", 1.0]], ["quantity", "value"]))
    | quantity | value |
    | --- | --- |
    | a.grad | 0.4 |
    | \\|z\\| | 1 |
    """

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    lines = [line(headers), "| " + " | ".join("---" for _ in headers) + " |"]
    lines += [line(row) for row in format_cells(rows, digits)]
    return "\n".join(lines)


def html_table(rows: Sequence[Sequence[Any]], headers: Sequence[str], digits: int = 4) -> str:
    """The same table as :func:`markdown_table`, as HTML (for notebook output)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
        for row in format_cells(rows, digits)
    )
    return f'<table class="gradarg-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
