"""Control: the same two-output regressor and data (targets with means 0.4 and -22), each target
column standardised with its own mean and standard deviation before the ``MSELoss`` (predictions
are mapped back with the same numbers).  Both outputs now carry a comparable share of the loss and
of the gradient reaching the hidden layer.  Every gradient is finite and nonzero.

Source: https://community.deeplearning.ai/t/output-normalisation-in-multi-output-regression-nn/243077
("If the outputs dynamic range is very high, the NN will try to focus on the biggest one";
"Normalizing both inputs and outputs is a good practice. You can apply seperate normalizing schemes
to different features").
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = (
    "https://community.deeplearning.ai/t/output-normalisation-in-multi-output-regression-nn/243077"
)
DESCRIPTION = "control: two regression targets standardised per column before the MSE loss"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"dominat\w*",
    r"(different|mismatched|unequal) (scales?|magnitudes?)",
    r"no gradient",
    r"all-zero",
]


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
    mean, std = y.mean(0), y.std(0)
    z = (y - mean) / std  # each column on its own scale
    criterion = nn.MSELoss()
    grads, shares = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            out = model(x)
            loss = criterion(out, z)
            loss.backward()
            with torch.no_grad():
                per_output = ((out - z) ** 2).mean(0)
                shares.append((per_output / per_output.sum()).tolist())
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
    ref = make_model()
    out = ref(x)
    parts = [((out[:, k] - z[:, k]) ** 2).mean() / 2 for k in range(2)]
    hidden = [torch.autograd.grad(t, ref[0].weight, retain_graph=True)[0] for t in parts]
    return Run(w=w, grads=grads, shares=shares, hidden=hidden)


def truth(run):
    for gs in run.grads:
        for n, g in gs.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for share in run.shares:
        assert 0.2 < share[1] < 0.8
    w2 = run.grads[0]["2.weight"]
    ratio = float(w2[1].norm()) / float(w2[0].norm())
    assert 0.2 < ratio < 5
    hidden = float(run.hidden[1].norm()) / float(run.hidden[0].norm())
    assert 0.2 < hidden < 5
