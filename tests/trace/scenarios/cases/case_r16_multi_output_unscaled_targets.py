"""A two-output regressor trained with one ``MSELoss`` on targets of very different magnitudes:
the first target has mean 0.4 and spread 0.1, the second mean -22 and spread 5.  The squared
errors of the second output are thousands of times larger, so they make up more than 99 % of the
loss and of the gradient that reaches the shared hidden layer; the last layer's row for the second
output gets a gradient tens of times larger than the first's.  The first output is fitted only as
far as it helps the second.  Every gradient is finite and nonzero; nothing raises.

Source: https://discuss.pytorch.org/t/two-dimensional-mse-loss-in-mlp-training/180059 ("The target
consists of two different variables (gross primary productivity and evapotranspiration) that are
also of very different magnitude: mean of the first is ~ 0.4, mean of the second ~ -22";
"One variable is predicted pretty good - but the other is predicted completely wrong").
Adapted: a tanh MLP (6-32-2) with a linear output, synthetic targets with the thread's means, Adam.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://discuss.pytorch.org/t/two-dimensional-mse-loss-in-mlp-training/180059"
DESCRIPTION = "MSE over two targets of scale 0.4 and -22: the second output dominates the loss"
ASK = []
MUST = [
    [
        r"dominat\w*",
        r"(different|mismatched|unequal|disparate) (scales?|magnitudes?|ranges?|units)",
        r"(scale|standardi[sz]e|normali[sz]e|rescale)[^\n]{0,30}(targets?|outputs?|labels?|columns?)",
        r"(targets?|outputs?|labels?)[^\n]{0,40}(not (scaled|normali[sz]ed|standardi[sz]ed)|unscaled)",
        r"(9\d(\.\d+)?\s?%|most) of the (loss|gradient)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"dead (units?|relu|neurons?)", r"no_grad"]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 6, generator=g)
    s1 = torch.tanh(x[:, 0] - 0.5 * x[:, 1])
    s2 = torch.tanh(x[:, 2] + 0.5 * x[:, 3])
    y = torch.stack([0.4 + 0.1 * s1, -22.0 + 5.0 * s2], dim=1)
    return x, y


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 2))


def step(watch):
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    criterion = nn.MSELoss()
    grads, shares = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            out = model(x)
            loss = criterion(out, y)
            loss.backward()
            with torch.no_grad():
                per_output = ((out - y) ** 2).mean(0)
                shares.append((per_output / per_output.sum()).tolist())
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
    # the hidden layer's gradient from each output's term alone, at the initial weights
    ref = make_model()
    out = ref(x)
    parts = [((out[:, k] - y[:, k]) ** 2).mean() / 2 for k in range(2)]
    hidden = [torch.autograd.grad(t, ref[0].weight, retain_graph=True)[0] for t in parts]
    return Run(w=w, grads=grads, shares=shares, hidden=hidden)


def truth(run):
    for gs in run.grads:
        for n, g in gs.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for share in run.shares:
        assert share[1] > 0.99  # the second output's squared error is nearly all the loss
    w2 = run.grads[0]["2.weight"]
    assert float(w2[1].norm()) > 20 * float(w2[0].norm())
    assert float(run.hidden[1].norm()) > 20 * float(run.hidden[0].norm())
