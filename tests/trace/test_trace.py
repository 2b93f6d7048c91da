"""trace_backward records the cotangent at every node; each one is derived here independently.

Expected values come from hand formulas or from ``v`` contracted with ``gradarg.jacobian`` of the
part of the computation downstream of the node; leaf sums are compared with a plain backward.
"""

from __future__ import annotations

import gc
import types
import weakref
import xml.etree.ElementTree as ET

import pytest
import torch

import gradarg
from gradarg import contract, jacobian, trace_backward

F64 = torch.float64


def live_hooks() -> int:
    """Hook closures made by trace_backward that are still alive (held by some graph)."""
    gc.collect()
    # plain functions only: some objects answer any attribute (pytest-xdist's execnet Producer)
    return sum(1 for o in gc.get_objects()
               if type(o) is types.FunctionType and "make_hooks" in o.__qualname__)


def check_flow(trace):
    """For every node that ran: what arrived is what its incoming edges carried."""
    for n in trace.executed:
        if n.key == 0:
            torch.testing.assert_close(n.arrived, trace.gradient)
            continue
        incoming = trace.incoming(n.key)
        torch.testing.assert_close(n.arrived, incoming)


# -- scalar chain a = 5, b = a², c = 8b, d = log c ---------------------------------------------

def scalar_chain():
    a = torch.tensor(5.0, dtype=F64, requires_grad=True)
    b = a * a
    c = 8 * b
    d = torch.log(c)
    return {"a": a, "b": b, "c": c, "d": d}


def test_scalar_chain_cotangents_by_hand():
    t = scalar_chain()
    tr = trace_backward(t["d"], names=t)
    # by hand: ∂d/∂d = 1, ∂d/∂c = 1/c = 1/200, ∂d/∂b = 8/c = 8/200, ∂d/∂a = 2/a = 2/5
    expected = {"d": 1.0, "c": 0.005, "b": 0.04, "a": 0.4}
    for name, value in expected.items():
        assert tr.cotangent(name).item() == pytest.approx(value, rel=1e-12), name
    assert [n.name for n in tr.executed] == ["d", "c", "b", "a"]
    assert [n.label for n in tr.executed] == ["d = log(c)", "c = 8 * b", "b = a * a", "a"]
    # b = a * a sends a·(∂d/∂b) = 0.2 along each of its two edges to a
    assert [e.cotangent.item() for e in tr.edges if e.src == tr.node("b").key] == \
        pytest.approx([0.2, 0.2])
    assert t["a"].grad.item() == pytest.approx(0.4)
    assert tr.leaves == {"a": t["a"].grad}
    check_flow(tr)


def test_scalar_chain_from_c_with_gradient():
    t = scalar_chain()
    tr = trace_backward(t["c"], 0.005, names=t)
    assert tr.cotangent("c").item() == pytest.approx(0.005)
    assert tr.cotangent("b").item() == pytest.approx(0.04)  # 8 · 0.005
    assert t["a"].grad.item() == pytest.approx(0.4)  # 2a · 0.04


def test_vector_chain_against_hand_formulas_and_jacobians():
    a = torch.tensor([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
    b = a * a
    c = 8 * b
    d = torch.log(c)
    v = torch.tensor([1.0, -0.5, 2.0], dtype=F64)
    tr = trace_backward(d, v, names={"a": a, "b": b, "c": c, "d": d})
    a0 = a.detach()
    c0 = 8 * a0 * a0
    torch.testing.assert_close(tr.cotangent("c"), v / c0)
    torch.testing.assert_close(tr.cotangent("b"), 8 * v / c0)
    torch.testing.assert_close(tr.cotangent("a"), 2 * v / a0)
    # the same from Jacobians of the downstream part
    torch.testing.assert_close(tr.cotangent("b"), contract(v, jacobian(
        lambda t: torch.log(8 * t), (a0 * a0))))
    torch.testing.assert_close(a.grad, 2 * v / a0)
    check_flow(tr)


def F1(x):  # the two maps of the tutorial page why-a-vector
    return torch.stack([x[0] * x[1], x[0] + x[1] ** 2])


def F2(u):
    return torch.stack([torch.sin(u[0]), u[0] * u[1]])


def test_two_map_chain_carries_v_then_v_J2():
    x0 = torch.tensor([1.0, 2.0], dtype=F64)
    v = torch.tensor([1.0, -1.0], dtype=F64)
    x = x0.clone().requires_grad_(True)
    u = F1(x)
    z = F2(u)
    tr = trace_backward(z, v, names={"x": x, "u": u, "z": z})
    J1 = jacobian(F1, x0)
    J2 = jacobian(F2, F1(x0))
    torch.testing.assert_close(tr.cotangent("z"), v)
    torch.testing.assert_close(tr.cotangent("u"), contract(v, J2))
    torch.testing.assert_close(tr.cotangent("x"), contract(contract(v, J2), J1))
    torch.testing.assert_close(x.grad, contract(v, jacobian(lambda t: F2(F1(t)), x0)))
    check_flow(tr)


@pytest.mark.parametrize("v", [[[1.0, 0.0]], [[0.0, 1.0]], [[1.0, 1.0]]])
def test_matrix_product_rows_of_the_jacobian(v):
    M = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64)
    x = torch.tensor([[2.0, 1.0]], dtype=F64, requires_grad=True)
    y = x @ M
    v = torch.tensor(v, dtype=F64)
    tr = trace_backward(y, v, names={"x": x, "y": y})
    # ∂y[0,k]/∂x[0,l] = M[l,k], so vᵀJ = v Mᵀ
    torch.testing.assert_close(tr.cotangent("x"), v @ M.T)
    torch.testing.assert_close(tr.cotangent("x"), contract(v, jacobian(lambda t: t @ M,
                                                                        x.detach())))
    torch.testing.assert_close(x.grad, v @ M.T)


def mlp_params(seed=0):
    g = torch.Generator().manual_seed(seed)
    shapes = {"W1": (5, 4), "b1": (5,), "W2": (6, 5), "b2": (6,), "W3": (3, 6), "b3": (3,)}
    return {k: torch.randn(s, generator=g, dtype=F64).requires_grad_(True)
            for k, s in shapes.items()}


STAGES = {  # the downstream part of the MLP from each named intermediate to the output
    "pre1": lambda p, t: STAGES["h1"](p, torch.relu(t)),
    "h1": lambda p, t: STAGES["pre2"](p, t @ p["W2"].T + p["b2"]),
    "pre2": lambda p, t: STAGES["h2"](p, torch.tanh(t)),
    "h2": lambda p, t: t @ p["W3"].T + p["b3"],
}


def test_mlp_every_intermediate_gets_v_times_downstream_jacobian():
    p = mlp_params()
    x = torch.randn(4, 4, dtype=F64)
    pre1 = x @ p["W1"].T + p["b1"]
    h1 = torch.relu(pre1)
    pre2 = h1 @ p["W2"].T + p["b2"]
    h2 = torch.tanh(pre2)
    y = h2 @ p["W3"].T + p["b3"]
    v = torch.randn(4, 3, dtype=F64)
    names = {"pre1": pre1, "h1": h1, "pre2": pre2, "h2": h2, "y": y, **p}
    values = {k: t.detach() for k, t in names.items()}
    tr = trace_backward(y, v, names=names)
    fixed = {k: t.detach() for k, t in p.items()}
    for name, down in STAGES.items():
        J = jacobian(lambda t, down=down: down(fixed, t), values[name])
        torch.testing.assert_close(tr.cotangent(name), contract(v, J), msg=name)
    # leaves: the sum of what reached each equals .grad after a plain backward on a copy
    q = {k: t.detach().clone().requires_grad_(True) for k, t in p.items()}
    y2 = STAGES["pre1"](q, x @ q["W1"].T + q["b1"])
    y2.backward(v)
    for k in p:
        torch.testing.assert_close(tr.cotangent(k), q[k].grad, msg=k)
        torch.testing.assert_close(tr.leaves[k], q[k].grad, msg=k)
        torch.testing.assert_close(p[k].grad, q[k].grad, msg=k)
    check_flow(tr)


def test_nn_module_step_leaf_grads_equal_plain_backward():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    x, target = torch.randn(10, 8), torch.randint(0, 3, (10,))
    loss = torch.nn.functional.cross_entropy(net(x), target)
    tr = trace_backward(loss, names=dict(net.named_parameters()))
    traced = {k: p.grad.clone() for k, p in net.named_parameters()}
    net.zero_grad(set_to_none=True)
    torch.nn.functional.cross_entropy(net(x), target).backward()
    for k, p in net.named_parameters():
        torch.testing.assert_close(traced[k], p.grad)
        torch.testing.assert_close(tr.cotangent(k), p.grad)


def test_use_grad_leaves_dot_grad_untouched():
    t = scalar_chain()
    tr = trace_backward(t["d"], names=t, use_grad=True)
    assert t["a"].grad is None
    assert tr.leaves["a"].item() == pytest.approx(0.4)
    assert tr.cotangent("a").item() == pytest.approx(0.4)


def test_inputs_limits_accumulation():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    y = a * b
    tr = trace_backward(y, inputs=[a], names={"a": a, "b": b})
    assert a.grad.item() == 3.0
    assert b.grad is None
    assert tr.leaves["b"] is None


def test_accumulates_like_backward():
    t = scalar_chain()
    t["a"].grad = torch.tensor(1.0, dtype=F64)
    tr = trace_backward(t["d"], names=t)
    assert t["a"].grad.item() == pytest.approx(1.4)
    assert tr.leaves["a"].item() == pytest.approx(1.4)  # .grad after the pass
    assert tr.cotangent("a").item() == pytest.approx(0.4)  # what this pass sent


def test_recorded_grads_do_not_change_with_later_passes():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (w * 3).sum()
    tr = trace_backward(y, names={"w": w}, retain_graph=True)
    y.backward()  # accumulates into w.grad in place
    assert w.grad.tolist() == [6.0, 6.0]
    assert tr.leaves["w"].tolist() == [3.0, 3.0]


# -- nothing left behind ----------------------------------------------------------------------

def test_no_hook_survives():
    t = scalar_chain()
    before = live_hooks()
    tr = trace_backward(t["d"], names=t, retain_graph=True)
    assert live_hooks() == before
    t["a"].grad = None
    t["d"].backward()  # a second, plain pass: no hook records into the trace
    assert t["a"].grad.item() == pytest.approx(0.4)
    assert len(tr.executed) == 4


class Fails(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("backward of Fails")


def test_no_hook_survives_an_exception():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (Fails.apply(a) * 3).sum()
    before = live_hooks()
    with pytest.raises(RuntimeError, match="backward of Fails"):
        trace_backward(y, retain_graph=True)
    assert live_hooks() == before


def test_inplace_error_is_torchs_with_the_node_named():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.sigmoid()
    c = b * 3
    b.add_(1)  # sigmoid saved its result, now modified
    before = live_hooks()
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        trace_backward(c.sum())
    notes = getattr(info.value, "__notes__", None)  # Python >= 3.11
    assert notes is None or any("SigmoidBackward0" in n for n in notes)
    del info  # its traceback holds trace_backward's frame; the graph (c) must hold no hook
    assert live_hooks() == before


def test_trace_keeps_no_graph_alive():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * a
    y = torch.log(8 * b).sum()
    refs = [weakref.ref(a), weakref.ref(b), weakref.ref(y)]
    tr = trace_backward(y, names={"a": a, "b": b})
    del a, b, y
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    assert "<svg" in tr.to_svg()  # the trace itself still works


# -- bad input --------------------------------------------------------------------------------

def fresh():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    return a, (a * a)


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda a, y: trace_backward([1.0], 1.0), TypeError, "output must be a torch.Tensor"),
    (lambda a, y: trace_backward(y, torch.ones(3)), ValueError, r"shape \(3,\).*\(2,\)"),
    (lambda a, y: trace_backward(y), ValueError, "pass gradient="),
    (lambda a, y: trace_backward(y.detach(), torch.ones(2)), ValueError, "does not require grad"),
    (lambda a, y: trace_backward(a, torch.ones(2)), ValueError, "leaf tensor"),
    (lambda a, y: trace_backward(y, [1.0, 1.0]), TypeError, "gradient must be a torch.Tensor"),
    (lambda a, y: trace_backward(y, torch.ones(2), names={"a": 3}), TypeError, "names"),
    (lambda a, y: trace_backward(y, torch.ones(2), inputs=[torch.ones(2)]), ValueError,
     r"inputs\[0\] does not require grad"),
])
def test_bad_input_leaves_nothing_behind(call, error, match):
    a, y = fresh()
    before = live_hooks()
    with pytest.raises(error, match=match):
        call(a, y)
    assert a.grad is None
    assert live_hooks() == before


def test_freed_graph_is_reported_before_anything_runs():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    y = (a + b * b).sum()
    y.backward()
    a.grad = b.grad = None
    with pytest.raises(RuntimeError, match=r"already freed.*retain_graph=True"):
        trace_backward(y)
    assert a.grad is None and b.grad is None


# -- drawing ----------------------------------------------------------------------------------

def svg_text(svg: str) -> str:
    root = ET.fromstring(svg)
    return " ".join("".join(el.itertext()) for el in root.iter("{http://www.w3.org/2000/svg}text"))


def test_svg_of_the_scalar_chain_shows_the_cotangents():
    t = scalar_chain()
    tr = trace_backward(t["d"], names=t)
    svg = tr.to_svg()
    text = svg_text(svg)  # parses as XML
    for s in ("d = log(c)", "c = 8 * b", "0.005", "0.04", ".grad = 0.4", "gradient"):
        assert s in text, s
    assert text.count("× 5 = 0.2") == 2  # a * a: one edge per use of a, each dd/da share
    assert "currentColor" in svg
    assert tr._repr_html_().startswith('<div class="gradarg-trace"') and "<svg" in tr._repr_html_()
    assert tr._repr_svg_() == svg


def test_svg_marks_zero_and_nan_and_points_at_the_first_nan():
    x = torch.tensor([0.0, 4.0], requires_grad=True)
    y = torch.sqrt(x)
    z = (y * torch.tensor([1.0, 0.0])).sum()
    tr = trace_backward(z, names={"x": x, "y": y, "z": z})
    assert tr.first_nonfinite.name == "y"
    svg = tr.to_svg()
    assert "ga-bad" in svg and "first appears here" in svg_text(svg)
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    tr0 = trace_backward((w * 0).sum(), names={"w": w})
    assert tr0.first_nonfinite is None
    assert 'class="ga-edge ga-zero"' in tr0.to_svg()


def test_large_cotangents_are_labelled_with_shape_and_norm():
    x = torch.randn(64, 256, requires_grad=True)
    tr = trace_backward((x * 2).sum(), names={"x": x})
    text = svg_text(tr.to_svg())
    # every entry of the cotangent into x is 2: norm sqrt(64 * 256 * 4) = 256
    assert "shape (64, 256), norm 256" in text
    assert "‖·‖" not in text and "×256" not in text  # never a bare number that reads as a value


def test_dot_export():
    t = scalar_chain()
    dot = trace_backward(t["d"], names=t).to_dot()
    assert dot.startswith("digraph backward {") and dot.rstrip().endswith("}")
    assert 'v -> n0 [label="1"]' in dot
    assert 'label="× 0.005 = 0.005"' in dot and dot.count('label="× 5 = 0.2"') == 2


def test_side_by_side():
    trs = [trace_backward(scalar_chain()["d"]) for _ in range(2)]
    d = gradarg.side_by_side(trs, ["left", "right"])
    assert d._repr_html_().count("<svg") == 2
    with pytest.raises(ValueError, match="one each"):
        gradarg.side_by_side(trs, ["only one"])
