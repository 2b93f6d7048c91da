"""Class: a loss that maximises ``exp(log_prob)`` (a probability or density) of values so far
in the tail that ``exp`` underflows to 0 in every entry gets an all-zero gradient, and that is
named with the underflow, whether the model returns a tensor or a ``torch.distributions``
object; where some entries do not underflow, the gradient is not zero and nothing of the
kind is said.

The truth comes from torch alone: the values of ``exp`` and every ``.grad``.  Generated: the
log-densities' offset (how far in the tail), whether one example stays near the mean, the
dtype, the batch, what the model returns.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.distributions import Normal

import gradarg

SAID = "exp underflowed to 0 in all"


class Policy(nn.Module):
    def __init__(self, distribution: bool, dtype: torch.dtype):
        super().__init__()
        self.mean = nn.Linear(3, 2).to(dtype)
        self.log_std = nn.Parameter(torch.zeros(2, dtype=dtype))
        self.distribution = distribution

    def forward(self, x):
        if self.distribution:
            return Normal(self.mean(x), self.log_std.exp())
        return self.mean(x), self.log_std


@settings(max_examples=40, deadline=None)
@given(offset=st.sampled_from([0.0, 5.0, 40.0, 400.0, 4000.0]), batch=st.integers(1, 16),
       distribution=st.booleans(), double=st.booleans(), mixed=st.booleans(),
       seed=st.integers(0, 2**16))
def test_an_exp_that_underflowed_everywhere_is_named(offset, batch, distribution, double,
                                                     mixed, seed):
    torch.manual_seed(seed)
    dtype = torch.float64 if double else torch.float32
    model = Policy(distribution, dtype)
    x = torch.randn(batch, 3, dtype=dtype)
    far = torch.ones(batch, 1, dtype=dtype)
    if mixed:  # the first example near the mean, the others far
        far[0] = 0.0
    actions = torch.randn(batch, 2, dtype=dtype) + offset * far  # deep in the tail
    with gradarg.watch(model) as w:
        out = model(x)
        dist = out if distribution else Normal(out[0], out[1].exp())
        prob = dist.log_prob(actions).sum(-1).exp()
        (-prob.mean()).backward()
    # the truth, from torch: exp underflowed in every entry <=> every gradient is zero
    under = not bool(prob.detach().any())
    zero = all(not bool(p.grad.any()) for p in model.parameters())
    assert under == zero
    text = w.summary(checks=False)
    assert (SAID in text) == under, (offset, text)
    if under:
        assert f"{SAID} {batch} entries" in text, text
