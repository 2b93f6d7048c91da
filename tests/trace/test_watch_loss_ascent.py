"""Class: a total whose derivative with respect to some per-example losses is negative makes
the step raise those examples' loss.  Weights computed from the loss and kept in the graph
do it (a curriculum's ``exp(-loss / tau)``: ``w + loss * dw/dloss < 0`` once ``loss > tau``),
and so does a per-example loss subtracted.  The watch names how many; detached weights, a
plain mean and a focal factor (computed from the loss with its graph, its derivative positive)
say nothing of the kind.

The truth comes from torch alone: ``torch.autograd.grad(total, per_example)``, its negative
entries counted.  Generated: the weighting, tau, the batch, the loss function and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


def _total(per, how, tau):
    if how == "exp-graph":
        return (torch.exp(-per / tau) * per).mean()
    if how == "exp-detached":
        return (torch.exp(-per.detach() / tau) * per).mean()
    if how == "focal":
        return ((1 - torch.exp(-per)) ** 2 * per).mean()
    if how == "subtracted":
        return per[: len(per) // 2].mean() - 0.5 * per[len(per) // 2:].mean()
    return per.mean()


@settings(max_examples=25, deadline=None)
@given(how=st.sampled_from(["exp-graph", "exp-graph", "exp-detached", "focal", "subtracted",
                            "mean"]),
       tau=st.sampled_from([0.3, 1.0, 30.0]), batch=st.integers(4, 32),
       loss=st.sampled_from(["cross_entropy", "mse"]), seed=st.integers(0, 2**16))
def test_per_example_losses_the_step_raises_are_named(how, tau, batch, loss, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(batch, 5)
    y = torch.randint(0, 3, (batch,)) if loss == "cross_entropy" else torch.randn(batch, 3)

    def per_example():
        out = model(x)
        if loss == "cross_entropy":
            return F.cross_entropy(out, y, reduction="none")
        return F.mse_loss(out, y, reduction="none").mean(1)

    # the truth: the derivative of the total with respect to each per-example loss
    per = per_example()
    (d,) = torch.autograd.grad(_total(per, how, tau), per)
    negative = int((d < 0).sum())
    with gradarg.watch(model) as w:
        opt.zero_grad()
        _total(per_example(), how, tau).backward()
        opt.step()
    text = " ".join(w.problems())
    said = re.search(r"the total loss falls when (\d+) of the (\d+) per-example losses", text)
    assert bool(said) == (negative > 0), (text, negative, how)
    if said and loss == "cross_entropy":  # mse's node holds every entry before .mean(1)
        assert said.groups() == (str(negative), str(batch))
    if how in ("exp-detached", "focal", "mean"):
        assert not said
