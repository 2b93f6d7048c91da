"""A healthy step people suspect: one few-shot episode of a prototypical network (5 classes, 3
support and 4 query examples each).  The class prototypes are written into a tensor made with
``torch.zeros`` by indexed assignment (``prototypes[k] = embeddings[mask].mean(0)``), a pattern
that looks as if it cut the graph.  It does not: the in-place copy into a tensor that does not
require grad records the assignment, so the loss (cross-entropy over negative squared distances
from each query to each prototype) reaches the encoder through both the queries and the support
set.  Every parameter gets a finite, nonzero gradient equal to the one computed with
``torch.stack`` of the means.

Source: https://zero-to-ai.netlify.app/curriculum/24-advanced-dl/17_prototypical_networks.html
(``def compute_prototypes(embeddings, labels, n_classes): prototypes = torch.zeros(n_classes,
embeddings.size(1), ...)  for k in range(n_classes): mask ...``; "Compute class prototypes
(means)"; "Classify by nearest prototype").  Adapted: a tanh MLP encoder on 5 Gaussian clusters
instead of the page's convolutional one, Adam.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://zero-to-ai.netlify.app/curriculum/24-advanced-dl/17_prototypical_networks.html"
DESCRIPTION = "healthy: prototypes assigned in place into torch.zeros; gradient reaches support set"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"in-?place[^\n]{0,60}(cut|break|broke|detach)",
    r"(graph|gradient)[^\n]{0,30}(cut|broken)",
    r"no gradient",
    r"all-zero",
]
N_WAY, K_SHOT, N_QUERY, DIM = 5, 3, 4, 12


def make_encoder():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(DIM, 32), nn.Tanh(), nn.Linear(32, 16))


def compute_prototypes(embeddings, labels, n_classes):
    prototypes = torch.zeros(n_classes, embeddings.size(1))
    for k in range(n_classes):
        mask = labels == k
        prototypes[k] = embeddings[mask].mean(0)
    return prototypes


def episode():
    g = torch.Generator().manual_seed(1)
    centers = 1.5 * torch.randn(N_WAY, DIM, generator=g)
    ys = torch.arange(N_WAY).repeat_interleave(K_SHOT)
    yq = torch.arange(N_WAY).repeat_interleave(N_QUERY)
    xs = centers[ys] + torch.randn(len(ys), DIM, generator=g)
    xq = centers[yq] + torch.randn(len(yq), DIM, generator=g)
    return xs, ys, xq, yq


def episode_loss(encoder, xs, ys, xq, yq, stacked=False):
    zs, zq = encoder(xs), encoder(xq)
    if stacked:
        protos = torch.stack([zs[ys == k].mean(0) for k in range(N_WAY)])
    else:
        protos = compute_prototypes(zs, ys, N_WAY)
    logits = -(torch.cdist(zq, protos) ** 2)
    return F.cross_entropy(logits, yq), protos


def step(watch):
    encoder = make_encoder()
    opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    xs, ys, xq, yq = episode()
    with watch(encoder) as w:
        opt.zero_grad()
        loss, protos = episode_loss(encoder, xs, ys, xq, yq)
        loss.backward()
        grads = [p.grad.detach().clone() for p in encoder.parameters()]
        opt.step()
    ref_enc = make_encoder()
    ref_loss, _ = episode_loss(ref_enc, xs, ys, xq, yq, stacked=True)
    ref = torch.autograd.grad(ref_loss, list(ref_enc.parameters()))
    # the support set's share: the same loss with the prototypes detached
    det_enc = make_encoder()
    zs, zq = det_enc(xs), det_enc(xq)
    protos_det = compute_prototypes(zs, ys, N_WAY).detach()
    q_only = F.cross_entropy(-(torch.cdist(zq, protos_det) ** 2), yq)
    query_only = torch.autograd.grad(q_only, list(det_enc.parameters()))
    return Run(w=w, grads=grads, ref=ref, query_only=query_only, protos=protos)


def truth(run):
    assert run.protos.requires_grad  # the indexed assignment kept the graph
    for g, r, q in zip(run.grads, run.ref, run.query_only, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert torch.allclose(g, r, atol=1e-6)
        assert not torch.allclose(g, q, atol=1e-6)  # the support set contributes
