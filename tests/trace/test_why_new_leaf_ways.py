"""A new leaf (requires grad, no history) is answered without claiming how it was made.

Blind graders found the answer false on a loss computed under ``torch.no_grad()`` and then given
``requires_grad=True``: it said the leaf "was made from values (torch.tensor(...), from_numpy,
a float)".  The graph cannot tell the ways apart, so the answer lists them, and each way a user
makes such a leaf (generated here) is among them, grad mode included.
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st


def _no_grad_then_marked(w):
    with torch.no_grad():
        loss = (w * 2).sum()
    loss.requires_grad = True
    return loss


WAYS = {  # way: (build from w, a word the answer must contain for it)
    "no_grad-then-marked": (_no_grad_then_marked, "torch.no_grad()"),
    "detach-then-marked": (lambda w: (w * 2).sum().detach().requires_grad_(), ".detach()"),
    "tensor-constructor": (lambda w: torch.tensor((w * 2).sum().item(), requires_grad=True),
                           "requires_grad=True"),
    "numpy": (lambda w: torch.from_numpy((w * 2).sum().detach().numpy()).requires_grad_(),
              "NumPy"),
}


@given(way=st.sampled_from(sorted(WAYS)), n=st.integers(1, 4))
def test_every_way_of_making_a_new_leaf_is_among_those_said(way, n):
    from gradarg import why_no_grad

    w = torch.randn(n, requires_grad=True)
    build, word = WAYS[way]
    loss = build(w)
    assert loss.requires_grad and loss.grad_fn is None  # truth: a new leaf
    assert torch.autograd.grad(loss, w, allow_unused=True)[0] is None
    d = why_no_grad(loss, w, names={"w": w, "loss": loss})
    assert d.case == "new-leaf", d.message
    assert word in d.message, (word, d.message)
    assert "made from values" not in d.message  # no way singled out without evidence
