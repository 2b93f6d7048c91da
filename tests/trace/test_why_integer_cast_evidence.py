"""why_no_grad names an integer cast only when the graph holds one of the tensor's values.

The rule read any integer tensor of the tensor's size in the graph as the cast that cut the
path: ``(w * torch.arange(n)).sum()`` with ``x`` never used was answered "a cast to an integer
dtype (.long(), ...) cut the path".  Invariant: the cast is named only when the integer tensor
equals ``x`` truncated, rounded, floored or ceiled and has three entries or more, not only 0
and 1 (fewer are met by chance); else the answer falls back on what the graph does show.  Truth: torch's own ``.grad`` after backward (``x.grad`` None in both).
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

CASTS = {"long": lambda x: x.long(), "round": lambda x: x.round().long(),
         "floor": lambda x: x.floor().int(), "ceil": lambda x: x.ceil().long()}
NOT_CASTS = {"arange": lambda x: torch.arange(x.numel()).reshape(x.shape),
             "randint": lambda x: torch.randint(-3, 4, x.shape)}


@given(kind=st.sampled_from(sorted(CASTS) + sorted(NOT_CASTS)), n=st.integers(2, 7),
       scale=st.sampled_from([0.7, 3.0, 10.0]), seed=st.integers(0, 999))
def test_a_cast_is_named_only_on_evidence(kind, n, scale, seed):
    torch.manual_seed(seed)
    x = (torch.randn(n) * scale).requires_grad_()
    w = torch.randn(n, requires_grad=True)
    ints = (CASTS.get(kind) or NOT_CASTS[kind])(x)
    out = (w * ints).sum()
    answer = why_no_grad(out, x, names={"x": x, "w": w})
    out.backward()
    assert x.grad is None and w.grad is not None  # torch's truth
    claimed = "a cast to an integer dtype" in answer.message and "cut the path" in answer.message
    # evidence enough: three entries or more, not only 0 and 1 (a mask, met by chance)
    enough = ints.numel() >= 3 and not bool(((ints == 0) | (ints == 1)).all())
    same = any(torch.equal(ints.reshape(-1), f(x.detach()).long()) for f in
               (torch.trunc, torch.round, torch.floor, torch.ceil))
    if kind in CASTS:
        assert claimed == enough, answer.message
    else:
        assert claimed == (same and enough), answer.message  # equal to a cast by chance
