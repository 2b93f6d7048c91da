"""Transfer learning in two stages: the model first trains ``fc1`` alone with an ``Adafactor``
optimizer built over ``model.parameters()``; then a new layer is attached, ``model.new_head =
nn.Linear(5, 2)``, and ``forward`` starts using it.  The optimizer is left as it was: ``new_head``
gets a gradient every step and no optimizer holds it, so it never moves (``fc1`` keeps training).

Source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.adafactor/torch.optim.Adafactor.add_param_group
("A very common mistake is creating new parameters for a model but forgetting to add them to the
optimizer's parameter list. This means the new parameters won't be updated during training";
"Later, we add a new layer, but the optimizer doesn't know about it!").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://runebook.dev/en/docs/pytorch/generated/torch.optim.adafactor/"
    "torch.optim.Adafactor.add_param_group"
)
DESCRIPTION = "new head attached after the optimizer was built, not added: .grad, never moves"
ASK = ["new_head.weight"]
MUST = [
    [r"optimizer"],
    [
        r"not (held|in (the|any) optimizer)",
        r"no optimizer",
        r"(does not|doesn't|did not) hold",
        r"holds? none",
        r"never (moved|updated|stepped)",
        r"did not (move|change)",
        r"not (updated|optimi[sz]ed|stepped)",
    ],
]
MUST_NOT = [FALSE_OK]


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 5)
        self.new_head = None  # a placeholder for the layer added later

    def forward(self, x):
        if self.new_head is not None:
            return self.new_head(self.fc1(x))
        return self.fc1(x)


def step(watch, add_group: bool = False):
    torch.manual_seed(0)
    model = MyModel()
    g = torch.Generator().manual_seed(1)
    x1, y1 = torch.randn(16, 10, generator=g), torch.randn(16, 5, generator=g)
    x2, y2 = torch.randn(16, 10, generator=g), torch.randint(0, 2, (16,), generator=g)
    optimizer = torch.optim.Adafactor(model.parameters(), lr=0.01)
    optimizer.zero_grad()  # stage one: fc1 alone, a regression target
    F.mse_loss(model(x1), y1).backward()
    optimizer.step()
    model.new_head = nn.Linear(5, 2)  # stage two: a classification head
    if add_group:
        optimizer.add_param_group({"params": model.new_head.parameters(), "lr": 0.001})
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        F.cross_entropy(model(x2), y2).backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    in_opt = {n: id(p) in held for n, p in model.named_parameters()}
    return Run(w=w, grads=grads, before=before, after=after, in_opt=in_opt)


def truth(run):
    for n in ("new_head.weight", "new_head.bias"):
        assert bool(run.grads[n].abs().sum() > 0), n
        assert not run.in_opt[n] and torch.equal(run.before[n], run.after[n]), n
    assert not torch.equal(run.before["fc1.weight"], run.after["fc1.weight"])
