"""Class: ``optimizer.step(closure)`` runs the closure's ``zero_grad`` and ``backward`` inside
the step (LBFGS needs it; every torch optimizer accepts one), so what the step reads is
``.grad`` after the closure, not before the step began: the watch reads it when the step ends,
and never says the step ran before the backward pass.  A closure without ``zero_grad`` that
the optimizer evaluates at several parameter values sums their gradients: that is named
(micro-batches summed within one evaluation are not).

The truth comes from torch: the parameters move (compared before and after); the test's own
record of each evaluation (the parameters it ran at), from which whether ``.grad`` summed
gradients taken at different parameters follows.  Generated: the optimizer (LBFGS, SGD,
Adam), how many times LBFGS evaluates (``max_iter``), ``zero_grad`` in the closure or not,
backward passes per evaluation, the closure passed by position or by keyword, the seed.
"""

from __future__ import annotations

import itertools

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

BEFORE = "ran before the backward pass"
SUMMED = "step(closure) evaluated the closure"


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(["LBFGS", "SGD", "Adam"]), iters=st.integers(1, 4),
       zero=st.booleans(), parts=st.integers(1, 2), keyword=st.booleans(),
       seed=st.integers(0, 2**16))
def test_a_closure_step_reads_the_closures_gradient(kind, iters, zero, parts, keyword, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    if kind == "LBFGS":
        opt = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=iters)
    elif kind == "SGD":
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
    at = []  # the parameters of each evaluation, as the closure saw them

    def closure():
        if zero:
            opt.zero_grad()
        at.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
        total = 0.0
        for xs, ys in zip(x.chunk(parts), y.chunk(parts), strict=True):  # micro-batches
            loss = nn.functional.mse_loss(model(xs), ys) / parts
            loss.backward()
            total += float(loss.detach())
        return torch.tensor(total)

    opt.zero_grad()
    start = [p.detach().clone() for p in model.parameters()]
    with gradarg.watch(model) as w:
        opt.step(closure=closure) if keyword else opt.step(closure)
    moved = any(not torch.equal(a, p) for a, p in zip(start, model.parameters(), strict=True))
    assert moved
    # the truth: some evaluation after the first ran at other parameters, onto a .grad the
    # closure did not reset
    summed = not zero and any(not torch.equal(a, b) for a, b in itertools.pairwise(at))
    text = w.summary()
    assert BEFORE not in text, text
    assert "found .grad None" not in text, text
    assert (SUMMED in text) == summed, (summed, text)
    if not summed:
        assert text.startswith("gradients ok:"), text
