"""Class: a loss that takes the log of a clamped value (``-log(p.clamp(eps, 1 - eps))``, a
hand-written cross-entropy or BCE guarded against ``log(0)``): clamp's derivative is 0
outside its bounds, so every entry the log reads that the clamp clipped sends exactly zero
gradient back, and the watch says how many (not "ok").  Nothing of the kind is said when no
entry the log reads is clipped, when the clamp feeds no log (a hinge's ``clamp(min=0)``),
or for ``F.cross_entropy`` on the logits.

The truth comes from torch alone: the loss's gradient with respect to the clamp's input,
by ``torch.autograd.grad``, is exactly zero at the entries the log reads that are outside
the bounds and nonzero at the others it reads; their count is the number the watch must
state.  Generated: the logits' scale (confidence), eps, an upper bound or none, how the
log reads the clamp (the target column by indexing, ``gather``, every entry: a BCE), the
widths and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

BATCH, CLASSES = 32, 5


def _loss(form, eps, upper, y):
    hi = 1 - eps if upper else None

    def clamped(p):
        return p.clamp(eps, hi) if upper else p.clamp(min=eps)

    def fn(logits):
        if form == "index":
            p = clamped(logits.softmax(-1))
            return -p[torch.arange(BATCH), y].log().mean()
        if form == "gather":
            p = clamped(logits.softmax(-1))
            return -p.gather(1, y[:, None]).log().mean()
        if form == "bce":  # every entry read, one-hot targets
            t = F.one_hot(y, CLASSES).float()
            p = logits.sigmoid()
            return -(t * clamped(p).log() + (1 - t) * clamped(1 - p).log()).mean()
        if form == "hinge":  # a clamp feeding no log
            margin = logits[torch.arange(BATCH), y][:, None] - logits
            return (1 - margin).clamp(min=0).mean()
        return F.cross_entropy(logits, y)
    return fn


def _read_zero(fn, logits, form, eps, upper, y):
    """The truth: of the entries the log reads, how many get exactly zero gradient from the
    loss at the clamp's input (torch.autograd.grad), and how many are read."""
    if form in ("hinge", "ce"):
        return 0, 0
    if form == "bce":
        p = logits.sigmoid()
        inputs = [p.detach().requires_grad_(), (1 - p).detach().requires_grad_()]
        t = F.one_hot(y, CLASSES).float()
        hi = 1 - eps if upper else None
        loss = -(t * inputs[0].clamp(eps, hi).log()
                 + (1 - t) * inputs[1].clamp(eps, hi).log()).mean()
        grads = torch.autograd.grad(loss, inputs)
        # each entry of either log is read (weights 0 make its gradient 0: count those only
        # where the weight is nonzero)
        zero = sum(int(((g == 0) & (w != 0)).sum()) for g, w in zip(grads, (t, 1 - t), strict=True))
        live = sum(int((w != 0).sum()) for w in (t, 1 - t))
        return zero, live
    p = logits.softmax(-1).detach().requires_grad_()
    hi = 1 - eps if upper else None
    q = p.clamp(eps, hi) if upper else p.clamp(min=eps)
    (g,) = torch.autograd.grad(-q[torch.arange(BATCH), y].log().mean(), [p])
    read = g[torch.arange(BATCH), y]
    return int((read == 0).sum()), BATCH


@settings(max_examples=30, deadline=None)
@given(scale=st.sampled_from([0.1, 3.0, 30.0]), eps=st.sampled_from([1e-7, 1e-4, 1e-2]),
       upper=st.booleans(), form=st.sampled_from(["index", "gather", "bce", "hinge", "ce"]),
       width=st.integers(4, 12), seed=st.integers(0, 2**16))
@example(scale=30.0, eps=1e-7, upper=False, form="bce", width=4, seed=87)  # weight-0 entries
def test_a_clamp_before_a_log_names_the_clipped_entries(scale, eps, upper, form, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, width), nn.Tanh(), nn.Linear(width, CLASSES))
    with torch.no_grad():
        model[2].weight.mul_(scale)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(BATCH, 6)
    y = torch.randint(0, CLASSES, (BATCH,))
    fn = _loss(form, eps, upper, y)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        logits = model(x)
        fn(logits).backward()
        opt.step()
    zero, read = _read_zero(fn, logits.detach(), form, eps, upper, y)
    text = w.summary(checks=False)
    said = re.search(r"the log of a clamp .*?: (\d+) of the (\d+) entries the log reads", text)
    if zero:
        assert said, text
        assert not text.startswith("gradients ok"), text
        if form != "bce":
            assert (int(said.group(1)), int(said.group(2))) == (zero, read), text
        else:  # two clamps, two logs: the first one found is named, its count within the truth
            assert 0 < int(said.group(1)) <= zero, text
    else:
        assert said is None, text
