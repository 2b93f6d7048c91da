"""A learnable threshold used only through a comparison: the loss is the mean norm of the points
whose norm is below ``threshold``, selected with a boolean mask (``X[X.norm(dim=1) <
threshold]``).  The comparison has no gradient, so ``threshold.grad`` stays None and the optimizer
never moves it; the layer that makes the points trains normally.

Source: https://discuss.pytorch.org/t/optimize-masking-parameter/204381/1 ("Here the threshold
can't be updated by an optimizer as its gradient is None"; the reply: "the threshold-masking
operation is not (usefully) differentiable").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://discuss.pytorch.org/t/optimize-masking-parameter/204381/1"
DESCRIPTION = "threshold used only in X[X.norm(1) < threshold]: threshold.grad None, never moves"
ASK = ["threshold"]
MUST = [
    [
        r"threshold[^\n]{0,120}(None|no gradient|never|not reach|did not|didn't)",
        r"(None|no gradient|never|not reach|did not)[^\n]{0,120}threshold",
    ],
    [
        r"comparison",
        r"compar",
        r"\blt\b",
        r"boolean",
        r"\bmask",
        r"non-?differentiable",
        r"not differentiable",
        r"\bindex",
    ],
]
MUST_NOT = [FALSE_OK]


class PointsUnderThreshold(nn.Module):
    def __init__(self, soft: bool = False) -> None:
        super().__init__()
        self.proj = nn.Linear(3, 3)
        self.threshold = nn.Parameter(torch.tensor(1.5))
        self.soft = soft

    def forward(self, x):
        pts = self.proj(x)
        norms = pts.norm(dim=1)
        if self.soft:  # the reply's fix: a sigmoid "soft" mask, a weighted mean
            soft_mask = torch.sigmoid(10.0 * (self.threshold - norms))
            return (soft_mask * norms).sum() / soft_mask.sum()
        return pts[norms < self.threshold].norm(dim=1).mean()


def step(watch, soft: bool = False):
    torch.manual_seed(2024)
    model = PointsUnderThreshold(soft=soft)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(200, 3, generator=g)
    before = model.threshold.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        loss = model(x)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    assert run.model.threshold.grad is None
    assert torch.equal(run.model.threshold.detach(), run.before)
    assert run.model.proj.weight.grad is not None and bool(run.model.proj.weight.grad.any())
