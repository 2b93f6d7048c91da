"""why_no_grad does not call a number one would type a copy of the tensor asked about.

With ``x = torch.tensor(2.0, requires_grad=True)`` unused and ``(w ** 2).sum()`` as the output,
the answer said "PowBackward0 uses x's value 2 as a plain number: .item() or float() cut the
path": the exponent 2 is typed, not copied.  Equality with a value one would type (2, 0.5,
1e-3) is no evidence of a copy; with a computed value (0.6961...) it is.  Invariant: a cut by
``.item()`` or a copy is asserted only on a value one would not type; otherwise both readings
are given.  Truth: torch's ``.grad`` after backward (None for ``x`` either way), and how the
constant was made here.
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

TYPED = [2.0, 0.5, 3.0, 0.25, 10.0, 1e-3, 1.5]
SURE = ("as a plain number: .item() or float() cut the path", "takes a copy of")
HEDGE = ("if it came from", "if it was copied from")


@given(typed=st.booleans(), copied=st.booleans(), size=st.sampled_from([1, 3]),
       value=st.sampled_from(TYPED), seed=st.integers(0, 999),
       use=st.sampled_from(["mul", "pow", "add"]))
def test_an_item_cut_is_asserted_only_on_a_computed_value(typed, copied, size, value, seed, use):
    torch.manual_seed(seed)
    x = (torch.full((size,), value) if typed else torch.randn(size)).requires_grad_()
    if size == 1:
        x = x.detach().reshape(()).requires_grad_()
    w = torch.randn(size, requires_grad=True)
    if copied:  # made from x's values, cut from its graph
        c = x.item() if size == 1 else torch.tensor(x.tolist())
    else:  # typed by the user; equal to x only when x holds the typed value
        c = value if size == 1 else torch.full((size,), value)
    out = {"mul": lambda: (w * c).sum(), "pow": lambda: (w.abs() ** c).sum(),
           "add": lambda: (w * w + c).sum()}[use]()
    answer = why_no_grad(out, x)
    out.backward()
    assert x.grad is None and w.grad is not None  # torch's truth
    text = answer.message
    if typed:  # the constant equals x's value whichever way it was made: never asserted
        assert not any(s in text for s in SURE), text
    elif copied and use != "add":  # a computed value, copied: asserted
        assert any(s in text for s in SURE), text
    if not typed and not copied:  # a typed constant unrelated to x's computed value
        assert not any(s in text for s in SURE + HEDGE), text
