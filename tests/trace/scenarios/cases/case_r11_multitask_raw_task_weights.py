"""Multi-task learning with the task weights learned as raw parameters, ``loss = w[0] * mse + w[1] *
ce`` with ``w = nn.Parameter(torch.ones(2))`` in the model and no term that keeps them away from
the trivial solution.  The gradient of the total loss with respect to ``w[i]`` is the task's loss,
always positive, so each step lowers the weights: after the first step the regression weight is
already negative (its loss is about 35), and the second step then trains the shared trunk and the
regression head to increase the regression error.  Gradients are finite and nonzero throughout.

Source: https://www.howistudyai.com/concepts/8ece9348-621f-4ad6-9163-8279f1069197 ("Multi-Task
Loss Balancing": "Uncertainty weighting uses a learnable noise parameter per task ... with an
extra term to prevent trivial solutions"; "Numerically, clamp or regularize to avoid extreme
weights and use log-variance to prevent negative" values).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.howistudyai.com/concepts/8ece9348-621f-4ad6-9163-8279f1069197"
DESCRIPTION = "learned raw task weights w * losses, no regulariser: w[0] < 0 after one step"
ASK = []
MUST = [
    [r"task_w"],
    [
        r"trivial",
        r"(driv|push|goes|went|fall|fell|shrink)\w*[^\n]{0,30}(to(ward)? )?(zero|negative)",
        r"negative (weight|value|loss)",
        r"below zero",
        r"regulari[sz]",
        r"log[- _]?var",
        r"unbounded",
    ],
]
MUST_NOT = [FALSE_OK]


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 32), nn.ReLU())
        self.reg = nn.Linear(32, 1)
        self.cls = nn.Linear(32, 3)
        self.task_w = nn.Parameter(torch.ones(2))

    def forward(self, x):
        h = self.trunk(x)
        return self.reg(h), self.cls(h)


def step(watch):
    torch.manual_seed(0)
    model = MultiTask()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 6, generator=g)
    y_reg = 5 * torch.randn(32, 1, generator=g)
    y_cls = torch.randint(0, 3, (32,), generator=g)
    weights, mse = [], []
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            pred_reg, pred_cls = model(x)
            task_mse = F.mse_loss(pred_reg, y_reg)
            loss = model.task_w[0] * task_mse + model.task_w[1] * F.cross_entropy(pred_cls, y_cls)
            loss.backward()
            opt.step()
            weights.append(model.task_w.detach().clone())
            mse.append(task_mse.item())
    with torch.no_grad():
        mse.append(F.mse_loss(model(x)[0], y_reg).item())
    return Run(w=w, weights=weights, mse=mse)


def truth(run):
    assert run.weights[0][0] < 0 and run.weights[1][0] < run.weights[0][0]
    assert run.mse[2] > run.mse[1]  # the second step pushed the regression error up
