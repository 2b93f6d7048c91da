"""Control: the same margin head, with the optimizer built as the repository does, one group for
``model.parameters()`` and one for ``metric_fc.parameters()``: the head's weight lives outside
the watched model, gets its gradient and moves with the rest.

Source: https://github.com/ronghuaiyang/arcface-pytorch/issues/20 ("torch.optim.Adam([{'params':
model.parameters()}, {'params': metric_fc.parameters()}], lr=opt.lr,
weight_decay=opt.weight_decay)"; "the optimizer need to know which parameters shoud be update").
"""

import torch
from case_r4_metric_fc_not_in_optimizer import held
from case_r4_metric_fc_not_in_optimizer import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/ronghuaiyang/arcface-pytorch/issues/20"
DESCRIPTION = "control: metric_fc in its own Adam group: the head outside the model trains too"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"metric_fc",
        r"outside (the|this|your) (watched )?model",
        r"not (a |one of the )?parameters? of the (watched )?model",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"not (held|in (the|any) optimizer)",
    r"no optimizer",
    r"(does not|doesn't|did not) hold",
    r"never (moved|updated|stepped)",
    r"did(n't| not) (move|change)",
]


def step(watch):
    return _step(watch, both=True)


def truth(run):
    fc = run.metric_fc.weight
    assert fc.grad is not None and bool(fc.grad.abs().sum() > 0)
    assert id(fc) in held(run.opt)
    assert not torch.equal(fc.detach(), run.before_fc)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert not torch.equal(p.detach(), b)
