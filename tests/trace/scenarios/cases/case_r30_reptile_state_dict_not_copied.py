"""Reptile on sine-wave regression with the initialisation saved as ``weights_before =
model.state_dict()``, without a deep copy. ``state_dict()`` returns the parameters' own storage
(detached views), so the inner loop's in-place SGD updates change ``weights_before`` as well: after
the inner loop ``weights_after - weights_before`` is exactly zero, the outer update ``weights_before
+ (weights_after - weights_before) * outer_step`` writes back the adapted weights, and the meta-step
is the task's fine-tuning itself (an outer step size of 1, not 0.1).  Every gradient is finite and
nonzero and every parameter moves; nothing raises.

Source: https://deep-paper.org/en/paper/1803.02999 ("In their paper 'On First-Order Meta-Learning
Algorithms' (Nichol, Achiam, and Schulman, OpenAI, 2018), the authors explore a simpler and more
efficient alternative: first-order methods that rely only on standard gradients. They analyze a
streamlined variant called First-Order MAML (FOMAML) and introduce a new algorithm named Reptile").
Adapted: the state dict not deep-copied (the page gives the method); one meta-iteration on a sine
task (amplitude 3, phase 1), 3 inner steps of SGD at 0.02 on 10 points in ``[-5, 5]``, an MLP ``1,
64, 64, 1`` with ``Tanh``, outer step size 0.1, the update written with ``load_state_dict`` as in
OpenAI's sine-wave example.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://deep-paper.org/en/paper/1803.02999"
DESCRIPTION = (
    "Reptile weights_before = model.state_dict() (no deepcopy): aliases params, no meta-step"
)
ASK = []
MUST = [
    [
        r"deep ?copy|\.clone\(\)|not (a )?cop(y|ied)|alias\w*|same (storage|tensors?|memory)",
        r"references?|views?\b|shar(e|es|ed|ing) (the )?(storage|memory)",
    ],
    [
        r"state_dict",
        r"reptile|meta[- ]?(step|update)|outer (step|update)|interpolat\w*",
        r"weights_before|weights_after|difference[^\n]{0,40}zero",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
INNER_STEPS, INNER_LR, OUTER_STEP = 3, 0.02, 0.1


def task():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(10, 1, generator=g) * 10 - 5
    return x, 3 * torch.sin(x + 1)


def step(watch, deepcopy=False):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(1, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1)
    )
    inner = torch.optim.SGD(model.parameters(), lr=INNER_LR)
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}
    x, y = task()
    grads = []
    with watch(model) as w:
        weights_before = copy.deepcopy(model.state_dict()) if deepcopy else model.state_dict()
        for _ in range(INNER_STEPS):
            inner.zero_grad()
            F.mse_loss(model(x), y).backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            inner.step()
        weights_after = model.state_dict()
        adapted = {n: t.detach().clone() for n, t in weights_after.items()}
        model.load_state_dict(
            {
                n: weights_before[n] + (weights_after[n] - weights_before[n]) * OUTER_STEP
                for n in weights_before
            }
        )
    return Run(w=w, model=model, initial=initial, adapted=adapted, grads=grads)


def truth(run):
    for g in run.grads:
        for n, t in g.items():
            assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert not torch.equal(run.adapted[n], run.initial[n]), n
        assert torch.equal(p.detach(), run.adapted[n]), n  # the full inner-loop result
