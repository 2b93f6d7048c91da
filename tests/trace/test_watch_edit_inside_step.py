"""Class: ``.grad`` that differs at the end of the block from what an optimizer step read at
its start is an edit after the step (a ``clip_grad_norm_`` too late: the step used the
unclipped gradient) only when the change came after the step; an optimizer whose ``step``
edits the gradient before its update (gradient centralization, a rescaling) made it itself,
and its update used the edited gradient: nothing to say.

The truth comes from torch: with plain SGD (no momentum), the update is ``-lr * g`` for the
gradient ``g`` the step used, so ``(before - after) / lr`` against ``.grad`` at the end tells
whether the final ``.grad`` is what the update used.  Generated: the edit (centralize the
rows, rescale), inside the step or after it, which parameters it touches, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

LR = 0.1
AFTER = "gradients changed after the optimizer step"


def _edit(p, how):
    if how == "center" and p.grad.dim() > 1:
        p.grad.sub_(p.grad.mean(dim=1, keepdim=True))
    elif how == "scale":
        p.grad.mul_(0.5)


class EditingSGD(torch.optim.Optimizer):
    """Plain SGD whose step edits each gradient first (as gradient centralization does); its
    own update, so that no other optimizer's hooked step runs inside it."""

    def __init__(self, params, how, lr):
        super().__init__(params, {"lr": lr})
        self.how = how

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    _edit(p, self.how)
                    p.add_(p.grad, alpha=-group["lr"])


@settings(max_examples=25, deadline=None)
@given(how=st.sampled_from(["center", "scale"]), inside=st.booleans(),
       seed=st.integers(0, 2**16))
def test_an_edit_made_by_the_step_itself_is_not_an_edit_after_it(how, inside, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 2))
    opt = (EditingSGD(model.parameters(), how, lr=LR) if inside else
           torch.optim.SGD(model.parameters(), lr=LR))
    x, y = torch.randn(10, 5), torch.randn(10, 2)
    before = [p.detach().clone() for p in model.parameters()]
    with gradarg.watch(model) as w:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        if not inside:
            with torch.no_grad():
                for p in model.parameters():
                    _edit(p, how)
    used = [(b - p.detach()) / LR for b, p in zip(before, model.parameters(), strict=True)]
    final_was_used = all(torch.allclose(u, p.grad, rtol=1e-4, atol=1e-6)
                         for u, p in zip(used, model.parameters(), strict=True))
    assert final_was_used == inside  # the truth, from the update itself
    text = w.summary()
    assert (AFTER in text) == (not final_was_used), text
