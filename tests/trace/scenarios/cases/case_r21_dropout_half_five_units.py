"""A healthy step its writer worried about: ``Dropout(p=0.5)`` on a hidden layer of only 5 units.
Each example loses all 5 units with probability 0.5^5 = 1/32, and in this batch of 128 some
examples do: for them the output is the output bias alone and they send no gradient below the
dropout.  Nothing needs handling: the other examples keep each unit about half of the time, every
parameter gets a finite, nonzero gradient and moves.

Source: https://community.deeplearning.ai/t/question-about-the-dropout-process/277132 ("say
keep_prob = 0.5, for a hidden layer with 5 hidden units, the chance that all the hidden units are
(0.5)^5 = 0.03125"; "Is the whole hidden layer shutdown then? How does the algorithm deal with
this?").  Adapted as its bug: ``Linear(10, 5)``, ``Tanh``, ``Dropout(p=0.5)``, ``Linear(5, 3)`` on
128 examples, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://community.deeplearning.ai/t/question-about-the-dropout-process/277132"
DESCRIPTION = "healthy: Dropout(0.5) on 5 hidden units, a few examples lose every unit"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch, p=0.5):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 5), nn.Tanh(), nn.Dropout(p=p), nn.Linear(5, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    seen = []
    model[2].register_forward_hook(lambda m, i, o: seen.append((i[0].detach(), o.detach())))
    before = {n: q.detach().clone() for n, q in model.named_parameters()}
    torch.manual_seed(2)  # the dropout mask
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = {n: q.grad.detach().clone() for n, q in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, p=p, before=before, grads=grads, seen=seen)


def truth(run):
    assert run.p == 0.5
    hidden, dropped = run.seen[0]
    assert bool((hidden != 0).all())
    all_dropped = (dropped == 0).all(dim=1)
    assert 1 <= int(all_dropped.sum()) < 16  # some examples lost every unit, most did not
    params = dict(run.model.named_parameters())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.before[n]), n
