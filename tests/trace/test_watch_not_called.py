"""Class: parameters without a gradient because their module was not called in the step (a
head sampled out of this batch).  The summary names those modules as not called, exactly
them, on a step recorded in full; a module that ran is never said not to have been called,
and a light step (whose module record is empty) says nothing of the kind.

The truth comes from torch alone: which heads' forward ran (a forward hook of torch's) and
``.grad`` after the step.  Generated: which of four heads run, whether a head that runs is
cut off with ``detach()`` on the last step (every head runs on those before), the number of
steps against ``full_steps``.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(6, 8)
        self.heads = nn.ModuleDict({f"h{i}": nn.Linear(8, 1) for i in range(4)})
        self.run, self.cut = (), ()

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        out = [self.heads[k](h).detach() if k in self.cut else self.heads[k](h)
               for k in self.run]
        return torch.cat([*out, h[:, :1]], dim=1)


@settings(max_examples=30, deadline=None)
@given(run=st.lists(st.sampled_from(["h0", "h1", "h2", "h3"]), unique=True),
       cut=st.lists(st.sampled_from(["h0", "h1", "h2", "h3"]), unique=True),
       steps=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_modules_not_called_are_named_exactly_on_full_steps(run, cut, steps, seed):
    torch.manual_seed(seed)
    net = Heads()
    ran: set[str] = set()
    for name, m in net.heads.items():
        m.register_forward_hook(lambda m, a, o, name=name: ran.add(name))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x, y = torch.randn(5, 6), torch.randn(5)
    with gradarg.watch(net, full_steps=2) as w:
        for i in range(steps):  # every head before the last step: a light one from step 3
            last = i == steps - 1
            net.run = tuple(run) if last else tuple(net.heads)
            net.cut = tuple(k for k in cut if k in run) if last else ()
            ran.clear()
            opt.zero_grad()
            out = net(x)
            (out.sum(1) - y).pow(2).mean().backward()
            opt.step()
        full = w.detail.full
        summary = w.summary(checks=False)
    missing = {n for n, p in net.named_parameters() if p.grad is None}
    idle = {f"heads.{k}" for k in net.heads if k not in ran}  # torch's own hooks
    said = re.search(r"module\(s\) not called in this step: ([^;]*);", summary)
    named = set() if said is None else {s.strip() for s in said.group(1).split(",")}
    if full and any(n.startswith(tuple(f"{m}." for m in idle)) for n in missing):
        shown = set(sorted(idle)[:3]) | ({"..."} if len(idle) > 3 else set())
        assert named == shown, (summary, idle)
    else:
        assert said is None, (full, summary)
