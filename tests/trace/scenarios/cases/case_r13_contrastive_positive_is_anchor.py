"""A contrastive loss written as on the page: the batch's embeddings are normalised, the
similarity matrix is ``embeddings @ embeddings.T / temperature`` and ``F.cross_entropy`` is taken
against ``labels = arange(N)``.  There is one view of each example, so the "positive" of row i is
column i, the anchor's similarity with itself: always exactly ``1 / temperature`` (a unit vector
with itself) and always the row's largest entry.  The positive term is a constant and sends no
gradient; the loss only pushes the examples apart (uniformity) and nothing pulls two views of an
example together: the encoder learns no invariance.  Every example is "classified" right from the
first step; gradients are finite and nonzero and nothing raises.

Source: https://taourl.com/read-2368639.html ("sim_matrix = torch.matmul(embeddings, embeddings.T)
/ temperature"; "labels = torch.arange(embeddings.size(0))"; "loss = F.cross_entropy(sim_matrix,
labels)"; "This code normalizes embeddings to unit length, computes pairwise similarities scaled by
temperature, and applies cross-entropy loss").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://taourl.com/read-2368639.html"
DESCRIPTION = "contrastive CE over emb @ emb.T, labels arange: the positive is the anchor itself"
ASK = []
MUST = [
    [
        r"diagonal",
        r"(itself|self)[- ]?(similarit|pair|match)\w*",
        r"anchor[^\n]{0,40}(itself|same|own)",
        r"positive[^\n]{0,60}(itself|self|anchor|same (view|example|embedding))",
        r"(one|single|same) view",
        r"second view",
        r"augment\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"dead (units?|relu|neurons?)"]
TEMPERATURE = 0.5


def contrastive_loss(embeddings, temperature=TEMPERATURE):
    embeddings = F.normalize(embeddings, p=2, dim=1)
    sim_matrix = torch.matmul(embeddings, embeddings.T) / temperature
    labels = torch.arange(embeddings.size(0))
    return F.cross_entropy(sim_matrix, labels), sim_matrix


def make_encoder():
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 8))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 16, generator=g)
    views = (x + 0.1 * torch.randn(16, 16, generator=g), x + 0.1 * torch.randn(16, 16, generator=g))
    return x, views


def step(watch):
    torch.manual_seed(0)
    model = make_encoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, _ = data()
    # the same loss with the positive logits held constant: the gradient it would give
    emb = model(x)
    _, sim = contrastive_loss(emb)
    eye = torch.eye(16, dtype=torch.bool)
    sim_const = torch.where(eye, sim.detach(), sim)
    const_grads = torch.autograd.grad(
        F.cross_entropy(sim_const, torch.arange(16)), list(model.parameters())
    )
    with watch(model) as w:
        opt.zero_grad()
        loss, sim = contrastive_loss(model(x))
        loss.backward()
        opt.step()
    grads = [p.grad.detach().clone() for p in model.parameters()]
    return Run(w=w, sim=sim.detach(), grads=grads, const_grads=const_grads, loss=loss.item())


def truth(run):
    diag = run.sim.diagonal()
    assert torch.allclose(diag, torch.full_like(diag, 1 / TEMPERATURE), atol=1e-5)
    assert torch.equal(run.sim.argmax(1), torch.arange(16))  # "right" from the start
    for g, c in zip(run.grads, run.const_grads, strict=True):  # the positive term gives nothing
        assert torch.allclose(g, c, rtol=1e-4, atol=1e-7)
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
