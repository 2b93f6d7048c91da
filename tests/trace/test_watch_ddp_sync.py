"""Under DDP, "ok" only when the backward before the step synchronised the gradients (issue
43, blind scenarios round 2), tested over generated steps on two processes.

Each example runs one optimizer step of a small random MLP wrapped in
``DistributedDataParallel`` on two processes (gloo, CPU, forked from the test process), with
one to three micro-batches, some of them run inside ``model.no_sync()`` (the forward and the
backward, or only the backward: DDP decides at the forward), each process on its own data.
The ground truth comes from torch alone: each process reads the ``.grad`` its step read (a
step pre-hook of the test's own) and its own gradient on a plain copy of the model; the
step read the average over the processes or this process's own gradient.  The invariant,
on each process:

- when the step read this process's own gradient (the backward before it ran under
  ``no_sync``), the summary says that ``.grad`` was not averaged over the 2 processes and
  that the replicas diverge, and is not "ok";
- when the step read the average, it says nothing of the kind, and is "ok".
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import socket
import traceback

import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

import gradarg

pytestmark = pytest.mark.skipif(
    not (torch.distributed.is_available() and torch.distributed.is_gloo_available()),
    reason="torch.distributed with the gloo backend is not available")

setups = st.fixed_dictionaries({
    "widths": st.lists(st.integers(2, 6), min_size=2, max_size=3),
    "micro": st.integers(1, 3),
    "no_sync": st.sets(st.integers(0, 2)),  # the micro-batches run inside no_sync()
    "backward_only": st.booleans(),  # no_sync() around the backward only, not the forward
    "adam": st.booleans(),
    "seed": st.integers(0, 2**16),
})


def mlp(widths: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(widths):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers[:-1])


def rank_step(setup: dict, rank: int) -> dict:
    torch.manual_seed(setup["seed"])
    widths, micro = setup["widths"], setup["micro"]
    net = mlp(widths)
    plain = mlp(widths)
    plain.load_state_dict(net.state_dict())
    model = nn.parallel.DistributedDataParallel(net)
    opt = (torch.optim.Adam if setup["adam"] else torch.optim.SGD)(model.parameters(), lr=0.1)
    torch.manual_seed(setup["seed"] + 1 + rank)  # each process its own micro-batches
    data = [(torch.randn(4, widths[0]), torch.randn(4, widths[-1])) for _ in range(micro)]
    read: list[list[torch.Tensor]] = []
    handle = register_optimizer_step_pre_hook(
        lambda o, a, k: read.append([p.grad.clone() for p in model.parameters()]))
    try:
        with gradarg.watch(model) as w:
            opt.zero_grad()
            for i, (x, y) in enumerate(data):
                inside = i in setup["no_sync"]
                if inside and not setup["backward_only"]:
                    with model.no_sync():
                        (nn.functional.mse_loss(model(x), y) / micro).backward()
                elif inside:
                    loss = nn.functional.mse_loss(model(x), y) / micro
                    with model.no_sync():
                        loss.backward()
                else:
                    (nn.functional.mse_loss(model(x), y) / micro).backward()
            opt.step()
    finally:
        handle.remove()
    own = torch.autograd.grad(sum(nn.functional.mse_loss(plain(x), y) / micro
                                  for x, y in data), list(plain.parameters()))
    return {"summary": w.summary(checks=False), "why": w.why_no_grad("module.0.weight"),
            "read": [g.flatten().tolist() for g in read[0]],
            "own": [g.flatten().tolist() for g in own],
            "params": [p.detach().flatten().tolist() for p in model.parameters()]}


def _child(rank: int, port: int, setup: dict, conn) -> None:
    import torch.distributed as dist

    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=2)
        try:
            result = ("ok", rank_step(setup, rank))
        finally:
            dist.destroy_process_group()
    except BaseException as error:  # noqa: BLE001  (sent to the parent, which raises it)
        result = ("error", f"{type(error).__name__}: {error}\n{traceback.format_exc()}")
    conn.send(result)
    conn.close()


def two_processes(setup: dict) -> list[dict]:
    """``rank_step(setup, rank)`` in two forked processes joined by a gloo group."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("fork")
    pipes, procs = [], []
    for rank in range(2):
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(rank, port, setup, child), daemon=True)
        proc.start()
        child.close()
        pipes.append(parent)
        procs.append(proc)
    try:
        results = []
        for rank, conn in enumerate(pipes):
            assert conn.poll(60), f"process {rank} sent nothing in 60 s"
            status, value = conn.recv()
            assert status == "ok", value
            results.append(value)
        return results
    finally:
        for proc in procs:
            proc.join(5)
            if proc.is_alive():
                proc.kill()
                proc.join()


def close(a: list[list[float]], b: list[list[float]], tol: float = 1e-5) -> bool:
    return all(abs(u - v) <= tol * (1 + abs(v)) for x, y in zip(a, b, strict=True)
               for u, v in zip(x, y, strict=True))


@pytest.fixture(scope="module", autouse=True)
def _dynamo_before_fork():
    import torch._dynamo  # noqa: F401  (DDP imports it lazily: once here, not in each process)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups)
@example({"widths": [4, 8, 1], "micro": 2, "no_sync": {0, 1}, "backward_only": False,
          "adam": False, "seed": 0})  # the blind scenario's shape: every micro-batch
@example({"widths": [4, 8, 1], "micro": 2, "no_sync": {0}, "backward_only": False,
          "adam": False, "seed": 0})  # the last micro-batch synchronises: ok
@example({"widths": [2, 2], "micro": 2, "no_sync": {0, 1}, "backward_only": False,
          "adam": True, "seed": 47})  # Adam's first step: unsynced replicas still equal
@example({"widths": [2, 2], "micro": 2, "no_sync": {1}, "backward_only": False,
          "adam": False, "seed": 0})  # the first micro-batch averaged, the last not
def test_a_step_on_gradients_ddp_did_not_average_is_not_ok(setup):
    ranks = two_processes(setup)
    last = setup["micro"] - 1
    unsynced = last in setup["no_sync"] and not setup["backward_only"]
    # the ground truth, from torch: the step read the gradient averaged over the processes
    # (synchronised), or not; with every micro-batch inside no_sync(), this process's own
    average = [[(a + b) / 2 for a, b in zip(ga, gb, strict=True)]
               for ga, gb in zip(ranks[0]["own"], ranks[1]["own"], strict=True)]
    alone = set(range(setup["micro"])) <= setup["no_sync"] and not setup["backward_only"]
    for r in ranks:
        assert close(r["read"], average) == (not unsynced)
        if alone:
            assert close(r["read"], r["own"])
    if not setup["adam"]:  # Adam's first step moves each weight by about lr * sign(.grad):
        # replicas whose own gradients agree in sign are still equal after it
        assert close(ranks[0]["params"], ranks[1]["params"], 1e-7) == (not unsynced)
    for r in ranks:
        s = r["summary"]
        if unsynced:
            assert not s.startswith("gradients ok"), s
            assert "was not averaged over the 2 processes" in s and "replicas diverge" in s, s
            assert "no_sync()" in s and "not averaged" in r["why"], r["why"]
        else:
            assert s.startswith("gradients ok"), s
            assert "not averaged" not in s and "no_sync" not in s, s
