"""Working as designed, reported as a bug: a sparse embedding with ``padding_idx=0`` trained with
``SparseAdam``, and a batch that indexes only the padding row.  The gradient is a sparse tensor
with no entries (the padding row never gets a gradient), the step runs (the crash of the report
is fixed in this torch) and no row moves.  A right answer names the padding index as the reason
the embedding got nothing.

Source: https://github.com/pytorch/pytorch/issues/82486 ("SparseAdam fails when a parameter has an
empty sparse gradient tensor"; "My model uses sparse embeddings that are padded so that the first
embedding is fixed at zero ... If a batch only indexes the first embedding, the sparse gradient
vector for that parameter is empty").
"""

import torch
from scenario_kit import CLAIMS_ERROR, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/82486"
DESCRIPTION = "sparse embedding, padding_idx=0, batch of padding only: empty sparse grad, no move"
ASK = ["weight"]
MUST = [[r"padding_idx", r"padding"]]
MUST_NOT = [FALSE_OK, CLAIMS_ERROR]


def step(watch):
    torch.manual_seed(0)
    net = nn.Embedding(5, 1, padding_idx=0, sparse=True)
    x = torch.tensor([[0, 0]])  # a batch that only indexes the embedding at padding_idx
    y = torch.tensor([[3.0, 4.0]])
    adam = torch.optim.SparseAdam(net.parameters())
    before = net.weight.detach().clone()
    error = None
    with watch(net) as w:
        adam.zero_grad()
        loss = F.mse_loss(net(x).squeeze(-1), y)
        loss.backward()
        try:
            adam.step()
        except RuntimeError as e:
            error = e
    return Run(w=w, model=net, error=error, before=before, loss=loss.item())


def truth(run):
    assert run.error is None
    grad = run.model.weight.grad
    assert grad is not None and grad.is_sparse and grad._nnz() == 0
    assert run.loss > 0
    assert torch.equal(run.model.weight.detach(), run.before)
