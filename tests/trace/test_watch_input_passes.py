"""Class: backward passes taken for an input's gradient (a Langevin sampler, a PGD attack) that
also accumulate into the parameters' ``.grad`` the optimizer step reads.  The watch names
them, with their count, when at least two of the passes summed in ``.grad`` filled an input
leaf's ``.grad`` and at least one did not; the same loop written with
``torch.autograd.grad`` or ``backward(inputs=[x])``, or followed by ``zero_grad()``, says
nothing of the kind, nor does one attack pass (often summed on purpose); when every pass of
the sum filled an input's ``.grad`` (micro-batches with a saliency map kept at each), none is
known to be the training loss's alone, and nothing is named either.

The truth comes from torch: the gradient the step read against the training loss's own
gradient (``torch.autograd.grad`` at the parameters before the step): a difference means
passes other than the training loss's are in the sum.  Generated: the number of input
passes, how each is taken, a ``zero_grad()`` after them, micro-batches, widths and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

NAMED = re.compile(r"(\d+) of the (\d+) backward passes accumulated in \.grad")


def _loop(model, x, k, how):
    """``k`` passes for the input's gradient, each on a fresh leaf made from the last."""
    for _ in range(k):
        x = x.detach().clone().requires_grad_(True)
        energy = model(x).sum()
        if how == "backward":
            energy.backward()
            g = x.grad
        elif how == "inputs":
            energy.backward(inputs=[x])
            g = x.grad
        else:
            (g,) = torch.autograd.grad(energy, x)
        x = x - 0.01 * g
    return x.detach()


@settings(max_examples=30, deadline=None)
@given(k=st.integers(0, 4), how=st.sampled_from(["backward", "backward", "inputs", "grad"]),
       zero_after=st.booleans(), micro=st.integers(1, 3), saliency=st.booleans(),
       width=st.sampled_from([8, 16]), seed=st.integers(0, 2**16))
def test_input_gradient_passes_in_the_step_are_named(k, how, zero_after, micro, saliency,
                                                     width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.randn(micro, 16, 3)
    start = torch.randn(16, 3)
    before = [p.detach().clone() for p in model.parameters()]
    with gradarg.watch(model) as w:
        opt.zero_grad()
        neg = _loop(model, start, k, how)
        if zero_after:
            opt.zero_grad()
        for i in range(micro):
            xb = data[i].clone().requires_grad_(saliency)  # a saliency map read at each
            loss = (model(xb).mean() - model(neg).mean()) / micro
            loss.backward()
        stepped = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
    # the truth: the training losses' own gradient at the parameters before the step
    with torch.no_grad():
        for p, b in zip(model.parameters(), before, strict=True):
            p.copy_(b)
    own = torch.autograd.grad(sum((model(data[i]).mean() - model(neg).mean()) / micro
                                  for i in range(micro)), list(model.parameters()))
    extra = sum(float((s - o).norm()) for s, o in zip(stepped, own, strict=True))
    scale = sum(float(o.norm()) for o in own)
    leaked = extra > 1e-4 * max(scale, 1e-6)
    assert leaked == (k >= 1 and how == "backward" and not zero_after)
    text = w.summary()
    found = NAMED.search(text)
    # micro-batches whose every pass fills an input's .grad (a saliency map) read as such:
    # no pass of the sum is then known to be the training loss's alone
    if leaked and k >= 2 and not saliency:
        assert found, text
        assert (int(found[1]), int(found[2])) == (k, k + micro), text
        assert "read" in text and not text.startswith("gradients ok")
    else:
        assert found is None, text
        assert "input of the model that is not a parameter" not in text, text


def test_one_attack_pass_and_saliency_micro_batches_are_not_named():
    """A single input pass (FGSM's clean loss summed with the adversarial one) and
    micro-batches whose every input requires grad: every pass is a training loss's."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 3), torch.randint(0, 2, (16,))
    with gradarg.watch(model) as w:
        for _ in range(2):  # two steps: two attack passes seen, one in each step's sum
            opt.zero_grad()
            xr = x.clone().requires_grad_(True)
            nn.functional.cross_entropy(model(xr), y).backward()  # clean loss, x's gradient
            adv = (xr + 0.1 * xr.grad.sign()).detach()
            nn.functional.cross_entropy(model(adv), y).backward()
            opt.step()
    assert NAMED.search(w.summary()) is None
    assert len(w.inputs.filled) == 2  # the passes were seen, and left unnamed on purpose


def test_a_leaf_whose_grad_was_already_set_is_not_counted():
    """An input leaf that already had a ``.grad`` at the call (a conditioning tensor that
    requires grad, kept across steps) is not known to have been filled by the backward."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    cond = torch.randn(16, 3, requires_grad=True)
    model(cond).sum().backward()  # cond.grad set before the block
    with gradarg.watch(model) as w:
        opt.zero_grad()
        for i in range(3):
            xb = cond if i < 2 else torch.randn(16, 3)
            (model(xb).pow(2).mean() / 3).backward()
        opt.step()
    assert not w.inputs.filled
    assert NAMED.search(w.summary()) is None
