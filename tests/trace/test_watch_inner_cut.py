"""Class: the cause named for a module whose output has no autograd history is the grad mode its
computation ran in, not the grad mode around its own call.  A model called with grad mode on
whose block runs without recording a graph (``torch.no_grad()`` or ``torch.inference_mode()``
inside ``forward``, or a reentrant ``torch.utils.checkpoint`` none of whose inputs requires
grad) is cut by that inner call: the summary names the inner module and its mode, never "grad
mode was on, so its output was detached".

The truth comes from torch alone: the model's output has no ``grad_fn`` and no parameter gets a
``.grad``; the control (the same nesting, grad mode on throughout, or ``use_reentrant=False``)
gets every ``.grad``.  Generated: the inner mode, how deep the block sits (one or two wrapper
modules around it), the widths and the seed.
"""

from __future__ import annotations

import contextlib
import warnings

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.utils.checkpoint import checkpoint

import gradarg

WORDS = {"no_grad": "torch.no_grad()", "inference_mode": "torch.inference_mode()",
         "checkpoint": "use_reentrant=True"}


class Wrapped(nn.Module):
    """Calls ``inner`` in the grad mode ``mode`` names (``"on"``: as it is)."""

    def __init__(self, inner: nn.Module, mode: str):
        super().__init__()
        self.inner, self.mode = inner, mode

    def forward(self, x):
        if self.mode == "checkpoint":
            return checkpoint(self.inner, x, use_reentrant=True)
        if self.mode == "checkpoint-nonreentrant":
            return checkpoint(self.inner, x, use_reentrant=False)
        context = {"no_grad": torch.no_grad, "inference_mode": torch.inference_mode}.get(
            self.mode, contextlib.nullcontext)
        with context():
            return self.inner(x)


class Outer(nn.Module):
    def __init__(self, body: nn.Module, depth: int):
        super().__init__()
        for _ in range(depth - 1):
            body = nn.Sequential(body)
        self.body = body

    def forward(self, x):
        return self.body(x)


@settings(max_examples=20, deadline=None)
@given(mode=st.sampled_from([*sorted(WORDS), "on", "checkpoint-nonreentrant"]),
       depth=st.integers(1, 2), width=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_a_cut_inside_a_call_with_grad_on_is_named(mode, depth, width, seed):
    torch.manual_seed(seed)
    block = nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, 1))
    model = Outer(Wrapped(block, mode), depth)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, target = torch.randn(6, 4), torch.randn(6, 1)
    error, out = None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # checkpoint's "None of the inputs have requires_grad"
        try:
            with gradarg.watch(model) as w:
                opt.zero_grad()
                out = model(x)
                ((out - target) ** 2).mean().backward()
                opt.step()
        except RuntimeError as e:
            error = e
    cut = mode in WORDS
    # the truth, from torch: no history on the output, no .grad anywhere (or every .grad)
    assert out is not None and (out.grad_fn is None) == cut
    assert all((p.grad is None) == cut for p in model.parameters())
    assert (error is not None) == cut
    text = w.summary(checks=False)
    if cut:
        assert "without autograd history" in text, text
        assert WORDS[mode] in text, text
        assert "grad mode was on, so its output was detached" not in text, text
    else:
        assert text.startswith("gradients ok"), text
