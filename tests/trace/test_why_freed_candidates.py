"""why_no_grad after the user's own backward(): the operations that could have made the zero or
NaN are listed, and the one that did is among them.

Once ``backward()`` freed the saved tensors, the node that sent the zeros or the NaN cannot be
read; the answer lists the operations on the path that can.  A saturated sigmoid or tanh, a
norm at an all-zero input, ``exp`` overflowing under ``torch.where``, ``logsumexp`` of a row of
``-inf`` were missing from that list.  The truth is torch's: the gradient is exactly zero (or
non-finite) and the operation named is on the path.
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

D = torch.float64
ZEROS = {  # name -> (the forward of w, the operation that makes the zero)
    "sigmoid": (lambda w: torch.sigmoid(w * 1e3 + 1e3).sum(), "sigmoid"),
    "tanh": (lambda w: torch.tanh(w * 1e3 + 1e3).sum(), "tanh"),
    "norm": (lambda w: (w * 0).norm() * 3, "norm"),
    "vector_norm": (lambda w: torch.linalg.vector_norm(w - w.detach()) * 2, "linalg_vector_norm"),
    "relu": (lambda w: torch.relu(-w.abs() - 1).sum(), "relu"),
}
NANS = {
    "where-exp": (lambda w: torch.where(w > 0, torch.zeros_like(w), torch.exp(w * 1e4)).sum(),
                  "exp"),
    "logsumexp": (lambda w: torch.logsumexp(w * 0 + float("-inf"), 0), "logsumexp"),
    "sqrt": (lambda w: torch.sqrt(w * 0).sum(), "sqrt"),
}


@given(name=st.sampled_from(sorted(ZEROS)), n=st.integers(1, 5), seed=st.integers(0, 999))
def test_an_exact_zero_names_the_operation_that_can_make_it(name, n, seed):
    torch.manual_seed(seed)
    f, op = ZEROS[name]
    w = (torch.rand(n, dtype=D) + 0.5).requires_grad_()
    out = f(w)
    out.backward()
    assert bool((w.grad == 0).all())  # the truth
    d = why_no_grad(out, w, names={"w": w})
    assert d.case == "zero" and op in d.message, d.message
    assert "could not be checked" in d.message or "every path" in d.message


@given(name=st.sampled_from(sorted(NANS)), n=st.integers(1, 5), seed=st.integers(0, 999))
def test_a_nan_names_the_operation_that_can_make_it(name, n, seed):
    torch.manual_seed(seed)
    f, op = NANS[name]
    # positive entries: torch.where takes its zero branch, exp(1e4 w) overflows in the other
    w = (torch.rand(n, dtype=D) + 0.5).requires_grad_()
    out = f(w)
    out.backward()
    assert not bool(torch.isfinite(w.grad).all())  # the truth
    d = why_no_grad(out, w, names={"w": w})
    assert d.case == "nonfinite" and op in d.message, d.message
