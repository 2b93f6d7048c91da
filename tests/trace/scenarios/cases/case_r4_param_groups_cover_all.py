"""Control: the same two groups with ``base_param_ids`` taken from ``base`` alone (the fix the
issue arrives at): the slow group holds the backbone, the fast one everything else, and every
parameter moves.

Source: https://github.com/zhunzhong07/HHL/issues/8 (the same optimizer, with feat, feat_bn and
the rest in the second group: "I have tried like: param_groups = [{'params':
model.module.base.parameters(), 'lr_mult': 0.1}, ...").
"""

import torch
from case_r4_param_groups_miss_modules import held
from case_r4_param_groups_miss_modules import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/zhunzhong07/HHL/issues/8"
DESCRIPTION = "control: base in the slow group, all the rest in the fast one: every param moves"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"not (held|in (the|any) optimizer)",
    r"no optimizer",
    r"never (moved|updated|stepped)",
    r"held by (two|2|both)",
]


def step(watch):
    return _step(watch, fixed=True)


def truth(run):
    ids = held(run.opt)
    for n, p in run.model.named_parameters():
        assert id(p) in ids, n
        assert p.grad is not None and bool(p.grad.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
