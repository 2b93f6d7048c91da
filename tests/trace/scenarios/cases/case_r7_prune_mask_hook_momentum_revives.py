"""Pruning by hand after some training: the smallest half of the first layer's weights are set to
zero and a hook masks their gradient (``grad * mask``), as the repository does, but the SGD
momentum buffer built by the earlier steps is not masked.  In the next step the pruned entries
get an exactly-zero gradient and the optimizer still moves them: the pruned weights come back.

Source: https://github.com/he-y/filter-pruning-geometric-median/issues/47 ("Weights are revived
after pruning due to the momentum."; "this code only masks the gradient, but not momentum. So
masked weights revived after pruning"; also ruihangdu/PyTorch-Deep-Compression#2, "Momentum will
change the pruned weights").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/he-y/filter-pruning-geometric-median/issues/47"
DESCRIPTION = "grad masked by a hook after pruning, SGD momentum not: pruned weights move again"
ASK = ["0.weight"]
MUST = [
    [r"momentum", r"momentum_buffer"],
    [r"hook", r"mask", r"prun", r"zero(ed)? (gradient )?(entries|elements)"],
]
MUST_NOT = [FALSE_OK]


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(32, 8, generator=g), torch.randn(32, 1, generator=g)) for _ in range(3)]
    return model, batches


def step(watch):
    model, batches = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for x, y in batches[:2]:  # ordinary training before pruning: momentum builds up
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    weight = model[0].weight
    with torch.no_grad():  # prune the smallest half of the first layer, by hand
        threshold = weight.abs().flatten().kthvalue(weight.numel() // 2).values
        mask = (weight.abs() > threshold).float()
        weight.mul_(mask)
    weight.register_hook(lambda grad: grad * mask)  # the repository's gradient mask
    x, y = batches[2]
    with watch(model) as w:
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        grad = weight.grad.clone()
        opt.step()
    return Run(w=w, model=model, mask=mask, grad=grad)


def truth(run):
    pruned = run.mask == 0
    assert int(pruned.sum()) == 64
    assert bool((run.grad[pruned] == 0).all())  # the hook zeroed the pruned entries' gradient
    assert bool((run.grad[~pruned] != 0).any())
    revived = run.model[0].weight.detach()[pruned] != 0
    assert bool(revived.all())  # ... and momentum moved every pruned weight off zero
