"""Class: a selection (``x[:, 0]``) of a concatenation (``torch.cat``) reads only the positions
one input filled; the other inputs get no gradient (a class token concatenated after the
encoder and read at position 0: the encoder gets nothing).  When the zero is made between a
module's output and the model's, the watch names the selection and the concatenation among
the operations that made it; read at the encoder's own positions, or pooled over all, nothing
is zero and nothing of the kind is said.

The truth comes from torch alone: the encoder's gradients are exactly zero exactly when the
selection reads the token's position.  Generated: where the token goes (first or last), which
position is read (or a mean over all), the widths and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Tokens(nn.Module):
    def __init__(self, width, first, read):
        super().__init__()
        self.encoder = nn.Linear(width, width)
        self.token = nn.Parameter(torch.randn(1, 1, width))
        self.head = nn.Linear(width, 2)
        self.first, self.read = first, read

    def forward(self, x):
        h = torch.tanh(self.encoder(x))
        t = self.token.expand(len(x), -1, -1)
        seq = torch.cat([t, h] if self.first else [h, t], dim=1)
        pooled = seq.mean(1) if self.read == "mean" else seq[:, self.read]
        return self.head(pooled)


@settings(max_examples=20, deadline=None)
@given(width=st.sampled_from([4, 8]), first=st.booleans(),
       read=st.sampled_from([0, -1, 2, "mean"]), seed=st.integers(0, 2**16))
def test_a_selection_of_a_concatenation_is_named_with_the_zero(width, first, read, seed):
    torch.manual_seed(seed)
    model = Tokens(width, first, read)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 4, width), torch.randint(0, 2, (6,))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        zero = bool((model.encoder.weight.grad == 0).all())  # the truth
        opt.step()
    token_at = 0 if first else 4  # of 5 positions
    assert zero == (read != "mean" and read % 5 == token_at)
    problems = " ".join(w.problems())
    named = ("SelectBackward0 (select" in problems and "CatBackward0 (torch.cat" in problems)
    assert named == zero, (first, read, problems)
