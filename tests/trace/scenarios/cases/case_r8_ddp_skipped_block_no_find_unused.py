"""Stochastic depth under ``DistributedDataParallel`` (two processes, gloo): the layers to skip
are drawn before the forward, with the same seed on both processes, and the first step skips
``block2``.  DDP was built without ``find_unused_parameters``: it waits for ``block2``'s
gradients, which never come, so the step's all-reduce never runs: each process's optimizer steps
on its own, unaveraged gradients and the replicas drift apart.  The next forward raises DDP's
"Expected to have finished reduction in the prior iteration before starting a new one".

Source: https://github.com/pytorch/pytorch/issues/90171 ("In models with stochastic depth and the
like, at each forward pass some layers (or parts of them) are skipped and thus one needs to set
find_unused_parameters=True"; "the layer sampling is done before the model forward pass and not
on-the-fly").  Two processes forked with a gloo group.
"""

import torch
import torch._dynamo  # DDP imports it lazily: once here, before the fork
from scenario_kit import FALSE_OK, Recorded, Run, record, two_processes
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/90171"
DESCRIPTION = "DDP, block skipped, no find_unused_parameters: not averaged, next forward raises"
ASK = ["module.block2.weight"]
MUST = [
    [
        r"not (been )?averaged",
        r"never averaged",
        r"not (been )?(all-?reduced|synchroni[sz]ed|synced)",
        r"finished reduction",
        r"find_unused_parameters",
    ],
    [
        r"block2[^\n]{0,120}(not called|never called|was not (called|run)|skipped|unused|no gradient)",
        r"(no gradient|not called|never called|unused|skipped)[^\n]{0,80}block2",
    ],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(6, 16)
        self.block1 = nn.Linear(16, 16)
        self.block2 = nn.Linear(16, 16)
        self.head = nn.Linear(16, 1)

    def forward(self, x, skip):
        h = torch.relu(self.stem(x))
        h = h + torch.relu(self.block1(h))
        if "block2" not in skip:
            h = h + torch.relu(self.block2(h))
        return self.head(h)


def _rank_step(watch, find_unused):
    def fn(rank):
        torch.manual_seed(0)
        model = Net()
        ddp = nn.parallel.DistributedDataParallel(model, find_unused_parameters=find_unused)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(10 + rank)  # each process its own data
        plan = [{"block2"}, set()]  # drawn beforehand, the same on both processes
        weights, grad_none, error = [], None, None
        try:
            with watch(ddp) as w:
                for skip in plan:
                    x, y = torch.randn(8, 6, generator=g), torch.randn(8, 1, generator=g)
                    opt.zero_grad()
                    F.mse_loss(ddp(x, skip), y).backward()
                    if grad_none is None:
                        grad_none = model.block2.weight.grad is None
                    opt.step()
                    weights.append([float(p.detach().sum()) for p in model.parameters()])
        except RuntimeError as e:
            error = str(e)
        return {"said": record(w, ASK), "weights": weights, "grad_none": grad_none, "error": error}

    return fn


def step(watch, find_unused=False):
    ranks = two_processes(_rank_step(watch, find_unused))
    said = ranks[0]["said"]
    return Run(w=None if said is None else Recorded(*said), ranks=ranks)


def truth(run):
    r0, r1 = run.ranks
    assert r0["grad_none"] and r1["grad_none"]  # block2 got no gradient in the first step
    assert r0["weights"][0] != r1["weights"][0]  # the first step's gradients were not averaged
    for r in run.ranks:
        assert r["error"] is not None and "finished reduction" in r["error"]
        assert len(r["weights"]) == 1  # the second iteration's forward raised
