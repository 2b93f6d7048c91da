"""A sparse embedding (``sparse=True``) trained with ``SparseAdam`` next to a dense ``Adam``, as
the blog post writes it: ``SparseAdam([net.emb.weight])`` and ``Adam([net.out.weight])``, "omitting
bias values for brevity".  The output layer has a bias (``nn.Linear``'s default), which no
optimizer holds: it gets a gradient every step and never moves.

Source: https://raberrytv.wordpress.com/ ("PyTorch - Combining Dense And Sparse Gradients":
``opt_sparse = torch.optim.SparseAdam([net.emb.weight], lr=3e-4)``, ``opt_dense =
torch.optim.Adam([net.out.weight], lr=3e-4)``, "We are omitting bias values for brevity").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://raberrytv.wordpress.com/"
DESCRIPTION = "SparseAdam(emb) + Adam([out.weight]) only: out.bias gets .grad, never moves"
ASK = ["out.bias"]
MUST = [
    [
        r"no optimizer",
        r"not (held|in|part of)[^\n]{0,40}optimi[sz]er",
        r"optimi[sz]er[^\n]{0,60}(does not|doesn't|never) hold",
    ],
    [r"out\.bias"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"sparse[^\n]{0,40}(not supported|error)"]


class Network(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 8, sparse=True)
        self.out = nn.Linear(8, 1)

    def forward(self, idx):
        return self.out(self.emb(idx)).squeeze(-1)


def step(watch, all_dense: bool = False):
    torch.manual_seed(0)
    net = Network()
    opt_sparse = torch.optim.SparseAdam([net.emb.weight], lr=3e-2)
    dense = (
        [p for n, p in net.named_parameters() if n != "emb.weight"]
        if all_dense
        else [net.out.weight]
    )
    opt_dense = torch.optim.Adam(dense, lr=3e-2)
    g = torch.Generator().manual_seed(1)
    idx, y = torch.randint(0, 50, (16,), generator=g), torch.randn(16, generator=g)
    before = {n: p.detach().clone() for n, p in net.named_parameters()}
    with watch(net) as w:
        for _ in range(2):
            opt_sparse.zero_grad()
            opt_dense.zero_grad()
            loss = ((y - net(idx)) ** 2).mean()
            loss.backward()
            opt_sparse.step()
            opt_dense.step()
    return Run(
        w=w,
        idx=idx,
        before=before,
        after={n: p.detach().clone() for n, p in net.named_parameters()},
        bias_grad=net.out.bias.grad,
    )


def truth(run):
    assert run.bias_grad is not None and bool(run.bias_grad.abs().sum() > 0)
    assert torch.equal(run.before["out.bias"], run.after["out.bias"])  # never moves
    assert not torch.equal(run.before["out.weight"], run.after["out.weight"])
    used = run.idx.unique()
    assert not torch.equal(run.before["emb.weight"][used], run.after["emb.weight"][used])
