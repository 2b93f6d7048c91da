"""Control: the training step calls model.forward(x) instead of model(x).  The user's own backward
hook on the model never fired and they suspected the gradients; the step itself is fine: every
parameter gets its gradient and the optimizer steps.  (Calling .forward skips the hooks of the
outer module only; its layers are still called as modules.)

Source: https://github.com/pytorch/pytorch/issues/117925 ("Module full backward hook does not
work": the model was run as model.forward(...); "When replacing the direct .forward()
invocation with model(torch.tensor(5)) it works perfectly fine").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/117925"
DESCRIPTION = "control: model.forward(x) called directly; every parameter trains normally"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, r"never called", r"no gradient"]


class MyModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 12)
        self.out = nn.Linear(12, 2)

    def forward(self, x):
        return self.out(torch.relu(self.inp(x)))


def step(watch):
    torch.manual_seed(0)
    model = MyModule()
    fired = []
    model.register_full_backward_hook(lambda m, gi, go: fired.append(1))
    x, y = torch.randn(16, 6), torch.randint(0, 2, (16,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model.forward(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, before=before, fired=fired)


def truth(run):
    assert run.fired == []  # the outer module's own hook never ran
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None and bool((p.grad != 0).any())
        assert not torch.equal(p.detach(), b)
