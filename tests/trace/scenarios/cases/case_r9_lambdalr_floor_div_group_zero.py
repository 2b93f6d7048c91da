"""``LambdaLR`` with the documentation's two-group example: ``lambda1 = lambda epoch: epoch // 30``
for the first group and ``lambda2 = lambda epoch: 0.95 ** epoch`` for the second.  The integer
division makes the first group's factor 0 for the first 30 epochs: at epoch 3 the first layer's
learning rate is 0 and the optimizer step leaves it exactly where it was, while the head trains.

Source: https://deploy-preview-344--pytorch-hub-preview.netlify.app/docs/2.3/generated/torch.optim.lr_scheduler.lambdalr
(``# Assuming optimizer has two groups.``, ``lambda1 = lambda epoch: epoch // 30``,
``lambda2 = lambda epoch: 0.95 ** epoch``, ``scheduler = LambdaLR(optimizer, lr_lambda=[lambda1,
lambda2])``).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://deploy-preview-344--pytorch-hub-preview.netlify.app/docs/2.3/generated/torch.optim.lr_scheduler.lambdalr"
DESCRIPTION = "LambdaLR lambda1 = epoch // 30 on group 0: lr 0 for 30 epochs, layer 0 never moves"
ASK = []
MUST = [
    [r"learning rate (is |of |was )?0\b", r"\blr\b[^\n]{0,15}\b0(\.0)?\b", r"lr=0\b"],
    [r"\b0\.(weight|bias)", r"group 0", r"first (param(eter)? )?group"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


def step(watch, both_decay: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(
        [{"params": model[0].parameters()}, {"params": model[2].parameters()}], lr=0.1
    )
    lambda1 = (lambda epoch: 0.95**epoch) if both_decay else (lambda epoch: epoch // 30)
    lambda2 = lambda epoch: 0.95**epoch  # as the documentation writes it
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=[lambda1, lambda2])
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), torch.randn(32, 1, generator=g)

    def train_epoch():
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        scheduler.step()

    for _ in range(3):
        train_epoch()
    lrs = [group["lr"] for group in optimizer.param_groups]
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        train_epoch()
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, lrs=lrs, before=before, after=after)


def truth(run):
    assert run.lrs[0] == 0.0 and run.lrs[1] > 0
    assert torch.equal(run.before["0.weight"], run.after["0.weight"])
    assert not torch.equal(run.before["2.weight"], run.after["2.weight"])
