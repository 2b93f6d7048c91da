"""An nn.Embedding(sparse=True) -- chosen "so that embeddings of words that are not in a batch
would not be updated" -- trained with torch.optim.Adam over model.parameters(): the backward
gives the embedding a sparse gradient and optimizer.step() raises "Adam does not support sparse
gradients, please consider SparseAdam instead"; nothing is updated.

Source: https://discuss.pytorch.org/t/different-prediction-results-update-different-weights-in-the-model/64997
("self.embed = nn.Embedding(10, 20, sparse=True) # our vocabulary has 10 words ... # we use
sparse=True, so that embeddings of words that are not in a batch would not be updated").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://discuss.pytorch.org/t/"
    "different-prediction-results-update-different-weights-in-the-model/64997"
)
DESCRIPTION = "Embedding(sparse=True) with torch.optim.Adam: opt.step() raises, nothing updated"
ASK = []
MUST = [
    [
        r"does not support sparse",
        r"SparseAdam",
        r"RuntimeError",
        r"\braised\b",
        r"exception",
        r"\berror\b",
    ],
    [r"sparse", r"Adam", r"embed", r"step"],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 20, sparse=True)
        self.lin = nn.Linear(3 * 20, 10)

    def forward(self, idx):
        return self.lin(self.embed(idx).flatten(1))


def _batch():
    return torch.tensor([[0, 1, 2], [0, 4, 5]]), torch.tensor([3, 6])


def step(watch, sparse_adam=False):
    torch.manual_seed(0)
    model = Net()
    if sparse_adam:
        opts = [
            torch.optim.SparseAdam(model.embed.parameters(), lr=1e-2),
            torch.optim.Adam(model.lin.parameters(), lr=1e-2),
        ]
    else:
        opts = [torch.optim.Adam(model.parameters(), lr=1e-2)]
    idx, y = _batch()
    before = [p.detach().clone() for p in model.parameters()]
    error = None
    try:
        with watch(model) as w:
            for opt in opts:
                opt.zero_grad()
            loss = F.cross_entropy(model(idx), y)
            loss.backward()
            for opt in opts:
                opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error, idx=idx)


def truth(run):
    assert run.error is not None and "does not support sparse gradients" in str(run.error)
    assert run.model.embed.weight.grad.is_sparse
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert torch.equal(p.detach(), b)  # nothing updated
