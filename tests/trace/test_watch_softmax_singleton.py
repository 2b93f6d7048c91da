"""Class: a softmax (or log_softmax) taken over a dimension of size 1 is constant (every
output 1, or 0), so everything before it gets an exactly zero gradient: attention weights
over a bag of instances computed with the wrong ``dim`` (the instances' axis transposed away).
When the zero is made inside the model, the watch names the softmax with its size-1 case among
the operations that made it; over the instances' dimension nothing is zero and nothing of the
kind is said.

The truth comes from torch alone: the attention layer's gradient is exactly zero exactly when
the softmax's dimension has size 1.  Generated: the dimension, softmax or log_softmax weights,
the bag size and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Bag(nn.Module):
    def __init__(self, dim, log):
        super().__init__()
        self.features = nn.Linear(5, 8)
        self.attention = nn.Sequential(nn.Linear(8, 4), nn.Tanh(), nn.Linear(4, 1))
        self.head = nn.Linear(8, 2)
        self.dim, self.log = dim, log

    def forward(self, bag):                       # bag: (instances, 5)
        h = torch.tanh(self.features(bag))        # (instances, 8)
        a = self.attention(h)                     # (instances, 1)
        w = torch.log_softmax(a, self.dim).exp() if self.log else torch.softmax(a, self.dim)
        return self.head((w * h).sum(0, keepdim=True))


@settings(max_examples=20, deadline=None)
@given(dim=st.sampled_from([0, 1]), log=st.booleans(), size=st.integers(3, 9),
       seed=st.integers(0, 2**16))
def test_a_softmax_over_a_dimension_of_size_one_is_named(dim, log, size, seed):
    torch.manual_seed(seed)
    model = Bag(dim, log)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    bag, y = torch.randn(size, 5), torch.tensor([1])
    with gradarg.watch(model) as w:
        opt.zero_grad()
        nn.functional.cross_entropy(model(bag), y).backward()
        zero = bool((model.attention[0].weight.grad == 0).all())  # the truth
        opt.step()
    assert zero == (dim == 1)
    problems = " ".join(w.problems())
    named = "softmax: zero gradient when taken over a dimension of size 1" in problems
    assert named == zero, (dim, log, problems)
