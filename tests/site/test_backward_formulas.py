"""The backward formulas page's tables (``docs/_pages/opformulas.py``): node names as torch
gives them to live graphs, formulas that equal torch's backward when evaluated, and a wrong
formula told from a right one."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_pages"))
import opformulas
from fakeops import Scaled, fake_op

NODES = opformulas.nodes()
BY_NAME = {n.name: n for n in NODES}


def test_names_are_unique_and_match_live_grad_fns():
    assert len(BY_NAME) == len(NODES) > 500
    x = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    for out in (x.sin(), x * x, x @ x, x.sum(), x.max(), torch.linalg.inv(x), x.relu()):
        assert out.grad_fn.name() in BY_NAME, out.grad_fn.name()


def test_formulas_name_each_differentiable_input():
    mul = BY_NAME["MulBackward0"]
    assert {i for inputs, _ in mul.formulas for i in inputs} == {"self", "other"}
    assert BY_NAME["SinBackward0"].formulas == ((("self",), "grad * self.cos().conj()"),)
    assert BY_NAME["CdistBackwardBackward0"].not_implemented
    assert not BY_NAME["CdistBackward0"].not_implemented


def test_evaluated_formulas_equal_torchs_backward():
    done, failed = opformulas.evaluate(NODES)
    assert len(done) > 50 and failed > 0
    assert all(e.equal for e in done), [e for e in done if not e.equal]
    assert {"SinBackward0", "ExpBackward0", "HypotBackward0"} <= {e.node for e in done}


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 2**31 - 1))
def test_evaluated_formulas_equal_torchs_backward_at_other_points(seed):
    """The invariant over generated inputs (each seed draws other values in (0.1, 0.9) and
    another upstream gradient), not the page's one draw."""
    done, _ = opformulas.evaluate(NODES, seed=seed)
    assert len(done) > 50
    assert all(e.equal for e in done), [e for e in done if not e.equal]


@pytest.mark.parametrize(("node", "wrong"), [("SinBackward0", "grad * self.sin()"),
                                             ("ExpBackward0", "grad * self"),
                                             ("HypotBackward0", "grad * self")])
def test_a_wrong_formula_is_reported_unequal(node, wrong):
    right = BY_NAME[node]
    broken = dataclasses.replace(
        right, formulas=tuple((inputs, wrong) for inputs, _ in right.formulas))
    done, _ = opformulas.evaluate([broken])
    assert done and not all(e.equal for e in done)


def test_live_nodes_are_listed_and_checked():
    from torch.testing._internal.common_methods_invocations import op_db

    ops = [o for o in op_db if o.name in ("sin", "mul", "cdist", "lerp", "index_put")]
    seen = opformulas.live_nodes(ops)
    assert seen["SinBackward0"].kind == "checked" and seen["SinBackward0"].operator == "sin"
    assert seen["LerpBackward1"].kind == "checked"       # a tensor weight: a later sample
    assert seen["CdistBackward0"].kind == "checked"
    outside = {k for k in seen if k not in BY_NAME}
    assert outside <= {"torch::autograd::AccumulateGrad", "torch::autograd::CopySlices"}


def test_a_wrong_backward_met_in_a_graph_is_not_marked_checked():
    op = fake_op(Scaled.apply, dtypes=(torch.float64,))
    assert opformulas.live_nodes([op])["ScaledBackward"].kind == "checked"
    Scaled.factor = 2.0                                  # twice cos: wrong
    try:
        assert opformulas.live_nodes([op])["ScaledBackward"].kind == "mismatch"
    finally:
        Scaled.factor = 1.0


def test_markdown_escapes_pipes_and_covers_every_node_once():
    rows = "\n".join(opformulas.markdown(NODES, g) for g in opformulas.GROUPS)
    seen = {"SinBackward0": opformulas.Seen("sin", 0, "checked")}
    assert "| `SinBackward0` | `sin` | ✓ `sin` |" in opformulas.markdown(NODES, ("S", "S"), seen)
    named = [n for n in BY_NAME if f"| `{n}` |" in rows]
    assert len(named) == len(NODES)
    assert "`a | b`" not in opformulas._code("a | b")
