"""A TabNet-style classifier whose feature-selection masks come from sparsemax in the attentive
transformer, trained with the paper's sparsity regularizer written without its epsilon, ``sum(-M *
log(M))``.  Sparsemax gives exactly 0 to the features it does not select, and ``0 * log(0) = 0 *
-inf`` is NaN: the regularizer, and the loss, are NaN at the first step.  The gradients are finite:
the backward of sparsemax's ``clamp(z - tau, min=0)`` drops the NaN that ``log`` sends back at every
exact zero, so Adam steps on ordinary gradients while the logged loss is NaN.  Nothing raises.

Source: https://aicurious.io/glossary/tabnet ("The TabNet encoder is composed of a feature
transformer, an attentive transformer and feature masking"; "An attentive transformer block example
– a single layer mapping is modulated with a prior scale information which aggregates how much each
feature has been used before the current decision step. sparsemax is used for normalization of the
coefficients, resulting in sparse selection of the salient features").  Adapted: the entropy term
without the paper's epsilon (the page gives the blocks, not the loss); 8 features, 128 rows, 3
classes from a teacher reading 3 of them; an input ``BatchNorm1d``, feature transformers ``Linear,
BatchNorm1d, GLU`` (one shared, one per step), two decision steps, attentive transformers
``Linear(8, 8), BatchNorm1d`` times the prior scales (each ``Linear`` before a ``BatchNorm1d``
without a bias, which the normalization would cancel), relaxation ``gamma = 1.3``, ``ELU`` on the
decision outputs where TabNet has ReLU, a ``Linear(8, 3)`` head, sparsity weight 1e-3, Adam at 2e-2.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://aicurious.io/glossary/tabnet"
DESCRIPTION = (
    "TabNet sparsity loss sum(-M log M) on sparsemax masks: 0 * log 0 NaN loss, finite grads"
)
ASK = []
MUST = [
    [r"\bnan\b"],
    [
        r"log\s?\(?\s?0\)?",
        r"0\s?\*\s?(log|-?inf)",
        r"log[^\n]{0,40}(zero|exact(ly)? 0)",
        r"entropy",
        r"sparsemax",
        r"sparsity",
        r"\beps(ilon)?\b",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
FEATURES, WIDTH, STEPS, GAMMA, LAMBDA = 8, 8, 2, 1.3, 1e-3


def sparsemax(z):
    """Projection of each row onto the simplex (Martins and Astudillo, 2016)."""
    zs, _ = z.sort(dim=-1, descending=True)
    k = torch.arange(1, z.size(-1) + 1, dtype=z.dtype)
    cs = zs.cumsum(-1)
    size = ((1 + k * zs) > cs).sum(-1, keepdim=True)
    tau = (cs.gather(-1, size - 1) - 1) / size
    return torch.clamp(z - tau, min=0)


class GLUBlock(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc, self.bn = nn.Linear(d_in, 2 * d_out, bias=False), nn.BatchNorm1d(2 * d_out)

    def forward(self, x):
        return F.glu(self.bn(self.fc(x)), dim=-1)


class TabNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(FEATURES)
        self.shared = GLUBlock(FEATURES, 2 * WIDTH)
        self.steps = nn.ModuleList(GLUBlock(2 * WIDTH, 2 * WIDTH) for _ in range(STEPS + 1))
        self.attentive = nn.ModuleList(
            nn.Sequential(nn.Linear(WIDTH, FEATURES, bias=False), nn.BatchNorm1d(FEATURES))
            for _ in range(STEPS)
        )
        self.head = nn.Linear(WIDTH, 3)

    def transform(self, x, i):
        h = self.shared(x)
        return h + self.steps[i](h)

    def forward(self, x):
        x = self.bn(x)
        a = self.transform(x, 0)[:, WIDTH:]
        prior = torch.ones_like(x)
        out, masks = 0, []
        for i in range(STEPS):
            mask = sparsemax(prior * self.attentive[i](a))
            prior = prior * (GAMMA - mask)
            d, a = self.transform(mask * x, i + 1).split(WIDTH, 1)
            out = out + F.elu(d)
            masks.append(mask)
        return self.head(out), torch.stack(masks)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, FEATURES, generator=g)
    y = (x[:, :3] @ torch.randn(3, 3, generator=g)).argmax(1)
    return x, y


def step(watch, eps=0.0):
    torch.manual_seed(0)
    model = TabNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-2)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits, masks = model(x)
        entropy = (-masks * torch.log(masks + eps)).sum(-1).mean()
        loss = F.cross_entropy(logits, y) + LAMBDA * entropy
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        model=model,
        before=before,
        masks=masks.detach(),
        entropy=float(entropy.detach()),
        loss=float(loss.detach()),
        grads=grads,
    )


def truth(run):
    assert bool((run.masks == 0).any())  # sparsemax's exact zeros
    assert math.isnan(run.entropy) and math.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
