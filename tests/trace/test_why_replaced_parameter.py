"""why_no_grad on a parameter the module no longer holds: replaced by code outside the forward
(a head swapped in after the optimizer was built, ``layer.weight = nn.Parameter(...)``) or by a
forward that assigns a new ``nn.Parameter`` at every call.  The graph cannot tell which, so the
answer gives both, and never says the forward did it as a fact.  The truth is read from torch:
the old parameter is not among the module's, the one the graph holds is.
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from gradarg import why_no_grad


class Reassigns(nn.Module):
    def __init__(self, width: int, in_forward: bool):
        super().__init__()
        self.body, self.head = nn.Linear(3, width), nn.Linear(width, 2)
        self.in_forward = in_forward

    def forward(self, x):
        if self.in_forward:
            self.head.weight = nn.Parameter(torch.zeros_like(self.head.weight))
        return self.head(torch.tanh(self.body(x)))


@given(width=st.integers(2, 6), in_forward=st.booleans(), what=st.sampled_from(["weight", "head"]),
       seed=st.integers(0, 99))
def test_a_replaced_parameter_gets_both_causes(width, in_forward, what, seed):
    torch.manual_seed(seed)
    model = Reassigns(width, in_forward)
    old = model.head.weight  # what an optimizer built now holds
    if not in_forward:  # replaced by the user's code, between building the optimizer and now
        if what == "weight":
            model.head.weight = nn.Parameter(old.detach().clone())
        else:
            model.head = nn.Linear(width, 2)
    loss = model(torch.randn(4, 3)).pow(2).sum()
    # the truth, from torch: the old parameter is gone from the module, its successor is used
    assert all(p is not old for p in model.parameters())
    d = why_no_grad(loss, old, module=model)
    assert d.case == "not-reachable"
    assert "not one of Reassigns's parameters now" in d.message, d.message
    assert "code outside the forward replaced it" in d.message
    assert "the forward assigns" in d.message and "cannot" in d.message
    assert ": the forward replaced it" not in d.message  # no single cause stated as fact
    loss.backward()
    assert old.grad is None and model.head.weight.grad is not None
