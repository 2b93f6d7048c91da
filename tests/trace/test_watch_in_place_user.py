"""Class: a backward that stopped at a saved tensor whose edit was recorded in the graph (N-BEATS's
``residual -= backcast``: the next block's first layer saved the residual, the next
subtraction edited it).  The watch hedged: "if one of these is an in-place call, that call is
the edit; if none is, the edit was made under torch.no_grad()", when the tensor itself, still
held as a module call's input, shows which operation edited it.

Invariant: "edited in place by <op>" is said exactly when the user's code edited the saved
tensor in place with grad mode on (torch then records the operation and the tensor's history
ends there), and names that operation; an out-of-place operation on the tensor followed by an
edit under ``torch.no_grad()`` (the same graph shape, the same version counts) is never said to
be edited by the graph's operation; an edit whose result the forward never reads again is said
to be one.  Generated: the operation, whether the edit is recorded, whether its result is
used, depth, widths, the seed.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

OPS = {"sub": ("sub_", "sub"), "add": ("add_", "add"), "mul": ("mul_", "mul")}


class Stack(nn.Module):
    def __init__(self, width, depth, op, recorded, used):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.head = nn.Linear(width, width)
        self.op, self.recorded, self.used = op, recorded, used

    def forward(self, x):
        residual, out = x * 1.0, 0
        in_place, out_of_place = OPS[self.op]
        for block in self.blocks:
            h = torch.tanh(block(residual))  # the Linear saves residual
            out = out + h
            if self.recorded:
                getattr(residual, in_place)(h)  # recorded: residual's history ends here
            else:
                nxt = getattr(residual, out_of_place)(h)
                with torch.no_grad():  # not recorded: the same version bump
                    getattr(residual, in_place)(h)
                residual = nxt
        # kept by the model (held when the backward stops): its history ends at the operation
        # that took the saved tensor, and it is at another version when the edit was not
        # recorded (it is a new tensor then)
        self.state = residual
        return out + self.head(residual) if self.used else out


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(sorted(OPS)), recorded=st.booleans(), used=st.booleans(),
       depth=st.integers(2, 3), width=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_a_recorded_in_place_edit_is_named(op, recorded, used, depth, width, seed):
    torch.manual_seed(seed)
    model = Stack(width, depth, op, recorded, used)
    x = torch.randn(4, width)
    with gradarg.watch(model) as w:
        loss = model(x).pow(2).mean()
        with pytest.raises(RuntimeError, match="inplace operation"):  # torch's own account
            loss.backward()
    text = w.summary(checks=False)
    assert "backward() stopped with an error" in text, text
    named = f"edited in place by {op} (" in text
    assert named == recorded, (op, recorded, text)
    # the last edit's result leads to the output only when the forward reads it after the loop
    assert ("its result does not lead to the output" in text) == (recorded and not used), text
    assert ("made under torch.no_grad()" in text) != recorded or "if none is" in text, text
