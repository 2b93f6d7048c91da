"""Control: a head-pose network trained with Adam in three parameter groups -- the first conv and
its BatchNorm at learning rate 0 (kept as they are, on purpose), the rest of the backbone at
the base rate, the three fc heads at 5x.  Every parameter gets a finite, nonzero gradient; the
lr-0 group stays where it was and everything else moves.

Source: https://github.com/natanielruiz/deep-head-pose/issues/113 ("what is the rationale
behind disabling training (setting learning rate to 0) for the first conv and bn of your resnet
backbone, and giving a 5x learning rate to the three fc layers?").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/natanielruiz/deep-head-pose/issues/113"
DESCRIPTION = "control: conv1/bn1 in an Adam group at lr 0 on purpose, fc heads at 5x lr"
ASK = []
MUST = [[HEALTHY_OK, r"(learning rate|\blr\b)[^\n]{0,40}\b0(\.0)?\b", r"conv1", r"bn1"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"not (held|in (the|any) optimizer)",
    r"no optimizer",
    r"round(ed|s|ing)? (away|off)",
    r"(conv1|bn1)[^\n]{0,60}(no gradient|without (a )?gradient|got none)",
]


class Hopenet(nn.Module):
    def __init__(self, bins=6):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.fc_yaw = nn.Linear(8, bins)
        self.fc_pitch = nn.Linear(8, bins)
        self.fc_roll = nn.Linear(8, bins)

    def forward(self, x):
        h = self.layer1(F.relu(self.bn1(self.conv1(x))))
        h = h.mean(dim=(2, 3))
        return self.fc_yaw(h), self.fc_pitch(h), self.fc_roll(h)


def step(watch):
    torch.manual_seed(0)
    model = Hopenet()
    lr = 1e-3
    ignored = list(model.conv1.parameters()) + list(model.bn1.parameters())
    fc = [p for m in (model.fc_yaw, model.fc_pitch, model.fc_roll) for p in m.parameters()]
    opt = torch.optim.Adam(
        [
            {"params": ignored, "lr": 0},
            {"params": model.layer1.parameters(), "lr": lr},
            {"params": fc, "lr": lr * 5},
        ],
        lr=lr,
    )
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 3, 8, 8, generator=g)
    yaw, pitch, roll = (torch.randint(0, 6, (8,), generator=g) for _ in range(3))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        opt.zero_grad()
        out_yaw, out_pitch, out_roll = model(x)
        loss = (
            F.cross_entropy(out_yaw, yaw)
            + F.cross_entropy(out_pitch, pitch)
            + F.cross_entropy(out_roll, roll)
        )
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    for n, p in run.model.named_parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all()), n
        assert bool(p.grad.abs().sum() > 0), n
        moved = not torch.equal(p.detach(), run.before[n])
        assert moved == (not n.startswith(("conv1.", "bn1."))), n
