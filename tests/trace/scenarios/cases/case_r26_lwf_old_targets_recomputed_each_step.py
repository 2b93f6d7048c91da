"""Learning without Forgetting with the old task's targets recomputed at every step from the
current network, ``y_old = model.old_head(model.body(x)).detach()``, instead of being recorded
once from the original network before training on the new task.  The distillation term then
compares the old head's softened outputs with themselves: its gradient with respect to the logits
is ``softmax(z / T) - softmax(z / T)``, zero up to rounding, so nothing holds the shared body near
its original responses and the old head gets no (or rounding-level) gradient.  The new task's
loss alone trains the body; every gradient is finite; nothing raises.  The watched steps are the
11th and 12th joint steps (at the first, recorded targets and current outputs still agree).

Source: https://www.sciencestack.ai/paper/1606.09282 ("Learning without Forgetting (LwF), a
distillation-based objective that preserves old-task outputs on new-task inputs while learning
new-task predictions. The method combines a new-task loss with a response-preserving distillation
term and a warm-up step").  Adapted: a shared ``Linear(10, 32), Tanh`` body with an old 4-class
head trained 30 SGD steps on the old task, a new 3-class head, 64 new-task examples, the
distillation as cross-entropy of ``z / T`` against ``softmax(y_old / T)`` with ``T = 2`` and
weight 1, SGD at 0.1; no warm-up of the new head.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.sciencestack.ai/paper/1606.09282"
DESCRIPTION = "LwF old-task targets recomputed each step from the current model: distillation ~0"
ASK = ["old_head.weight"]
MUST = [
    [
        (
            r"(target|y_old|old[- ]task output|soft label|teacher)s?[^\n]{0,80}"
            r"(current|same|itself|recomput|each step|every step|moving|own)"
        ),
        r"(record|stor|sav|comput|cach)\w*[^\n]{0,40}(once|before training|original)",
        r"(distill\w*|kd)[^\n]{0,80}(zero|nothing|no effect|constant|itself|vanish|tiny|0\b)",
        r"compar\w* [^\n]{0,40}(with|to) (itself|themselves)",
    ]
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
T, WARM = 2.0, 10


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.Tanh())
        self.old_head = nn.Linear(32, 4)
        self.new_head = nn.Linear(32, 3)


def tasks():
    g = torch.Generator().manual_seed(1)
    x_old = torch.randn(128, 10, generator=g)
    y_old = (x_old @ torch.randn(10, 4, generator=g)).argmax(1)
    x_new = torch.randn(64, 10, generator=g) + 0.5
    y_new = (x_new @ torch.randn(10, 3, generator=g)).argmax(1)
    return x_old, y_old, x_new, y_new


def distill(model, x, recorded):
    return F.cross_entropy(model.old_head(model.body(x)) / T, F.softmax(recorded / T, dim=1))


def step(watch, record_once=False):
    torch.manual_seed(0)
    model = Net()
    x_old, y_old, x_new, y_new = tasks()
    old_opt = torch.optim.SGD([*model.body.parameters(), *model.old_head.parameters()], lr=0.1)
    for _ in range(30):  # the old task, before the new one arrives
        old_opt.zero_grad()
        F.cross_entropy(model.old_head(model.body(x_old)), y_old).backward()
        old_opt.step()
    with torch.no_grad():
        original = model.old_head(model.body(x_new))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def joint():
        if record_once:
            recorded = original
        else:
            with torch.no_grad():
                recorded = model.old_head(model.body(x_new))
        ce = F.cross_entropy(model.new_head(model.body(x_new)), y_new)
        return ce, recorded

    for _ in range(WARM):  # the first joint steps, not watched
        optimizer.zero_grad()
        ce, recorded = joint()
        (ce + distill(model, x_new, recorded)).backward()
        optimizer.step()
    iterations = []
    with watch(model) as w:
        for _ in range(2):
            at = copy.deepcopy(model)
            optimizer.zero_grad()
            ce, recorded = joint()
            (ce + distill(model, x_new, recorded)).backward()
            grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
            iterations.append((at, recorded, grads))
            optimizer.step()
    # the distillation term's own gradient on the shared body, at each watched step
    shares = []
    for at, recorded, _ in iterations:
        body = list(at.body.parameters())
        d = torch.autograd.grad(distill(at, x_new, recorded), body)
        c = torch.autograd.grad(F.cross_entropy(at.new_head(at.body(x_new)), y_new), body)
        shares.append(
            float(
                torch.cat([g.flatten() for g in d]).norm()
                / torch.cat([g.flatten() for g in c]).norm()
            )
        )
    return Run(w=w, iterations=iterations, shares=shares)


def old_head_ratio(grads):
    return float(grads["old_head.weight"].norm() / grads["body.0.weight"].norm())


def truth(run):
    assert all(s < 1e-5 for s in run.shares)  # the distillation pulls the body by nothing
    for _, _, grads in run.iterations:
        assert old_head_ratio(grads) < 1e-5
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()), n
        for n in ("body.0.weight", "body.0.bias", "new_head.weight", "new_head.bias"):
            assert bool(grads[n].abs().sum() > 0), n
