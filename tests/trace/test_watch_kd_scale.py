"""Class: a distillation loss at temperature ``T > 1`` whose soft term (``kl_div`` of softened
distributions) is weighted like the hard cross-entropy, ``alpha`` and ``1 - alpha`` or both 1,
with no ``T**2``, is named with ``T**2``.  Look-alikes are not named: the same weights with the
soft term times ``T**2`` (also where the two weights come out equal, ``alpha = (1 - alpha) *
T**2``), ``T = 1``, a soft term alone, a weight of 1 on each term at ``T = 1``.

The truth comes from torch alone: the soft term's gradient at the student's logits against
its closed form, ``(softmax(s / T) - softmax(t / T)) / (T * batch)`` (the ``1 / T`` the finding
states); which loss was built is the generator's.
Generated: ``T``, ``alpha``, the batch, how the logits are divided (``/ T`` or ``* (1 / T)``).
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SAID = "with no T**2 in it"
FORMS = ["convex", "convex T2", "sum", "sum T2", "soft only", "equal T2"]


def soft_loss(s, t, temperature, times):
    scaled = s * (1 / temperature) if times else s / temperature
    return F.kl_div(F.log_softmax(scaled, 1), F.softmax(t / temperature, 1),
                    reduction="batchmean")


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=6, deadline=None)
@given(temperature=st.sampled_from([1.0, 2.0, 3.0, 4.0, 7.5]), alpha=st.floats(0.05, 0.95),
       batch=st.integers(2, 40), times=st.booleans(), seed=st.integers(0, 2**16))
def test_a_soft_term_weighted_like_the_hard_one_is_named(form, temperature, alpha, batch,
                                                         times, seed):
    t2 = temperature ** 2
    if form == "equal T2":  # the T**2-scaled weight equals the hard weight
        alpha = t2 / (1 + t2)
    weights = {"convex": (alpha, 1 - alpha), "convex T2": (alpha, (1 - alpha) * t2),
               "sum": (1.0, 1.0), "sum T2": (1.0, t2), "soft only": (0.0, 1.0),
               "equal T2": (alpha, (1 - alpha) * t2)}[form]
    torch.manual_seed(seed)
    student = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 4))
    x, teacher = torch.randn(batch, 6), torch.randn(batch, 4) * 3
    y = teacher.argmax(1)
    with gradarg.watch(student) as w:
        s = student(x)
        soft = soft_loss(s, teacher, temperature, times)
        if weights[0]:
            loss = weights[0] * F.cross_entropy(s, y) + weights[1] * soft
        else:
            loss = weights[1] * soft
        loss.backward()
    # the truth, from torch: the soft term's gradient at the logits carries 1 / T, against the
    # closed form (softmax(s / T) - softmax(t / T)) / (T * batch) of kl_div's batchmean
    logits = s.detach().requires_grad_()
    g_soft = torch.autograd.grad(soft_loss(logits, teacher, temperature, times), logits)[0]
    closed = (F.softmax(logits / temperature, 1) - F.softmax(teacher / temperature, 1))
    torch.testing.assert_close(g_soft, closed.detach() / (temperature * batch))
    unscaled = form in ("convex", "sum") and temperature > 1
    text = w.summary(checks=False)
    assert (SAID in text) == unscaled, (form, temperature, weights, text)
    if unscaled:
        assert f"T**2 = 1/{t2:.4g}" in text
