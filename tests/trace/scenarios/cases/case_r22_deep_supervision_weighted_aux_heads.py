"""A healthy recipe: deep supervision, auxiliary classifier heads on two intermediate layers of a
three-block network, trained with the main loss plus ``0.3`` times each auxiliary loss.  The
auxiliary heads are used only in training (they would be dropped at inference); each gets the
gradient of its own weighted loss, and the early blocks get the sum of the main and auxiliary
signals.  Every parameter gets a finite, nonzero gradient and moves.

Source: https://cheesebytes.com/cave/deep-supervision ("With deep supervision, attach auxiliary
heads f_i(.) to a set of layers S and minimize: L_deep-sup = sum_{i in S} alpha_i l(f_i(h_i), y),
where alpha_i >= 0 weight each auxiliary loss"; "During inference, you typically discard the
auxiliary heads and use only f(h_L)"; "Mitigates vanishing gradients by injecting local error
signals").  Adapted: three ``Linear(., 16)``, ``Tanh`` blocks on 10 features, auxiliary
``Linear(16, 3)`` heads after the first two (in an ``nn.ModuleList``), a main head after the
third, ``alpha = 0.3`` for both auxiliary losses and 1 for the main one, SGD at 0.1, 128 examples.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://cheesebytes.com/cave/deep-supervision"
DESCRIPTION = "healthy: deep supervision, two auxiliary heads weighted 0.3 plus the main head"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
    r"\bunused\b",
]
ALPHA = 0.3


class DeeplySupervised(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(
            [nn.Sequential(nn.Linear(n, 16), nn.Tanh()) for n in (10, 16, 16)]
        )
        self.aux_heads = nn.ModuleList([nn.Linear(16, 3) for _ in range(2)])
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        aux = []
        h = x
        for i, block in enumerate(self.blocks):
            h = block(h)
            if i < len(self.aux_heads):
                aux.append(self.aux_heads[i](h))
        return self.head(h), aux


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = DeeplySupervised()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        out, aux = model(x)
        loss = F.cross_entropy(out, y) + sum(ALPHA * F.cross_entropy(a, y) for a in aux)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    params = dict(run.model.named_parameters())
    assert len(run.grads) == len(params) == 12
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.before[n]), n
