"""Tracing, drawing and diagnosing real models: sparse gradients, reentrant checkpoint, complex
tensors, torch.compile. Each must not crash, and must say where it cannot see."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

import gradarg
from gradarg import trace_backward, why_no_grad


@pytest.mark.parametrize("kind", ["embedding", "embedding_bag"])
def test_sparse_gradients_trace_draw_and_diagnose(kind):
    torch.manual_seed(0)
    if kind == "embedding":
        emb = nn.Embedding(50, 4, sparse=True)
        idx = torch.tensor([[1, 7, 7], [3, 1, 9]])
    else:
        emb = nn.EmbeddingBag(50, 4, mode="sum", sparse=True)
        idx = torch.tensor([[1, 7, 7], [3, 1, 9]])
    head = nn.Linear(4, 1)
    loss = head(emb(idx)).pow(2).sum()
    names = {"emb": emb.weight, **dict(head.named_parameters())}
    tr = trace_backward(loss, names=names)
    grad = tr.leaves["emb"]
    assert grad.is_sparse and torch.equal(grad.to_dense(), emb.weight.grad.to_dense())
    assert tr.first_nonfinite is None
    svg, dot = tr.to_svg(), tr.to_dot()
    assert svg.startswith("<svg") and "emb" in svg and "emb" in dot
    # independent: the dense gradient of the same computation
    dense = emb.weight.detach().clone().requires_grad_()
    if kind == "embedding":
        ref = head(nn.functional.embedding(idx, dense)).pow(2).sum()
    else:
        ref = head(nn.functional.embedding_bag(idx, dense, mode="sum")).pow(2).sum()
    (g,) = torch.autograd.grad(ref, dense)
    torch.testing.assert_close(emb.weight.grad.to_dense(), g)
    after = why_no_grad(loss, emb.weight, names=names)  # after the traced backward
    assert after.case == "unchecked"
    loss2 = head(emb(idx)).pow(2).sum()
    emb.weight.grad = None
    before = why_no_grad(loss2, emb.weight, names=names)
    assert before.case == "not-run" and before.gradient.is_sparse


def test_sparse_nonfinite_gradient_is_found():
    emb = nn.Embedding(5, 2, sparse=True)
    idx = torch.tensor([0, 2])
    loss = torch.sqrt(emb(idx) - emb(idx).detach()).sum()  # sqrt(0): infinite derivative
    tr = trace_backward(loss, names={"emb": emb.weight})
    assert tr.first_nonfinite is not None and tr.first_nonfinite.grad_fn == "SqrtBackward0"
    assert 'class="ga-bad"' in tr.to_svg() or "ga-bad" in tr.to_svg()
    d = why_no_grad(loss, emb.weight)
    assert d.case == "nonfinite"


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(4, 4)

    def forward(self, x):
        return torch.tanh(self.inner(x))


def test_reentrant_checkpoint_is_traced_outside_and_warned_about():
    torch.manual_seed(0)
    block, head = Block(), nn.Linear(4, 1)
    x = torch.randn(3, 4, requires_grad=True)

    def loss_fn():
        return head(checkpoint(block, x, use_reentrant=True)).sum()

    names = {"x": x, "inner.weight": block.inner.weight, **dict(head.named_parameters())}
    with pytest.warns(UserWarning, match=r"reentrant torch\.utils\.checkpoint"):
        tr = trace_backward(loss_fn(), names=names)
    assert tr.opaque and "inner.weight" in tr.unreached
    assert torch.equal(tr.leaves["weight"], head.weight.grad)  # outside: traced
    with pytest.raises(KeyError, match=r"reentrant torch\.utils\.checkpoint"):
        tr.cotangent("inner.weight")
    with pytest.raises(KeyError, match="no node named 'nope'"):
        tr.cotangent("nope")
    # inside: .grad is still filled, as a plain backward fills it
    inside = block.inner.weight.grad.clone()
    block.zero_grad()
    head.zero_grad()
    x.grad = None
    plain = head(torch.tanh(block.inner(x))).sum()
    plain.backward()
    torch.testing.assert_close(inside, block.inner.weight.grad)
    d = why_no_grad(loss_fn(), block.inner.weight, names=names)
    assert d.case == "not-reachable" and "checkpoint" in d.message


def test_non_reentrant_checkpoint_is_traced_inside():
    block, head = Block(), nn.Linear(4, 1)
    x = torch.randn(3, 4, requires_grad=True)
    out = head(checkpoint(block, x, use_reentrant=False)).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: nothing hidden
        tr = trace_backward(out, names={"inner.weight": block.inner.weight})
    assert not tr.opaque
    torch.testing.assert_close(tr.cotangent("inner.weight"), block.inner.weight.grad)


def test_complex_intermediates_trace_draw_and_diagnose():
    torch.manual_seed(0)
    z = torch.randn(8, dtype=torch.complex64, requires_grad=True)
    w = torch.randn(8, dtype=torch.complex64)
    loss = (torch.fft.fft(z * w).abs() ** 2).sum()
    tr = trace_backward(loss, names={"z": z})
    svg = tr.to_svg()  # warnings are errors here: no "discards the imaginary part"
    assert "z" in svg and tr.to_dot()
    # independent: |fft(zw)|² summed = 8 |zw|² (Parseval), so d/d conj(z) -> 2·8·|w|²·z
    torch.testing.assert_close(z.grad, 16 * (w.abs() ** 2) * z.detach())
    assert why_no_grad(loss, z).case == "unchecked"


def test_torch_compile_region_is_one_node():
    pytest.importorskip("torch._dynamo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit notes on import
        import torch._dynamo
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    compiled = torch.compile(net, backend="aot_eager")  # no C compiler needed
    x = torch.randn(5, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        out = compiled(x).sum()
    names = dict(net.named_parameters())
    tr = trace_backward(out, names=names)
    assert "CompiledFunctionBackward" in [n.grad_fn for n in tr.nodes]
    eager = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    eager.load_state_dict(net.state_dict())
    eager(x).sum().backward()
    for (name, _), q in zip(net.named_parameters(), eager.parameters(), strict=True):
        torch.testing.assert_close(tr.leaves[name], q.grad)
    assert tr.to_svg().startswith("<svg")
    d = why_no_grad(out, net[0].weight, module=net)  # after the traced backward
    assert d.case == "unchecked" and "could not be checked" in d.message
    assert gradarg.why_no_grad(out, torch.randn(3, requires_grad=True)).case == "not-reachable"


def test_repr_of_complex_and_sparse_traces():
    z = torch.randn(8, dtype=torch.complex64, requires_grad=True)
    text = repr(trace_backward((z * z).abs().sum(), names={"z": z}))
    assert "leaf z: grad shape (8,), norm" in text
    emb = nn.Embedding(50, 4, sparse=True)
    text = repr(trace_backward(emb(torch.tensor([1, 2])).sum(), names={"e": emb.weight}))
    assert "leaf e: grad shape (50, 4), norm" in text
