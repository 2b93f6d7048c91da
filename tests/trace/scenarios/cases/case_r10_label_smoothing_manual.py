"""Control: label smoothing written by hand, ``(1 - s) * nll + s * mean(-log_softmax)``, the notebook's
``LabelSmoothingCrossEntropy(smoothing=0.1)``, on a small classifier.  It is the same loss as
``nn.CrossEntropyLoss(label_smoothing=0.1)`` (asserted), so the gradients are those of the
built-in: a healthy step.

Source: https://github.com/moyu316/jupyter ("自定义使用标签平滑的CrossEntropyLoss方法", a custom
CrossEntropyLoss with label smoothing, beside ``nn.CrossEntropyLoss(label_smoothing=0.1)``).
"""

import torch
import torch.nn.functional as F
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://github.com/moyu316/jupyter"
DESCRIPTION = "control: hand-written label-smoothing cross entropy, equal to the built-in"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"not log-?probabilit", r"broadcast", r"all-zero"]


class LabelSmoothingCrossEntropy(nn.Module):
    def __init__(self, smoothing=0.0):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, input, target):
        log_prob = F.log_softmax(input, dim=-1)
        nll_loss = -log_prob.gather(dim=-1, index=target.unsqueeze(-1)).squeeze(-1)
        smooth_loss = -log_prob.mean(dim=-1)
        return ((1.0 - self.smoothing) * nll_loss + self.smoothing * smooth_loss).mean()


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(64, 10, generator=g), torch.randint(0, 5, (64,), generator=g)
    criterion = LabelSmoothingCrossEntropy(smoothing=0.1)
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        optimizer.step()
    builtin = F.cross_entropy(logits.detach(), y, label_smoothing=0.1).item()
    return Run(w=w, loss=loss.item(), builtin=builtin)


def truth(run):
    assert abs(run.loss - run.builtin) < 1e-6
