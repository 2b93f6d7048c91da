"""Control: a small regression network, MSE, plain SGD at learning rate 1e-4, two steps.  The
loss moves in its fifth digit (1.08288 to 1.08282), which the user reads as "the loss is not
changing", but the step is right: every gradient is finite and nonzero and every parameter entry
moves (by 6e-8 to 7e-5); the steps are small because the learning rate is.

Source: https://taourl.com/read-2391810.html ("Loss is not changing. Its remaining constant"; its
example: "optimizer = optim.SGD(model.parameters, lr=0.0001) # Extremely small learning rate",
"the loss may stagnate because updates to the model weights are negligible").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://taourl.com/read-2391810.html"
DESCRIPTION = "control: SGD lr 1e-4, loss changes in its 5th digit: small steps, all move"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"vanish",
    r"changed none",
    r"did not (move|change)",
    r"(moved|changed) (none|nothing)",
    r"below [^\n]{0,30}resolution",
    r"round(s|ed)? (away|back)",
]


class SimpleNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 5)
        self.fc2 = nn.Linear(5, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def step(watch):
    torch.manual_seed(0)
    model = SimpleNN()
    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0001)
    g = torch.Generator().manual_seed(1)
    inputs, targets = torch.randn(100, 10, generator=g), torch.randn(100, 1, generator=g)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    losses = []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            losses.append(loss.item())
            loss.backward()
            optimizer.step()
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, losses=losses, before=before, after=after)


def truth(run):
    assert 0 < run.losses[0] - run.losses[1] < 1e-3 * run.losses[0]  # down, barely
    for n in run.before:
        delta = (run.after[n] - run.before[n]).abs()
        assert bool((delta > 0).all()), n  # every entry moved
        assert float(delta.max()) < 1e-3, n  # by little
