"""why_no_grad: one case per reason a .grad is None, zero or NaN, each built the way users hit it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradarg import why_no_grad


@pytest.fixture
def w():
    return torch.tensor([1.0, -2.0, 3.0], requires_grad=True)


@pytest.fixture
def x():
    return torch.tensor([0.5, 1.0, 2.0], requires_grad=True)


def test_non_leaf_without_retain_grad(w):
    h = w * 2
    y = (h**2).sum()
    d = why_no_grad(y, h, names={"h": h, "y": y})
    assert d.case == "non-leaf"
    assert "h.retain_grad()" in d.message and "MulBackward0" in d.message
    h.retain_grad()
    assert why_no_grad(y, h).case != "non-leaf"


def test_detach_is_found_through_shared_memory(w, x):
    y = (w.detach() * x).sum()
    d = why_no_grad(y, w, names={"w": w})
    assert d.case == "not-reachable"
    assert ".detach() or .data" in d.message and d.node == "MulBackward0"


def test_dot_data_is_found_through_shared_memory(w, x):
    y = (w.data * x).sum()
    assert ".detach() or .data" in why_no_grad(y, w).message


def test_numpy_round_trip_copy(w, x):
    y = (torch.tensor(w.detach().numpy()) * x).sum()
    d = why_no_grad(y, w)
    assert d.case == "not-reachable" and "NumPy round trip" in d.message


def test_item_turns_it_into_a_number(x):
    s = torch.tensor(2.5, requires_grad=True)
    y = (x * s.item()).sum()
    d = why_no_grad(y, s, names={"s": s})
    assert d.case == "not-reachable" and ".item()" in d.message


def test_integer_cast_on_the_path(w, x):
    y = (w.long() * x).sum()
    d = why_no_grad(y, w)
    assert d.case == "not-reachable" and "integer dtype" in d.message


def test_integer_tensor_itself(x):
    i = torch.tensor([1, 2, 3])
    assert why_no_grad((x * i).sum(), i).case == "integer-dtype"


def test_no_grad_output(w):
    with torch.no_grad():
        y = (w * 2).sum()
    d = why_no_grad(y, w)
    assert d.case == "output-no-grad" and "torch.no_grad()" in d.message


def test_inference_mode_output(w):
    with torch.inference_mode():
        y = (w * 2).sum()
    d = why_no_grad(y, w)
    assert d.case == "output-no-grad" and "inference_mode" in d.message


def test_requires_grad_false(w):
    u = torch.ones(3)
    d = why_no_grad((w * u).sum(), u, names={"u": u})
    assert d.case == "requires-grad-false" and "u.requires_grad_()" in d.message


def test_unrelated_tensor_is_not_reachable(w, x):
    d = why_no_grad((w * 2).sum(), x)
    assert d.case == "not-reachable" and d.node is None


def test_dead_relu_names_the_node():
    W = torch.tensor([[1.0, 1.0]], requires_grad=True)
    b = torch.tensor([-10.0], requires_grad=True)
    inputs = torch.tensor([[0.5, 0.2], [0.1, 0.3]])
    h = torch.relu(inputs @ W.T + b)
    out = h.sum()
    d = why_no_grad(out, W, names={"W": W, "h": h})
    assert d.case == "zero" and d.node.startswith("h = relu(")
    assert "dead ReLU" in d.message
    assert torch.equal(d.gradient, torch.zeros(1, 2))
    assert W.grad is None  # nothing accumulated


def test_nan_from_sqrt_at_zero_names_the_first_node():
    q = torch.tensor([0.0, 4.0], requires_grad=True)
    r = torch.sqrt(q)
    y = (3 * r).sum()
    d = why_no_grad(y, q, names={"q": q, "r": r})
    assert d.case == "nonfinite" and d.node == "r = sqrt(q)"
    assert torch.isinf(d.gradient[0]) and d.gradient[1].item() == pytest.approx(3 / 4)


def test_nan_from_log_of_zero():
    q = torch.tensor([0.0, 1.0], requires_grad=True)
    y = torch.log(q * q).sum()
    d = why_no_grad(y, q)
    assert d.case == "nonfinite" and d.node == "log"


def test_forgotten_zero_grad_is_accumulation():
    q = torch.tensor([2.0, 1.0], requires_grad=True)
    for _ in range(3):
        y = (q * q).sum()
        y.backward()
    d = why_no_grad((q * q).sum(), q, names={"q": q})
    assert d.case == "accumulated" and d.message.startswith("q.grad holds 3 times")
    assert "consistent with 3 backward() calls" in d.message
    q.grad = None
    assert why_no_grad((q * q).sum(), q).case == "not-run"


def test_ok_and_freed_graph(w):
    y = (w * w).sum()
    y.backward()
    after = why_no_grad(y, w)  # the saved tensors are freed: answered from .grad
    assert after.case == "unchecked" and "could not be checked" in after.message
    y = (w * w).sum()
    d = why_no_grad(y, w, gradient=1.0)  # w.grad holds exactly one pass
    assert d.case == "ok"
    torch.testing.assert_close(d.gradient, 2 * w.detach())


def test_bad_input():
    with pytest.raises(TypeError, match=r"output must be a torch\.Tensor"):
        why_no_grad(1.0, torch.ones(1))
    with pytest.raises(TypeError, match=r"tensor must be a torch\.Tensor"):
        why_no_grad(torch.ones(1), np.ones(1))
    with pytest.raises(TypeError, match=r"names\['a'\] must be a torch\.Tensor"):
        why_no_grad(torch.ones(1), torch.ones(1), names={"a": 1.0})
    with pytest.raises(TypeError, match="names must be a mapping"):
        why_no_grad(torch.ones(1), torch.ones(1), names=[torch.ones(1)])
    with pytest.raises(TypeError, match=r"module must be a torch\.nn\.Module"):
        why_no_grad(torch.ones(1), torch.ones(1), module="net")


def test_inplace_modification_names_the_node(w):
    h = torch.sigmoid(w)
    h += 1
    d = why_no_grad(h.sum(), w, names={"w": w})
    assert d.case == "modified-in-place" and d.node.startswith("Sigmoid")
    assert w.grad is None


def test_html_repr_wraps_the_sentence(w):
    d = why_no_grad((w * 2).sum(), torch.ones(3))
    assert d._repr_html_().startswith('<p class="gradarg-diagnosis"><code>requires-grad-false')
