"""``torch.optim.Adam(..., weight_decay=0.1)`` used as if it were decoupled weight decay.  Adam's
``weight_decay`` adds ``0.1 * w`` to the gradient before the moment estimates: the decay goes
through the adaptive normalisation like the gradient does.  On the first step every entry then
moves by exactly the learning rate, ``-lr * sign(g + 0.1 * w)``, whatever its size: no weight
shrinks in proportion to itself (AdamW would take ``lr * 0.1 * w`` off each one in addition), and
for most entries the step is the very step Adam takes without any decay.  Every gradient is finite
and nonzero; nothing raises.

Source: https://androidkt.com/pytorch-adamw-and-adam-with-weight-decay-optimizers/ ("Adam limits the
potential benefit of weight decay regularization because the weights do not decay
multiplicatively"; "L2 regularization and weight decay regularization are equivalent for standard
stochastic gradient descent when rescaled by the learning rate, this is not the case for Adam";
"AdamW is a simple modification to recover the original formulation of weight decay
regularization by decoupling the weight decay from the optimization steps").  Adapted: a tanh MLP
classifier, lr 1e-2, two watched iterations; the first step is compared with Adam without decay.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://androidkt.com/pytorch-adamw-and-adam-with-weight-decay-optimizers/"
DESCRIPTION = "Adam(weight_decay=0.1) taken for decoupled decay: L2 term normalised away"
ASK = []
MUST = [
    [
        r"AdamW",
        r"decoupl\w*",
        r"\bL2\b",
        r"weight.?decay[^\n]{0,80}(adaptive|normali[sz]\w*|rescaled|divided|second.moment|sqrt)",
        r"(coupled|added) (to|into|through) (the )?(gradient|moments?|adaptive)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (units?|relu|neurons?)", r"no_grad"]
LR, WD = 1e-2, 0.1


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))


def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(64, 10, generator=g), torch.randint(0, 3, (64,), generator=g)


def first_update(optimizer_cls, weight_decay):
    """Parameters before and after one step of ``optimizer_cls`` on a fresh model."""
    model = make_model()
    opt = optimizer_cls(model.parameters(), lr=LR, weight_decay=weight_decay)
    x, y = batch()
    before = [p.detach().clone() for p in model.parameters()]
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
    return [p.detach() - b for p, b in zip(model.parameters(), before, strict=True)]


def run_with(watch, optimizer_cls):
    model = make_model()
    optimizer = optimizer_cls(model.parameters(), lr=LR, weight_decay=WD)
    x, y = batch()
    weights = [p.detach().clone() for p in model.parameters()]
    updates, grads = [], []
    with watch(model) as w:
        for _ in range(2):
            before = [p.detach().clone() for p in model.parameters()]
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            optimizer.step()
            updates.append(
                [p.detach() - b for p, b in zip(model.parameters(), before, strict=True)]
            )
    plain = first_update(torch.optim.Adam, 0.0)
    return Run(w=w, weights=weights, updates=updates, grads=grads, plain=plain)


def step(watch):
    return run_with(watch, torch.optim.Adam)


def truth(run):
    for gs in run.grads:
        for g in gs:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    same = total = 0
    for upd, plain, w, g in zip(run.updates[0], run.plain, run.weights, run.grads[0], strict=True):
        big = (g + WD * w).abs() > 1e-5
        # every entry moves by the learning rate, whatever its size: no multiplicative decay
        assert torch.allclose(upd[big].abs(), torch.full_like(upd[big], LR), rtol=1e-3)
        same += int(torch.isclose(upd, plain, rtol=1e-4, atol=1e-7).sum())
        total += upd.numel()
    assert same > 0.5 * total  # for most entries the very step Adam takes without decay
