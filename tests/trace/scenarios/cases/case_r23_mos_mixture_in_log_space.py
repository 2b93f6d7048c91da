"""A healthy mixture-of-softmaxes output layer (Yang et al., "Breaking the Softmax Bottleneck"):
``K = 3`` components, each a softmax over the vocabulary of a shared decoder applied to its own
``tanh`` latent, mixed with prior weights from a softmax over the context; the log-likelihood is
taken as ``logsumexp(log prior_k + log_softmax_k)``, in log space, so no probability underflows.
The components and the prior all get gradients (through the mixture, each component in
proportion to its responsibility), every gradient is finite and nonzero, and the loss falls.

Source: https://lyusungwon.github.io/natural-language-processing/2018/08/09/mos.html ("the rank of
HW is strictly upperbounded by the embedding size d"; "To solve this problem, this paper suggest
mixture of softmaxes which have improved expresiveness"; "Since the matrix is a nonlinear function
of context vectors and word embeddings, the rank of the matrix is not restricted to d").  Adapted:
a context ``Linear(12, 16)``, ``Tanh``, a prior ``Linear(16, 3)``, a latent ``Linear(16, 48)``,
``Tanh``, a shared decoder ``Linear(16, 40)``, 64 contexts with targets from a vocabulary of 40,
Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://lyusungwon.github.io/natural-language-processing/2018/08/09/mos.html"
DESCRIPTION = "healthy: mixture of 3 softmaxes, log-likelihood by logsumexp in log space"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"underflow\w*",
]
K, VOCAB = 3, 40


class MoS(nn.Module):
    def __init__(self):
        super().__init__()
        self.context = nn.Sequential(nn.Linear(12, 16), nn.Tanh())
        self.prior = nn.Linear(16, K)
        self.latent = nn.Linear(16, K * 16)
        self.decoder = nn.Linear(16, VOCAB)

    def forward(self, x):
        h = self.context(x)
        log_prior = F.log_softmax(self.prior(h), dim=-1)  # (batch, K)
        latent = torch.tanh(self.latent(h)).view(-1, K, 16)
        log_comp = F.log_softmax(self.decoder(latent), dim=-1)  # (batch, K, vocab)
        return torch.logsumexp(log_prior.unsqueeze(-1) + log_comp, dim=1)  # log mixture


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 12, generator=g)
    return x, (x[:, :4].argmax(1) * 10 + torch.randint(0, 10, (64,), generator=g))


def step(watch):
    torch.manual_seed(0)
    model = MoS()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        log_probs = model(x)
        loss = F.nll_loss(log_probs, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        after = F.nll_loss(model(x), y).item()
    return Run(w=w, log_probs=log_probs.detach(), grads=grads, loss=loss.item(), after=after)


def truth(run):
    assert torch.allclose(run.log_probs.exp().sum(-1), torch.ones(64), atol=1e-5)  # a distribution
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.after < run.loss
