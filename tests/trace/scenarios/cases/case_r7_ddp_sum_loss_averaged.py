"""Control: DDP averages gradients over the processes, it does not sum them.  With a loss that is
a *sum* over the examples, ``Linear(1, 1, bias=False)`` with weight 1, inputs ``[-1, 2]`` on
process 0 and ``[-3, 4]`` on process 1: each process's gradient is 10 and 50, DDP gives both
30, half of the 60 one process gets on the four inputs, and SGD at lr 0.001 moves the weight to
0.97 instead of 0.94.  Working as documented (the loss's reduction is the user's to choose).

Source: https://github.com/pytorch/pytorch/pull/42471 ("Improve the documentation of
DistributedDataParallel": "It's not clear by illustrating 'gradients from each node are
averaged' ... Many people, including me, have a totally wrong understanding on this part"; its
toy code: grad 60 and weight 0.94 without DDP).  Two processes forked with a gloo group.
"""

import torch
import torch._dynamo  # DDP imports it lazily: once here, before the fork
from scenario_kit import (
    CLAIMS_ERROR,
    CLAIMS_NONFINITE,
    HEALTHY_OK,
    Recorded,
    Run,
    record,
    two_processes,
)
from torch import nn

SOURCE = "https://github.com/pytorch/pytorch/pull/42471"
DESCRIPTION = "control: DDP, sum loss on 2 x 2 inputs: grad 30 = mean of 10 and 50, as designed"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"not (been )?averaged",
    r"never averaged",
    r"not (been )?(all-?reduced|synchroni[sz]ed|synced)",
]


def _rank_step(watch):
    def fn(rank):
        model = nn.Linear(in_features=1, out_features=1, bias=False)
        with torch.no_grad():
            model.weight.fill_(1.0)
        ddp = nn.parallel.DistributedDataParallel(model)
        opti = torch.optim.SGD(ddp.parameters(), lr=0.001)
        x = torch.tensor([[-1.0], [2.0]]) if rank == 0 else torch.tensor([[-3.0], [4.0]])
        label = torch.zeros(2, 1)
        with watch(ddp) as w:
            opti.zero_grad()
            y = ddp(x)
            loss = torch.sum((y - label) ** 2)
            loss.backward()
            grad = model.weight.grad.item()
            opti.step()
        return {"said": record(w, ASK), "grad": grad, "weight": model.weight.item()}

    return fn


def step(watch):
    ranks = two_processes(_rank_step(watch))
    said = ranks[0]["said"]
    return Run(w=None if said is None else Recorded(*said), ranks=ranks)


def truth(run):
    for r in run.ranks:
        assert abs(r["grad"] - 30.0) < 1e-5  # mean of 10 and 50, not their sum 60
        assert abs(r["weight"] - 0.97) < 1e-6
