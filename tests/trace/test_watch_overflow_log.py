"""Class: a loss that takes the log of a value which overflowed to +inf (a forward algorithm or
partition function multiplied out in probability space over many steps) is named as an overflow
with the fix (log space); the same computation that stays finite, or done in log space, is not.

The truth comes from torch alone: whether the probability-space total is +inf.  Generated: the
number of steps, the number of states, the scale of the scores, the space it is computed in.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "entries equal to +inf: its input overflowed"


class Chain(nn.Module):
    """Emission scores per step and a transition matrix between states."""

    def __init__(self, width: int, states: int):
        super().__init__()
        self.emit = nn.Linear(width, states)
        self.trans = nn.Parameter(torch.zeros(states, states))

    def log_partition(self, x: torch.Tensor, space: str) -> torch.Tensor:
        """log Z of a linear chain over the steps of ``x`` (batch, steps, width)."""
        e = self.emit(x)
        if space == "log":
            a = e[:, 0]
            for t in range(1, x.shape[1]):
                a = torch.logsumexp(a[:, :, None] + self.trans, 1) + e[:, t]
            return torch.logsumexp(a, 1)
        a = e[:, 0].exp()
        for t in range(1, x.shape[1]):
            a = (a[:, :, None] * self.trans.exp()).sum(1) * e[:, t].exp()
        return a.sum(1).log()


@pytest.mark.parametrize("space", ["probability", "log"])
@settings(max_examples=8, deadline=None)
@given(steps=st.integers(2, 40), states=st.integers(2, 5), scale=st.sampled_from([1.0, 8.0]),
       seed=st.integers(0, 2**16))
@example(steps=31, states=3, scale=8.0, seed=8447)  # log Z 88.43 < 88.72, yet inf in float32
def test_the_log_of_an_overflowed_value_is_named(space, steps, states, scale, seed):
    torch.manual_seed(seed)
    model = Chain(3, states)
    x = scale * torch.randn(2, steps, 3)
    with gradarg.watch(model) as w:
        loss = model.log_partition(x, space).mean()
        loss.backward()
    # the truth, from torch alone: the total in probability space overflowed
    with torch.no_grad():
        total = model.log_partition(x, "probability")
        exact = model.log_partition(x, "log")
    overflowed = space == "probability" and bool(torch.isinf(total).any())
    # a log Z above float32's largest log overflows; one just below it may too, through a
    # partial sum larger than the total (scores below 0 at later steps shrink it again)
    if space == "probability" and bool((exact > math.log(3.4e38)).any()):
        assert overflowed
    text = w.summary(checks=False)
    assert (SAID in text) == overflowed, text
