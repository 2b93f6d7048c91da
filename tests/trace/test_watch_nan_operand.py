"""Class: a NaN/Inf loss whose NaN/Inf comes from a tensor without autograd history (returns or
advantages normalised by a zero standard deviation, a target, a weight) is named as such: the
node that took it, its shape and how many of its entries are not finite; with a finite factor
nothing of the kind is said.

The truth comes from torch alone: the loss is not finite exactly when the factor holds a
NaN/Inf, and the factor's count of non-finite entries is the test's own construction, checked
with ``torch.isfinite``.  Generated: how the factor enters the loss (a product, a quotient, a
class weight of ``cross_entropy``), how many entries are NaN or Inf, the widths and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

N, K = 12, 4
ENTERS = {
    "product": (lambda out, y, f: -(F.log_softmax(out, -1)[:, 0] * f[:N]).sum(), "MulBackward0"),
    "quotient": (lambda out, y, f: (out[:, 0] / f[:N]).sum(), "DivBackward0"),
    "class weight": (lambda out, y, f: F.cross_entropy(out, y, weight=f[:K]),
                     "NllLossBackward0"),
}


@settings(max_examples=25, deadline=None)
@given(enters=st.sampled_from(sorted(ENTERS)), bad=st.integers(0, 3),
       value=st.sampled_from([float("nan"), float("inf")]), width=st.integers(2, 6),
       seed=st.integers(0, 2**16))
def test_a_nonfinite_factor_without_history_is_named(enters, bad, value, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, width), nn.Tanh(), nn.Linear(width, K))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(N, 5), torch.randint(0, K, (N,))
    factor = torch.rand(N) + 0.5
    factor[:bad] = value
    loss_of, node = ENTERS[enters]
    with gradarg.watch(model) as w:
        opt.zero_grad()
        loss = loss_of(model(x), y, factor)
        loss.backward()
        opt.step()
    used = factor[:K] if enters == "class weight" else factor[:N]
    k = int((~torch.isfinite(used)).sum())
    # the truth, from torch: a non-finite factor makes the loss non-finite (an Inf class
    # weight can meet no target, or make Inf / Inf: either way it is in the saved operand)
    text = w.summary(checks=False)
    if k and not torch.isfinite(loss):
        said = f"{node} took a tensor without autograd history (shape {tuple(used.shape)})"
        assert said in text, text
        assert f"holding NaN/Inf in {k} of {used.numel()} entries" in text, text
    if k == 0:
        assert torch.isfinite(loss)
        assert "without autograd history" not in text, text
