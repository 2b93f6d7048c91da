"""After ``backward()`` freed the saved tensors, a NaN gradient is still located from the values
the caller holds.

Blind graders: after backward the answer listed the operations that could make NaN and said it
"could not be checked", although a tensor in hand (the queried one, or a named intermediate)
showed the input at 0.  Invariant, over generated chains: when the value a singular node saved
is one the caller holds (directly, or the input of ``sqrt`` / ``rsqrt`` / ``reciprocal``, whose
saved output is a function of it), the answer after backward names that node and counts the
entries, as torch's own pass shows them; without such a tensor it makes no such claim.
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

SINGULAR = {  # op: (make from the tensor entering it, the node torch records)
    "sqrt": (torch.sqrt, "SqrtBackward0"),
    "rsqrt": (torch.rsqrt, "RsqrtBackward0"),
    "reciprocal": (torch.reciprocal, "ReciprocalBackward0"),
    "log": (torch.log, "LogBackward0"),
}


@given(n=st.integers(2, 5), zeros=st.integers(1, 2), op=st.sampled_from(sorted(SINGULAR)),
       scale=st.sampled_from([1.0, 2.0, 0.5]), named=st.booleans())
def test_a_nan_after_backward_is_placed_from_a_held_value(n, zeros, op, scale, named):
    x = torch.rand(n) + 0.5
    x[:zeros] = 0.0
    x.requires_grad_()
    make, node = SINGULAR[op]
    h = x * scale  # the tensor entering the singular op: held only when named
    out = (make(h) * torch.linspace(1.0, 2.0, n)).sum()
    out.backward()
    bad = int((~torch.isfinite(x.grad)).sum())
    assert bad >= zeros  # truth, by torch: the gradient is not finite at the zeros
    names = {"x": x, "h": h} if named else {"x": x}
    d = why_no_grad(out, x, names=names)
    assert d.case == "nonfinite", d.message
    if named:
        assert f"({node})" in d.message and f"at {zeros} of {n} entries" in d.message, d.message
        assert "which the caller still holds" in d.message
    else:  # h is not held: nothing read, nothing claimed
        assert "which the caller still holds" not in d.message, d.message


def test_a_divisor_held_by_the_caller_is_read():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = w * torch.tensor([0.0, 1.0, 1.0])
    loss = (w / d).sum()
    loss.backward()
    got = why_no_grad(loss, w, names={"w": w, "d": d})
    assert got.case == "nonfinite" and "(DivBackward0)" in got.message
    assert "the divisor is exactly 0 at 1 of 3 entries" in got.message


@given(rows=st.integers(1, 4), width=st.integers(1, 4), shift=st.sampled_from([50.0, 100.0]),
       hold=st.sampled_from(["input", "output", "none"]))
def test_a_dead_relu_after_backward_is_placed_from_a_held_value(rows, width, shift, hold):
    """A ReLU on every path whose held input is ≤ 0 everywhere (or held output 0): the zero
    gradient after backward is placed there; with neither held, no such claim."""
    w = torch.randn(3, width, requires_grad=True)
    h = torch.rand(rows, 3) @ w.abs() - shift  # ≤ 0 everywhere: far below zero
    a = h.relu()
    out = (a * 2).sum()
    out.backward()
    assert not bool(w.grad.ne(0).any())  # truth, by torch
    names = {"w": w} | ({"h": h} if hold == "input" else {"a": a} if hold == "output" else {})
    d = why_no_grad(out, w, names=names)
    assert d.case == "zero", d.message
    if hold == "none":
        assert "dead ReLU sends" not in d.message, d.message
    else:
        assert "(ReluBackward0)" in d.message and f"at all {rows * width} entries" in d.message
