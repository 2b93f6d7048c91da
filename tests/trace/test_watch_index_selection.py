"""Class: a module whose input is selected with an integer index computed in the forward
(``codebook[argmin(distances)]``, as a VQ-VAE quantises) and holds no path back to what the
index was computed from: the gradient of everything after it stops at the index, and the
encoder trains only on the terms that use its output directly (a commitment loss).  The watch
names the module, the index and the encoder's parameters; with the straight-through estimator
(``z + (q - z).detach()``) nothing of the kind is said.

The truth comes from torch alone: the reconstruction term's gradient with respect to the
encoder's parameters (``torch.autograd.grad``, ``allow_unused``) is None without the
straight-through estimator and nonzero with it.  Generated: how the codes are selected
(indexing, ``F.embedding``, ``index_select``), straight-through or not, the codebook's size,
the widths and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SELECT = {"index": lambda cb, i: cb[i], "embedding": lambda cb, i: F.embedding(i, cb),
          "index_select": lambda cb, i: cb.index_select(0, i)}


class VQ(nn.Module):
    def __init__(self, k, d, select, st):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, d))
        self.codebook = nn.Parameter(torch.randn(k, d))
        self.dec = nn.Sequential(nn.Linear(d, 12), nn.Tanh(), nn.Linear(12, 6))
        self.select, self.st = SELECT[select], st

    def forward(self, x):
        z = self.enc(x)
        idx = torch.cdist(z, self.codebook).argmin(1)
        q = self.select(self.codebook, idx)
        return self.dec(z + (q - z).detach() if self.st else q), z, q


@settings(max_examples=25, deadline=None)
@given(select=st.sampled_from(sorted(SELECT)), st_=st.booleans(), k=st.integers(3, 8),
       d=st.integers(2, 4), seed=st.integers(0, 2**16))
def test_a_selection_that_cuts_the_encoder_is_named(select, st_, k, d, seed):
    torch.manual_seed(seed)
    model = VQ(k, d, select, st_)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 6)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        x_hat, z, q = model(x)
        recon = F.mse_loss(x_hat, x)
        g = torch.autograd.grad(recon, list(model.enc.parameters()), allow_unused=True,
                                retain_graph=True)
        loss = recon + F.mse_loss(q, z.detach()) + 0.25 * F.mse_loss(z, q.detach())
        loss.backward()
        opt.step()
    cut = all(t is None for t in g)  # the truth, from torch
    assert cut == (not st_)
    text = w.summary(checks=False)
    named = "took values selected" in text
    assert named == cut, text
    if cut:
        assert "module 'dec'" in text and "'enc'" in text and "enc.0.weight" in text, text

