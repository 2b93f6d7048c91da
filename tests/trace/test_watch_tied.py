"""Class: a partial fine-tuning whose trainable tensor the model holds under several names
(an output layer tied to the input embeddings, frozen all but "the head"): the summary names
the tensor with all its names, and says nothing of ties when nothing is frozen, when the tied
tensor is frozen, or when nothing is tied.

The truth comes from torch alone: ``named_parameters(remove_duplicate=False)`` and
``requires_grad`` of the model the test built.  Generated: whether the head is tied, which
names are frozen, the sizes.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class TinyLM(nn.Module):
    def __init__(self, vocab: int, width: int, tie: bool):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.mix = nn.Linear(width, width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        if tie:
            self.lm_head.weight = self.wte.weight

    def forward(self, ids):
        return self.lm_head(torch.tanh(self.mix(self.wte(ids))))


@settings(max_examples=25, deadline=None)
@given(tie=st.booleans(), frozen=st.sets(st.sampled_from(["wte", "mix", "head only"])),
       vocab=st.integers(5, 12), width=st.integers(3, 8), seed=st.integers(0, 2**16))
def test_a_tied_trainable_tensor_is_named_when_others_are_frozen(tie, frozen, vocab, width,
                                                                   seed):
    torch.manual_seed(seed)
    model = TinyLM(vocab, width, tie)
    if "head only" in frozen:  # freeze every name but lm_head.weight, as fine-tunings do
        for n, p in model.named_parameters():
            p.requires_grad_(n == "lm_head.weight" or (tie and n == "wte.weight"))
    if "wte" in frozen:
        model.wte.weight.requires_grad_(False)
    if "mix" in frozen:
        model.mix.requires_grad_(False)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad] or
                          [nn.Parameter(torch.zeros(1))], lr=0.1)
    ids = torch.randint(0, vocab, (4, 6))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        out = model(ids)
        if out.requires_grad:
            nn.functional.cross_entropy(out.reshape(-1, vocab), ids.reshape(-1)).backward()
        opt.step()
    names: dict[torch.Tensor, list[str]] = {}
    for n, p in model.named_parameters(remove_duplicate=False):  # torch's own view
        names.setdefault(p, []).append(n)
    some_frozen = any(not p.requires_grad for p in names)
    tied = [ns for p, ns in names.items() if p.requires_grad and len(ns) > 1]
    text = w.summary(checks=False)
    said = "under several names (tied)" in text
    assert said == (some_frozen and bool(tied)), (tie, frozen, text)
    if said:
        assert "wte.weight is lm_head.weight" in text, text
