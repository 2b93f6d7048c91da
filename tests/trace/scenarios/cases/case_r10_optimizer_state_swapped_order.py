"""Resuming from a checkpoint after the model class was edited: two blocks of the same shape, ``a``
and ``b``, now registered in the other order (``b`` first).  ``model.load_state_dict`` matches by
name, so the weights load right; ``optimizer.load_state_dict`` matches by position (optimizers hold
no names), so Adam's ``exp_avg`` / ``exp_avg_sq`` of ``a`` go to ``b`` and the other way round.
The shapes agree and nothing raises; the first resumed step moves ``a`` and ``b`` with each
other's moments.

Source: https://github.com/pytorch/pytorch/issues/3852 ("Optimizers don't hold parameters by their
names, so there's no way for us to align the state dicts if they are mismatched").  The load
happens inside the ``with`` block, just before the resumed step.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn


class Net(nn.Module):
    def __init__(self, b_first: bool = False):
        super().__init__()
        if b_first:
            self.b = nn.Linear(8, 8)
            self.a = nn.Linear(8, 8)
        else:
            self.a = nn.Linear(8, 8)
            self.b = nn.Linear(8, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(torch.relu(self.b(torch.relu(self.a(x)))))


SOURCE = "https://github.com/pytorch/pytorch/issues/3852"
DESCRIPTION = "optimizer.load_state_dict after blocks a, b were reordered: Adam moments swapped"
ASK = []
MUST = [
    [r"optimizer state|load_state_dict|exp_avg|moment|state of the optimizer|optimizer's state"]
]
MUST_NOT = [FALSE_OK]


def step(watch, reorder: bool = True):
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 8, generator=g), torch.randint(0, 2, (32,), generator=g)
    torch.manual_seed(0)
    old = Net()
    opt_old = torch.optim.Adam(old.parameters(), lr=1e-2)
    for _ in range(3):
        opt_old.zero_grad()
        nn.functional.cross_entropy(old(x), y).backward()
        opt_old.step()
    ckpt = {"model": old.state_dict(), "optimizer": opt_old.state_dict()}
    saved = {n: opt_old.state[p]["exp_avg"].clone() for n, p in old.named_parameters()}
    model = Net(b_first=reorder)
    model.load_state_dict(ckpt["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    with watch(model) as w:
        optimizer.load_state_dict(ckpt["optimizer"])
        loaded = {n: optimizer.state[p]["exp_avg"].clone() for n, p in model.named_parameters()}
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return Run(w=w, saved=saved, loaded=loaded)


def truth(run):
    assert torch.equal(run.loaded["a.weight"], run.saved["b.weight"])
    assert torch.equal(run.loaded["b.weight"], run.saved["a.weight"])
    assert not torch.equal(run.loaded["a.weight"], run.saved["a.weight"])
