"""Class: the watch keeps the latest notes of each parameter's ``.grad`` (``events.KEPT``); a
claim that ``.grad`` already held a gradient from before the block is made only when the
block's first pass was kept.  With more passes than that (per-example ``backward(1 / n)``
calls adding up to a batch mean), the watch says that the earliest passes were not kept and
what it could therefore not check; with ``.grad`` held from before the block and few passes,
it names it; with neither, it says nothing of the kind.

The truth comes from the step itself: whether ``.grad`` held a gradient when the block began
(a backward before the block, no ``zero_grad`` in it), and the number of passes.  Generated:
the number of passes, a gradient left from before the block, and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg
from gradarg.trace.watching.events import KEPT


@settings(max_examples=20, deadline=None)
@given(passes=st.sampled_from([1, 3, 20, KEPT - 4, KEPT + 5, 100]), left=st.booleans(),
       seed=st.integers(0, 2**16))
def test_held_from_before_only_when_the_first_pass_was_kept(passes, left, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(passes, 3), torch.randn(passes, 1)
    if left:  # a gradient left in .grad from before the block
        F.mse_loss(model(x), y).backward()
    held = all(p.grad is not None for p in model.parameters())  # the truth
    assert held == left
    with gradarg.watch(model) as w:
        if not left:
            opt.zero_grad()
        for i in range(passes):
            F.mse_loss(model(x[i:i + 1]), y[i:i + 1]).backward(torch.tensor(1.0 / passes))
        opt.step()
    text = " ".join(w.problems()) + " " + w.summary()
    claimed = "before the first backward pass in this with block" in text
    unchecked = "the earliest were not kept" in text
    notes_per_param = passes + 2  # each pass, the step, the end
    if notes_per_param <= KEPT:
        assert claimed == left and not unchecked, (passes, left, text)
    else:
        assert not claimed and unchecked == (left or passes > 1), (passes, left, text)
