"""Renderers against strings written out by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gradarg import fmt, latex_jacobian, latex_matrix, latex_vjp, markdown_table, summarize
from gradarg.show.render import html_table


def bmatrix(*rows: str) -> str:
    return r"\begin{bmatrix} " + r" \\ ".join(rows) + r" \end{bmatrix}"


# --------------------------------------------------------------------------- fmt


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.0, "2"),
        (3, "3"),
        (0.4000000059604645, "0.4"),  # float32 0.4 seen as a double
        (2 / 3, "0.6667"),
        (-1.5, "-1.5"),
        (0.0, "0"),
        (-0.0, "0"),
        (-1e-20, "-1e-20"),
        (123456.0, "1.235e5"),
        (1e-5, "1e-5"),
        (-2.5e-7, "-2.5e-7"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
        (float("nan"), "nan"),
        (np.float32(0.1), "0.1"),
        (np.float64(0.25), "0.25"),
        (np.int64(7), "7"),
        (torch.tensor(0.5), "0.5"),
        (torch.tensor(3.0, requires_grad=True), "3"),
        (torch.tensor(2, dtype=torch.int64), "2"),
        (np.array(2.5), "2.5"),
    ],
)
def test_fmt_real(value, text):
    assert fmt(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1 - 2j, "1 - 2i"),
        (1 + 2j, "1 + 2i"),
        (-0.5 - 0.25j, "-0.5 - 0.25i"),
        (2j, "2i"),
        (-2j, "-2i"),
        (3 + 0j, "3"),
        (0j, "0"),
        (complex(0.5, 1e-9), "0.5 + 1e-9i"),
        (np.complex64(1 - 2j), "1 - 2i"),
        (np.complex128(-1 + 0.5j), "-1 + 0.5i"),
        (torch.tensor(1 + 2j), "1 + 2i"),
        (torch.tensor(1 + 2j).conj(), "1 - 2i"),
    ],
)
def test_fmt_complex(value, text):
    assert fmt(value) == text


def test_fmt_digits():
    assert fmt(2 / 3, digits=2) == "0.67"
    assert fmt(12345.678, digits=6) == "12345.7"
    assert fmt(12345.678, digits=2) == "1.2e4"
    assert fmt(1 / 3 + 2j / 3, digits=3) == "0.333 + 0.667i"


# --------------------------------------------------------------------------- latex_matrix


def test_latex_matrix_0d():
    assert latex_matrix(torch.tensor(0.5)) == "0.5"
    assert latex_matrix(np.array(-2.0)) == "-2"
    assert latex_matrix(3.0) == "3"
    assert latex_matrix(torch.tensor(1 - 2j)) == "1 - 2i"


def test_latex_matrix_1d_is_a_row():
    assert latex_matrix(torch.tensor([1.0, 2.5, -3.0])) == bmatrix("1 & 2.5 & -3")


def test_latex_matrix_2d():
    assert latex_matrix(torch.tensor([[1.0, 2.0], [3.0, 4.0]])) == bmatrix("1 & 2", "3 & 4")
    assert latex_matrix(torch.tensor([[1.0], [2.0]])) == bmatrix("1", "2")


def test_latex_matrix_3d_first_dim_against_the_rest():
    t = torch.arange(8.0).reshape(2, 2, 2)
    assert latex_matrix(t) == bmatrix("0 & 1 & 2 & 3", "4 & 5 & 6 & 7")


def test_latex_matrix_complex():
    z = torch.tensor([[1 + 2j, 3 - 1j], [-2j, 0.5]], dtype=torch.complex128)
    assert latex_matrix(z) == bmatrix("1 + 2i & 3 - 1i", "-2i & 0.5")
    assert latex_matrix(z.to(torch.complex64)) == bmatrix("1 + 2i & 3 - 1i", "-2i & 0.5")


def test_latex_matrix_conjugate_and_negative_views():
    z = torch.tensor([1 + 2j, -1j])
    assert latex_matrix(z.conj()) == bmatrix("1 - 2i & 1i")
    assert latex_matrix(torch.tensor([1.0, -2.0])._neg_view()) == bmatrix("-1 & 2")


def test_latex_matrix_other_inputs():
    assert latex_matrix(np.array([[1, 2], [3, 4]])) == bmatrix("1 & 2", "3 & 4")
    assert latex_matrix([[1.5, 2], [3, 4]]) == bmatrix("1.5 & 2", "3 & 4")
    assert latex_matrix(torch.tensor([1.0, 2.0], requires_grad=True) * 2) == bmatrix("2 & 4")
    assert latex_matrix(torch.tensor([[1.0, 2.0], [3.0, 4.0]]).T) == bmatrix("1 & 3", "2 & 4")


def test_latex_matrix_env_and_digits():
    t = torch.tensor([[1 / 3, 2.0]], dtype=torch.float64)
    assert latex_matrix(t, env="pmatrix") == r"\begin{pmatrix} 0.3333 & 2 \end{pmatrix}"
    assert latex_matrix(t, digits=2) == bmatrix("0.33 & 2")


# --------------------------------------------------------------------------- latex_jacobian


def test_latex_jacobian_of_x_times_m_is_m_transpose():
    # y = x @ M with x (2,), M (2, 3): J = M^T, 3 x 2
    M = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert latex_jacobian(M.T, (3,)) == bmatrix("1 & 4", "2 & 5", "3 & 6")


def test_latex_jacobian_flattens_both_sides_row_major():
    # y (1, 2), x (1, 2): the 2 x 2 matrix
    J = torch.tensor([[[[1.0, 2.0]], [[3.0, 4.0]]]])  # shape (1, 2, 1, 2)
    assert latex_jacobian(J, (1, 2)) == bmatrix("1 & 2", "3 & 4")


def test_latex_jacobian_0d_output_is_one_row():
    assert latex_jacobian(torch.tensor([2.0, 4.0, 6.0]), ()) == bmatrix("2 & 4 & 6")


def test_latex_jacobian_0d_output_0d_input():
    assert latex_jacobian(torch.tensor(0.5), ()) == bmatrix("0.5")


def test_latex_jacobian_matrix_output_vector_input():
    J = torch.arange(8.0).reshape(2, 2, 2)  # y (2, 2), x (2,): 4 x 2
    assert latex_jacobian(J, (2, 2)) == bmatrix("0 & 1", "2 & 3", "4 & 5", "6 & 7")


# --------------------------------------------------------------------------- latex_vjp


def test_latex_vjp():
    v = torch.tensor([1.0, 1.0])
    J = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    expected = r"v^\top J = " + bmatrix("1 & 1") + " " + bmatrix("1 & 2", "3 & 4") + " = " + bmatrix(
        "4 & 6"
    )
    assert latex_vjp(v, J, torch.tensor([4.0, 6.0])) == expected


def test_latex_vjp_matrix_output():
    # y (2, 2), x (2,): v is shown flattened, J as 4 x 2, the result x-shaped as a row
    v = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    J = torch.arange(8.0).reshape(2, 2, 2)
    result = torch.tensor([1 * 0.0 + 2 * 6.0, 1 * 1.0 + 2 * 7.0])
    expected = (
        r"v^\top J = " + bmatrix("1 & 0 & 0 & 2") + " "
        + bmatrix("0 & 1", "2 & 3", "4 & 5", "6 & 7") + " = " + bmatrix("12 & 15")
    )
    assert latex_vjp(v, J, result) == expected


def test_latex_vjp_digits():
    v = torch.tensor([1 / 3])
    J = torch.tensor([[2 / 3]])
    expected = r"v^\top J = " + bmatrix("0.33") + " " + bmatrix("0.67") + " = " + bmatrix("0.22")
    assert latex_vjp(v, J, torch.tensor([2 / 9]), digits=2) == expected


# --------------------------------------------------------------------------- markdown_table


def test_markdown_table_scalars_and_strings():
    rows = [["a.grad", torch.tensor(0.4)], ["count", 3], ["flag", True], ["none", None]]
    assert markdown_table(rows, ["quantity", "value"]).splitlines() == [
        "| quantity | value |",
        "| --- | --- |",
        "| a.grad | 0.4 |",
        "| count | 3 |",
        "| flag | True |",
        "| none | None |",
    ]


def test_markdown_table_tensors_are_flattened_lists():
    rows = [
        ["vector", torch.tensor([1.0, 2.5])],
        ["matrix", torch.tensor([[1.0, 2.0], [3.0, 4.0]])],
        ["array", np.array([0.5, -1.0])],
        ["complex", torch.tensor([1 + 2j, -1j])],
        ["conj", torch.tensor([1 + 2j]).conj()],
    ]
    assert markdown_table(rows, ["name", "value"]).splitlines()[2:] == [
        "| vector | [1, 2.5] |",
        "| matrix | [1, 2, 3, 4] |",
        "| array | [0.5, -1] |",
        "| complex | [1 + 2i, -1i] |",
        "| conj | [1 - 2i] |",
    ]


def test_markdown_table_numbers_and_digits():
    rows = [[2 / 3, np.float64(0.125), 1 - 1j, 1e-7]]
    assert markdown_table(rows, ["a", "b", "c", "d"], digits=2).splitlines()[2] == (
        "| 0.67 | 0.12 | 1 - 1i | 1e-7 |"
    )


def test_markdown_table_three_columns():
    table = markdown_table([["x", 1.0, 2.0]], ["name", "before", "after"])
    assert table.splitlines() == [
        "| name | before | after |",
        "| --- | --- | --- |",
        "| x | 1 | 2 |",
    ]


def test_markdown_table_no_rows():
    assert markdown_table([], ["a", "b"]) == "| a | b |\n| --- | --- |"


# --------------------------------------------------------------------------- long tensors


def test_summarize_short_tensors_whole():
    assert summarize(torch.tensor([1.0, 0.5, -2.0])) == "[1, 0.5, -2]"
    assert summarize(torch.arange(8.0).reshape(2, 4)) == "[0, 1, 2, 3, 4, 5, 6, 7]"
    assert summarize(torch.tensor(0.25)) == "0.25"


def test_summarize_long_tensor_shape_entries_norm():
    # 0..11: sum of squares 11·12·23/6 = 506, norm sqrt(506) = 22.494...
    t = torch.arange(12.0).reshape(3, 4)
    assert summarize(t) == "[0, 1, 2, …, 10, 11] (shape (3, 4), norm 22.49)"
    assert summarize(t.numpy(), digits=6) == "[0, 1, 2, …, 10, 11] (shape (3, 4), norm 22.4944)"
    # 9 entries of 3 + 4i: norm 3·5 = 15
    z = torch.full((9,), 3 + 4j, dtype=torch.complex128)
    assert summarize(z) == "[3 + 4i, 3 + 4i, 3 + 4i, …, 3 + 4i, 3 + 4i] (shape (9,), norm 15)"
    assert summarize(torch.arange(12.0), max_entries=12).startswith("[0, 1, 2, 3, 4, 5, 6")
    with pytest.raises(TypeError, match="tensor or an array"):
        summarize([1.0, 2.0])


def test_markdown_table_summarises_long_tensors_and_collapses_the_full_values():
    long = torch.arange(1.0, 41.0)            # 1..40: sum of squares 40·41·81/6 = 22140
    rows = [["x.grad", long], ["short", torch.tensor([1.0, 2.0])]]
    table, _, details = markdown_table(rows, ["quantity", "value"]).partition("\n\n")
    assert table.splitlines()[2] == "| x.grad | [1, 2, 3, …, 39, 40] (shape (40,), norm 148.8) |"
    assert table.splitlines()[3] == "| short | [1, 2] |"
    assert "17" not in table                  # the middle entries are not in the table
    lines = details.splitlines()
    assert lines[0] == '<details class="gradarg-full"><summary>Full values</summary>'
    assert lines[-1] == "</details>"
    body = " ".join(lines[3:-3])
    assert body.startswith("x.grad = [1, 2, 3")
    entries = body.removeprefix("x.grad = [").removesuffix("]").split(", ")
    assert entries == [str(k) for k in range(1, 41)]
    assert max(len(line) for line in lines) <= 80   # wrapped: nothing scrolls


def test_markdown_table_without_long_tensors_has_no_details():
    assert "<details" not in markdown_table([["a", torch.ones(8)]], ["name", "value"])


def test_html_table_long_cell_is_a_closed_details():
    html = html_table([["v", torch.arange(20.0)], ["w", torch.tensor([0.5])]], ["n", "value"])
    # 0..19: sum of squares 19·20·39/6 = 2470, norm 49.699
    summary = "[0, 1, 2, …, 18, 19] (shape (20,), norm 49.7)"
    assert f'<td><details class="gradarg-full"><summary>{summary}</summary><pre>' in html
    assert "<details open" not in html
    full = html.split("<pre>")[1].split("</pre>")[0]
    assert full.replace("\n", " ") == "[" + ", ".join(str(k) for k in range(20)) + "]"
    assert "<td>[0.5]</td>" in html


# -- latex_vjp shows only a true equation --------------------------------------------------


@given(m=st.integers(1, 5), n=st.integers(1, 5), seed=st.integers(0, 10_000),
       dtype=st.sampled_from([torch.float16, torch.float32, torch.float64]),
       off=st.floats(128.0, 1e4))
def test_latex_vjp_shows_v_J_and_refuses_any_other_result(m, n, seed, dtype, off):
    # off: how far the wrong result is, in eps of the dtype relative to the scale (the check
    # allows 64)
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(m, generator=g).to(dtype)
    jac = torch.randn(m, n, generator=g).to(dtype)
    right = v @ jac  # in the dtype: rounding within the check's 64 eps
    assert "v^\\top J" in latex_vjp(v, jac, right)
    scale = float((v.double().abs()[:, None] * jac.double().abs()).sum(0).max())
    wrong = right.double().clone()
    wrong[seed % n] += off * torch.finfo(dtype).eps * max(scale, 1.0)  # above rounding
    with pytest.raises(ValueError, match=r"result is not vᵀJ: its entry"):
        latex_vjp(v, jac, wrong.to(dtype))


@settings(max_examples=60, deadline=None)
@given(cells=st.lists(st.lists(st.text(max_size=12), min_size=2, max_size=2), min_size=1,
                      max_size=4),
       headers=st.lists(st.text(max_size=8), min_size=2, max_size=2))
def test_markdown_table_keeps_one_line_per_row_whatever_the_text(cells, headers):
    # a blind edge case: a cell "a\nb" split its row in two (the docstring's promise: cells
    # keep the table intact); every line break str.splitlines knows, and "|", inside cells
    out = markdown_table(cells, headers).splitlines()
    assert len(out) == 2 + len(cells)
    assert all(line.startswith("| ") and line.endswith(" |") for line in out)
    # the cells are still there, in order, line breaks as <br>
    for line, row in zip(out[2:], cells, strict=True):
        for cell in row:
            assert "<br>".join(cell.splitlines()).replace("|", "\\|") in line
