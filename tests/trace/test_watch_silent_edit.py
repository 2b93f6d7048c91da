"""Class: a parameter edited between the forward and the backward where autograd cannot see it
(through ``.data``: the version counter does not move, nothing raises), while an operation of
the graph saved it, is named: the backward reads the edited values, so gradients upstream of
that operation are not those of the loss the forward computed.  Look-alikes are not named: the
same edit after the optimizer step (a max-norm constraint done right), an edit inside the
forward (before the use), an edit of a bias no operation saved, an edit by a factor of one,
``param.data = t`` (a new storage: the saved tensors keep the old one).

The truth comes from torch alone: the gradients the backward produced against those of the
loss the forward computed, recomputed on a copy of the weights the forward used.  Generated:
depth, widths, which layer is edited, the factor.
"""

from __future__ import annotations

import copy
import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SAID = "changed between the forward and the backward without autograd seeing it"
KINDS = ["data before backward", "after step", "inside forward", "bias before backward",
         "factor one", "new storage"]


class Edited(nn.Module):
    """An MLP; ``inside`` edits layer ``k``'s weight through ``.data`` before using it."""

    def __init__(self, widths: list[int], k: int, factor: float, inside: bool):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(widths))
        self.k, self.factor, self.inside = k, factor, inside

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            if self.inside and i == self.k:
                layer.weight.data.mul_(self.factor)
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.tanh(x)
        return x


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=6, deadline=None)
@given(depth=st.integers(2, 4), width=st.integers(3, 12), layer=st.integers(0, 3),
       factor=st.floats(0.3, 0.9), seed=st.integers(0, 2**16))
def test_an_edit_autograd_does_not_see_is_named_when_the_backward_reads_it(
        kind, depth, width, layer, factor, seed):
    torch.manual_seed(seed)
    widths = [5] + [width] * (depth - 1) + [3]
    k = layer % depth
    factor = 1.0 if kind == "factor one" else factor
    model = Edited(widths, k, factor, inside=kind == "inside forward")
    x, y = torch.randn(16, 5), torch.randint(0, 3, (16,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    edited = model.layers[k]
    with gradarg.watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        used = copy.deepcopy(model)  # the weights the forward used
        if kind in ("data before backward", "factor one"):
            edited.weight.data.mul_(factor)
        elif kind == "bias before backward":
            edited.bias.data.mul_(factor)
        elif kind == "new storage":
            edited.weight.data = edited.weight.data * factor
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
        if kind == "after step":
            with torch.no_grad():
                edited.weight.mul_(factor)
    # the truth, from torch: the gradient of the loss the forward computed
    used.inside = False
    true = torch.autograd.grad(F.cross_entropy(used(x), y), list(used.parameters()))
    wrong = any(not torch.allclose(g, t, atol=1e-6) for g, t in zip(grads, true, strict=True))
    assert wrong == (kind == "data before backward" and k > 0), (kind, k)
    text = w.summary(checks=False)
    assert (SAID in text) == wrong, (kind, k, text)  # named exactly when the gradients are off
    if wrong:
        assert f"layers.{k}.weight" in text


def test_no_reading_is_kept_after_the_watch():
    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))
    with gradarg.watch(model) as w:
        model(torch.randn(3, 4)).sum().backward()
    assert w.silent.found is None and not w.silent._read
    assert not model._forward_hooks
