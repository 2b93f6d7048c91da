"""Class: a loss that is NaN because it averaged nothing (a mean over an empty selection of
the batch, or a sum divided by a count of 0) is named as such, 0 / 0, with the shape or the
count, never as an operation outside its domain nor as "ok"; a selection that keeps at least
one example says nothing of the kind.  And what an optimizer step read is called "all zero
while the gradient was not" only when the pass it read had a nonzero gradient.

The truth comes from torch alone: the loss's value, how many examples the selection kept,
every ``.grad`` after the backward.  Generated: the loss (``cross_entropy``, ``nll_loss``,
``mse_loss``, ``smooth_l1_loss``, ``binary_cross_entropy_with_logits``, ``l1_loss``, a plain
``mean``, a masked sum divided by the mask's count), the batch, how many examples the
selection keeps (0 included), the widths, how many iterations come before the empty one, and
whether the module's own forward runs or its layers are called one by one.
"""

from __future__ import annotations

import math

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


def _loss(kind: str, out: torch.Tensor, y: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    sel, tgt = out[keep], y[keep]
    if kind == "cross_entropy":
        return F.cross_entropy(sel, tgt)
    if kind == "nll_loss":
        return F.nll_loss(sel.log_softmax(1), tgt)
    if kind == "mean":
        return sel.pow(2).mean()
    onehot = F.one_hot(tgt, out.shape[1]).float()
    if kind == "masked_count":  # a sum over the kept rows divided by how many were kept
        mask = torch.zeros(out.shape[0], dtype=torch.bool)
        mask[keep] = True
        diff = (out - F.one_hot(y, out.shape[1]).float()).pow(2).sum(1)
        return (diff * mask).sum() / mask.sum()
    fn = {"mse_loss": F.mse_loss, "smooth_l1_loss": F.smooth_l1_loss, "l1_loss": F.l1_loss,
          "binary_cross_entropy_with_logits": F.binary_cross_entropy_with_logits}[kind]
    return fn(sel, onehot)


KINDS = ["cross_entropy", "nll_loss", "mse_loss", "smooth_l1_loss", "l1_loss",
         "binary_cross_entropy_with_logits", "mean", "masked_count"]


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(KINDS), batch=st.integers(1, 9), kept=st.integers(0, 3),
       width=st.integers(3, 12), before=st.integers(0, 2), direct=st.booleans(),
       seed=st.integers(0, 2**16))
@example(kind="masked_count", batch=1, kept=0, width=3, before=1, direct=True, seed=0)
def test_a_mean_over_nothing_is_named(kind, batch, kept, width, before, direct, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, width), nn.Tanh(), nn.Linear(width, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    kept = min(kept, batch)
    with gradarg.watch(model) as w:
        for it in range(before + 1):
            x, y = torch.randn(batch, 5), torch.randint(0, 3, (batch,))
            keep = torch.randperm(batch)[: kept if it == before else batch]
            opt.zero_grad()
            # direct: the layers called one by one (two networks in one module, as
            # co-teaching does), so the watched module's own forward never runs
            out = model[2](model[1](model[0](x))) if direct else model(x)
            loss = _loss(kind, out, y, keep)
            loss.backward()
            grads = [p.grad.clone() for p in model.parameters()]
            opt.step()
    text = w.summary(checks=False)
    empty = len(keep) == 0
    # the truth, from torch: nothing kept <=> a NaN loss; then every gradient is zero, or
    # (a sum divided by a zero count) not finite
    assert math.isnan(loss.item()) == empty
    if empty and kind != "masked_count":
        assert all(bool((g == 0).all()) for g in grads)
    said = "0 / 0" in text
    assert said == empty, (kind, batch, kept, text)
    if empty:
        assert not text.startswith("gradients ok")
        assert "outside its domain" not in text and "log of abs" not in text, text
        if kind == "masked_count":
            assert "divided by 0 in 1 of 1 entries" in text, text
        else:
            assert "averaged an empty tensor of shape (0" in text, text
        assert "every target equals ignore_index" not in text, text  # there is no target
    # a step that read the zero gradient of its own pass is not "a gradient that was not zero"
    assert "whose gradient was not zero" not in text, text


def test_a_step_reading_zero_after_a_nonzero_pass_is_still_named():
    """The claim the class keeps: .grad zeroed between the backward and the step."""
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradarg.watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            model(torch.randn(6, 4)).pow(2).mean().backward()
            for p in model.parameters():
                p.grad.zero_()  # the pass was not zero; the step reads zero
            opt.step()
    assert all(bool((p.grad == 0).all()) for p in model.parameters())
    assert "whose gradient was not zero" in w.summary(checks=False)


@settings(max_examples=20, deadline=None)
@given(calls=st.integers(2, 4), bad=st.integers(0, 3), width=st.integers(2, 6),
       seed=st.integers(0, 2**16))
def test_a_nan_parameter_gradient_is_not_blamed_on_a_call_that_received_a_finite_one(
        calls, bad, width, seed):
    """A layer called several times in one record, one call's output feeding 0 / 0: its
    parameters' gradient (the sum over the calls) is NaN, the call whose arriving gradient was
    finite did not make it, and no module is named as the one that first sent it."""
    torch.manual_seed(seed)
    bad = min(bad, calls - 1)
    model = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 2))
    with gradarg.watch(model) as w:
        total = torch.zeros(())
        for i in range(calls):
            out = model[2](model[1](model[0](torch.randn(4, 3))))  # the layers, one by one
            zero = out.sum() * 0
            total = total + (zero / zero if i == bad else out.pow(2).mean())
        total.backward()
    # the truth, from torch: every parameter's gradient is NaN, and the gradient that arrived
    # at the bad call's output is NaN
    assert all(bool(torch.isnan(p.grad).any()) for p in model.parameters())
    text = w.summary(checks=False)
    assert "first sent by" not in text, text
    assert w.first_nonfinite() is None
    assert "already NaN/Inf where it arrives at the output of" in text, text
