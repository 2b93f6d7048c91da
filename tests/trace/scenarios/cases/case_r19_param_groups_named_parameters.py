"""Control: the same network and the same intent, weight decay on the weights and none on the
biases, with the groups built from ``named_parameters()`` as the Hugging Face recipe does (biases
and LayerNorm weights excluded by name). The optimizer holds the model's own parameters, each in
exactly one group; every parameter gets a finite, nonzero gradient and moves, and the bias group's
weight decay is 0.

Source: https://forums.fast.ai/t/is-weight-decay-applied-to-the-bias-term/73212 ("Was looking at
some of the huggingface optimzer/schedulers and noticed that they use parameter groups to exclude
weight decay from being applied to both LayerNorm weights and the bias term of all parameters").
Adapted: the ``CatNetwork`` of the thread on L2 without biases (discuss.pytorch.org/t/142816) with
``Tanh``, 12 inputs, 16 hidden units, a sigmoid output and ``BCELoss``; AdamW at 1e-2, weight decay
0.01 on the weights.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://forums.fast.ai/t/is-weight-decay-applied-to-the-bias-term/73212"
DESCRIPTION = "control: decay / no-decay groups built from named_parameters(): all trained"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"not (held|in|among)[^\n]{0,40}optimi[sz]er",
    r"(did not|didn't|never) (move|change)",
]


class CatNetwork(nn.Module):
    def __init__(self, in_dim, n_hidden_1, out_dim):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Linear(in_dim, n_hidden_1), nn.Tanh())
        self.layer2 = nn.Sequential(nn.Linear(n_hidden_1, out_dim), nn.Sigmoid())

    def forward(self, x):
        return self.layer2(self.layer1(x))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 12, generator=g)
    return x, (x[:, 0] + x[:, 1] > 0).float().unsqueeze(1)


def step(watch):
    torch.manual_seed(0)
    model = CatNetwork(12, 16, 1)
    no_decay = ["bias", "LayerNorm.weight"]
    groups = [
        {
            "params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
            "weight_decay": 0.01,
        },
        {
            "params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)],
            "weight_decay": 0.0,
        },
    ]
    optimizer = torch.optim.AdamW(groups, lr=1e-2)
    criterion = nn.BCELoss()
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    return Run(w=w, model=model, optimizer=optimizer, before=before)


def truth(run):
    params = dict(run.model.named_parameters())
    held = [t for group in run.optimizer.param_groups for t in group["params"]]
    assert len(held) == len(params) and all(any(t is p for t in held) for p in params.values())
    decay, plain = run.optimizer.param_groups
    assert decay["weight_decay"] == 0.01 and all(p.ndim == 2 for p in decay["params"])
    assert plain["weight_decay"] == 0.0 and all(p.ndim == 1 for p in plain["params"])
    for n, p in params.items():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all()), n
        assert bool(p.grad.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
