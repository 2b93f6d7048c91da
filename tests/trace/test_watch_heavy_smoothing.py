"""Class: ``label_smoothing`` in ``cross_entropy`` is the share of the label's mass taken from
the true class and spread evenly over the ``C`` classes (the target is ``1 - s + s / C`` on the
true class, ``s / C`` elsewhere), not the mass the true class keeps; ``label_smoothing=0.9``
meant as "0.9 on the true class" trains towards nearly uniform targets.  The watch names a
smoothing of at least one half with class-index targets, its value and the targets it trains
towards, whatever the reduction, class weights, ``ignore_index`` or extra dimensions; a
smaller smoothing, or none, is not named.

The truth comes from torch alone: the target the loss trains towards, read from the logits'
gradient (``softmax(z) - N * dL/dz`` for a plain mean), and the generated ``s``.  Generated:
the classes, the smoothing, the reduction, a class weight, ignored targets, a sequence
dimension and the seed.  Not covered: probability targets (torch smooths the target tensor
itself, which the graph cannot tell from targets that were soft to begin with).
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


@settings(max_examples=30, deadline=None)
@given(classes=st.integers(2, 8),
       s=st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.45, 0.5, 0.6, 0.75, 0.9, 1.0]),
       reduction=st.sampled_from(["mean", "mean", "sum"]), weighted=st.booleans(),
       ignored=st.booleans(), sequence=st.booleans(), seed=st.integers(0, 2**16))
def test_a_label_smoothing_of_half_or_more_is_named(classes, s, reduction, weighted, ignored,
                                                      sequence, seed):
    torch.manual_seed(seed)
    n = 12
    model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, classes))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(n, 5), torch.randint(0, classes, (n,))
    if ignored:
        y[:3] = -100
    weight = torch.rand(classes) + 0.5 if weighted else None
    # torch's meaning of s (plain mean): the logits' gradient is (softmax - target) / N
    z = torch.randn(n, classes, requires_grad=True)
    yy = torch.randint(0, classes, (n,))
    nn.functional.cross_entropy(z, yy, label_smoothing=s).backward()
    target = z.detach().softmax(1) - n * z.grad
    true = 1 - s + s / classes
    assert torch.allclose(target.gather(1, yy[:, None]), torch.full((n, 1), true), atol=1e-5)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        out = model(x)
        if sequence:  # (N, C, L) outputs, (N, L) targets
            out, yl = out[:, :, None].expand(n, classes, 3), y[:, None].expand(n, 3)
        loss = nn.functional.cross_entropy(out, yl if sequence else y, weight=weight,
                                           reduction=reduction, label_smoothing=s)
        loss.backward()
        opt.step()
    problems = " ".join(w.problems())
    named = re.search(r"label_smoothing=([\d.]+) over (\d+) classes trains towards a target of "
                      r"([\d.]+) on the true class and ([\d.]+) on each other", problems)
    assert bool(named) == (s >= 0.5), (s, problems)
    if named:
        assert float(named.group(1)) == float(f"{s:.3g}")
        assert int(named.group(2)) == classes
        assert float(named.group(3)) == float(f"{true:.3g}")
        assert float(named.group(4)) == float(f"{s / classes:.3g}")
        assert not w.summary().startswith("gradients ok")
