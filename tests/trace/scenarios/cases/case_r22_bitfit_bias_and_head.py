"""The control of ``bitfit_head_weight_frozen``: BitFit as the paper has it, the pretrained body's
weight matrices frozen and every bias plus the new classification head trained (``"bias" in name
or name.startswith("head.")``).  The frozen body weights have no ``.grad`` by design; the biases
and the head get finite, nonzero gradients and move.

Source: https://alphaxiv.org/overview/2106.10199v5 ("BitFit proposes an elegantly simple solution:
freeze all weight matrices and scaling parameters in the pre-trained model, training only the bias
terms and task-specific classification head").  Adapted: the bug's body (``Linear(10, 32)``,
``Tanh``, ``Linear(32, 32)``, ``Tanh``) and ``Linear(32, 3)`` head, SGD at 0.1 over the trainable
parameters, 128 examples.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://alphaxiv.org/overview/2106.10199v5"
DESCRIPTION = "control: BitFit, body weights frozen, biases and the new head trained"
ASK = []
MUST = [[HEALTHY_OK, r"frozen", r"requires_grad", r"bitfit"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"head\.weight[^\n]{0,60}(frozen|requires_grad|no gradient|\bNone\b)",
]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(self.body(x))


def trainable(name):
    return "bias" in name or name.startswith("head.")


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = Classifier()
    for name, p in model.named_parameters():
        p.requires_grad = trainable(name)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        grads = {n: None if p.grad is None else p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    params = dict(run.model.named_parameters())
    for n, p in params.items():
        if trainable(n):
            assert p.requires_grad, n
            assert bool(torch.isfinite(run.grads[n]).all()) and bool(run.grads[n].abs().sum() > 0)
            assert not torch.equal(p.detach(), run.before[n]), n
        else:
            assert run.grads[n] is None and torch.equal(p.detach(), run.before[n]), n
    assert params["head.weight"].requires_grad
