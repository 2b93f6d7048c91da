"""Control: the same confident model and batch with BCEWithLogitsLoss on the logits (the
sigmoid moved into the loss, as the fix recommends): the loss and every gradient are finite.

Source: https://www.iiask.com/34l57025.html ("使用BCEWithLogitsLoss替代: 这个组合函数内部自动处理
数值稳定性问题").
"""

import torch
from case_r2_manual_bce_log_saturated_nan import Net, _batch, _confident
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch.nn import functional as F

SOURCE = "https://www.iiask.com/34l57025.html"
DESCRIPTION = "control: same confident model, BCEWithLogitsLoss on logits: all finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE]


def step(watch):
    torch.manual_seed(0)
    model = Net()
    _confident(model)
    x, y = _batch()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x)
        loss = F.binary_cross_entropy_with_logits(logits, y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, p=torch.sigmoid(logits.detach()), y=y, loss=loss.detach())


def truth(run):
    assert bool(((run.p == 1.0) & (run.y == 1.0)).any())  # the same saturated examples
    assert bool(torch.isfinite(run.loss))
    for p in run.model.parameters():
        assert bool(torch.isfinite(p.grad).all()) and bool((p.grad != 0).any())
