"""Class: a module whose output reaches the loss only through an integer result computed in the
forward (``argmax``, ``argmin``, a comparison, a cast to ``long``) gets no gradient, and the
watch names that operation; the same model with a differentiable path instead (softmax
weights, or the straight-through trick) is "ok".  No function mode is left behind, also when
the forward raises.

The truth comes from torch alone: the selector's ``.grad`` is None with the integer path and
set with the differentiable one.  Generated: the operation, what is done to the output before
it (noise, a scale), how deep the selector sits, the widths and the seed.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

K = 3
HARD = {  # an integer (or boolean) result from the scores, then a float one-hot or mask
    "argmax": lambda s: F.one_hot(s.argmax(-1), K).float(),
    "argmin": lambda s: F.one_hot(s.argmin(-1), K).float(),
    "gt": lambda s: (s > s.mean(-1, keepdim=True)).float(),
    "long": lambda s: s.clamp(0, K - 1).long().float(),
}
SOFT = {
    "softmax": lambda s: torch.softmax(s, -1),
    "straight-through": lambda s: (F.one_hot(s.argmax(-1), K).float() - torch.softmax(s, -1)
                                   ).detach() + torch.softmax(s, -1),
}
BEFORE = {"none": lambda s: s, "noise": lambda s: s + 0.1 * torch.randn_like(s),
          "scale": lambda s: 2.0 * s}


class Router(nn.Module):
    def __init__(self, width: int, choose, before, nested: bool):
        super().__init__()
        selector = nn.Linear(4, K)
        self.selector = nn.Sequential(selector) if nested else selector
        self.heads = nn.Linear(4, K * width)
        self.out = nn.Linear(width, 1)
        self.choose, self.before, self.width = choose, before, width

    def forward(self, x):
        weights = self.choose(self.before(self.selector(x)))           # (N, K)
        h = torch.tanh(self.heads(x)).view(len(x), K, self.width)
        return self.out((weights.unsqueeze(-1) * h).sum(1))


def _selector_grad(model: Router) -> torch.Tensor | None:
    return next(iter(model.selector.parameters())).grad


@settings(max_examples=25, deadline=None)
@given(op=st.sampled_from(sorted(HARD) + sorted(SOFT)), before=st.sampled_from(sorted(BEFORE)),
       nested=st.booleans(), width=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_an_integer_result_that_cuts_a_module_output_is_named(op, before, nested, width, seed):
    torch.manual_seed(seed)
    model = Router(width, {**HARD, **SOFT}[op], BEFORE[before], nested)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    assert torch.overrides._get_current_function_mode_stack() == []
    cut = op in HARD
    assert (_selector_grad(model) is None) == cut  # the truth, from torch
    text = w.summary(checks=False)
    name = "selector.0" if nested else "selector"
    if cut:
        why = w.why_no_grad(f"{name}.weight")
        for said in (text, why):
            assert f"reached {op}" in said and "integer tensor" in said, said
            assert "module 'selector" in said, said  # the Sequential, or the Linear in it
    else:
        assert "integer tensor" not in text, text


def test_no_mode_is_left_when_the_forward_raises():
    model = Router(2, HARD["argmax"], BEFORE["none"], False)
    model.out = nn.Linear(3, 1)  # the wrong width: the forward raises
    with pytest.raises(RuntimeError), gradarg.watch(model):
        model(torch.randn(4, 4))
    assert torch.overrides._get_current_function_mode_stack() == []
