"""why_no_grad when the graph starts at a copy of the tensor asked about.

``torch.tensor(x.tolist(), requires_grad=True)``, ``torch.tensor([x[0].item(), x[1].item()])``,
``x.new_tensor(...)``, ``x.detach().clone().requires_grad_()`` or a NumPy round trip make a new
leaf holding ``x``'s values: backward stops there.  The answer listed every way a path can be
cut; the graph shows which: a leaf whose entries all equal entries of ``x`` exactly (one of
them not a whole number, which cannot match by chance).  Invariant: the answer names the copy
when the graph holds one, and never when its leaf is not one (other values, or values that
could match by chance).  Truth: torch's own ``.grad`` after the backward (``x.grad`` None, the
copy's set).
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

COPIES = {
    "tolist": lambda x: torch.tensor(x.tolist(), requires_grad=True),
    "items": lambda x: torch.tensor([x.reshape(-1)[0].item(), x.reshape(-1)[-1].item()],
                                    requires_grad=True),
    "new_tensor": lambda x: x.new_tensor(x.tolist()).requires_grad_(),
    "detach-clone": lambda x: x.detach().clone().requires_grad_(),
    "numpy": lambda x: torch.from_numpy(np.array(x.detach().numpy())).requires_grad_(),
}
NOT_COPIES = {
    "doubled": lambda x: (x.detach() * 2).requires_grad_(),
    "fresh": lambda x: torch.randn(x.shape, dtype=x.dtype, requires_grad=True),
}
LOSSES = {"square": lambda t: (t ** 2).sum(), "sin": lambda t: t.sin().mean(),
          "weighted": lambda t: (t * torch.arange(t.numel()).reshape(t.shape)).sum()}


@given(kind=st.sampled_from(sorted(COPIES) + sorted(NOT_COPIES)),
       loss=st.sampled_from(sorted(LOSSES)), n=st.integers(2, 6), seed=st.integers(0, 999),
       whole=st.booleans())
def test_a_copy_is_named_only_when_the_graph_holds_one(kind, loss, n, seed, whole):
    torch.manual_seed(seed)
    x = torch.randn(n, requires_grad=True)
    if whole:  # whole numbers (0, 1, 2): a leaf could match them by chance
        x = torch.randint(0, 3, (n,)).float().requires_grad_()
    leaf = (COPIES.get(kind) or NOT_COPIES[kind])(x)
    out = LOSSES[loss](leaf)
    answer = why_no_grad(out, x)
    out.backward()
    assert x.grad is None and leaf.grad is not None  # torch's truth: the path stops at leaf
    assert answer.case == "not-reachable", answer.message
    named = "holds" in answer.message and "a copy made from its values" in answer.message
    assert named == (kind in COPIES and not whole), answer.message
