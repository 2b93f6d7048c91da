"""Face-recognition training with a margin head kept as a separate module: ``model`` gives the
embedding, ``metric_fc`` (an AddMargin / CosFace layer holding its own ``nn.Parameter``) turns
it into logits.  The optimizer is built from ``model.parameters()`` alone, on the belief that an
``nn.Parameter`` registers itself for updates: ``metric_fc.weight`` gets a gradient every step
and never moves.  The watched model is ``model``.

Source: https://github.com/ronghuaiyang/arcface-pytorch/issues/20 ("I thought using nn.Param()
would register the newly added parameter and there after weights should get autoupdated";
answer: "the optimizer need to know which parameters shoud be update").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/ronghuaiyang/arcface-pytorch/issues/20"
DESCRIPTION = "margin head metric_fc outside the model and the optimizer: its weight never moves"
ASK = []
MUST = [
    [
        r"metric_fc",
        r"outside (the|this|your) (watched )?model",
        r"not (a |one of the )?parameters? of the (watched )?model",
        r"requires? grad[^\n]{0,60}not[^\n]{0,30}parameter",
    ],
    [
        r"not (held|in (the|any) optimizer)",
        r"no optimizer",
        r"(does not|doesn't|did not) hold",
        r"never (moved|updated|stepped)",
        r"did not (move|change)",
        r"not (updated|optimi[sz]ed|trained|stepped)",
    ],
]
MUST_NOT = [FALSE_OK]


class AddMarginProduct(nn.Module):
    """s * (cos(theta) - m) for the target class, s * cos(theta) for the others."""

    def __init__(self, in_features, out_features, s=30.0, m=0.4):
        super().__init__()
        self.s, self.m = s, m
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x, label):
        cosine = F.linear(F.normalize(x), F.normalize(self.weight))
        one_hot = F.one_hot(label, cosine.shape[1]).to(cosine.dtype)
        return self.s * (cosine - self.m * one_hot)


def step(watch, both=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 16))
    metric_fc = AddMarginProduct(16, 8)
    if both:
        opt = torch.optim.Adam(
            [{"params": model.parameters()}, {"params": metric_fc.parameters()}], lr=1e-3
        )
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x, label = torch.randn(16, 20, generator=g), torch.randint(0, 8, (16,), generator=g)
    before_fc = metric_fc.weight.detach().clone()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        feature = model(x)
        output = metric_fc(feature, label)
        loss = F.cross_entropy(output, label)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, metric_fc=metric_fc, opt=opt, before=before, before_fc=before_fc)


def held(opt):
    return {id(p) for g in opt.param_groups for p in g["params"]}


def truth(run):
    fc = run.metric_fc.weight
    assert fc.grad is not None and bool(fc.grad.abs().sum() > 0)
    assert id(fc) not in held(run.opt)
    assert torch.equal(fc.detach(), run.before_fc)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert not torch.equal(p.detach(), b)
