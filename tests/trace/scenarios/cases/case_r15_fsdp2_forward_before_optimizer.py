"""FSDP2 on two processes (gloo, CPU): the model is wrapped with ``fully_shard`` and run once (a
shape check on a sample batch) before the optimizer is built.  After that forward the root
module's parameters are left unsharded, so ``model.parameters()`` hands the optimizer the full,
unsharded tensors; the backward then reshards and the registered parameters are the sharded
ones again.  The gradients land on the sharded parameters, the optimizer holds others: every
``optimizer.step()`` leaves the model's weights exactly as they were, on both processes.  Nothing
raises, every gradient is finite and nonzero.

Source: https://github.com/pytorch/pytorch/issues/149205 ("Parameter not updating when FSDP2 model
is used before optimizre creation": "If calculations are performed using a FSDP2 model after
calling fully_shard and before creating the optimizer, the parameters fail to update correctly.
The parameters captured by the optimizer seem to differ from those in the training loop.
Non-parallel and DDP are not affected").  Adapted: the issue's NCCL/CUDA script on two CPU
processes joined by gloo, a tanh MLP instead of its one-parameter model, SGD, two iterations.
"""

import math

import torch
from scenario_kit import FALSE_OK, Recorded, Run, record, two_processes
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/149205"
DESCRIPTION = "FSDP2: a forward before the optimizer is built; optimizer holds unsharded copies"
ASK = ["0.weight"]
MUST = [
    [
        r"(did not|didn't|never|not) (move|change)|unchanged|not (been )?updated|no update",
        r"not (the |in the )?model'?s? (own )?param\w*",
        r"(optimizer|it) (holds|has|steps) [^\n]{0,40}(other|different|stale|unsharded)",
        r"not in (the |any )?optimizer",
        r"unshard\w*",
    ],
]
MUST_NOT = [FALSE_OK, r"\bnan\b|non-?finite", r"no_grad"]


def _rank_step(watch, forward_first):
    def fn(rank):
        from torch.distributed.fsdp import fully_shard

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
        fully_shard(model)
        g = torch.Generator().manual_seed(1 + rank)  # each process its own batches
        batches = [
            (torch.randn(8, 6, generator=g), torch.randn(8, 1, generator=g)) for _ in range(2)
        ]
        if forward_first:
            assert model(batches[0][0]).shape == (8, 1)  # a shape check before the optimizer
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        held = {id(p) for group in opt.param_groups for p in group["params"]}

        def whole(t):  # a sharded DTensor gathered, or a plain (unsharded) tensor
            t = t.full_tensor() if hasattr(t, "full_tensor") else t
            return t.detach().flatten().tolist()

        def full():
            return [whole(p) for p in model.parameters()]

        before = full()
        grads = []
        with watch(model) as w:
            for x, y in batches:
                opt.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                grads.append(
                    [None if p.grad is None else whole(p.grad) for p in model.parameters()]
                )
                opt.step()
        after = full()
        in_opt = [id(p) in held for p in model.parameters()]
        return {
            "said": record(w, ASK),
            "before": before,
            "after": after,
            "grads": grads,
            "in_opt": in_opt,
        }

    return fn


def run_fsdp(watch, forward_first):
    ranks = two_processes(_rank_step(watch, forward_first))
    said = ranks[0]["said"]
    return Run(w=None if said is None else Recorded(*said), ranks=ranks)


def step(watch):
    return run_fsdp(watch, forward_first=True)


def _finite_nonzero(values):
    return all(math.isfinite(v) for v in values) and any(v != 0 for v in values)


def truth(run):
    for r in run.ranks:
        assert r["after"] == r["before"]  # no weight moved
        assert not any(r["in_opt"])  # the optimizer holds none of the model's parameters
        for it in r["grads"]:
            assert all(g is not None and _finite_nonzero(g) for g in it)
