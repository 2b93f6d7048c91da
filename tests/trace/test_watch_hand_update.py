"""Class: parameters that no ``torch.optim`` optimizer holds, updated by a hand-written step (a
Muon written from its paper's pseudocode, a manual SGD).  The watch said their gradient was
"computed and never applied" when the hand-written step had applied it (and, in the Muon step,
written NaN into the weights).

Invariant: parameters updated in place by the user's own code after the forward are said to be
"updated outside any torch.optim optimizer", never "never applied"; a NaN that update wrote is
stated with its count; parameters nobody updates are still said to be held by no optimizer.
Truth from torch alone: each parameter's values before and after the step, and
``torch.isfinite``.  Generated: how the rest is updated, the sizes, the learning rate, the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


@settings(max_examples=25, deadline=None)
@given(how=st.sampled_from(["hand", "hand-nan", "none"]), width=st.integers(2, 8),
       lr=st.sampled_from([1e-3, 0.1]), steps=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_a_hand_written_update_is_named_as_such(how, width, lr, steps, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 1))
    mine = [model[2].weight, model[2].bias]  # updated by hand, or not at all
    opt = torch.optim.SGD([model[0].weight, model[0].bias], lr=lr)
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    before = [p.detach().clone() for p in mine]
    with gradarg.watch(model) as w:
        for _ in range(steps):
            opt.zero_grad()
            for p in mine:
                p.grad = None
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            with torch.no_grad():
                for p in mine:
                    if how == "hand":
                        p.add_(p.grad, alpha=-lr)
                    elif how == "hand-nan":  # a step that divides by a zero norm
                        p.add_(p.grad / (p.grad - p.grad).norm(), alpha=-lr)
    changed = [not torch.equal(p.detach(), b) for p, b in zip(mine, before, strict=True)]
    nonfinite = [int((~torch.isfinite(p.detach())).sum()) for p in mine]
    text = w.summary(checks=False)
    said = "updated outside any torch.optim optimizer" in text
    assert said == any(changed), (how, text)
    assert ("never applied" in text) == (not any(changed)), (how, text)
    wrote = re.search(r"that update wrote NaN/Inf into (\d+) of them \(([\w.]+): (\d+) of",
                      text)
    assert (wrote is not None) == (any(nonfinite) and any(changed)), (how, text)
    if wrote:
        name = wrote[2]
        k = nonfinite[["2.weight", "2.bias"].index(name)]
        assert int(wrote[3]) == k and int(wrote[1]) == sum(1 for n in nonfinite if n), text
    if said:
        assert "2.weight" in text and not text.startswith("gradients ok"), text
