"""watch: a module's output made to require grad inside the forward is no unregistered tensor.

With frozen input embeddings and gradient checkpointing, transformers registers a forward hook
on the embedding that calls ``output.requires_grad_(True)`` (``enable_input_require_grads``),
so that a reentrant checkpoint records the blocks.  That output is a leaf that requires grad
and feeds the forward; the watch called it "a tensor that requires grad ... not a registered
parameter ... never updated" as the step's problem, and gave no "ok" on a healthy step.
Invariant: a leaf that is the output of a module call of the step is reported as an
activation made to require grad (a note), never as an unregistered parameter; a tensor kept
outside the registered parameters (a gain in a Python list) still is.  Truth: torch's
``.grad`` of every trainable parameter after the step, and where each tensor was made.
"""

from __future__ import annotations

import warnings

import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.checkpoint import checkpoint

import gradarg


class Model(torch.nn.Module):
    def __init__(self, d: int, reentrant: bool | None, gain: bool) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(13, d)
        self.emb.weight.requires_grad_(False)
        self.block = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.Tanh())
        self.head = torch.nn.Linear(d, 1)
        self.reentrant = reentrant
        self.gains = [torch.ones(d, requires_grad=True)] if gain else []  # not registered

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.emb(ids)
        if self.reentrant is None:
            h = self.block(h)
        else:
            h = checkpoint(self.block, h, use_reentrant=self.reentrant)
        for g in self.gains:
            h = h * g
        return self.head(h).square().mean()


def _make_input_require_grads(module, args, output):
    output.requires_grad_(True)  # what transformers' enable_input_require_grads registers


@given(d=st.integers(2, 6), reentrant=st.sampled_from([None, True, False]),
       hook=st.booleans(), gain=st.booleans(), seed=st.integers(0, 99))
def test_an_output_made_a_leaf_is_an_activation(d, reentrant, hook, gain, seed):
    torch.manual_seed(seed)
    m = Model(d, reentrant, gain)
    handle = m.emb.register_forward_hook(_make_input_require_grads) if hook else None
    opt = torch.optim.SGD([p for p in m.parameters() if p.requires_grad], lr=0.1)
    ids = torch.randint(0, 13, (5,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with gradarg.watch(m) as w:
            loss = m(ids)
            loss.backward()
            grads = {n: p.grad for n, p in m.named_parameters() if p.requires_grad}
            opt.step()
            opt.zero_grad()
    if handle is not None:
        handle.remove()
    text = w.summary()
    trained = all(g is not None and bool(g.abs().sum() > 0) for g in grads.values())
    if hook and reentrant:  # the leaf feeds the recorded graph: said, as an activation
        assert "made so inside the forward" in text, text
    if "made so inside the forward" in text:
        assert hook and "the output of 'emb' (Embedding)" in text, text
    if gain:  # a tensor outside the registered parameters: still the problem it is
        assert "not registered parameters" in text, text
    else:
        assert "not registered parameters" not in text, text
        if trained:  # torch's truth: every trainable parameter got a nonzero gradient
            assert text.startswith("gradients ok"), text
