"""Class: one module object held at several places of the model and called several times on the
same input (``nn.ModuleList([Head()] * 3)``: Medusa's three heads are one head and predict the
same tokens).  The watch named the tied tensors but not that the calls are one module on one
input.

Invariant: named exactly when a module object with parameters sits at several places of the
model and the step called it at least twice on the very same input tensor, unless its outputs
(held by the test) differ; the names stated are its places.  Look-alikes: heads built one by
one, one layer applied at every depth on different inputs (ALBERT's sharing, on purpose), a
shared head with dropout whose outputs (kept) differ.  Truth from torch alone: module identity
and ``torch.equal`` of the outputs.  Generated: the setup, the number of heads, widths, the
seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Heads(nn.Module):
    def __init__(self, setup, k, width):
        super().__init__()
        self.setup = setup
        self.body = nn.Linear(4, width)
        if setup == "built":
            self.heads = nn.ModuleList(nn.Linear(width, 3) for _ in range(k))
        elif setup == "albert":
            self.heads = nn.ModuleList([nn.Linear(width, width)] * k)
        elif setup == "dropout":
            self.heads = nn.ModuleList([nn.Sequential(nn.Dropout(0.5), nn.Linear(width, 3))] * k)
        else:
            self.heads = nn.ModuleList([nn.Linear(width, 3)] * k)
        self.kept = []

    def forward(self, x):
        h = torch.tanh(self.body(x))
        if self.setup == "albert":  # one layer, applied at every depth
            for layer in self.heads:
                h = torch.tanh(layer(h))
            return [h]
        outs = [head(h) for head in self.heads]
        if self.setup == "dropout":
            self.kept = outs  # held: the watch can compare them
        return outs


@settings(max_examples=25, deadline=None)
@given(setup=st.sampled_from(["list-times", "built", "albert", "dropout"]),
       k=st.integers(2, 4), width=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_one_module_called_on_one_input_is_named(setup, k, width, seed):
    torch.manual_seed(seed)
    model = Heads(setup, k, width)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        outs = model(x)
        loss = sum(nn.functional.cross_entropy(o, y) if o.shape[-1] == 3 else o.pow(2).mean()
                   for o in outs)
        loss.backward()
        opt.step()
    one_module = all(h is model.heads[0] for h in model.heads)
    same_outputs = len(outs) > 1 and all(torch.equal(o, outs[0]) for o in outs[1:])
    expect = one_module and setup != "albert" and same_outputs
    text = w.summary(checks=False)
    named = "is the same module object as" in text
    assert named == expect, (setup, text)
    if named:
        assert "module 'heads.0'" in text and f"called it {k} times on the same input" in text
        assert not text.startswith("gradients ok"), text
