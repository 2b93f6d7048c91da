"""A contrastive loss over all pairwise distances: sqrt of the zero self-distances makes the
gradient NaN (0 * inf) although the loss is finite.  The NaN is made in the loss, after the model.

Source: https://discuss.pytorch.org/t/how-to-fix-gradient-at-0-for-sqrt-function/23390
(and https://openillumi.com/en/en-fix-pytorch-cpu-nan-powbackward0 : "Function 'PowBackward0'
returned nan values" from an L2 norm that is zero).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://discuss.pytorch.org/t/how-to-fix-gradient-at-0-for-sqrt-function/23390"
DESCRIPTION = "sqrt of zero pairwise distances in the loss: emb's gradient NaN, loss finite"
ASK = ["emb.weight"]
MUST = [
    [r"\bnan\b", r"non-?finite", r"not finite"],
    [r"\bloss\b", r"after the model", r"outside", r"arriv", r"sqrt", r"distance", r"output"],
]
MUST_NOT = [
    FALSE_OK,
    (
        r"(made|produced|created|introduced|originat\w*|starts?|first)\W+(\w+\W+){0,3}"
        r"(in|by|at)\s+(module\s+)?'?emb'?\b"
    ),
]


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(8, 4)

    def forward(self, x):
        return self.emb(x)


def step(watch):
    torch.manual_seed(0)
    model = Embed()
    x = torch.randn(6, 8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        e = model(x)
        dist = ((e[:, None, :] - e[None, :, :]) ** 2).sum(-1).sqrt()
        loss = dist.mean()
        loss.backward()
    return Run(w=w, model=model, loss=loss.detach())


def truth(run):
    assert bool(torch.isfinite(run.loss))
    g = run.model.emb.weight.grad
    assert g is not None and bool(torch.isnan(g).any())
