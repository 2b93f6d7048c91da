"""Class: an embedding whose every lookup in the step is its ``padding_idx`` gets an all-zero
gradient by design (the padding row gets none); the summary and ``why_no_grad`` say so, with
the index, instead of an unexplained zero.

The truth comes from torch alone: the indices of the batch and the weight's ``.grad``.
Generated: the padding index (or none), how many lookups are padding, dense or sparse
gradients, the sizes.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


@settings(max_examples=30, deadline=None)
@given(pad=st.sampled_from([None, 0, 3, -1]), padded=st.sampled_from(["all", "some", "none"]),
       sparse=st.booleans(), rows=st.integers(4, 8), seed=st.integers(0, 2**16))
def test_an_embedding_fed_only_its_padding_index_is_named(pad, padded, sparse, rows, seed):
    torch.manual_seed(seed)
    emb = nn.Embedding(rows, 2, padding_idx=pad, sparse=sparse)
    index = emb.padding_idx if emb.padding_idx is not None else 1
    other = next(i for i in range(rows) if i != index)
    idx = torch.full((2, 3), index)
    if padded == "some":
        idx[0, 0] = other
    elif padded == "none":
        idx[:] = other
    with gradarg.watch(emb) as w:
        (emb(idx) - 1.0).pow(2).sum().backward()
    g = emb.weight.grad.to_dense()
    truth = pad is not None and padded == "all"
    assert truth == (not g.any())  # torch: all zero exactly when every lookup is padding
    text, why = w.summary(checks=False), w.why_no_grad("weight")
    said = f"padding_idx ({emb.padding_idx})" in text and "padding_idx" in why
    assert said == truth, (pad, padded, text, why)
