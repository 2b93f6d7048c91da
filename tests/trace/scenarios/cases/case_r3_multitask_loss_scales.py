"""Control: a hard-parameter-sharing multi-task step, one backbone and two heads, the loss the
plain sum of a classification cross-entropy (about 1.4) and a depth regression in metres
(an MSE in the thousands).  The regression term dominates the backbone's gradient and the
classification head's gradient is hundreds of times smaller than the depth head's: a
loss-weighting choice, not a broken gradient flow.  Every gradient is finite and nonzero.

Source: https://www.chenk.top/en/transfer-learning/06-multi-task-learning/ ("Transfer Learning
(6): Multi-Task Learning": "The hard parts are ... (1) the loss-scale mismatch between a
cross-entropy term and an L2 depth term, (2) the gradient conflicts").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.chenk.top/en/transfer-learning/06-multi-task-learning/"
DESCRIPTION = "control: CE + MSE in metres on a shared backbone: depth dominates, grads healthy"
ASK = []
MUST = [[HEALTHY_OK, r"dominat"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"vanish",
    r"explod",
    r"\bdead\b",
    r"never called",
    r"no gradient",
]


class TwoTasks(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.cls = nn.Linear(32, 4)
        self.depth = nn.Linear(32, 1)

    def forward(self, x):
        h = self.backbone(x)
        return self.cls(h), self.depth(h)


def step(watch):
    torch.manual_seed(0)
    model = TwoTasks()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 10, generator=g)
    labels = torch.randint(0, 4, (32,), generator=g)
    metres = 50 + 20 * torch.randn(32, 1, generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=1e-5)
    with watch(model) as w:
        opt.zero_grad()
        logits, depth = model(x)
        ce, mse = F.cross_entropy(logits, labels), F.mse_loss(depth, metres)
        loss = ce + mse
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    return Run(w=w, grads=grads, ce=ce.item(), mse=mse.item(), data=(x, labels, metres))


def backbone_grad_of_depth_alone(data):
    x, _, metres = data
    torch.manual_seed(0)
    ref = TwoTasks()
    _, depth = ref(x)
    return torch.autograd.grad(F.mse_loss(depth, metres), ref.backbone[0].weight)[0]


def truth(run):
    assert run.mse > 1000 * run.ce
    for g in run.grads.values():
        assert bool(torch.isfinite(g).all()) and bool((g != 0).any())
    assert run.grads["depth.weight"].norm() > 100 * run.grads["cls.weight"].norm()
    total = run.grads["backbone.0.weight"].flatten()
    alone = backbone_grad_of_depth_alone(run.data).flatten()
    assert F.cosine_similarity(total, alone, dim=0) > 0.99  # depth dominates the backbone
