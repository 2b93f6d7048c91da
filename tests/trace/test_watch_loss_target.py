"""A loss whose target carries gradient into the model is named (issue 43, blind scenario
round 3: a Q-learning target computed by the same network and not detached), tested over
generated steps.

Each example builds a small MLP and a loss among ``mse_loss``, ``smooth_l1_loss``,
``huber_loss`` and ``binary_cross_entropy_with_logits`` whose target is a constant, the
input itself (an autoencoder), the model's own output on other data (detached, under
``torch.no_grad()``, or not detached), or the output of another model (not watched).  The
ground truth comes from torch alone: whether the target, as passed, has a gradient with
respect to the watched model's parameters (``torch.autograd.grad(..., allow_unused=True)``).
The invariant: the summary names the loss's target as a problem exactly when it does and is
made otherwise than the input (a bootstrapped target: here the output on other data scaled
by 0.9); a target made the same way as the input (the same network's output, a symmetric
consistency term: ``test_watch_symmetric_target``) is stated as a note; a target that does
not lead to the parameters is never named.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

LOSSES = {
    "mse_loss": F.mse_loss,
    "smooth_l1_loss": F.smooth_l1_loss,
    "huber_loss": F.huber_loss,
    "binary_cross_entropy_with_logits": lambda a, b: F.binary_cross_entropy_with_logits(
        a, b.sigmoid()),
}
TARGETS = ["constant", "input", "own detached", "own no_grad", "own", "own scaled",
           "other model"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loss=st.sampled_from(sorted(LOSSES)), target=st.sampled_from(TARGETS),
       width=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_a_target_that_carries_gradient_into_the_model_is_named(loss, target, width, seed):
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(width, 8), nn.Tanh(), nn.Linear(8, width))
    other = nn.Linear(width, width)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, x2 = torch.randn(5, width), torch.randn(5, width)
    with gradarg.watch(net) as w:
        opt.zero_grad()
        out = net(x)
        if target == "constant":
            t = torch.zeros_like(out)
        elif target == "input":
            t = x
        elif target == "own detached":
            t = net(x2).detach()
        elif target == "own no_grad":
            with torch.no_grad():
                t = net(x2)
        elif target == "own":
            t = net(x2)
        elif target == "own scaled":
            t = 0.9 * net(x2)
        else:
            t = other(x2)
        # the ground truth, from torch: does the target lead to the model's parameters?
        leads = t.requires_grad and any(g is not None for g in torch.autograd.grad(
            t.sum(), list(net.parameters()), retain_graph=True, allow_unused=True))
        LOSSES[loss](out, t).backward()
        opt.step()
    s = w.summary(checks=False)
    # the same way: the same network's output on both sides (binary_cross_entropy_with_logits
    # is given the target's sigmoid here: one more operation on that side)
    if leads and target == "own" and loss != "binary_cross_entropy_with_logits":
        assert "the target of" not in s and "compares two outputs made the same way" in s, s
        assert "detach one side" in s, s
    elif leads:
        assert not s.startswith("gradients ok"), s
        assert f"the target of {loss}" in s and "detach" in s, s
    else:
        assert "the target of" not in s and "made the same way" not in s, s
