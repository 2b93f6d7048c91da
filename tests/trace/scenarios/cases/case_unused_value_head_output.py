"""The value head runs in the forward, but its output is not used by the loss: its parameters
get no gradient (the case DDP complains about as "unused parameters").

Source: https://github.com/HorizonRobotics/alf/pull/1117 ("1. Parameters contributes to output,
but the output is not used in computing the loss").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/HorizonRobotics/alf/pull/1117"
DESCRIPTION = "value head called, output unused by the loss: no gradient for it"
ASK = ["value.weight"]
MUST = [
    [r"\bvalue\b"],
    [
        r"no gradient",
        r"\bNone\b",
        r"not used",
        r"unused",
        r"did not reach",
        r"never reached",
        r"output",
    ],
]
MUST_NOT = [FALSE_OK, r"'value' \(Linear\) was never called", r"\bvalue\b[^\n]*never called"]


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.policy = nn.Linear(16, 4)
        self.value = nn.Linear(16, 1)

    def forward(self, x):
        h = self.body(x)
        return self.policy(h), self.value(h)


def step(watch):
    torch.manual_seed(0)
    model = ActorCritic()
    calls = []
    hook = model.value.register_forward_hook(lambda m, i, o: calls.append(1))
    x, a = torch.randn(16, 8), torch.randint(0, 4, (16,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    try:
        with watch(model) as w:
            opt.zero_grad()
            logits, _value = model(x)
            loss = F.cross_entropy(logits, a)
            loss.backward()
            opt.step()
    finally:
        hook.remove()
    return Run(w=w, model=model, calls=len(calls))


def truth(run):
    assert run.calls == 1
    assert run.model.value.weight.grad is None and run.model.value.bias.grad is None
    assert run.model.policy.weight.grad is not None
