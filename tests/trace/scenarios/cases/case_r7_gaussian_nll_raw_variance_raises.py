"""A heteroscedastic regressor with a mean head and a variance head trained with
``nn.GaussianNLLLoss``; the variance head is a plain ``Linear`` with no positivity (no sigmoid,
softplus or exp), so some predicted variances are negative and the loss raises ``ValueError: var
has negative entry/entries`` before any backward: no parameter gets a gradient.

Source: https://github.com/pytorch/pytorch/pull/49807 ("Add Gaussian NLL loss": "# Entries of var
must be non-negative / if torch.any(var < 0): raise ValueError("var has negative
entry/entries")"; the documentation asks for "a tensor of positive variances var").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://github.com/pytorch/pytorch/pull/49807"
DESCRIPTION = "GaussianNLLLoss on a raw Linear variance head: negative var, the loss raises"
ASK = []
MUST = [
    [r"\braised\b", r"ValueError", r"exception", r"\berror\b"],
    [r"\bvar\b", r"varian", r"negative", r"gaussian_?nll"],
]
MUST_NOT = [FALSE_OK]


class MeanVar(nn.Module):
    def __init__(self, positive: bool):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 16), nn.Tanh())
        self.mean = nn.Linear(16, 1)
        self.var = nn.Linear(16, 1)
        self.positive = positive

    def forward(self, x):
        h = self.body(x)
        var = self.var(h)
        if self.positive:
            var = torch.sigmoid(var) + 1e-6  # as Gaussian YOLOv3's uncertainty
        return self.mean(h), var


def step(watch, positive: bool = False):
    torch.manual_seed(0)
    model = MeanVar(positive)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 3, generator=g)
    y = 0.1 * torch.randn(64, 1, generator=g)  # targets close to 0, small noise
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    before = [p.detach().clone() for p in model.parameters()]
    error, loss = None, None
    try:
        with watch(model) as w:
            opt.zero_grad()
            mean, var = model(x)
            loss = nn.GaussianNLLLoss()(mean, y, var)
            loss.backward()
            opt.step()
    except ValueError as e:
        error = e
    loss = None if loss is None else loss.item()
    return Run(w=w, model=model, error=error, loss=loss, var=var.detach(), before=before)


def truth(run):
    assert isinstance(run.error, ValueError) and "negative" in str(run.error)
    assert bool((run.var < 0).any())
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
