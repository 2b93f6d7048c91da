"""Control: DDP on two processes (gloo, CPU) with the tutorial's own ``average_gradients(model)``
still called after ``loss.backward()``: DDP has already averaged the gradients during the
backward, and the manual ``all_reduce(SUM)`` followed by ``/= world_size`` averages identical
tensors again, which gives them back unchanged.  Redundant work, not a wrong step: every process
steps on the same averaged gradient and the replicas stay equal.

Source: https://github.com/kubeflow/pytorch-operator/issues/122 ("Double gradient reduction in
examples?": "DistributedDataParallel is used in the examples ... However, a DIY average_gradients
function is used in the same example as well"; also pytorch/examples#1146, "If using
DistributedDataParallel as model, does we need to the step of average_gradients(model)?").  Two
processes forked with a gloo group.
"""

import torch
import torch._dynamo  # DDP imports it lazily: once here, before the fork
import torch.distributed as dist
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
from torch.nn import functional as F

SOURCE = "https://github.com/kubeflow/pytorch-operator/issues/122"
DESCRIPTION = "control: DDP plus a manual all_reduce/world_size average: same grads, replicas equal"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"not (been )?averaged",
    r"never averaged",
    r"not (been )?(all-?reduced|synchroni[sz]ed|synced)",
    r"(scaled|rescaled|multiplied|divided) by",
    r"twice",
]


def average_gradients(model):
    size = float(dist.get_world_size())
    for param in model.parameters():
        dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
        param.grad.data /= size


def make_net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def _rank_step(watch):
    def fn(rank):
        net = make_net()
        model = nn.parallel.DistributedDataParallel(net)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
        torch.manual_seed(1 + rank)  # each process its own batches
        batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]
        starts, ddp, read = [], [], []
        with watch(model) as w:
            for x, y in batches:
                starts.append([p.detach().tolist() for p in net.parameters()])
                opt.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()  # DDP averages here
                ddp.append([p.grad.flatten().tolist() for p in net.parameters()])
                average_gradients(model)  # ... and the example averages again
                read.append([p.grad.flatten().tolist() for p in net.parameters()])
                opt.step()
        params = [p.detach().flatten().tolist() for p in net.parameters()]
        data = [(x.tolist(), y.tolist()) for x, y in batches]
        return {
            "said": record(w, ASK),
            "starts": starts,
            "data": data,
            "ddp": ddp,
            "read": read,
            "params": params,
        }

    return fn


def step(watch):
    ranks = two_processes(_rank_step(watch))
    said = ranks[0]["said"]
    return Run(w=None if said is None else Recorded(*said), ranks=ranks)


def _close(a, b, tol=1e-6):
    return all(abs(u - v) <= tol * (1 + abs(v)) for u, v in zip(a, b, strict=True))


def local_grads(start, data):
    """One process's own gradient at ``start`` on its batch, with plain torch (no DDP)."""
    net = make_net()
    with torch.no_grad():
        for p, value in zip(net.parameters(), start, strict=True):
            p.copy_(torch.tensor(value))
    x, y = (torch.tensor(t) for t in data)
    F.mse_loss(net(x), y).backward()
    return [p.grad.flatten().tolist() for p in net.parameters()]


def truth(run):
    r0, r1 = run.ranks
    for r in (r0, r1):
        r["local"] = [local_grads(s, d) for s, d in zip(r["starts"], r["data"], strict=True)]
    for it in range(2):
        for k in range(4):
            mean = [
                (u + v) / 2 for u, v in zip(r0["local"][it][k], r1["local"][it][k], strict=True)
            ]
            for r in (r0, r1):
                assert _close(r["ddp"][it][k], mean)  # DDP averaged ...
                assert _close(r["read"][it][k], r["ddp"][it][k])  # ... the second average kept it
            assert not _close(r0["local"][it][k], r1["local"][it][k])  # the batches differ
    for a, b in zip(r0["params"], r1["params"], strict=True):
        assert _close(a, b, tol=1e-7)  # the replicas stay equal
