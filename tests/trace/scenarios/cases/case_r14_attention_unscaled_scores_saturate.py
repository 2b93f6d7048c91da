"""A one-layer self-attention regressor whose scores are ``q @ k.T`` without the division by
``sqrt(d_k)``.  The query and key projections are initialised so that each component of ``q`` and
``k`` has variance about 1 (``normal(std=d_model ** -0.5)``, ``d_k = 512``), so a score has a
standard deviation of about ``sqrt(512) = 23``: over 16 keys the softmax is nearly one-hot (about
two thirds of the 128 rows put more than 0.99 on one key).  The softmax's Jacobian
``diag(p) - p p^T`` is then nearly zero: in about half the rows the loss's gradient at the scores is
below a thousandth of the largest row's (their queries and keys learn nothing from the loss), and
what ``q.weight`` and ``k.weight`` get comes from the few rows still spread.  With the scaling (the
control) no row is above 0.9 and every row's scores get a gradient.  Every gradient is finite;
nothing raises.

Source: https://learntinker.com/lessons/why-divide-by-sqrt-dk ("Softmax of a vector with very large
magnitude collapses to a one-hot ... the gradient through the softmax with respect to all
non-argmax positions is essentially zero.  Those keys can no longer learn from the loss";
"Without it, attention silently breaks at any reasonable model dimension").  Adapted: one
attention layer, mean-pooled into a linear head, trained with MSE on random targets; a tensor hook
on the scores records their gradient for the ground truth.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://learntinker.com/lessons/why-divide-by-sqrt-dk"
DESCRIPTION = "attention q @ k.T not divided by sqrt(512): softmax one-hot, scores get ~0 grad"
ASK = ["q.weight"]
MUST = [
    [r"\bq\.weight", r"\bk\.weight", r"quer(y|ies)", r"\bkeys?\b"],
    [
        r"sqrt",
        r"√",
        r"scal(e|ed|ing)\b[^\n]{0,40}(score|attention|dot)",
        r"(score|attention|dot)[^\n]{0,40}\bscal(e|ed|ing)\b",
        r"softmax[^\n]{0,60}(saturat\w*|one-hot|peaked)",
        r"(saturat\w*|one-hot|peaked)[^\n]{0,60}softmax",
        r"temperature",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"no_grad",
    r"detach",
    r"dead (units?|relu|neurons?)",
    r"not in (the |any )?optimizer",
]
D, T, BATCH = 512, 16, 8


class Attention(nn.Module):
    def __init__(self, scaled: bool):
        super().__init__()
        self.scaled = scaled
        self.q = nn.Linear(D, D, bias=False)
        self.k = nn.Linear(D, D, bias=False)
        self.v = nn.Linear(D, D, bias=False)
        for lin in (self.q, self.k, self.v):
            nn.init.normal_(lin.weight, std=D**-0.5)  # unit-variance q, k, v components
        self.head = nn.Linear(D, 1)
        self.last_attn = None
        self.score_grad = None

    def _keep(self, grad):
        self.score_grad = grad.detach().clone()

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = q @ k.transpose(-2, -1)
        if self.scaled:
            scores = scores / math.sqrt(D)
        attn = scores.softmax(-1)
        self.last_attn = attn.detach()
        if scores.requires_grad:  # what the loss sends back to each score (read by the truth)
            scores.register_hook(self._keep)
        return self.head((attn @ v).mean(1))


def step(watch, scaled: bool = False):
    torch.manual_seed(0)
    model = Attention(scaled)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(BATCH, T, D, generator=g)
    y = torch.randn(BATCH, 1, generator=g)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    top = model.last_attn.max(-1).values
    row_grad = model.score_grad.abs().amax(-1)  # largest score gradient of each attention row
    return Run(w=w, loss=loss.item(), top=top, row_grad=row_grad, grads=grads)


def truth(run):
    assert float((run.top > 0.99).float().mean()) > 0.6  # most rows nearly one-hot
    rows = run.row_grad.flatten()
    assert float((rows < 1e-3 * rows.max()).float().mean()) > 0.4  # their scores get ~nothing
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()), n
