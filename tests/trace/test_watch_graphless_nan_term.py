"""Class: a NaN/Inf loss with finite gradients whose NaN comes from a term without autograd
history (an entropy of argmax code counts with an unused code, ``0 * log 0``; a detached
statistic; a ``.item()``) added to the loss: the term is named as a sum's operand with no graph.
A NaN made inside the graph (log of a negative number) is named by its operation instead, even
when a finite term without history is added too.

The truth comes from torch alone: the loss's value, the term's value, and the gradients'
finiteness.  Generated: the shapes, how the graphless term is made, its weight, where the NaN is.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "has no autograd history (observed: an edge without a node)"


def _graphless(kind: str, logits: torch.Tensor, nan: bool) -> torch.Tensor:
    """A loss term computed outside the graph, NaN when ``nan``."""
    if kind == "argmax entropy":  # code usage from hard assignments: 0 * log 0 for an unused code
        codes = logits.detach().argmax(-1)
        usage = torch.bincount(codes, minlength=logits.shape[-1] + (1 if nan else 0)).float()
        if not nan:
            usage = usage + 1.0
        p = usage / usage.sum()
        return (p * p.log()).sum()
    if kind == "detached std":
        spread = logits.detach()[:1, :1].std() if nan else logits.detach().std()
        return spread  # the std of one value is NaN
    value = float("nan") if nan else float(logits.detach().mean())
    return torch.tensor(value)  # a .item() made into a tensor again


@pytest.mark.filterwarnings("ignore:std():UserWarning")
@pytest.mark.parametrize("kind", ["argmax entropy", "detached std", "item"])
@settings(max_examples=8, deadline=None)
@given(rows=st.integers(2, 12), classes=st.integers(2, 6), width=st.integers(2, 6),
       weight=st.sampled_from([0.1, 1.0]), where=st.sampled_from(["term", "graph"]),
       seed=st.integers(0, 2**16))
def test_a_nan_from_a_term_without_history_is_named(kind, rows, classes, width, weight, where,
                                                     seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(width, 8), nn.Tanh(), nn.Linear(8, classes))
    x, y = torch.randn(rows, width), torch.randint(0, classes, (rows,))
    with gradarg.watch(model) as w:
        logits = model(x)
        main = nn.functional.cross_entropy(logits, y)
        if where == "graph":  # the NaN made inside the graph: log of a negative number
            main = main + torch.log(logits.mean() - logits.abs().max() - 1.0)
        term = _graphless(kind, logits, nan=where == "term")
        loss = main + weight * term
        loss.backward()
    # the truth, from torch
    assert math.isnan(float(loss.detach()))
    assert math.isnan(float(term)) == (where == "term")
    assert not term.requires_grad
    assert all(bool(torch.isfinite(p.grad).all()) for p in model.parameters())
    text = w.summary(checks=False)
    assert (SAID in text) == (where == "term"), text
    if where == "graph":
        assert "log of" in text and "LogBackward0" in text, text
