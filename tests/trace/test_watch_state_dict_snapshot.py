"""Class: a snapshot taken with ``model.state_dict()`` is not a copy (its docstring: "a shallow
copy. It contains references to the module's parameters"), so optimizer steps after it change it
too.  Reptile's ``weights_before = model.state_dict()`` made every meta-step a no-op
(``weights_after - weights_before`` exactly zero, ``load_state_dict`` writing back the weights
the parameters held) and the watch said "ok".

Invariant: a ``load_state_dict`` that changed no parameter (torch: every parameter equal before
and after it) while a snapshot that went stale (torch: its values differ from a clone taken at
the same moment) was still held is a problem naming both lines and the steps between; a
snapshot copied (``deepcopy``, ``clone``) or not stale is never called "not a copy"; a load
that changed something is never called a no-op.  Generated: how the snapshot is taken, the
optimizer steps after it, how it is loaded back (an interpolation as in Reptile, the snapshot
itself as an early-stopping restore, or no load), the learning rate, the seed.
"""

from __future__ import annotations

import copy
import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


@settings(max_examples=30, deadline=None)
@given(take=st.sampled_from(["state_dict", "keep_vars", "deepcopy", "clone"]),
       steps=st.integers(0, 3), load=st.sampled_from(["interpolate", "restore", "none"]),
       lr=st.sampled_from([0.0, 0.05]), seed=st.integers(0, 2**16))
def test_a_stale_snapshot_is_named_with_the_no_op_load(take, steps, load, lr, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    x, y = torch.randn(6, 2), torch.randn(6, 1)
    with gradarg.watch(model) as w:
        if take == "state_dict":
            before = model.state_dict()
        elif take == "keep_vars":
            before = model.state_dict(keep_vars=True)
        elif take == "deepcopy":
            before = copy.deepcopy(model.state_dict())
        else:
            before = {k: v.clone() for k, v in model.state_dict().items()}
        clone = {k: v.detach().clone() for k, v in before.items()}  # the truth's own copy
        for _ in range(steps):
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        if steps == 0:  # a backward the watch can read
            nn.functional.mse_loss(model(x), y).backward()
        held = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if load == "interpolate":
            after = model.state_dict()
            model.load_state_dict({k: before[k] + (after[k] - before[k]) * 0.1 for k in before})
        elif load == "restore":
            model.load_state_dict(before)
    # the truth, torch alone
    stale = any(not torch.equal(before[k].detach(), clone[k]) for k in before)
    unchanged = all(torch.equal(p.detach(), held[n]) for n, p in model.named_parameters())
    noop = load != "none" and unchanged
    text = w.summary(checks=False)
    if not stale:
        assert "is not a copy" not in text, text
    if load != "none" and not unchanged:
        assert "changed nothing" not in text, text
    if noop:
        assert re.search(r"load_state_dict at \S+:\d+ wrote back values equal, bit for bit, "
                         r"to what all 4 parameters held", text), text
    if noop and stale:
        assert not text.startswith("gradients ok"), text
        said = re.search(r"model\.state_dict\(\) at \S+:\d+ is not a copy: .*? so it changed "
                         r"with the (\d+) optimizer step\(s\) after it", text)
        assert said is not None and int(said[1]) == steps, text
    if stale and load == "none":  # held at the end: a note, said as such
        assert re.search(r"is not a copy: .* it now holds the weights after those steps", text), text
