"""Class: a loss term that multiplies a parameter by a value computed from parameters that
another optimizer holds (SAC's temperature loss ``-(log_alpha * (log_pi + H)).mean()`` without
``log_pi.detach()``): the other optimizer's parameters get a gradient from it too.  The watch
said "ok" (every gradient finite and nonzero).

Invariant: named exactly when, by torch's own account, the term sends a nonzero gradient to
parameters held by optimizers that do not hold the factor, the factor's optimizer holds none
of them, and the factor enters the product as itself; the names stated are the factor's and
the reached parameters'.  Look-alikes: the value detached, one optimizer for everything, a
factor that is a function of the parameter (``exp(s) * L``, a learned loss weight), a factor
whose optimizer also holds the reached parameters.  Generated: the setup, sizes, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Agent(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 1))
        self.log_alpha = nn.Parameter(torch.tensor(-1.0))


@settings(max_examples=25, deadline=None)
@given(setup=st.sampled_from(["cross", "detached", "one-optimizer", "function", "shared"]),
       width=st.integers(2, 8), seed=st.integers(0, 2**16))
def test_a_term_across_optimizers_is_named(setup, width, seed):
    torch.manual_seed(seed)
    agent = Agent(width)
    body = list(agent.body.parameters())
    if setup == "one-optimizer":
        opts = [torch.optim.SGD(agent.parameters(), lr=0.01)]
    elif setup == "shared":  # the factor's optimizer holds part of the body as well
        opts = [torch.optim.SGD([agent.log_alpha, body[0]], lr=0.01),
                torch.optim.SGD(body[1:], lr=0.01)]
    else:
        opts = [torch.optim.SGD([agent.log_alpha], lr=0.01), torch.optim.SGD(body, lr=0.01)]
    x = torch.randn(16, 3)
    with gradarg.watch(agent) as w:
        for o in opts:
            o.zero_grad()
        value = agent.body(x).squeeze(-1)
        main = value.pow(2).mean()
        other = value.detach() if setup == "detached" else value
        factor = agent.log_alpha.exp() if setup == "function" else agent.log_alpha
        term = -(factor * (other - 1.0)).mean()
        # the truth, torch alone: what the term sends to the body's parameters
        sent = torch.autograd.grad(term, body, retain_graph=True, allow_unused=True)
        (main + term).backward()
        for o in opts:
            o.step()
    reaches = any(g is not None and bool(g.abs().sum() > 0) for g in sent)
    held_by = {id(p): i for i, o in enumerate(opts) for g in o.param_groups for p in g["params"]}
    split = held_by[id(agent.log_alpha)] not in {held_by[id(p)] for p in body}
    expect = reaches and split and setup != "function"
    text = w.summary(checks=False)
    named = "a term of the loss multiplies parameter 'log_alpha'" in text
    assert named == expect, (setup, text)
    if named:
        assert "body.0.weight" in text and "detach" in text, text
        assert not text.startswith("gradients ok"), text
