"""Class: "ok" only after checking what the optimizer reads: a block whose every optimizer step
ran before the backward pass of its iteration (it found ``.grad`` None, or zeroed by
``zero_grad``, and the last pass came after it) is said, and only then.

The truth comes from torch alone: an optimizer step pre-hook of the test records, at each step,
whether any ``.grad`` it holds is nonzero, and the order of steps and backward calls.
Generated: the order in each iteration, the number of iterations, ``zero_grad``'s
``set_to_none``, the optimizer.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "ran before the backward pass of its iteration"


@settings(max_examples=30, deadline=None)
@given(orders=st.lists(st.sampled_from(["backward, step", "step, backward"]), min_size=1,
                       max_size=3),
       set_to_none=st.booleans(), adam=st.booleans(), seed=st.integers(0, 2**16))
def test_steps_before_backward_are_said_exactly_when_no_step_read_a_gradient(
        orders, set_to_none, adam, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    opt = (torch.optim.Adam if adam else torch.optim.SGD)(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    read: list[bool] = []  # per step: did it find a nonzero .grad?
    events: list[str] = []

    def pre(optimizer, args, kwargs):
        read.append(any(p.grad is not None and bool(p.grad.any())
                        for g in optimizer.param_groups for p in g["params"]))
        events.append("step")

    handle = opt.register_step_pre_hook(pre)
    w = gradarg.watch(model)
    try:
        with w:
            for order in orders:
                opt.zero_grad(set_to_none=set_to_none)
                loss = ((model(x) - y) ** 2).mean()
                for what in order.split(", "):
                    if what == "step":
                        opt.step()
                    else:
                        loss.backward()
                        events.append("backward")
    except RuntimeError as error:  # a step that edited a saved weight before its backward
        events.append("raised: " + str(error))
    finally:
        handle.remove()
    assert all("modified by an inplace operation" in e for e in events if e.startswith("raised"))
    truth = not any(read) and events[-1] == "backward"
    text = w.summary(checks=False)
    assert (SAID in text) == truth, (orders, text)
    if truth:
        assert not text.startswith("gradients ok")
