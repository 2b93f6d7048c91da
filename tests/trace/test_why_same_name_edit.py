"""why_no_grad when torch names the operation that made a saved tensor as its last edit.

``x = a * 2; y = x.sin(); x.mul_(3)``: torch's error says "output 0 of Mul", which is both the
operation that made ``x`` and the in-place edit recorded since.  The answer took it for the
former only and said "no operation of the graph wrote into it ... made under torch.no_grad()".
Invariant: when the name torch gives is that of the operation that made the tensor, the answer
gives both readings (an edit of the same name, or edits not recorded); when it differs, the
answer names it as the edit.  Truth: torch's own error message and version counter.
"""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

MAKERS = {"mul": lambda a: a * 2.0, "add": lambda a: a + 1.0, "div": lambda a: a / 3.0}
EDITS = {"mul_": lambda x: x.mul_(3.0), "add_": lambda x: x.add_(1.0),
         "div_": lambda x: x.div_(2.0), "no_grad mul_": lambda x: _quiet(x.mul_, 3.0),
         "clamp_": lambda x: x.clamp_(-1.0, 1.0)}


def _quiet(f, *args):
    with torch.no_grad():
        return f(*args)


@given(maker=st.sampled_from(sorted(MAKERS)), edit=st.sampled_from(sorted(EDITS)),
       n=st.integers(1, 5), seed=st.integers(0, 99))
def test_a_same_name_edit_is_given_both_readings(maker, edit, n, seed):
    torch.manual_seed(seed)
    a = torch.randn(n, requires_grad=True)
    x = MAKERS[maker](a)
    y = x.sin().sum()  # sin saves its input x
    EDITS[edit](x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as err:
        torch.autograd.grad(y, a, retain_graph=True)
    named = re.search(r"which is output \d+ of ([\w:]+),", str(err.value)).group(1)
    text = why_no_grad(y, a).message
    made_by = {"mul": "Mul", "add": "Add", "div": "Div"}[maker]
    if named == made_by:  # torch's name fits the maker: both readings
        assert "which made it" in text and "not recorded" in text, (named, text)
    else:  # another name: the edit
        assert f"torch names {named}" in text and "which made it" not in text, (named, text)
