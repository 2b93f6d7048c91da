"""DDP on two processes (gloo, CPU): after some iterations the forward freezes a sub-network
(netA.eval(); netA.requires_grad_(False)), a module DDP was built to synchronise.  From that
iteration on netA gets no gradient; DDP's reducer waits for it, so the iteration's other
gradients are not averaged either (each process steps on its own), and the next forward
raises "Expected to have finished reduction in the prior iteration".

Source: https://github.com/ShiqiYu/OpenGait/issues/230 ("The problem of freezing part of the
network structure during training": "if self.iteration >= 60000: self.netA.eval();
self.netA.requires_grad_(False)" ... "RuntimeError: Expected to have finished reduction in the
prior iteration before starting a new one").  Two processes forked with a gloo group; the
freeze comes at iteration 1 of 3.
"""

import torch
import torch._dynamo  # DDP imports it lazily: once here, before the fork, not in each process
from scenario_kit import FALSE_OK, Recorded, Run, record, two_processes
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/ShiqiYu/OpenGait/issues/230"
DESCRIPTION = "DDP, 2 processes: netA frozen inside forward after wrapping; next forward raises"
ASK = []
MUST = [
    [r"netA"],
    [
        r"Expected to have finished reduction",
        r"\braised\b",
        r"RuntimeError",
        r"exception",
        r"\berror\b",
    ],
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self, freeze_at):
        super().__init__()
        self.netA = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)
        self.iteration = 0
        self.freeze_at = freeze_at

    def forward(self, x):
        if self.training and self.freeze_at is not None and self.iteration >= self.freeze_at:
            self.netA.eval()
            self.netA.requires_grad_(False)
        return self.head(torch.tanh(self.netA(x)))


def _rank_step(watch, freeze_before_wrap):
    def fn(rank):
        torch.manual_seed(0)
        net = Net(freeze_at=None if freeze_before_wrap else 1)
        if freeze_before_wrap:  # the usual way: frozen before DDP sees the module
            net.netA.eval()
            net.netA.requires_grad_(False)
        model = nn.parallel.DistributedDataParallel(net)
        opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
        torch.manual_seed(1 + rank)  # each process its own batches
        batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
        grads, error, w = [], None, None
        try:
            with watch(model) as w:
                for it, (x, y) in enumerate(batches):
                    net.iteration = it
                    opt.zero_grad()
                    loss = F.mse_loss(model(x), y)
                    loss.backward()
                    grads.append(
                        [
                            None if p.grad is None else p.grad.flatten().tolist()
                            for p in net.parameters()
                        ]
                    )
                    opt.step()
        except RuntimeError as e:
            error = str(e)
        params = [p.detach().flatten().tolist() for p in net.parameters()]
        return {"said": record(w, ASK), "grads": grads, "error": error, "params": params}

    return fn


def run_ddp(watch, freeze_before_wrap):
    ranks = two_processes(_rank_step(watch, freeze_before_wrap))
    said = ranks[0]["said"]
    return Run(w=None if said is None else Recorded(*said), ranks=ranks)


def step(watch):
    return run_ddp(watch, freeze_before_wrap=False)


def _close(a, b, tol=1e-6):
    return all(abs(u - v) <= tol * (1 + abs(v)) for u, v in zip(a, b, strict=True))


def truth(run):
    r0, r1 = run.ranks
    for r in (r0, r1):
        assert r["error"] is not None and "Expected to have finished reduction" in r["error"]
        assert len(r["grads"]) == 2  # the third forward raised
        assert r["grads"][1][0] is None and r["grads"][1][1] is None  # netA: no gradient
    assert _close(r0["grads"][0][2], r1["grads"][0][2])  # iteration 0: head averaged
    assert not _close(r0["grads"][1][2], r1["grads"][1][2])  # iteration 1: not averaged
    assert not _close(r0["params"][2], r1["params"][2])  # the replicas' heads differ
