"""Turn live tensors into LaTeX and Markdown, so formulas on a page are built from the run.

Numbers are printed with :func:`fmt` (``digits`` significant digits, trailing zeros dropped,
integers without a decimal point), the same everywhere on the site.
"""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .checks import (
    check_digits,
    check_entries,
    check_text_memory,
    check_vjp_result,
    jacobian_arg,
    numeric,
    shown,
    table_args,
)

__all__ = [
    "fmt",
    "latex_jacobian",
    "latex_matrix",
    "latex_vjp",
    "markdown_table",
    "summarize",
]


def fmt(value: Any, digits: int = 4) -> str:
    """Format a number, or a tensor as nested brackets, for prose and formulas.

    Parameters
    ----------
    value : number, torch.Tensor or numpy.ndarray
        A scalar, or a tensor of any shape (shown as nested lists).  A sparse tensor is
        shown densified (its zeros written out); a meta tensor has no values and is refused.
    digits : int
        Significant digits (``:.{digits}g``), from 1 to 40.

    Raises
    ------
    TypeError
        ``value`` is not a number, tensor or numeric array; ``digits`` not an integer.
    ValueError
        ``digits`` out of range; ``value`` on the meta device.

    Examples
    --------
    >>> fmt(0.4000000059604645), fmt(2.0), fmt(2 / 3), fmt(-0.0), fmt(1 - 2j)
    ('0.4', '2', '0.6667', '0', '1 - 2i')
    >>> fmt(torch.tensor([[3.0, 7.0]]))
    '[[3, 7]]'
    """
    digits = check_digits(digits)
    value = numeric("value", value)
    check_text_memory("value", value, digits)
    return _fmt(value, digits)


def _fmt(value: Any, digits: int) -> str:
    """:func:`fmt` after its checks."""
    if isinstance(value, (torch.Tensor, np.ndarray)):
        if np.ndim(value) > 0:
            return "[" + ", ".join(_fmt(row, digits) for row in value) + "]"
        value = value.item()
    if isinstance(value, (complex, np.complexfloating)):  # np.complex64 is not a complex
        value = complex(value)
        re, im = _fmt(value.real, digits), _fmt(abs(value.imag), digits)
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


# dtypes NumPy has no type for, shown through one that holds their values exactly
_WIDER = {torch.bfloat16: torch.float32, torch.complex32: torch.complex64}


def _numpy(t: torch.Tensor) -> np.ndarray:
    """``t`` as an array, also for conjugate and negative views (``z.conj()``, ``-z`` lazily)
    and for dtypes NumPy lacks (bfloat16, complex32: widened, every value kept)."""
    t = t.detach().cpu().resolve_conj().resolve_neg()
    wider = _WIDER.get(t.dtype)
    return (t if wider is None else t.to(wider)).numpy()


def _as_2d(t: Any, name: str = "t") -> np.ndarray:
    if isinstance(t, torch.Tensor):
        a = _numpy(shown(name, t))
    else:
        try:
            a = np.asarray(t)
        except ValueError as err:  # ragged nested lists
            raise ValueError(f"{name} must be rectangular (a tensor or a nested list of equal "
                             f"lengths): {err}") from None
        if a.dtype.kind not in "biufc":
            raise TypeError(f"{name} must hold numbers (a tensor, an array or nested lists of "
                            f"numbers), got {type(t).__name__} of {a.dtype}")
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
        LaTeX matrix environment (``bmatrix``, ``pmatrix``...): letters only.

    Raises
    ------
    TypeError
        ``t`` holds no numbers; ``digits`` not an integer; ``env`` not a string.
    ValueError
        ``env`` not a name of letters; ``digits`` out of range; ``t`` on the meta device.

    Examples
    --------
    >>> latex_matrix(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    '\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}'
    >>> latex_matrix(torch.tensor(0.5))
    '0.5'
    """
    digits = check_digits(digits)
    if not isinstance(env, str):
        raise TypeError(f"env must be a string (a LaTeX matrix environment such as 'bmatrix'), "
                        f"got {type(env).__name__}")
    if not env.isascii() or not env.replace("*", "").isalpha():
        raise ValueError(f"env must be a LaTeX environment name such as 'bmatrix' or "
                         f"'pmatrix', got {env!r}")
    if isinstance(t, (torch.Tensor, np.ndarray)) and t.ndim == 0:
        return fmt(t, digits)
    if not isinstance(t, (torch.Tensor, np.ndarray, list, tuple)):
        return fmt(numeric("t", t), digits)
    a = _as_2d(t)
    check_text_memory("t", a, digits)
    rows = [" & ".join(fmt(complex(x) if np.iscomplexobj(a) else x, digits) for x in row)
            for row in a]
    return rf"\begin{{{env}}} " + r" \\ ".join(rows) + rf" \end{{{env}}}"


def latex_jacobian(jac: torch.Tensor, out_shape: Sequence[int], digits: int = 4) -> str:
    r"""LaTeX for a Jacobian of shape ``y.shape + x.shape`` as its ``m × n`` matrix.

    Rows are output elements and columns input elements, both flattened row-major.

    Raises
    ------
    TypeError
        ``jac`` is not a tensor; ``out_shape`` not a tuple of integers.
    ValueError
        ``jac.shape`` does not start with ``out_shape``.

    Examples
    --------
    >>> J = torch.eye(2).reshape(1, 2, 1, 2)
    >>> latex_jacobian(J, (1, 2))
    '\\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}'
    """
    jac = jacobian_arg("jac", jac, out_shape, "out_shape")
    m = math.prod(jac.shape[: len(tuple(out_shape))])
    return latex_matrix(jac.reshape(m, -1) if m else jac.reshape(0, 0), digits)


def latex_vjp(v: torch.Tensor, jac: torch.Tensor, result: torch.Tensor, digits: int = 4) -> str:
    r"""The equation ``vᵀJ = result`` with every entry taken from the run.

    ``jac`` has shape ``v.shape + x.shape`` and is shown as its ``m × n`` matrix, ``v`` as a row.

    Examples
    --------
    >>> v = torch.tensor([1.0, 1.0])
    >>> J = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> print(latex_vjp(v, J, v @ J).replace(" \\begin", "\n\\begin"))
    v^\top J =
    \begin{bmatrix} 1 & 1 \end{bmatrix}
    \begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix} =
    \begin{bmatrix} 4 & 6 \end{bmatrix}
    """
    for name, t in (("v", v), ("result", result)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    jac = jacobian_arg("jac", jac, tuple(v.shape), "v.shape")
    v, result = shown("v", v), shown("result", result)
    if result.numel() != jac[(0,) * v.dim()].numel():
        raise ValueError(f"result has {result.numel()} elements but jac has "
                         f"{jac[(0,) * v.dim()].numel()} columns (shape {tuple(jac.shape)}, "
                         f"v.shape {tuple(v.shape)}); expected result = vᵀJ of shape x.shape")
    check_vjp_result(v, jac, result)
    vt = latex_matrix(v.reshape(-1), digits)
    return (
        rf"v^\top J = {vt} {latex_jacobian(jac, tuple(v.shape), digits)} = "
        rf"{latex_matrix(result.reshape(-1), digits)}"
    )


SUMMARY_ENTRIES = 8
"""Tensors with more elements than this are summarised in tables (see :func:`summarize`)."""


def _flat(x: Any) -> np.ndarray:
    return np.ravel(_numpy(x) if isinstance(x, torch.Tensor) else np.asarray(x))


def _is_long(x: Any, max_entries: int) -> bool:
    if isinstance(x, torch.Tensor):
        return x.dim() > 0 and x.numel() > max_entries
    return isinstance(x, np.ndarray) and x.ndim > 0 and x.size > max_entries


def _full_list(x: Any, digits: int) -> str:
    return "[" + ", ".join(fmt(e, digits) for e in _flat(x)) + "]"


def summarize(x: Any, digits: int = 4, max_entries: int = SUMMARY_ENTRIES) -> str:
    """A tensor as one short line: whole if short, else shape, a few entries and the norm.

    Up to ``max_entries`` elements the tensor is shown whole, flattened row-major as
    ``[a, b, ...]``. A longer one shows its first three and last two elements of the
    flattened tensor, its shape and its Euclidean (Frobenius) norm, so a table row stays one
    line whatever the size of the tensor.

    Parameters
    ----------
    x : torch.Tensor or numpy.ndarray
        Real or complex, any shape (a 0-d tensor is shown as a number).
    digits : int
        Significant digits for each entry and the norm.
    max_entries : int
        Longest tensor shown whole.

    Returns
    -------
    str

    Raises
    ------
    TypeError
        ``x`` is not a tensor or an array; ``digits`` or ``max_entries`` not an integer.
    ValueError
        ``digits`` out of range, ``max_entries`` negative; ``x`` on the meta device (a
        sparse ``x`` is shown densified).

    Examples
    --------
    >>> summarize(torch.tensor([1.0, 0.5]))
    '[1, 0.5]'
    >>> summarize(torch.arange(12.0).reshape(3, 4))
    '[0, 1, 2, …, 10, 11] (shape (3, 4), norm 22.49)'
    """
    if not isinstance(x, (torch.Tensor, np.ndarray)):
        raise TypeError(f"summarize expects a tensor or an array, got {type(x).__name__}")
    digits = check_digits(digits)
    max_entries = check_entries(max_entries)
    x = numeric("x", x)
    if np.ndim(x) == 0:
        return fmt(x, digits)
    flat = _flat(x)
    if flat.size <= max_entries:
        return _full_list(flat, digits)
    entries = [fmt(e, digits) for e in (*flat[:3], *flat[-2:])]
    norm = _norm(flat)
    head, tail = ", ".join(entries[:3]), ", ".join(entries[3:])
    return f"[{head}, …, {tail}] (shape {tuple(x.shape)}, norm {fmt(norm, digits)})"


def _norm(flat: np.ndarray, chunk: int = 2**20) -> float:
    """The Euclidean norm in float64, a chunk at a time: no float64 copy of a long tensor."""
    wide = np.complex128 if np.iscomplexobj(flat) else np.float64
    total = 0.0
    for start in range(0, flat.size, chunk):
        part = flat[start:start + chunk].astype(wide)
        total += float(np.vdot(part, part).real)
    return math.sqrt(total)


def _wrapped(text: str, width: int = 76) -> str:
    """A long ``[a, b, ...]`` list broken after commas into lines of at most ``width``."""
    return "\n".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False))


def _cell(x: Any, digits: int) -> str:
    if isinstance(x, (torch.Tensor, np.ndarray)) and np.ndim(x) > 0:
        return _full_list(x, digits)
    if isinstance(x, (int, float, complex, torch.Tensor, np.ndarray, np.number)) and not (
        isinstance(x, bool)
    ):
        return fmt(x, digits)
    return str(x)


def format_cells(
    rows: Sequence[Sequence[Any]], digits: int = 4, max_entries: int = SUMMARY_ENTRIES
) -> list[list[str]]:
    """Every cell as text: numbers with :func:`fmt`, tensors with :func:`summarize`.

    A tensor of up to ``max_entries`` elements is shown whole (flattened); a longer one as its
    shape, a few entries and its norm.

    Examples
    --------
    >>> format_cells([["x", torch.tensor([1.0, 0.5]), 2 / 3]])
    [['x', '[1, 0.5]', '0.6667']]
    >>> format_cells([["y", torch.ones(10)]])
    [['y', '[1, 1, 1, …, 1, 1] (shape (10,), norm 3.162)']]
    """
    return [
        [summarize(x, digits, max_entries) if _is_long(x, max_entries) else _cell(x, digits)
         for x in row]
        for row in rows
    ]


def _long_cells(
    rows: Sequence[Sequence[Any]], headers: Sequence[str], max_entries: int
) -> list[tuple[str, Any]]:
    """``(label, tensor)`` for every summarised cell; the label names its row and column."""
    found: list[tuple[str, Any]] = []
    for row in rows:
        for j, x in enumerate(row):
            if _is_long(x, max_entries):
                label = str(row[0]) if j > 0 else f"row {len(found) + 1}"
                if len(headers) > 2 and j > 0:
                    label += f", {headers[j]}"
                found.append((label, x))
    return found


def _one_line(text: str) -> str:
    """``text`` with its line breaks (every one ``str.splitlines`` knows) as ``<br>``."""
    return "<br>".join(text.splitlines())


def markdown_table(
    rows: Sequence[Sequence[Any]],
    headers: Sequence[str],
    digits: int = 4,
    max_entries: int = SUMMARY_ENTRIES,
) -> str:
    """A Markdown pipe table; tensors and numbers are formatted with :func:`fmt`.

    A ``|`` inside a cell is escaped and a line break becomes ``<br>`` (as GitHub-flavoured
    Markdown writes one inside a cell), so labels such as ``|z|`` or ``"a\\nb"`` keep the
    table intact: every line of it starts with ``|``. A tensor
    with more than ``max_entries`` elements is summarised in its cell (:func:`summarize`), and
    its full values follow the table in a collapsed ``<details>`` block, one click away
    (labelled by the first cell of its row).

    Examples
    --------
    >>> rows = [["a.grad", torch.tensor(0.4)], ["|z|", 1.0]]
    >>> print(markdown_table(rows, ["quantity", "value"]))
    | quantity | value |
    | --- | --- |
    | a.grad | 0.4 |
    | \\|z\\| | 1 |
    >>> print(markdown_table([["y", torch.arange(10.0)]], ["name", "value"]))
    | name | value |
    | --- | --- |
    | y | [0, 1, 2, …, 8, 9] (shape (10,), norm 16.88) |
    <BLANKLINE>
    <details class="gradarg-full"><summary>Full values</summary>
    <BLANKLINE>
    ```text
    y = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    ```
    <BLANKLINE>
    </details>
    """

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(_one_line(c.replace("|", "\\|")) for c in cells) + " |"

    rows, headers = table_args(rows, headers, digits, max_entries)

    lines = [line(headers), "| " + " | ".join("---" for _ in headers) + " |"]
    lines += [line(row) for row in format_cells(rows, digits, max_entries)]
    long = _long_cells(rows, headers, max_entries)
    if long:
        full = "\n".join(_wrapped(f"{label} = {_full_list(x, digits)}") for label, x in long)
        lines += ["", '<details class="gradarg-full"><summary>Full values</summary>', "",
                  "```text", full, "```", "", "</details>"]
    return "\n".join(lines)


def html_table(
    rows: Sequence[Sequence[Any]],
    headers: Sequence[str],
    digits: int = 4,
    max_entries: int = SUMMARY_ENTRIES,
) -> str:
    """The same table as :func:`markdown_table`, as HTML (for notebook output).

    A long tensor's cell is a collapsed ``<details>`` element: the summary shows, the full
    values open with one click.
    """
    rows, headers = table_args(rows, headers, digits, max_entries)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)

    def td(x: Any, text: str) -> str:
        if not _is_long(x, max_entries):
            return f"<td>{html.escape(text)}</td>"
        full = html.escape(_wrapped(_full_list(x, digits), 60))
        return (f'<td><details class="gradarg-full"><summary>{html.escape(text)}</summary>'
                f"<pre>{full}</pre></details></td>")

    body = "".join(
        "<tr>" + "".join(td(x, text) for x, text in zip(row, texts, strict=True)) + "</tr>"
        for row, texts in zip(rows, format_cells(rows, digits, max_entries), strict=True)
    )
    return (f'<table class="gradarg-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")
