"""Control: fine-tuning only the head of a network whose backbone (Linear + BatchNorm1d + ReLU) is
frozen with requires_grad=False, the model in train mode.  The BatchNorm's running statistics
change (they are buffers, updated by every training-mode forward), which is what the user
noticed; its weight and bias are frozen, get no gradient and do not move; the head trains.

Source: https://discuss.pytorch.org/t/what-does-requires-grad-false-on-batchnorm2d-perform/137904
("Setting their requires_grad attribute to False would freeze these parameters"; "the running
stats will be updated in each forward pass if the module is set to training mode"; "I fine-tuned
... setting only last fully connected layer ... requires_grad=False for these layers ... However
I get different outputs").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/what-does-requires-grad-false-on-batchnorm2d-perform/137904"
DESCRIPTION = "control: frozen Linear+BN backbone in train mode, head trains; BN buffers move"
ASK = []
MUST = [[HEALTHY_OK, r"frozen", r"requires_grad"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"frozen[^\n]{0,60}(moved|still (moved|changed|updated))",
    r"backbone\.[01]\.(weight|bias)[^\n]{0,40}(moved|changed)",
]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


def step(watch):
    torch.manual_seed(0)
    model = Net()
    for p in model.backbone.parameters():
        p.requires_grad = False
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = 2.0 + torch.randn(32, 6), torch.randint(0, 3, (32,))
    frozen = [p.detach().clone() for p in model.backbone.parameters()]
    stats = model.backbone[1].running_mean.clone()
    head = model.head.weight.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, frozen=frozen, stats=stats, head=head)


def truth(run):
    for p, b in zip(run.model.backbone.parameters(), run.frozen, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
    assert not torch.equal(run.model.backbone[1].running_mean, run.stats)  # buffers moved
    assert not torch.equal(run.model.head.weight.detach(), run.head)
