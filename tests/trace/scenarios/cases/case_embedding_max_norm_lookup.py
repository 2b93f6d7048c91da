"""Control: nn.Embedding(max_norm=1.0) used only through its lookup.  Rows are renormalised in
place inside the forward, before they are read; the backward is fine.

Source: https://github.com/pytorch/pytorch/issues/1057 ("Embedding max_norm bug on cuda?":
the rows are renormalised on CPU as documented).
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/1057"
DESCRIPTION = "control: Embedding(max_norm) lookup only; rows renormed in forward, step fine"
ASK = []
MUST = [[HEALTHY_OK, r"max_norm", r"renorm"]]
MUST_NOT = [
    r"updated between the forward and the backward",
    r"call backward\(\) before optimizer\.step",
    CLAIMS_ERROR,
    CLAIMS_NONFINITE,
]


class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, max_norm=1.0)
        self.head = nn.Linear(8, 2)

    def forward(self, idx):
        return self.head(self.emb(idx).mean(1))


def step(watch):
    torch.manual_seed(0)
    model = Bag()
    idx, y = torch.randint(0, 20, (16, 5)), torch.randint(0, 2, (16,))
    before = model.emb.weight.detach().clone()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(idx), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, idx=idx, before=before)


def truth(run):
    used = run.idx.unique()
    assert bool((run.before[used].norm(dim=1) > 1.0).any())  # some rows had to be renormed
    g = run.model.emb.weight.grad
    assert g is not None and bool(torch.isfinite(g).all()) and bool(g[used].abs().sum() > 0)
