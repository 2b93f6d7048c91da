"""Class: a parameter table the forward reads only through integer indices (``table[T]`` where
``table[:T]`` was meant) leaves its other rows out: they get no gradient and never train.
The watch names the table and the rows read; a slice, a gather by a tensor of indices
(``nn.Embedding`` or ``table[idx]``) that covers half the rows or more, or a table read as a
whole, say nothing of it.

The truth comes from torch: the rows of the table whose ``.grad`` is nonzero.  Generated: how
the table is read (one integer, two integers, a slice, all of it), its number of rows, the
sequence length, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "only through integer indices"


class Positions(nn.Module):
    def __init__(self, rows, how):
        super().__init__()
        self.pos = nn.Parameter(0.1 * torch.randn(rows, 6))
        self.head = nn.Linear(6, 2)
        self.how = how

    def forward(self, x):  # x: (batch, T, 6)
        t = x.shape[1]
        if self.how == "int":
            p = self.pos[t]
        elif self.how == "two ints":
            p = self.pos[0] + self.pos[t]
        elif self.how == "every int":  # each row by its integer: the table is all read
            p = sum(self.pos[i] for i in range(self.pos.shape[0]))
        elif self.how == "slice":
            p = self.pos[:t]
        else:
            p = self.pos.mean(0)
        return self.head((x + p).mean(1))


@settings(max_examples=25, deadline=None)
@given(how=st.sampled_from(["int", "two ints", "every int", "slice", "all"]), rows=st.integers(6, 20),
       seq=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_a_table_read_only_by_integer_indices_is_named(how, rows, seq, seed):
    torch.manual_seed(seed)
    model = Positions(rows, how)
    x, y = torch.randn(4, seq, 6), torch.randint(0, 2, (4,))
    with gradarg.watch(model) as w:
        nn.functional.cross_entropy(model(x), y).backward()
    got = int((model.pos.grad != 0).any(1).sum())
    text = w.summary()
    named = SAID in text
    # the truth: which rows got a gradient
    if how in ("int", "two ints"):
        assert got == (1 if how == "int" else 2)
        assert named, text
        assert f"of its {rows}" in text
    else:
        assert got == (seq if how == "slice" else rows)  # every row read by "every int"
        assert not named, text
