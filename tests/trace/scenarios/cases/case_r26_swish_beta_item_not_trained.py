"""A Swish activation with a trainable ``beta`` (an ``nn.Parameter`` of the module, so the optimizer
holds it) computed through the identity ``swish_beta(x) = silu(beta * x) / beta`` with
``b = self.beta.item()``: the parameter is read as a Python float, and the forward uses a
constant.  ``beta`` never enters the autograd graph, so after ``backward()`` both activations'
``beta.grad`` are ``None`` and Adam leaves them at 1, while every weight and bias gets a finite,
nonzero gradient.  Nothing raises or warns.

Source: https://tickerdossier.com/wiki/swish-function ("For beta = 1, the function is the Sigmoid
Linear Unit (SiLU)"; "Since swish_beta(x) = swish_1(beta x) / beta, all instances of swish have the
same shape as the default swish_1, zoomed by beta"; "When beta is trainable, this constraint can be
enforced by beta = e^b, where b is trainable").  Adapted: ``Linear(8, 32), Swish, Linear(32, 32),
Swish, Linear(32, 1)``, each Swish with its own ``beta`` started at 1, a regression on 128
examples, MSE, Adam at 1e-2.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://tickerdossier.com/wiki/swish-function"
DESCRIPTION = (
    "Swish beta read with .item() in forward: beta out of the graph, grad None, never moves"
)
ASK = ["1.beta"]
MUST = [
    [
        r"\.?item\(\)",
        r"\bitem\b",
        r"python (float|number|scalar)",
        r"float\(",
        r"(convert\w*|conversion|cast)[^\n]{0,40}(float|python|number|scalar)",
        r"(graph|autograd)[^\n]{0,60}(cut|broken|break|outside|not part|disconnect|detach)",
        r"not (part of|in|connected to) the (autograd )?graph",
        r"(never|not) (used|reached|reach|enters?|entered)[^\n]{0,40}(graph|loss|forward)",
        r"does not (reach|depend)",
    ]
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class Swish(nn.Module):
    def __init__(self, as_exp):
        super().__init__()
        self.as_exp = as_exp
        if as_exp:
            self.log_beta = nn.Parameter(torch.zeros(1))  # beta = e^b > 0, started at 1
        else:
            self.beta = nn.Parameter(torch.ones(1))

    def forward(self, x):
        beta = self.log_beta.exp() if self.as_exp else self.beta.item()  # .item(): a float
        return F.silu(beta * x) / beta


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 8, generator=g)
    y = (x[:, :1] * x[:, 1:2] + torch.sin(x[:, 2:3])) * 0.5
    return x, y


def step(watch, as_exp=False):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(8, 32), Swish(as_exp), nn.Linear(32, 32), Swish(as_exp), nn.Linear(32, 1)
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        grads = {
            n: None if p.grad is None else p.grad.detach().clone()
            for n, p in model.named_parameters()
        }
        optimizer.step()
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    return Run(w=w, model=model, before=before, grads=grads, held=held)


def truth(run):
    assert {"1.beta", "3.beta"} <= set(run.grads)
    for n, p in run.model.named_parameters():
        assert id(p) in run.held, n
        g = run.grads[n]
        if n.endswith(".beta"):
            assert g is None and torch.equal(p.detach(), run.before[n]), n
        else:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
