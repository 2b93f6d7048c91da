"""The operators page's probe (``docs/_pages/opsupport.py``): each mode says "checked" only
after a check that could fail, names what torch raises, and tells a wrong derivative from a
right one. Operators built here (a right and a wrong backward, no jvp, an integer output) and
two of PyTorch's own entries."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_pages"))
import opsupport
from fakeops import Scaled, fake_op

D = torch.float64


@pytest.fixture
def factor():
    yield
    Scaled.factor = 1.0


def test_a_right_operator_is_checked_in_every_mode():
    op = fake_op(torch.sin)
    cells = {m: opsupport.probe(op, m) for m in opsupport.MODES}
    assert {c.kind for c in cells.values()} == {"checked"}, cells


def test_a_wrong_backward_is_a_mismatch_not_checked(factor):
    op = fake_op(Scaled.apply, dtypes=(torch.float64,))
    assert opsupport.probe(op, "backward").kind == "checked"
    Scaled.factor = 2.0
    cell = opsupport.probe(op, "backward")
    assert cell.kind == "mismatch" and "Jacobian mismatch" in cell.detail


def test_a_missing_forward_formula_is_quoted():
    op = fake_op(Scaled.apply, dtypes=(torch.float64,))
    cell = opsupport.probe(op, "forward")
    assert cell.kind == "raises" and "jvp" in cell.detail, cell


def test_an_integer_output_has_nothing_to_differentiate():
    op = fake_op(lambda t: t.argmax(), dtypes=(torch.float64,))
    assert {opsupport.probe(op, m).kind for m in ("backward", "batched", "second")} == {"none"}


def test_jacrev_is_compared_entry_by_entry_with_a_loop_of_backwards():
    # torch 2.13: jacrev of cdist (p=2) differs from the loop, while gradcheck's batched
    # check (random cotangents) passes
    op = fake_op(torch.cdist, dtypes=(torch.float64,), shapes=(((4, 3), (5, 3)),))
    cell = opsupport.probe(op, "batched")
    assert cell.kind == "mismatch", cell
    a, b = (torch.randn(4, 3, dtype=D, requires_grad=True), torch.randn(5, 3, dtype=D))
    assert torch.autograd.gradcheck(lambda t: torch.cdist(t, b), (a,), check_batched_grad=True)
    assert opsupport.probe(fake_op(torch.sin), "batched").kind == "checked"


@pytest.mark.parametrize("n", [5, 40])
def test_every_output_gets_its_first_last_and_spread_rows_compared(n):
    def g(x):
        return x.sin(), (x * 2).sum(0, keepdim=True)

    x = torch.randn(n, dtype=D)
    rows, loop = opsupport._loop_rows(g, (x,))
    assert rows[0] == 0 and n - 1 in rows and rows[-1] == n   # the second output's only row
    if n <= opsupport.LOOP_ROWS:
        assert rows[:-1] == list(range(n))                    # a small output: every row
    else:
        assert len(rows) == opsupport.LOOP_ROWS + 1
    J = torch.autograd.functional.jacobian(lambda t: torch.cat([o.reshape(-1) for o in g(t)]),
                                           x)
    assert torch.allclose(loop[0], J[rows])


def test_a_random_output_is_not_called_checked():
    op = fake_op(lambda t: t * torch.rand_like(t), dtypes=(torch.float64,))
    cell = opsupport.probe(op, "backward")
    assert cell.kind == "unchecked" and "random" in cell.detail


def test_the_probe_leaves_no_gradient_on_the_sample():
    seen = []

    def fn(t):
        seen.append(t)
        return torch.sin(t)

    opsupport.probe(fake_op(fn, dtypes=(torch.float64,)), "backward")
    assert seen and all(t.grad is None for t in seen if t.is_leaf)


def test_families_by_name():
    assert opsupport.family("linalg.solve") == "linalg"
    assert opsupport.family("cdist") == "linalg"
    assert opsupport.family("fft.rfft") == "fft"
    assert opsupport.family("special.zeta") == "special"
    assert opsupport.family("nn.functional.conv2d") == "nn"
    assert opsupport.family("scatter_reduce.amax") == "index"
    assert opsupport.family("cumsum") == "reduce"
    assert opsupport.family("_chunk_cat") == "private"
    assert opsupport.family("sin") == "other"


def test_pytorchs_own_marks_are_read():
    ops = {opsupport.label(o): o for o in opsupport.load_op_db()
           if o.name in ("normal", "sin", "linalg.ldl_solve")}
    assert opsupport.known_failure(ops["normal"], "backward").startswith("skipped")
    assert opsupport.known_failure(ops["sin"], "backward") == ""
    cell = opsupport.probe(ops["linalg.ldl_solve"], "backward")
    assert cell.kind == "raises" and "not implemented" in cell.detail


def test_the_table_renders_a_row_and_its_words():
    rows = [opsupport.Row("cdist", "linalg", {
        "backward": opsupport.Cell("checked"), "batched": opsupport.Cell("mismatch", "m"),
        "forward": opsupport.Cell("raises", "NotImplementedError: x"),
        "second": opsupport.Cell("checked"), "complex": opsupport.Cell("no sample")},
        {m: "" for m in opsupport.MODES})]
    text = opsupport.markdown(rows, "linalg")
    assert "| `cdist` | ✓ | ≠ | ✗ | ✓ | n/a |" in text
    assert "forward mode ✗: `NotImplementedError: x`" in text
    assert opsupport.markdown(rows, "fft").count("\n") == 1      # header only


def test_an_empty_sample_is_never_checked():
    # gradcheck passes on a 0 x 0 matrix whatever the derivative: nothing was compared
    wrong = fake_op(Scaled.apply, dtypes=(torch.float64,), shapes=((0, 3), (3, 4)))
    Scaled.factor = 2.0
    try:
        assert opsupport.probe(wrong, "backward").kind == "mismatch"
        only_empty = fake_op(Scaled.apply, dtypes=(torch.float64,), shapes=((0, 3),))
        assert opsupport.probe(only_empty, "backward").kind not in ("checked", "mismatch")
    finally:
        Scaled.factor = 1.0
