"""Control: the same two-stage model, with the new head given to the existing optimizer by
``optimizer.add_param_group({"params": model.new_head.parameters(), "lr": 0.001})`` right after it
is attached: the head has its own learning rate, ``fc1`` keeps its own, and every parameter
moves.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.adafactor/torch.optim.Adafactor.add_param_group
("You can use add_param_group() to add the new parameters to your existing optimizer"; "a smaller
learning rate for a pre-trained backbone and a larger learning rate for a newly added
classification head").
"""

import torch
from case_r8_new_head_not_in_optimizer import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://runebook.dev/en/docs/pytorch/generated/torch.optim.adafactor/"
    "torch.optim.Adafactor.add_param_group"
)
DESCRIPTION = "control: new head added with optimizer.add_param_group: every parameter moves"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"not (held|in (the|any) optimizer)",
    r"no optimizer",
    r"replaced after",
    r"never (moved|updated|stepped)",
]


def step(watch):
    return _step(watch, add_group=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(g.abs().sum() > 0), n
        assert run.in_opt[n] and not torch.equal(run.before[n], run.after[n]), n
