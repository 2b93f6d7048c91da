"""The shortcuts the watch's hooks take for speed give the answers of the plain checks.

Each shortcut reads a sum (or a norm) first and falls back to the entries when the sum cannot
decide; these cases are the ones where it cannot: finite entries whose sum overflows, a NaN or
an Inf among finite entries, complex values, tensor subclasses.
"""

from __future__ import annotations

import math

import pytest
import torch

import gradarg
from gradarg.trace.graph.values import norm
from gradarg.trace.watching.graphnotes import quick_finite
from gradarg.trace.watching.observed import losses_of

CASES = {
    "finite": torch.tensor([1.0, -2.0, 3.0]),
    "float16 sum overflows": torch.full((4096,), 60000.0, dtype=torch.float16),
    "inf": torch.tensor([1.0, math.inf]),
    "inf and -inf": torch.tensor([math.inf, -math.inf]),
    "nan": torch.tensor([math.nan, 1.0]),
    "complex finite": torch.tensor([1 + 2j, 3 - 1j]),
    "complex inf": torch.tensor([1 + 2j, complex(math.inf, 0)]),
    "empty": torch.zeros(0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_quick_finite_agrees_with_isfinite(name):
    t = CASES[name]
    assert quick_finite(t) is bool(torch.isfinite(t).all())


@pytest.mark.parametrize("name", [n for n in CASES if "complex" not in n])
def test_losses_of_reads_finiteness_as_isfinite(name):
    t = CASES[name].clone().requires_grad_()
    loss = t * 1  # a node, as a loss has
    got = losses_of(loss)
    assert got.nodes == [loss.grad_fn]
    assert got.finite is bool(torch.isfinite(t).all())


def test_losses_of_reads_nothing_of_a_large_tensor():
    assert losses_of(torch.ones(4097))[1] is None


def test_norm_of_a_subclass_and_of_a_view_is_the_plain_norm():
    w = torch.nn.Parameter(torch.tensor([[3.0, 4.0], [0.0, 12.0]]))
    assert norm(w) == pytest.approx(13.0)
    assert norm(w.detach().t()) == pytest.approx(13.0)  # not contiguous
    assert norm(torch.tensor([1e-30, 1e-30])[::1]) == pytest.approx(math.sqrt(2) * 1e-30)


def test_an_optimizer_of_another_model_is_stray_and_a_copy_is_not_held():
    net, other = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
    # equal values, other tensors: held is by identity, never by value
    other.load_state_dict(net.state_dict())
    opt = torch.optim.SGD(other.parameters(), lr=0.1)
    with gradarg.watch(net) as w:
        opt.zero_grad()
        net(torch.ones(3, 2)).sum().backward()
    assert w.grads.seen_optimizers == []
    assert [h.optimizer for h in w.grads.stray_optimizers] == [opt]
