"""SimCLR's NT-Xent loss written without excluding each embedding's similarity with itself: the
2N x 2N matrix of cosine similarities divided by the temperature goes straight into
``cross_entropy`` with each row's target the other view. The diagonal holds ``1 / tau``, the
largest logit of every row (a unit vector is closest to itself), so the denominator of every term
carries ``exp(1 / tau)``: no row's loss can fall below ``log 2`` and the self-similarity, whose
gradient is zero (it is constant), takes up at least half of every row's softmax. The loss is
biased and its gradient is not NT-Xent's. Every gradient is finite and nonzero; nothing raises.

Source: https://paperswithcode2.com/method/2300 (NT-Xent: "l_i,j=-log ... exp(sim(z_i,z_j)/tau) /
sum 2N_k=1 1_[k=i] exp(sim(z_i,z_k)/tau)", the copy's indicator printed "1_[k=i]", "an indicator
function evaluating to 1 iff k=i", where the original excludes k = i). Adapted: a tanh MLP encoder
of 16-dimensional inputs, two views by additive noise, N = 16, tau = 0.5, SGD; the diagonal left
in the logits.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://paperswithcode2.com/method/2300"
DESCRIPTION = "NT-Xent without masking the diagonal: self-similarity 1/tau in every denominator"
ASK = []
MUST = [
    [
        r"diagonal",
        r"self[- ]?(similarit\w*|pair|match\w*|term)",
        r"(itself|own (embedding|view|entry))",
        r"mask\w*[^\n]{0,40}(self|diagonal|identity|eye)",
        r"log ?\(?2\)?",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
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
    with watch(encoder) as w:
        optimizer.zero_grad()
        z = F.normalize(torch.cat([encoder(a), encoder(b)]), dim=1)
        logits = z @ z.t() / TAU  # the diagonal is left in
        per_row = F.cross_entropy(logits, targets(), reduction="none")
        loss = per_row.mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in encoder.parameters()]
        optimizer.step()
    return Run(w=w, logits=logits.detach(), per_row=per_row.detach(), grads=grads, a=a, b=b)


def truth(run):
    diag = run.logits.diagonal()
    assert torch.allclose(diag, torch.full_like(diag, 1 / TAU), atol=1e-5)
    assert bool((run.logits.argmax(1) == torch.arange(2 * N)).all())  # self is every row's max
    assert bool((run.per_row > torch.log(torch.tensor(2.0))).all())  # floor log 2
    encoder = make_encoder()
    z = F.normalize(torch.cat([encoder(run.a), encoder(run.b)]), dim=1)
    masked = (z @ z.t() / TAU).masked_fill(torch.eye(2 * N, dtype=torch.bool), float("-inf"))
    ntxent = torch.autograd.grad(F.cross_entropy(masked, targets()), list(encoder.parameters()))
    for g, e in zip(run.grads, ntxent, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.allclose(g, e, rtol=0.05, atol=1e-6)  # not NT-Xent's gradient
