"""Control: SimCLR's NT-Xent loss with each embedding's similarity with itself excluded. The 2N x 2N
matrix of cosine similarities divided by the temperature has its diagonal filled with -inf before
``cross_entropy``, so each row's softmax runs over the other 2N - 1 embeddings (one positive, 2N - 2
negatives), as the indicator ``1[k != i]`` of the definition says. The loss, the softmax and every
gradient are finite; the -inf entries get probability 0 and no gradient, as intended.

Source: https://paperswithcode.com/method/nt-xent ("where 1_[k != i] in {0, 1} is an indicator
function evaluating to 1 iff k != i and tau denotes a temperature parameter. The final loss is
computed across all positive pairs, both (i, j) and (j, i), in a minibatch"). Adapted: a tanh MLP
encoder of 16-dimensional inputs, two views by additive noise, N = 16, tau = 0.5, SGD.
"""

import torch
from scenario_kit import CLAIMS_ERROR, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://paperswithcode.com/method/nt-xent"
DESCRIPTION = "control: NT-Xent with the diagonal masked by -inf: finite loss and gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_ERROR, r"\bnan\b", r"non-?finite (gradient|loss)", r"diagonal"]
N, TAU = 16, 0.5


def make_encoder():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 8))


def views():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(N, 16, generator=g)
    return x + 0.1 * torch.randn(N, 16, generator=g), x + 0.1 * torch.randn(N, 16, generator=g)


def targets():
    return torch.cat([torch.arange(N) + N, torch.arange(N)])


def step(watch):
    encoder = make_encoder()
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    a, b = views()
    self_mask = torch.eye(2 * N, dtype=torch.bool)
    with watch(encoder) as w:
        optimizer.zero_grad()
        z = F.normalize(torch.cat([encoder(a), encoder(b)]), dim=1)
        logits = (z @ z.t() / TAU).masked_fill(self_mask, float("-inf"))
        per_row = F.cross_entropy(logits, targets(), reduction="none")
        loss = per_row.mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in encoder.parameters()]
        optimizer.step()
    return Run(w=w, logits=logits.detach(), per_row=per_row.detach(), grads=grads)


def truth(run):
    assert bool(torch.isneginf(run.logits.diagonal()).all())  # self excluded
    off = ~torch.eye(2 * N, dtype=torch.bool)
    assert bool(torch.isfinite(run.logits[off]).all())
    assert bool(torch.isfinite(run.per_row).all())
    rows = torch.arange(2 * N)
    expect = torch.logsumexp(run.logits, 1) - run.logits[rows, targets()]  # sum over k != i
    assert torch.allclose(run.per_row, expect, atol=1e-5)
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
