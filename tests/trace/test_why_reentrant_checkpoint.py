"""why_no_grad on a block run by torch.utils.checkpoint(use_reentrant=True) with no input
that requires grad.

The reentrant checkpoint runs its block under ``no_grad`` and records it again during backward
only when one of its inputs requires grad (torch's docs; it warns "None of the inputs have
requires_grad=True").  With frozen embeddings in front (the usual way to meet it: a model with
gradient checkpointing and a frozen input layer) the block's parameters get no gradient.  The
graph it leaves looks like one computed under ``torch.no_grad()``: the answer names both, never
one of them as certain.  Truth: torch's own ``.grad`` after the backward (None), and the same
model with ``use_reentrant=False`` (a gradient).
"""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.checkpoint import checkpoint

from gradarg import why_no_grad

BLOCKS = {
    "linear": lambda d: torch.nn.Linear(d, d),
    "mlp": lambda d: torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.GELU(),
                                         torch.nn.Linear(d, d)),
    "norm-linear": lambda d: torch.nn.Sequential(torch.nn.LayerNorm(d), torch.nn.Linear(d, d)),
}


class Model(torch.nn.Module):
    def __init__(self, block: str, d: int, reentrant: bool) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(11, d)
        self.emb.weight.requires_grad_(False)  # frozen input layer
        self.block = BLOCKS[block](d)
        self.head = torch.nn.Linear(d, 1)
        self.reentrant = reentrant

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = checkpoint(self.block, self.emb(ids), use_reentrant=self.reentrant)
        return self.head(h).square().mean()


@given(block=st.sampled_from(sorted(BLOCKS)), d=st.integers(2, 6), seed=st.integers(0, 99),
       with_module=st.booleans(), after=st.booleans())
def test_the_reentrant_checkpoint_is_named(block, d, seed, with_module, after):
    torch.manual_seed(seed)
    m = Model(block, d, reentrant=True)
    ids = torch.randint(0, 11, (5,))
    param = next(m.block.parameters())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's "None of the inputs ..."
        loss = m(ids)
    if after:
        loss.backward()
        assert param.grad is None  # torch's own truth
    answer = str(why_no_grad(loss, param, **({"module": m} if with_module else {})))
    assert "use_reentrant" in answer or "reentrant checkpoint" in answer, answer
    assert "torch.no_grad()" in answer, answer  # the graph cannot tell the two apart


@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_without_reentrance_the_block_gets_its_gradient(block):
    torch.manual_seed(0)
    m = Model(block, 4, reentrant=False)
    loss = m(torch.randint(0, 11, (5,)))
    param = next(m.block.parameters())
    assert "checkpoint" not in str(why_no_grad(loss, param))
    loss.backward()
    assert param.grad is not None and bool(param.grad.abs().sum() > 0)
