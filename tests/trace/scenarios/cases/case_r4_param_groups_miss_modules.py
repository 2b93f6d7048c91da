"""Two parameter groups built from ids: a slow group for the backbone ``base`` and a fast group
for "the new parameters" -- every parameter whose id is not in ``base_param_ids``.  But
``base_param_ids`` also collects ``feat`` and ``feat_bn``, which are in neither group: they get
gradients every step and the optimizer never moves them.

Source: https://github.com/zhunzhong07/HHL/issues/8 ("model.module.triplet.parameters(),
model.module.feat.parameters(), model.module.feat_bn.parameters() are not included in
param_groups, that means during the train process, the three parameters don't update?").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/zhunzhong07/HHL/issues/8"
DESCRIPTION = "param_groups from ids skip feat and feat_bn: they get .grad, never move"
ASK = ["feat.weight"]
MUST = [
    [r"optimizer"],
    [
        r"not (held|in (the|any) optimizer)",
        r"no optimizer",
        r"(does not|doesn't|did not) hold",
        r"holds? none",
        r"never (moved|updated|stepped)",
        r"did not (move|change)",
        r"not (updated|optimi[sz]ed|stepped)",
    ],
]
MUST_NOT = [FALSE_OK]


class ReID(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Sequential(nn.Linear(20, 32), nn.ReLU())
        self.feat = nn.Linear(32, 16)
        self.feat_bn = nn.BatchNorm1d(16)
        self.classifier = nn.Linear(16, 6)

    def forward(self, x):
        return self.classifier(F.relu(self.feat_bn(self.feat(self.base(x)))))


def param_groups(model, fixed=False):
    base_param_ids = (
        set(map(id, model.base.parameters()))
        | set(map(id, model.feat.parameters()))
        | set(map(id, model.feat_bn.parameters()))
    )
    if fixed:
        base_param_ids = set(map(id, model.base.parameters()))
    new_params = [p for p in model.parameters() if id(p) not in base_param_ids]
    return [
        {"params": model.base.parameters(), "lr_mult": 0.1},
        {"params": new_params, "lr_mult": 1.0},
    ]


def step(watch, fixed=False):
    torch.manual_seed(0)
    model = ReID()
    opt = torch.optim.SGD(
        param_groups(model, fixed), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True
    )
    for group in opt.param_groups:
        group["lr"] = 0.1 * group["lr_mult"]
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 20, generator=g), torch.randint(0, 6, (16,), generator=g)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return Run(w=w, model=model, opt=opt, before=before)


def held(opt):
    return {id(p) for g in opt.param_groups for p in g["params"]}


def truth(run):
    ids = held(run.opt)
    for n, p in run.model.named_parameters():
        assert p.grad is not None and bool(p.grad.abs().sum() > 0), n
        moved = not torch.equal(p.detach(), run.before[n])
        if n.startswith(("feat.", "feat_bn.")):
            assert id(p) not in ids and not moved, n
        else:
            assert id(p) in ids and moved, n
