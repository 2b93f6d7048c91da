"""Control: AdamW with two parameter groups built by name, the usual fine-tuning recipe: weight
matrices decayed (0.01), biases and LayerNorm parameters not (0.0).  Every parameter is in
exactly one group, gets a finite, nonzero gradient and moves.

Source: https://skillsauth.com/skills/wenmin-wu/weight-decay-bias-exclusion ("Exclude bias
terms and LayerNorm weights from weight decay"; "no_decay = ['bias', 'LayerNorm.bias',
'LayerNorm.weight']" and two groups with "'weight_decay': weight_decay" and
"'weight_decay': 0.0").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://skillsauth.com/skills/wenmin-wu/weight-decay-bias-exclusion"
DESCRIPTION = "control: AdamW groups, decay on weights, none on biases/LayerNorm: all move"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"not (held|in (the|any) optimizer)",
    r"no optimizer",
    r"held by (two|2|both)",
    r"(updated|stepped|moved) twice",
    r"did(n't| not) (move|change)",
]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(12, 24)
        self.LayerNorm = nn.LayerNorm(24)
        self.classifier = nn.Linear(24, 4)

    def forward(self, x):
        return self.classifier(torch.relu(self.LayerNorm(self.dense(x))))


def groups(model, weight_decay=0.01):
    no_decay = ["bias", "LayerNorm.bias", "LayerNorm.weight"]
    return [
        {
            "params": [
                p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)
            ],
            "weight_decay": weight_decay,
        },
        {
            "params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
            "weight_decay": 0.0,
        },
    ]


def step(watch):
    torch.manual_seed(0)
    model = Block()
    opt = torch.optim.AdamW(groups(model), lr=2e-3)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 12, generator=g), torch.randint(0, 4, (16,), generator=g)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return Run(w=w, model=model, opt=opt, before=before)


def truth(run):
    decayed = {id(p) for p in run.opt.param_groups[0]["params"]}
    plain = {id(p) for p in run.opt.param_groups[1]["params"]}
    assert not decayed & plain
    assert decayed | plain == {id(p) for p in run.model.parameters()}
    names = {n for n, p in run.model.named_parameters() if id(p) in plain}
    assert names == {"dense.bias", "LayerNorm.weight", "LayerNorm.bias", "classifier.bias"}
    for n, p in run.model.named_parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
        assert not torch.equal(p.detach(), run.before[n])
