"""why_no_grad on a non-leaf that is a copy, view or constant rescaling of one leaf.

The forum's most asked "my weight's .grad is None": ``w = torch.randn(3, requires_grad=True)
* 0.01`` or ``.to(device)`` / ``.double()`` after ``requires_grad=True``.  The answer names the
leaf the gradient goes to (its shape), the operations the graph shows between them, and the
fix of making the tensor itself the leaf; a non-leaf computed otherwise (``tanh(w)``, a product
of two tensors with history, a longer chain) keeps the plain non-leaf answer.  Each claim is
checked against what ``backward()`` then does: the leaf gets a ``.grad``, the tensor none.
"""

from __future__ import annotations

import warnings

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

# (what a user writes, the node class torch records for it)
SIMPLE = {
    "scale": (lambda t: t * 0.01, "MulBackward0"),
    "divide": (lambda t: t / 7.0, "DivBackward0"),
    "shift": (lambda t: t + 1.0, "AddBackward0"),
    "minus": (lambda t: t - 2.0, "SubBackward0"),
    "negate": (lambda t: -t, "NegBackward0"),
    "double": (lambda t: t.double(), "ToCopyBackward0"),
    "to64": (lambda t: t.to(torch.float64), "ToCopyBackward0"),
    "clone": (lambda t: t.clone(), "CloneBackward0"),
    "view": (lambda t: t.view(-1), "ViewBackward0"),
    "unsqueeze": (lambda t: t.unsqueeze(0), "UnsqueezeBackward0"),
    "constant-tensor": (lambda t: t * torch.full(t.shape, 3.0, dtype=t.dtype), "MulBackward0"),
}
OTHER = {  # not a copy, a view or a rescaling: an intermediate of the computation
    "tanh": lambda t: torch.tanh(t),
    "exp": lambda t: t.exp(),
    "square": lambda t: t * t,
}


def _chain(shape, names):
    leaf = torch.randn(*shape, requires_grad=True)
    t = leaf
    for name in names:
        t = SIMPLE[name][0](t) if name in SIMPLE else OTHER[name](t)
    return leaf, t


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       names=st.lists(st.sampled_from(sorted(SIMPLE)), min_size=1, max_size=4))
def test_a_copy_view_or_rescaling_of_one_leaf_names_the_leaf(shape, names):
    leaf, t = _chain(shape, names)
    loss = (t.double() ** 2).sum()
    d = why_no_grad(loss, t)
    assert d.case == "non-leaf"
    assert "was made from the leaf tensor" in d.message, d.message
    assert f"of shape {tuple(leaf.shape)}" in d.message
    for name in names:  # every operation between them, by the node torch recorded
        assert SIMPLE[name][1] in d.message, (name, d.message)
    assert "retain_grad()" in d.message
    if any(SIMPLE[n][1] in ("ToCopyBackward0",) for n in names):
        assert "dtype and device" in d.message
    else:
        assert "requires_grad_()" in d.message
    # what it says backward() does, backward() does: the leaf gets .grad, the tensor none
    loss.backward()
    with warnings.catch_warnings():  # torch warns when a non-leaf's .grad is read
        warnings.simplefilter("ignore", UserWarning)
        assert leaf.grad is not None and t.grad is None


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       before=st.lists(st.sampled_from(sorted(SIMPLE)), max_size=2),
       other=st.sampled_from(sorted(OTHER)),
       after=st.lists(st.sampled_from(sorted(SIMPLE)), max_size=2))
def test_an_intermediate_keeps_the_plain_answer(shape, before, other, after):
    _leaf, t = _chain(shape, [*before, other, *after])
    d = why_no_grad((t.double() ** 2).sum(), t)
    assert d.case == "non-leaf"
    assert "was made from the leaf tensor" not in d.message
    assert "retain_grad()" in d.message


@given(n=st.integers(5, 8))
def test_a_long_chain_keeps_the_plain_answer(n):
    _leaf, t = _chain((3,), ["scale"] * n)
    d = why_no_grad(t.sum(), t)
    assert d.case == "non-leaf" and "was made from the leaf tensor" not in d.message


def test_two_tensors_with_history_keep_the_plain_answer():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    t = a * b
    d = why_no_grad(t.sum(), t)
    assert d.case == "non-leaf" and "was made from the leaf tensor" not in d.message
