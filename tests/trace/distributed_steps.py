"""One training step under DistributedDataParallel or FSDP2, two processes on the gloo backend
(CPU), watched by gradarg; each process writes what it saw as JSON.

Run by ``tests/trace/test_distributed.py``:
``python distributed_steps.py OUTDIR KIND [KIND ...]`` with kinds ``ddp``, ``ddp-unused``,
``ddp-nan`` (process 1's batch holds a NaN), ``fsdp2``, run one after the other in the same two processes.  Beside the watch's record, each
process computes the same step on an unwrapped copy of the model (no DDP, no FSDP2): the
gradients the record must show, taken independently of the hooks.
"""

from __future__ import annotations

import copy
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

import gradarg


class Net(nn.Module):
    def __init__(self, unused: bool):
        super().__init__()
        self.body = nn.Linear(8, 16)
        self.head = nn.Linear(16, 1)
        self.unused = nn.Linear(16, 3) if unused else None

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


def local_norms(model: nn.Module, x: torch.Tensor) -> dict[str, float]:
    """This process's gradient of every parameter, from a plain copy of ``model``."""
    model.zero_grad(set_to_none=True)
    model(x).pow(2).mean().backward()
    return {n: float(p.grad.norm()) for n, p in model.named_parameters() if p.grad is not None}


def steps(rank: int, world: int, kinds: list[str], outdir: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{outdir}/rendezvous", rank=rank,
                            world_size=world)
    for kind in kinds:
        step(rank, kind, outdir)
        dist.barrier()
    dist.destroy_process_group()


def step(rank: int, kind: str, outdir: str) -> None:
    torch.manual_seed(0)
    out: dict[str, object] = {}
    if kind.startswith("ddp"):
        net = Net(unused=kind == "ddp-unused")
        plain = copy.deepcopy(net)
        model: nn.Module = nn.parallel.DistributedDataParallel(net)
        prefix = "module."
    else:
        from torch.distributed.fsdp import fully_shard

        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                              nn.Linear(16, 1))
        plain = copy.deepcopy(model)
        for layer in model:
            if isinstance(layer, nn.Linear):
                fully_shard(layer)
        fully_shard(model)
        prefix = ""
    torch.manual_seed(1 + rank)  # each process its own batch
    x = torch.randn(4, 8)
    if kind == "ddp-nan" and rank == 1:
        x[0, 0] = float("nan")  # one process's batch: the average every process steps with
    def hooks() -> int:
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())

    before = hooks()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)  # a step the watch sees (lr 0 is said)
    with gradarg.watch(model) as w:
        model(x).pow(2).mean().backward()
        out["summary_inside"] = w.summary()
        opt.step()
    out["summary"] = w.summary()
    out["records"] = {n: [r.grad, r.final] for n, r in w.parameters.items()}
    out["passes"] = {n: r.passes for n, r in w.parameters.items() if r.grad is not None}
    out["steps_seen"] = sorted({sum(e.kind == "step" for e in r.events)
                                for r in w.parameters.values() if r.events})
    out["local"] = {prefix + n: v for n, v in local_norms(plain, x).items()}
    grads = {}
    for n, p in model.named_parameters():
        g = p.grad
        if g is not None and hasattr(g, "full_tensor"):
            g = g.full_tensor()
        grads[n] = None if g is None else float(g.norm())
    out["grad"] = grads
    out["hooks_left"] = hooks() - before
    if kind == "ddp-unused":
        try:
            model(x).sum()
            out["next_forward"] = "ran"
        except RuntimeError as e:
            out["next_forward"] = str(e)
    with open(os.path.join(outdir, f"{kind}-{rank}.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    outdir, kinds = sys.argv[1], sys.argv[2:]
    mp.spawn(steps, args=(2, kinds, outdir), nprocs=2)
