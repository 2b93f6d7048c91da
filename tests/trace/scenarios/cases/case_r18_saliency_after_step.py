"""Control: a saliency map logged after each optimizer step. The helper follows the book's
``vanilla_saliency``: ``model.eval()``, a detached copy of the images with
``requires_grad_(True)``, ``model.zero_grad(set_to_none=True)``, the sum of the predicted classes'
scores back-propagated, ``x.grad.abs()`` reduced over channels. It runs after
``optimizer.step()``, so the step used the training loss's gradient; the score's gradient left in
``.grad`` is cleared by the next iteration's ``optimizer.zero_grad()``, and each iteration starts
with ``model.train()`` (the MLP has neither dropout nor batch norm). Two iterations end where two
plain SGD steps on the training loss end. Every gradient is finite and nonzero.

Source: https://brain.tamnd.com/write/book/dl-pytorch/09/30/3/ ("def vanilla_saliency(model, x,
target_class=None): model.eval(); x = x.clone().detach().requires_grad_(True)";
"model.zero_grad(set_to_none=True); scores.backward(); saliency = x.grad.abs()"). Adapted: the
helper called after each step of a two-iteration loop, on the batch's first four images; a tanh MLP
on 8x8 one-channel images, three classes, SGD without momentum.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://brain.tamnd.com/write/book/dl-pytorch/09/30/3/"
DESCRIPTION = "control: saliency map computed after optimizer.step(): the steps use the loss"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"step[^\n]{0,40}(used|took|applied)[^\n]{0,40}(saliency|score)",
]
LR = 0.1


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 3))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 1, 8, 8, generator=g)
    return x, (x[:, 0, :4].sum((1, 2)) > 0).long() + (x[:, 0, 4:].sum((1, 2)) > 0).long()


def vanilla_saliency(model, x, target_class=None):
    model.eval()
    x = x.clone().detach().requires_grad_(True)
    logits = model(x)
    if target_class is None:
        target_class = logits.argmax(dim=1)
    scores = logits.gather(1, target_class.view(-1, 1)).sum()
    model.zero_grad(set_to_none=True)
    scores.backward()
    saliency = x.grad.abs()
    saliency = saliency.max(dim=1).values
    return saliency.detach()


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    x, y = data()
    maps = []
    with watch(model) as w:
        for _ in range(2):
            model.train()
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            maps.append(vanilla_saliency(model, x[:4]))  # logged after the step
    return Run(w=w, model=model, x=x, y=y, maps=maps)


def truth(run):
    plain = make_model()
    optimizer = torch.optim.SGD(plain.parameters(), lr=LR)
    for _ in range(2):
        optimizer.zero_grad()
        F.cross_entropy(plain(run.x), run.y).backward()
        optimizer.step()
    for p, q in zip(run.model.parameters(), plain.parameters(), strict=True):
        assert torch.allclose(p, q, atol=1e-6)  # two steps on the training loss
        assert p.grad is not None  # the last saliency backward's gradient, cleared next iteration
    assert len(run.maps) == 2 and run.maps[0].shape == (4, 8, 8)
    assert bool((run.maps[1] > 0).any())
