"""Control: model.train() then model[1].eval() on a BatchNorm1d "to freeze it".  In eval mode
the layer normalises with its running statistics and no longer updates them, but its affine
weight and bias still get gradients and the optimizer still moves them: the step does what
eval() means, which is not freezing.

Source: https://discuss.pytorch.org/t/the-behavior-of-the-bn-layer-in-train-and-eval-mode/152962
("setting eval mode on the BN layer does not prevent the BN layer parameters from being
updated. Just different behavior!"; the answer: ".train() and .eval() mode does not change the
behavior of the trainable parameters, just how the input activation will be normalized").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/the-behavior-of-the-bn-layer-in-train-and-eval-mode/152962"
DESCRIPTION = "control: BN in eval() inside a training model: stats fixed, affine still trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"1\.(weight|bias)[^\n]*\bfrozen\b",
    r"\bfrozen\b[^\n]*1\.(weight|bias)",
    r"no gradient",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
    model.train()
    model[1].eval()
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 8, generator=g), torch.randint(0, 2, (32,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    stats = (model[1].running_mean.clone(), model[1].running_var.clone())
    affine = (model[1].weight.detach().clone(), model[1].bias.detach().clone())
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, stats=stats, affine=affine)


def truth(run):
    bn = run.model[1]
    assert not bn.training
    assert torch.equal(bn.running_mean, run.stats[0]) and torch.equal(bn.running_var, run.stats[1])
    assert bn.weight.grad is not None and bool(bn.weight.grad.abs().sum() > 0)
    assert not torch.equal(bn.weight.detach(), run.affine[0])  # the affine part moved
    assert not torch.equal(bn.bias.detach(), run.affine[1])
