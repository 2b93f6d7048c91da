"""DDP on two processes (gloo, CPU) with gradient accumulation: every micro-batch's backward,
the last one included, runs under model.no_sync(), so the gradients are never all-reduced;
each process steps on its own local gradient and the two replicas drift apart.

Source: https://github.202132.xyz/Lightning-AI/pytorch-lightning/issues/4092 (a copy of
Lightning-AI/pytorch-lightning#4092: "use DDP no_sync feature to avoid synchronization in steps
that doesn't call optimizer_step" -- no_sync belongs on the micro-batches *before* the step,
not on the one whose gradients the step reads).  Two processes forked with a gloo group.
"""

import contextlib

import torch
import torch._dynamo  # DDP imports it lazily: once here, before the fork, not in each process
from scenario_kit import FALSE_OK, Recorded, Run, record, two_processes
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.202132.xyz/Lightning-AI/pytorch-lightning/issues/4092"
DESCRIPTION = "DDP, 2 processes: no_sync on every micro-batch, never all-reduced; replicas drift"
ASK = []
MUST = [
    [
        r"not (been )?averaged",
        r"never averaged",
        r"no_sync",
        r"not (been )?(all-?reduced|synchroni[sz]ed|synced)",
        r"never (all-?reduced|synchroni[sz]ed|synced)",
        r"without (an? )?(all-?reduce|synchroni[sz]ation|averaging)",
        r"differ (between|across) (the )?(processes|ranks)",
    ]
]
MUST_NOT = [FALSE_OK]


def _net():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def _rank_step(watch, sync_last):
    def fn(rank):
        torch.manual_seed(0)
        model = nn.parallel.DistributedDataParallel(_net())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        torch.manual_seed(1 + rank)  # each process its own micro-batches
        micro = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]
        with watch(model) as w:
            opt.zero_grad()
            for i, (x, y) in enumerate(micro):
                last = i == len(micro) - 1
                sync = contextlib.nullcontext() if (last and sync_last) else model.no_sync()
                with sync:
                    loss = F.mse_loss(model(x), y) / len(micro)
                    loss.backward()
            grads = [p.grad.flatten().tolist() for p in model.parameters()]
            opt.step()
        torch.manual_seed(0)
        ref = _net()  # this process's own gradient, without DDP
        local = sum(F.mse_loss(ref(x), y) / len(micro) for x, y in micro)
        local = [g.flatten().tolist() for g in torch.autograd.grad(local, list(ref.parameters()))]
        params = [p.detach().flatten().tolist() for p in model.parameters()]
        return {"said": record(w, ASK), "grads": grads, "local": local, "params": params}

    return fn


def run_ddp(watch, sync_last):
    ranks = two_processes(_rank_step(watch, sync_last))
    said = ranks[0]["said"]
    return Run(w=None if said is None else Recorded(*said), ranks=ranks)


def step(watch):
    return run_ddp(watch, sync_last=False)


def _close(a, b, tol=1e-5):
    return all(
        abs(u - v) <= tol * (1 + abs(v))
        for x, y in zip(a, b, strict=True)
        for u, v in zip(x, y, strict=True)
    )


def truth(run):
    r0, r1 = run.ranks
    for r in (r0, r1):
        assert _close(r["grads"], r["local"])  # each process stepped on its own gradient
    assert not _close(r0["local"], r1["local"])
    assert not _close(r0["params"], r1["params"], tol=1e-7)  # the replicas differ
