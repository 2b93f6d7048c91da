"""A parameter updated by several optimizers on the same ``.grad`` is named (issue 43, blind
scenarios round 2), tested over generated steps.

Each example builds an encoder with one to three heads, one loss per head, and one to three
optimizers (SGD, Adam, AdamW), each holding the encoder or not and some of the heads (every
parameter held by one at least), and runs one of three schedules: every loss backpropagated
(``retain_graph``) before every optimizer's step ("joint", the blind scenario's), the same
with each optimizer's ``zero_grad`` right after its step ("zero between": a later optimizer
finds ``.grad`` None), or each optimizer's own forward, backward and step in turn
("alternate").  The ground truth comes from torch alone: a step pre-hook and a
post-accumulate-grad hook of the test's own count, for each parameter, the optimizers whose
steps read a present, nonzero ``.grad`` with no backward in between.  The invariant:

- a parameter whose ``.grad`` the steps of two or more optimizers read so is named, with the
  number of optimizers, in the summary (which is then not "ok") and in ``why_no_grad``;
- no other parameter is named so, and a joint step whose optimizers share nothing is "ok".
"""

from __future__ import annotations

import re

import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

import gradarg

KINDS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "adam": lambda ps: torch.optim.Adam(ps, lr=1e-2),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-2),
}


class Heads(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.encoder = nn.Linear(5, width)
        self.heads = nn.ModuleList(nn.Linear(width, 2) for _ in range(heads))

    def forward(self, x):
        z = torch.tanh(self.encoder(x))
        return [h(z) for h in self.heads]


setups = st.fixed_dictionaries({
    "width": st.integers(2, 6),
    "heads": st.integers(1, 3),
    "optimizers": st.lists(st.tuples(st.sampled_from(sorted(KINDS)), st.booleans(),
                                     st.lists(st.booleans(), min_size=3, max_size=3)),
                           min_size=1, max_size=3),
    "schedule": st.sampled_from(["joint", "zero between", "alternate"]),
    "seed": st.integers(0, 2**16),
})


def run(setup):
    torch.manual_seed(setup["seed"])
    net = Heads(setup["width"], setup["heads"])
    groups: list[list[nn.Module]] = []
    for _, encoder, heads in setup["optimizers"]:
        mods = [net.encoder] if encoder else []
        mods += [h for j, h in enumerate(net.heads) if heads[j % 3]]
        groups.append(mods)
    for j, h in enumerate(net.heads):  # every parameter held by one optimizer at least
        if not any(h in g for g in groups):
            groups[j % len(groups)].append(h)
    for g in groups:
        if not g or not any(net.encoder in g for g in groups):
            g.append(net.encoder)  # none empty, the encoder held
    opts = [KINDS[kind]([p for m in g for p in m.parameters()])
            for (kind, _, _), g in zip(setup["optimizers"], groups, strict=True)]
    names = {p: n for n, p in net.named_parameters()}
    # the ground truth: the optimizers whose steps read each .grad since its last backward
    since: dict[str, list[int]] = {n: [] for n in names.values()}
    twice: set[str] = set()

    def on_step(opt, args, kwargs):
        for g in opt.param_groups:
            for p in g["params"]:
                if p.grad is not None and p.grad.any():
                    since[names[p]].append(id(opt))
                    if len(set(since[names[p]])) > 1:
                        twice.add(names[p])

    handles = [register_optimizer_step_pre_hook(on_step)]
    handles += [p.register_post_accumulate_grad_hook(lambda t: since[names[t]].clear())
                for p in net.parameters()]
    x = torch.randn(8, 5)
    targets = [torch.randn(8, 2) for _ in net.heads]
    try:
        with gradarg.watch(net) as w:
            if setup["schedule"] == "alternate":
                for i, opt in enumerate(opts):
                    for o in opts:
                        o.zero_grad()
                    outs = net(x)
                    own = [j for j, h in enumerate(net.heads) if h in groups[i]] or [0]
                    sum(nn.functional.mse_loss(outs[j], targets[j]) for j in own).backward()
                    opt.step()
            else:
                for o in opts:
                    o.zero_grad()
                outs = net(x)
                for j, out in enumerate(outs):
                    nn.functional.mse_loss(out, targets[j]).backward(retain_graph=True)
                for opt in opts:
                    opt.step()
                    if setup["schedule"] == "zero between":
                        opt.zero_grad()
    finally:
        for h in handles:
            h.remove()
    shared = any(set(a) & set(b) for i, a in enumerate(groups) for b in groups[i + 1:])
    return w, twice, shared


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups)
@example({"width": 3, "heads": 2, "optimizers": [("adam", True, [True, False, False]),
                                                 ("adam", True, [False, True, False])],
          "schedule": "joint", "seed": 0})  # the blind scenario's shape
@example({"width": 3, "heads": 2, "optimizers": [("adam", True, [True, False, False]),
                                                 ("adam", False, [False, True, False])],
          "schedule": "joint", "seed": 0})  # nothing shared: ok
@example({"width": 2, "heads": 3, "optimizers": [("adam", True, [True, True, True]),
                                                 ("adam", True, [True, True, True])],
          "schedule": "joint", "seed": 0})  # eight parameters: six shown
def test_parameters_stepped_by_several_optimizers_on_one_grad_are_named(setup):
    w, twice, shared = run(setup)
    s = w.summary(checks=False)
    claim = re.search(r"(\d+) parameter\(s\) are held by (\d+) optimizers \(([^)]*)\) whose "
                      r"steps read the same \.grad, with no backward in between: ([^(]*) "
                      r"\(observed", s)
    if not twice:
        assert claim is None, s
        if setup["schedule"] == "joint" and not shared:
            assert s.startswith("gradients ok"), s
        return
    assert not s.startswith("gradients ok"), s
    assert claim is not None, s
    assert 2 <= int(claim[2]) <= len(setup["optimizers"])
    assert int(claim[1]) == len(twice), (claim[1], twice)
    names = claim[4].strip().split(", ")  # six at most, then "..."
    if names[-1] == "...":
        assert len(names) == 7 and set(names[:-1]) < twice, (claim[4], twice)
    else:
        assert set(names) == twice, (claim[4], twice)
    why = w.why_no_grad(min(twice))
    assert "optimizers" in why and "updated" in why, why
