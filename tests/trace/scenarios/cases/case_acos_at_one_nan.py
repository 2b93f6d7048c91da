"""acos of a cosine that is exactly 1: the clamp to [-1, 1] lets the infinite derivative of acos
through and the gradient of the layer becomes NaN; the loss is finite.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (a copy of the PyTorch forum
thread "NaN gradient for torch.cos() / torch.acos()", 2017-11-07: "gradients turn to NaN after
several iterations"; answer: the derivative of acos is -1/sqrt(1-x^2)).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum thread 'NaN gradient for torch.cos() / torch.acos()')"
DESCRIPTION = "acos(clamp(cos=1)) in the loss: proj's gradient NaN, made in the loss"
ASK = ["proj.weight"]
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b"],
    [r"\bloss\b", r"acos", r"after the model", r"outside", r"arriv", r"output"],
]
MUST_NOT = [
    FALSE_OK,
    (
        r"(made|produced|created|introduced|originat\w*|starts?|first)\W+(\w+\W+){0,3}"
        r"(in|by|at)\s+(module\s+)?'?proj'?\b"
    ),
]


class Proj(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 5)

    def forward(self, x):
        return self.proj(x)


def step(watch):
    torch.manual_seed(0)
    model = Proj()
    x = torch.randn(16, 6)
    with watch(model) as w:
        h = model(x)
        s = (h * h).sum(1)
        cos = (s / s).clamp(-1.0, 1.0)  # exactly 1: the angle between h and itself
        loss = torch.acos(cos).mean() + 0.1 * h.pow(2).mean()
        loss.backward()
    return Run(w=w, model=model, loss=loss.detach(), cos=cos.detach())


def truth(run):
    assert bool((run.cos == 1).all()) and bool(torch.isfinite(run.loss))
    g = run.model.proj.weight.grad
    assert g is not None and not bool(torch.isfinite(g).all())
