"""Ten sigmoid layers with PyTorch's default initialisation: the gradient reaching the first
layer is many orders of magnitude smaller than at the output.

Source: https://e-learn.cn/qa/q-792360.html ("vanishing gradient problem occurs when we are using
deep neural network with sigmoid").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://e-learn.cn/qa/q-792360.html"
DESCRIPTION = "10 sigmoid layers, default init: gradient at the first layer vanishes"
ASK = []
MUST = [[r"vanish", r"shrink", r"\bsmall", r"decreas"]]
MUST_NOT = [FALSE_OK, r"explod"]


def step(watch):
    torch.manual_seed(0)
    layers = []
    for _ in range(10):
        layers += [nn.Linear(32, 32), nn.Sigmoid()]
    model = nn.Sequential(*layers, nn.Linear(32, 3))
    x, y = torch.randn(64, 32), torch.randint(0, 3, (64,))
    seen = {}
    hooks = [
        model[0].register_forward_hook(lambda m, i, o: seen.update(first=o)),
        model[-1].register_forward_hook(lambda m, i, o: seen.update(last=o)),
    ]
    try:
        with watch(model) as w:
            loss = F.cross_entropy(model(x), y)
            g_first, g_last = torch.autograd.grad(
                loss, [seen["first"], seen["last"]], retain_graph=True
            )
            loss.backward()
    finally:
        for h in hooks:
            h.remove()
    return Run(w=w, model=model, g_first=g_first, g_last=g_last)


def truth(run):
    assert float(run.g_first.norm()) < 1e-3 * float(run.g_last.norm())
