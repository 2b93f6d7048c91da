"""Class: ``loss.backward(v)`` with a scalar ``v`` computes ``v`` times the loss's gradient
(the vector-Jacobian product ``v^T J``); ``v = 1 / N`` on a loss that is already a mean over its
``N`` terms divides by ``N`` twice.  The watch states the upstream gradient it saw and its
effect, and names the double division as a problem exactly when ``v * N == 1`` for a mean over
``N > 1`` terms; a sum, per-example losses, no ``v`` or ``v = 1`` are not named as problems.

The truth comes from torch alone: the gradients equal ``v`` times those of a plain
``backward()`` of the same loss, and the mean divides by ``N`` (its value against the sum's).
Generated: the loss (MSE mean or sum, cross-entropy, an explicit ``.mean()``), the batch, the
upstream gradient, and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


def _loss(kind, out, y, labels):
    if kind == "mse-mean":
        return F.mse_loss(out, y)
    if kind == "mse-sum":
        return F.mse_loss(out, y, reduction="sum")
    if kind == "explicit-mean":
        return ((out - y) ** 2).mean()
    return F.cross_entropy(out, labels)


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["mse-mean", "mse-sum", "explicit-mean", "ce"]),
       batch=st.sampled_from([1, 4, 16]), v=st.sampled_from(["none", "one", "1/N", "half"]),
       seed=st.integers(0, 2**16))
def test_the_upstream_gradient_is_stated_and_a_double_mean_named(kind, batch, v, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y, labels = torch.randn(batch, 3), torch.randn(batch, 2), torch.randint(0, 2, (batch,))
    terms = batch if kind == "ce" else 2 * batch  # what a mean divides by
    value = {"none": None, "one": 1.0, "1/N": 1.0 / terms, "half": 0.5}[v]
    plain = torch.autograd.grad(_loss(kind, model(x), y, labels), list(model.parameters()))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        loss = _loss(kind, model(x), y, labels)
        if value is None:
            loss.backward()
        else:
            loss.backward(torch.tensor(value))
        got = [p.grad.clone() for p in model.parameters()]
        opt.step()
    for g, ref in zip(got, plain, strict=True):  # the truth: v times the loss's gradient
        assert torch.allclose(g, (1.0 if value is None else value) * ref, atol=1e-7)
    mean = kind != "mse-sum"
    text = " ".join(w.problems()) + " " + w.summary()
    stated = re.search(r"backward\(\) was given the upstream gradient (\S+) for a scalar loss",
                       text)
    assert bool(stated) == (value not in (None, 1.0)), (kind, v, text)
    if stated:
        assert float(stated.group(1)) == float(f"{value:.4g}")
    twice = re.search(r"the gradient is divided by (\d+) twice", " ".join(w.problems()))
    halved = value is not None and abs(value * terms - 1) < 1e-9  # 1 / N, N the mean's terms
    assert bool(twice) == (mean and halved and terms > 1), (kind, batch, v, text)
    if twice:
        assert int(twice.group(1)) == terms
        assert not w.summary().startswith("gradients ok")
