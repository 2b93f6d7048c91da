"""Class: a loss computed in a form that trains something else than meant, with every gradient
finite and nonzero, is named instead of "ok": a regression loss whose input and target shapes
differ (broadcast), ``nll_loss`` given values that are not log-probabilities, a softmax over
dimension 0 of size the batch.

The truth comes from torch alone: the shapes, the logsumexp of what ``nll_loss`` got, and
whether one example's output depends on another example's input (a gradient).  Generated:
the loss and its form (bugs and the same done right), the batch size, the number of outputs.
"""

from __future__ import annotations

import warnings

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

REGRESSION = {"mse": F.mse_loss, "smooth_l1": F.smooth_l1_loss, "huber": F.huber_loss}


def run(kind: str, form: str, batch: int, classes: int, seed: int):
    torch.manual_seed(seed)
    head = nn.Softmax(dim=0 if form == "softmax dim 0" else 1) if kind == "softmax" else None
    layers = [nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, classes if kind != "regression" else 1)]
    model = nn.Sequential(*layers, *([head] if head is not None else []))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(batch, 4)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        out = model(x)
        if kind == "regression":
            name, shaped = form.split(":")
            y = torch.randn(batch) if shaped == "broadcast" else torch.randn(batch, 1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "Using a target size ..."
                loss = REGRESSION[name](out, y)
            fed = y
        else:
            target = torch.randint(0, classes, (batch,))
            fed = {"raw": out, "log_softmax": F.log_softmax(out, dim=1),
                   "log softmax bfloat16": torch.log(torch.softmax(out.bfloat16(), dim=1)),
                   "softmax dim 0": torch.log(out), "softmax dim 1": torch.log(out)}[form]
            loss = F.nll_loss(fed, target)
        loss.backward()
        opt.step()
    return w, model, x, out, fed


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(
    [("regression", f"{n}:{s}") for n in REGRESSION for s in ("broadcast", "same")]
    + [("nll", "raw"), ("nll", "log_softmax"), ("nll", "log softmax bfloat16"),
       ("softmax", "softmax dim 0"),
       ("softmax", "softmax dim 1")]),
    batch=st.integers(2, 6), classes=st.integers(2, 5), seed=st.integers(0, 2**16))
# smooth L1 past its beta on both examples, one on each side: the head's bias gradient is
# (1 - 1) / 2 = 0 exactly (a finding of its own, the cancellation named)
@example(case=("regression", "smooth_l1:same"), batch=2, classes=2, seed=4191)
# smooth L1 broadcast (2, 1) against (2, 2), every residual past beta, as many each side: the
# gradient is zero already at the model's output (made zero by the loss, not a cancellation)
@example(case=("regression", "smooth_l1:broadcast"), batch=2, classes=2, seed=239)
def test_a_loss_in_a_form_that_trains_something_else_is_named(case, batch, classes, seed):
    kind, form = case
    w, model, x, out, fed = run(kind, form, batch, classes, seed)
    text = w.summary(checks=False)
    for p in model.parameters():  # every gradient finite
        assert bool(torch.isfinite(p.grad).all())
    zero = [n for n, p in model.named_parameters() if not bool(p.grad.any())]
    if zero:  # an exactly zero gradient is a finding of its own, not an "ok"
        assert not text.startswith("gradients ok"), text
        assert all(n in text for n in zero) or ("..." in text and zero[0] in text), text
        if kind == "regression":  # the gradient reaching the head, by torch alone
            o = out.detach().requires_grad_(True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                (g,) = torch.autograd.grad(REGRESSION[form.split(":")[0]](o, fed), o)
            if bool(g.any()):  # nonzero there: the bias's terms cancel in its sum
                assert "cancel exactly" in text, text
            else:
                assert "cancel" not in text, text
        return
    if kind == "regression":
        truth = torch.broadcast_shapes(out.shape, fed.shape) != out.shape  # torch's rule
        said = "compared tensors of different shapes" in text and f"({batch}, {batch})" in text
    elif kind == "nll":
        lse = torch.logsumexp(fed.detach().double(), dim=1)
        truth = not torch.allclose(lse, torch.zeros(batch, dtype=torch.float64), atol=1e-2)
        said = "not log-probabilities" in text
    else:
        xx = x.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(model(xx)[0].sum(), xx)
        truth = bool(g[1:].abs().sum() > 0)  # example 0's output depends on the others
        said = "dim 0" in text and "depends on the other examples" in text
    assert said == truth, (case, text)
    assert text.startswith("gradients ok") == (not truth), text


@settings(max_examples=25, deadline=None)
@given(form=st.sampled_from(["raw", "log_softmax last", "log_softmax over time", "log_sigmoid"]),
       frames=st.integers(8, 16), batch=st.integers(1, 4), classes=st.integers(3, 7),
       seed=st.integers(0, 2**16))
def test_ctc_loss_given_values_that_are_not_log_probabilities_is_named(form, frames, batch,
                                                                        classes, seed):
    # ctc_loss takes log-probabilities (T, N, C) over the classes, the last dimension; the
    # truth is torch's logsumexp over that dimension of what ctc_loss was given
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, classes))
    x = torch.randn(frames, batch, 5)
    targets = torch.randint(1, classes, (batch, 3))
    with gradarg.watch(model) as w:
        out = model(x)
        given_ = {"raw": out, "log_softmax last": out.log_softmax(-1),
                  "log_softmax over time": out.log_softmax(0),
                  "log_sigmoid": nn.functional.logsigmoid(out)}[form]
        nn.functional.ctc_loss(given_, targets, torch.full((batch,), frames),
                               torch.full((batch,), 3)).backward()
    lse = torch.logsumexp(given_.detach().double(), dim=-1)
    truth = bool(lse.abs().max() > 1e-2)
    text = w.summary(checks=False)
    # a log_softmax over dimension 0 is named as such, with what it does to the loss's input
    said = "not log-probabilities" in text
    assert said == truth, (form, float(lse.abs().max()), text)
    if truth and form != "log_softmax over time":
        assert "ctc_loss was given values that are not log-probabilities" in text, text
