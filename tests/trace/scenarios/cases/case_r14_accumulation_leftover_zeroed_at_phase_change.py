"""The training loop of pytorch-i3d accumulates gradients over ``num_steps_per_update = 4``
micro-batches (each loss divided by 4, ``optimizer.step()`` and ``zero_grad()`` when the count
reaches 4) and zeroes the gradients at the start of each phase.  An epoch of 6 micro-batches steps
once, after the 4th; the 5th and 6th back-propagate into ``.grad`` and the validation phase's
``optimizer.zero_grad()`` then discards them: a third of every epoch's training batches never
reach the weights.  The watched block is one training epoch and the switch to the validation
phase: 6 backward passes, one step; the weights end exactly where the first step left them.
Every gradient is finite and nonzero; nothing raises.

Source: https://github.com/piergiaj/pytorch-i3d/issues/57 ("when ``num_steps_per_update`` is not
a multiple of ``len(dataloader)``, the leftover accumulated training gradients are zeroed before
calling ``optimizer.step()`` when phase change from training to validation.  As a result,
leftover forward training pass losses are not used").  Adapted: a small tanh MLP classifier on
random micro-batches of 8 with SGD instead of I3D.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/piergiaj/pytorch-i3d/issues/57"
DESCRIPTION = "accumulate 4, epoch of 6 micro-batches: last 2 zeroed at the phase switch, unused"
ASK = []
MUST = [
    [
        r"zero_grad",
        r"(zeroed|cleared|discarded|reset|dropped|thrown away|lost)",
        r"never (applied|used|stepped)",
        r"not (applied|used|stepped)",
        r"no (optimizer )?step",
        r"without (an? )?(optimizer )?step",
    ],
    [
        r"\b2 (backward|pass|micro)",
        r"\btwo (backward|pass|micro)",
        r"last (2|two)",
        r"left ?over",
        r"remain\w*",
        r"(5th|6th|fifth|sixth)",
        r"after the (last )?step",
        r"accumulat\w*",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"not in (the |any )?optimizer",
]
LR, PER_UPDATE, N_BATCHES = 0.1, 4, 6


def make_model():
    return nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Linear(24, 3))


def step(watch, flush_leftover: bool = False):
    torch.manual_seed(0)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    g = torch.Generator().manual_seed(1)
    batches = [
        (torch.randn(8, 10, generator=g), torch.randint(0, 3, (8,), generator=g))
        for _ in range(N_BATCHES)
    ]
    # what one step on the first 4 micro-batches gives, computed apart for the truth
    once = copy.deepcopy(model)
    once_opt = torch.optim.SGD(once.parameters(), lr=LR)
    for x, y in batches[:PER_UPDATE]:
        (F.cross_entropy(once(x), y) / PER_UPDATE).backward()
    once_opt.step()
    leftover = copy.deepcopy(once)
    for x, y in batches[PER_UPDATE:]:
        (F.cross_entropy(leftover(x), y) / PER_UPDATE).backward()
    leftover_grads = [p.grad.detach().clone() for p in leftover.parameters()]
    passes = 0
    with watch(model) as w:
        model.train()
        opt.zero_grad()  # start of the training phase
        num_iter = 0
        for x, y in batches:
            num_iter += 1
            loss = F.cross_entropy(model(x), y) / PER_UPDATE
            loss.backward()
            passes += 1
            if num_iter == PER_UPDATE:
                num_iter = 0
                opt.step()
                opt.zero_grad()
        if flush_leftover and num_iter > 0:  # step on the micro-batches left over
            opt.step()
            opt.zero_grad()
        model.eval()
        opt.zero_grad()  # start of the validation phase
    params = [p.detach().clone() for p in model.parameters()]
    once_params = [p.detach().clone() for p in once.parameters()]
    return Run(
        w=w, params=params, once_params=once_params, leftover_grads=leftover_grads, passes=passes
    )


def truth(run):
    assert run.passes == N_BATCHES
    for gr in run.leftover_grads:
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
    for p, q in zip(run.params, run.once_params, strict=True):
        assert torch.equal(p, q)  # the last 2 micro-batches changed nothing
