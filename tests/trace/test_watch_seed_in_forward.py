"""Class: ``torch.manual_seed`` called inside the model's forward resets the global generator
at every call: with dropout in train mode, every step drops the same units (a fixed mask, not
noise).  The watch names the module the seed was set in; a problem with dropout in train
mode, a note without; a seed set outside the model says nothing.

The truth comes from torch: the dropout masks of two steps (the test's own forward hook),
identical exactly when the seed is reset inside the forward.  Generated: the seed inside the
forward, outside it, or none; dropout or not; train or eval mode; the seed value.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SAID = "ran inside the forward of"


class Net(nn.Module):
    def __init__(self, where, dropout, value):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 16), nn.Linear(16, 3)
        self.drop = nn.Dropout(0.5) if dropout else nn.Identity()
        self.where, self.value = where, value

    def forward(self, x):
        if self.where == "inside":
            torch.manual_seed(self.value)
        return self.fc2(self.drop(torch.tanh(self.fc1(x))))


@settings(max_examples=25, deadline=None)
@given(where=st.sampled_from(["inside", "outside", "none"]), dropout=st.booleans(),
       train=st.booleans(), value=st.integers(0, 1000))
def test_a_seed_set_inside_the_forward_is_named(where, dropout, train, value):
    torch.manual_seed(value + 1)
    model = Net(where, dropout, value).train(train)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(12, 6), torch.randint(0, 3, (12,))
    seen = []
    model.drop.register_forward_hook(lambda m, i, o: seen.append(o == 0))
    if where == "outside":
        torch.manual_seed(value)
    with gradarg.watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    same_masks = dropout and train and torch.equal(seen[0], seen[1])
    assert same_masks == (dropout and train and where == "inside")  # the truth, from torch
    problems = " ".join(w.problems())
    text = w.summary()
    assert (SAID in text) == (where == "inside"), text
    assert (SAID in problems) == same_masks, problems
