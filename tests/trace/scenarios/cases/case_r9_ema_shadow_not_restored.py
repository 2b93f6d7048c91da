"""An EMA of the weights kept as shadow tensors (``register`` / ``update`` / ``apply_shadow`` /
``restore``).  After the first training step the shadow is swapped in with ``apply_shadow()`` for
an evaluation, and ``restore()`` is forgotten: the second training step starts from the EMA
weights (assigned to ``param.data``), not from the weights the optimizer left, so the first
step's update is thrown away.

Source: https://jiechu520.github.io/2023/03/21/EMA (its class: ``apply_shadow`` does
``self.backup[name] = param.data; param.data = self.shadow[name]`` and ``restore`` puts the backup
back; the step calls the first and not the second before training on).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn


class EMA:
    def __init__(self, model, decay):
        self.model, self.decay, self.shadow, self.backup = model, decay, {}, {}

    def register(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                self.shadow[name] = param.data.clone()

    def update(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                new_average = (1.0 - self.decay) * param.data + self.decay * self.shadow[name]
                self.shadow[name] = new_average.clone()

    def apply_shadow(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                self.backup[name] = param.data
                param.data = self.shadow[name]

    def restore(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                param.data = self.backup[name]
        self.backup = {}


SOURCE = "https://jiechu520.github.io/2023/03/21/EMA"
DESCRIPTION = "EMA apply_shadow() for eval, restore() forgotten: step 2 trains from the EMA weights"
ASK = []
MUST = [
    [
        r"outside (the |any |an )?(torch\.optim )?optimi[sz]er",
        r"without (a |an |the )?(torch\.optim )?optimi[sz]er",
        r"not by (the|an|any) optimi[sz]er",
        r"\.data\b",
        r"overwrit",
        r"replaced",
        r"assign",
        r"between (the )?(two )?steps",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


def step(watch, restore: bool = False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    ema = EMA(model, 0.9)
    ema.register()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), torch.randn(32, 1, generator=g)
    xv = torch.randn(8, 6, generator=g)
    with watch(model) as w:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        left = {n: p.detach().clone() for n, p in model.named_parameters()}
        ema.update()
        shadow = {n: t.clone() for n, t in ema.shadow.items()}
        ema.apply_shadow()
        model.eval()
        with torch.no_grad():
            model(xv)
        if restore:
            ema.restore()
        model.train()
        start = {n: p.detach().clone() for n, p in model.named_parameters()}
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return Run(w=w, left=left, start=start, shadow=shadow)


def truth(run):
    for n in run.left:
        assert not torch.equal(run.start[n], run.left[n]), n  # step 2 does not start from step 1
        assert torch.equal(run.start[n], run.shadow[n]), n  # but from the EMA
