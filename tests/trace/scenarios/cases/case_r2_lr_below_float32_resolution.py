"""A learning rate of 1e-9: the gradients are finite and nonzero and SGD steps, but every update
(about 1e-9) is below half the float32 spacing of the weights it is added to, so the step
leaves every parameter bit for bit as it was.

Source: https://taourl.com/read-3025410.html ("the optimizer fails to significantly update the
initial parameter values ... optimizer = optim.SGD(model.parameters, lr=1e-8) ... the weights
remain nearly unchanged because the learning rate (1e-8) is too small").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://taourl.com/read-3025410.html"
DESCRIPTION = "SGD lr=1e-9: finite nonzero gradients, the step changes no parameter at all"
ASK = []
MUST = [
    [
        r"did not (move|change)",
        r"(does|do) not (move|change)",
        r"unchanged",
        r"not moved",
        r"no (parameter )?(change|update|effect)",
        r"learning rate",
        r"\blr\b",
        r"resolution",
        r"rounds? (away|off)",
    ]
]
MUST_NOT = [FALSE_OK, r"\bnan\b|non-?finite", r"no gradient", r"\bzero gradient", r"all-zero"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.5, -0.3]]))
        model.bias.fill_(0.2)
    opt = torch.optim.SGD(model.parameters(), lr=1e-9)
    criterion = nn.MSELoss()
    inputs, targets = torch.randn(10, 2), torch.randn(10, 1)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before)


def truth(run):
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert bool((p.grad != 0).all()) and bool(torch.isfinite(p.grad).all())
        assert bool((1e-9 * p.grad.abs() > 0).all())  # the update is not zero ...
        assert torch.equal(p.detach(), b)  # ... but rounds away
