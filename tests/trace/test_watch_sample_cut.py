"""Class: a draw with ``sample()`` from a distribution whose parameters require grad passes no
gradient to them (it runs under ``torch.no_grad()``); the watch names the distribution and
its parameters, unless ``log_prob`` was called on it (a score-function estimator draws with
``sample()`` on purpose).  ``rsample()`` and parameters that do not require grad say nothing.

The truth comes from torch: ``torch.autograd.grad`` of the data term (computed from the draw)
with respect to the distribution's parameters, ``allow_unused=True``: ``None`` means the draw
cut them off.  Generated: the distribution (one that defines ``sample`` itself, one that
inherits ``Distribution.sample``, one wrapped in ``Independent``), ``sample`` or ``rsample``,
``log_prob`` called or not, a KL-like term beside the data term, frozen parameters, and
the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import distributions as D
from torch import nn

import gradarg

NAMED = "sample() drew"


class Layer(nn.Module):
    def __init__(self, kind, how, score, kl, frozen):
        super().__init__()
        self.mu = nn.Parameter(torch.randn(4, 3) * 0.1, requires_grad=not frozen)
        self.rho = nn.Parameter(torch.full((4, 3), -3.0), requires_grad=not frozen)
        self.b = nn.Parameter(torch.zeros(3))
        self.kind, self.how, self.score, self.kl = kind, how, score, kl
        self.dist = None

    def forward(self, x):
        scale = nn.functional.softplus(self.rho)
        if self.kind == "Normal":
            q = D.Normal(self.mu, scale)
        elif self.kind == "Laplace":  # inherits Distribution.sample
            q = D.Laplace(self.mu, scale)
        else:
            q = D.Independent(D.Normal(self.mu, scale), 2)
        w = q.rsample() if self.how == "rsample" else q.sample()
        out = x @ w + self.b
        extra = 0.0
        if self.score:  # a score-function estimator: log_prob of the draw
            extra = q.log_prob(w.detach()).sum() * out.detach().mean()
        if self.kl:  # a KL-like term on the parameters themselves
            extra = extra + 0.01 * ((self.mu ** 2).sum() + (self.rho ** 2).sum())
        self.dist = (q, w)  # the distribution and its draw
        return out, extra


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(["Normal", "Laplace", "Independent"]),
       how=st.sampled_from(["sample", "rsample"]), score=st.booleans(),
       kl=st.booleans(), frozen=st.sampled_from([False, False, True]),
       seed=st.integers(0, 2**16))
def test_a_draw_that_cuts_the_parameters_is_named(kind, how, score, kl, frozen, seed):
    torch.manual_seed(seed)
    model = Layer(kind, how, score, kl, frozen)
    x, y = torch.randn(8, 4), torch.randn(8, 3)
    with gradarg.watch(model) as w:
        out, extra = model(x)
        ((out - y) ** 2).mean().add(extra).backward()
    # the truth: does the data term reach mu through the draw?
    _, drawn = model.dist
    data = ((x @ drawn - y) ** 2).mean()
    reach = (torch.autograd.grad(data, [model.mu], allow_unused=True)[0]
             if model.mu.requires_grad and data.requires_grad else None)
    text = w.summary()
    if reach is None and not score and not frozen:
        assert NAMED in text, text
        assert "log_prob was never called" in text
    else:
        assert NAMED not in text, text
    assert not torch.distributions.Normal.sample.__name__.startswith("call")  # restored
