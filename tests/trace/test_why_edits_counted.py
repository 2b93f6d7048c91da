"""why_no_grad on a saved tensor edited in place several times since it was saved.

torch's error names only the last operation recorded on the tensor ("output 0 of
AddBackward0"); with ``u.relu_(); u.add_(1)`` the answer said "edited in place by an operation
torch names Add" as if that were the only edit.  Now it says how many edits there were since
the node saved it (the version counter's difference) and that the one named is the last.  The
truth comes from torch: the version counter and the error backward raises.
"""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

EDITS = {"add": lambda u: u.add_(1.0), "mul": lambda u: u.mul_(2.0),
         "relu": lambda u: u.relu_(), "clamp": lambda u: u.clamp_(-1.0, 1.0)}


@given(edits=st.lists(st.sampled_from(sorted(EDITS)), min_size=1, max_size=4),
       saved_by=st.sampled_from(["pow", "mul"]), n=st.integers(1, 5))
def test_every_edit_since_the_save_is_counted(edits, saved_by, n):
    w = torch.randn(n, requires_grad=True)
    u = w * 1.0
    y = (u ** 2).sum() if saved_by == "pow" else (u * w.exp()).sum()
    saved_at = u._version
    for e in edits:
        EDITS[e](u)
    times = u._version - saved_at
    assert times == len(edits)  # the truth: one version per in-place edit
    with pytest.raises(RuntimeError, match=rf"is at version {u._version}; expected version "
                                           rf"{saved_at}"):
        torch.autograd.grad(y, w, retain_graph=True)
    d = why_no_grad(y, w, names={"w": w})
    assert d.case == "modified-in-place", d.message
    if times > 1:
        assert f"edited in place {times} times since the node saved it" in d.message, d.message
        # an operation named is named as the last one, never as the only one
        assert "it was edited in place by" not in d.message, d.message
    else:
        assert not re.search(r"edited in place \d+ times", d.message)
