"""why_no_grad on a saved tensor written into through indexing or a view.

``h[0] = 0`` or ``h[1:3].mul_(2)`` after a node saved ``h`` makes torch record the edit as
``torch::autograd::CopySlices`` and its error say "which is output 0 of
torch::autograd::CopySlices".  The answer read that name with a pattern that took no
namespace, so it said only "a tensor saved for PowBackward0 was modified in place", without
which tensor or which edit, whenever the saved tensor was an input of the node.  The invariant:
whenever torch's version error names the operation, the answer describes that operation (a
write into part of the tensor for CopySlices) and gives the versions torch gives; when torch
names only the node that made the tensor, the answer claims no edit it did not see.  Truth:
torch's own error from the backward.
"""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

WRITES = {  # each writes into part of h, in place, through indexing or a view
    "setitem": lambda h: h.__setitem__(0, 0.0),
    "slice-assign": lambda h: h.__setitem__(slice(1, None), 1.0),
    "slice-mul_": lambda h: h[1:].mul_(2.0),
    "view-add_": lambda h: h.view(-1).add_(1.0),
    "unsqueeze-add_": lambda h: h.unsqueeze(0).add_(1.0),
    "narrow-zero_": lambda h: h.narrow(0, 0, 1).zero_(),
}
SAVERS = {  # (make h from a, a loss whose node saves h: as its input, or as its own output)
    "pow (input)": (torch.exp, lambda h, a: (h ** 2).sum()),
    "mul (input)": (lambda a: a * 1.5, lambda h, a: (h * a).sum()),
    "sin (input)": (lambda a: a + 1.0, lambda h, a: h.sin().sum()),
    "sigmoid (output)": (torch.sigmoid, lambda h, a: h.sum()),
    "exp (output)": (torch.exp, lambda h, a: h.sum()),
}


@given(write=st.sampled_from(sorted(WRITES)), saver=st.sampled_from(sorted(SAVERS)),
       times=st.integers(1, 3), n=st.integers(2, 5), seed=st.integers(0, 99))
def test_a_write_into_part_of_a_saved_tensor_is_described(write, saver, times, n, seed):
    torch.manual_seed(seed)
    a = torch.randn(n, requires_grad=True)
    make, consume = SAVERS[saver]
    h = make(a)
    loss = consume(h, a)
    for _ in range(times):
        WRITES[write](h)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as err:
        torch.autograd.grad(loss, a, retain_graph=True)
    m = re.search(r"which is output \d+ of ([\w:]+), is at version (\d+); expected version "
                  r"(\d+)", str(err.value))
    assert m, str(err.value)  # the truth
    producer, now, then = m.groups()
    assert h.grad_fn.name() == "torch::autograd::CopySlices"  # torch's record of the edit
    answer = why_no_grad(loss, a)
    assert answer.case == "modified-in-place", answer.message
    text = answer.message
    assert f"at version {now} now, saved at version {then}" in text, text
    if producer == "torch::autograd::CopySlices":  # torch names the edit: so does the answer
        assert "write into part of it" in text and "CopySlices" in text, text
    else:  # torch names the node that made h (its saved output): no other edit is claimed
        assert "edited in place by" not in text and "the last of these edits" not in text, text
    if int(now) - int(then) > 1:
        assert f"edited in place {int(now) - int(then)} times" in text, text
    assert a.grad is None
