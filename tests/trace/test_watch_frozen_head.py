"""Class: an output layer whose weight is frozen while its bias trains (a freeze by parameter
name, ``"bias" in name``, that caught the new head) leaves the outputs a fixed projection that
only biases shift.  The watch names the output layer and its frozen weight; a head that
trains, a head frozen whole, a head without a bias, and frozen layers before the head are not
named.

The truth comes from torch alone: after the step, the head's weight has no ``.grad`` and has
not moved while its bias has.  Generated: the depth, how the parameters are frozen, whether
the head has a bias, and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


@settings(max_examples=30, deadline=None)
@given(depth=st.integers(1, 3), bias=st.sampled_from([True, True, False]),
       how=st.sampled_from(["by-name", "by-name", "body-only", "head-whole", "head-weight",
                            "none"]),
       seed=st.integers(0, 2**16))
def test_a_frozen_output_weight_with_a_trained_bias_is_named(depth, bias, how, seed):
    torch.manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(6, 6), nn.Tanh()]
    model = nn.Sequential(*layers, nn.Linear(6, 3, bias=bias))
    head = f"{2 * depth}"
    for name, p in model.named_parameters():
        in_head = name.startswith(head + ".")
        p.requires_grad_({"by-name": "bias" in name,
                          "body-only": in_head or "bias" in name,
                          "head-whole": not in_head,
                          "head-weight": not (in_head and name.endswith("weight")),
                          "none": True}[how])
    trainable = [p for p in model.parameters() if p.requires_grad]
    if not trainable:
        return  # nothing to train: no step
    opt = torch.optim.SGD(trainable, lr=0.1)
    weight = model[2 * depth].weight
    before = weight.detach().clone()
    x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    frozen = not weight.requires_grad  # the truth: no gradient, not moved
    assert (weight.grad is None) == frozen and torch.equal(weight, before) == frozen
    expected = frozen and bias and model[2 * depth].bias.requires_grad
    problems = " ".join(w.problems())
    named = re.search(rf"the output layer '{head}' \(Linear\) has its weight frozen "
                      rf"\({head}\.weight: requires_grad=False", problems)
    assert bool(named) == expected, (how, bias, problems)
    if named:
        assert not w.summary().startswith("gradients ok")
