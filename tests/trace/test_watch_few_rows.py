"""Class: a parameter indexed with an integer result of the forward (a VQ codebook by
``argmin`` over distances) whose index picks at most a quarter of its rows although it holds at
least four times as many values as there are rows (a codebook collapse): the watch names the
parameter, the rows picked and its exactly-zero rows; with rows well used, or an embedding
indexed by data (not by a result of the forward), nothing of the kind is said.

The truth comes from torch alone: the distinct values of the same ``argmin`` the model
computes, and the parameter's ``.grad`` rows that are exactly zero.  Generated: the codebook's
size, where it starts (near the encoder's outputs, or far from them), the batch and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg
from gradarg.trace.watching.intcuts import FEW_ROWS


class VQ(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.enc = nn.Linear(5, 3)
        self.codebook = nn.Parameter(torch.zeros(k, 3))
        self.dec = nn.Linear(3, 5)

    def forward(self, x):
        z = self.enc(x)
        idx = torch.cdist(z, self.codebook).argmin(1)
        q = self.codebook[idx]
        return self.dec(z + (q - z).detach()), z, q, idx


@settings(max_examples=25, deadline=None)
@given(k=st.integers(4, 12), start=st.sampled_from(["near", "far"]), n=st.integers(8, 64),
       seed=st.integers(0, 2**16))
def test_a_codebook_whose_index_picks_few_rows_is_named(k, start, n, seed):
    torch.manual_seed(seed)
    model = VQ(k)
    x = torch.randn(n, 5)
    with torch.no_grad():
        z0 = model.enc(x)
        model.codebook.copy_(z0[torch.randint(0, n, (k,))] + 0.01 * torch.randn(k, 3)
                             if start == "near" else 5.0 * torch.randn(k, 3) + 20.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        x_hat, z, q, idx = model(x)
        (F.mse_loss(x_hat, x) + F.mse_loss(q, z.detach()) + F.mse_loss(z, q.detach())).backward()
        opt.step()
    distinct = int(idx.unique().numel())  # the truth, from torch
    zero_rows = int((model.codebook.grad == 0).all(1).sum())
    assert zero_rows == k - distinct
    collapse = distinct * FEW_ROWS <= k and n >= FEW_ROWS * k
    text = w.summary(checks=False)
    assert (f"picked only {distinct} of its rows" in text) == collapse, text
    if collapse:
        assert f"{zero_rows} rows of its .grad are exactly zero" in text, text


def test_an_embedding_indexed_by_data_is_not_named():
    torch.manual_seed(0)
    emb, head = nn.Embedding(50, 4), nn.Linear(4, 2)
    model = nn.Sequential(emb, head)
    tokens = torch.randint(0, 3, (64,))   # 3 of 50 rows used: data, not a result of the forward
    with gradarg.watch(model) as w:
        F.cross_entropy(model(tokens), torch.randint(0, 2, (64,))).backward()
    assert "picked only" not in w.summary(checks=False)
