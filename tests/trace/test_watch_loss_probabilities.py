"""Classes: a loss built from probabilities where it needs log-probabilities, or from
log-probabilities with the wrong sign.

- ``kl_div`` given probabilities (``softmax``) as its input: what it computes is negative, no
  divergence.  Named exactly when its input's rows are probabilities (truth: the test's own
  input, entries in [0, 1] summing to 1) with ``log_target=False``; never for
  ``log_softmax`` input, a dice loss of probabilities and one-hot targets, or a soft
  cross-entropy written out.
- a log-likelihood minimised without its minus sign.  Named exactly when the loss is the
  target classes' log-probabilities, picked and reduced with no sign change, and no optimizer
  maximises; the truth is torch's own: the loss's gradient with respect to the logits points
  the same way as the gradient of the targets' mean log-probability (so a descent step on the
  loss lowers the targets' probability).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


def _student(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 5))


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides:UserWarning")  # torch's own
@settings(max_examples=40, deadline=None)
@given(form=st.sampled_from(["kl_div(softmax)", "kl_div(log_softmax)", "kl_div(sigmoid)",
                             "kl_div(log_softmax, log_target)", "dice(softmax, one-hot)",
                             "soft cross-entropy"]),
       reduction=st.sampled_from(["batchmean", "sum", "mean"]), with_ce=st.booleans(),
       temperature=st.sampled_from([1.0, 4.0]), n=st.integers(2, 9), seed=st.integers(0, 999))
def test_kl_div_given_probabilities_is_named_exactly(form, reduction, with_ce, temperature, n,
                                                      seed):
    model = _student(seed)
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(n, 6, generator=g), torch.randint(0, 5, (n,), generator=g)
    teacher = F.softmax(torch.randn(n, 5, generator=g) / temperature, -1)
    with gradarg.watch(model) as w:
        z = model(x) / temperature
        if form == "kl_div(softmax)":
            inp = F.softmax(z, -1)
            term = F.kl_div(inp, teacher, reduction=reduction)
        elif form == "kl_div(sigmoid)":  # in [0, 1], rows not summing to 1: not claimed
            inp = torch.sigmoid(z)
            term = F.kl_div(inp, teacher, reduction=reduction)
        elif form == "kl_div(log_softmax)":
            inp = F.log_softmax(z, -1)
            term = F.kl_div(inp, teacher, reduction=reduction)
        elif form == "kl_div(log_softmax, log_target)":
            inp = F.log_softmax(z, -1)
            term = F.kl_div(inp, teacher.log(), reduction=reduction, log_target=True)
        elif form == "dice(softmax, one-hot)":
            inp = F.softmax(z, -1)
            hot = F.one_hot(y, 5).float()
            term = 1 - 2 * (inp * hot).sum() / (inp.sum() + hot.sum())
        else:
            inp = F.log_softmax(z, -1)
            term = -(teacher * inp).sum(-1).mean()
        loss = term + (F.cross_entropy(z, y) if with_ce else 0)
        loss.backward()
    d = inp.detach()
    probabilities = bool(((d >= 0) & (d <= 1)).all()) and bool(
        torch.allclose(d.sum(-1), torch.ones(n), atol=1e-5))  # the test's own input
    named = form.startswith("kl_div") and "log_target" not in form and probabilities
    text = w.summary(checks=False)
    assert ("kl_div was given probabilities" in text) == named, (form, text)
    if named:
        assert term.item() < 0  # torch's own value: no divergence is negative
        assert f"input ({n}, 5)" in text


@settings(max_examples=40, deadline=None)
@given(form=st.sampled_from(["gather.mean", "index.sum", "-gather.mean", "nll_loss",
                             "cross_entropy", "all classes.mean", "0 - index.mean"]),
       maximize=st.booleans(), n=st.integers(2, 9), seed=st.integers(0, 999))
def test_a_log_likelihood_minimised_is_named_exactly(form, maximize, n, seed):
    model = _student(seed)
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(n, 6, generator=g), torch.randint(0, 5, (n,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, maximize=maximize)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        logits = model(x)
        logits.retain_grad()
        lp = F.log_softmax(logits, -1)
        loss = {"gather.mean": lambda: lp.gather(1, y[:, None]).mean(),
                "index.sum": lambda: lp[torch.arange(n), y].sum(),
                "-gather.mean": lambda: -lp.gather(1, y[:, None]).mean(),
                "nll_loss": lambda: F.nll_loss(lp, y),
                "cross_entropy": lambda: F.cross_entropy(logits, y),
                "all classes.mean": lambda: lp.mean(),
                "0 - index.mean": lambda: 0 - lp[torch.arange(n), y].mean()}[form]()
        loss.backward()
        opt.step()
    # torch's truth: does a descent step on the loss lower the targets' log-probability?
    z = logits.detach().requires_grad_()
    (up,) = torch.autograd.grad(F.log_softmax(z, -1)[torch.arange(n), y].mean(), z)
    lowers = float((logits.grad * up).sum()) > 0
    picked = form in ("gather.mean", "index.sum")  # the targets' log-probabilities, as they are
    named = picked and not maximize
    assert not picked or lowers  # the construction agrees with torch's truth
    text = w.summary(checks=False)
    assert ("a log-likelihood with no minus sign" in text) == named, (form, maximize, text)
