"""A healthy step its asker's lecturer would have called stuck: the hidden layer's rows start
identical (one random vector repeated, biases 0), so every hidden unit computes the same value,
but the output weights are drawn at random and differ.  Backpropagation gives hidden unit ``i`` the
gradient ``w2_i * (shared term)``: the rows' gradients differ by their output weight, the step
moves each row by a different amount, and after it the units compute different values - the
symmetry is broken by the output weights alone.  (The output weights' own gradients are equal,
their inputs being equal; they are finite and nonzero.)  Every gradient is finite and nonzero.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (question 'Why Don't Different
Output Weights Break Symmetry?': "My deep learning lecturer told us that if a hidden node has
identical input weights to another, then the weights will remain the same over the training";
"Even if the input nodes are identical, the output weights would affect the backpropagated
gradient at the hidden nodes and create divergence. Why isn't this the case?").  Adapted: a
``Linear(4, 3)``, ``Tanh``, ``Linear(3, 1)`` regressor, the hidden rows set to one random vector,
32 examples, MSE, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (question 'Why Don't Different"
    " Output Weights Break Symmetry?')"
)
DESCRIPTION = "healthy: identical hidden rows, different output weights: the rows move apart"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"(rows|units|neurons)[^\n]{0,60}(stay|remain)\w* (identical|the same)",
    r"never (diverge|differ|separate)",
]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 4, generator=g)
    return x, torch.sin(x[:, :1] - x[:, 1:2])


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
    with torch.no_grad():
        row = torch.randn(4)
        model[0].weight.copy_(row.repeat(3, 1))  # identical input weights
        model[0].bias.zero_()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    w1 = run.before[0]
    assert torch.equal(w1[0], w1[1]) and torch.equal(w1[1], w1[2])
    w2 = run.before[2][0]
    assert len(set(w2.tolist())) == 3  # different output weights
    g1 = run.grads[0]
    assert not torch.allclose(g1[0], g1[1]) and not torch.allclose(g1[1], g1[2])
    after = run.model[0].weight.detach()
    assert not torch.allclose(after[0], after[1]) and not torch.allclose(after[1], after[2])
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
