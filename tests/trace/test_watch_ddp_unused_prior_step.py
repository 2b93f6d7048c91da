"""Class: under DDP without ``find_unused_parameters``, a step whose backward missed some
parameters (a block skipped) is never all-reduced and the next forward raises DDP's "Expected
to have finished reduction in the prior iteration"; the summary names the parameters the step
before missed, instead of only quoting the error.  With every parameter used, or with
``find_unused_parameters=True``, nothing of the kind is said.

The truth comes from torch alone, on each of two processes (gloo, forked): whether the second
forward raised, and which parameters' ``.grad`` was None after the first backward.  Generated:
the block skipped in the first step (or none), ``find_unused_parameters``, the widths.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

sys.path.insert(0, str(Path(__file__).parent / "scenarios" / "cases"))
from scenario_kit import two_processes  # the forked gloo harness of the cases

pytestmark = pytest.mark.skipif(
    not (torch.distributed.is_available() and torch.distributed.is_gloo_available()),
    reason="torch.distributed with the gloo backend is not available")


class Net(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.stem = nn.Linear(3, width)
        self.block1 = nn.Linear(width, width)
        self.block2 = nn.Linear(width, width)
        self.head = nn.Linear(width, 1)

    def forward(self, x, skip):
        h = torch.relu(self.stem(x))
        for name in ("block1", "block2"):
            if name not in skip:
                h = h + torch.relu(getattr(self, name)(h))
        return self.head(h)


def rank_step(skipped: str | None, find_unused: bool, width: int):
    def fn(rank):
        torch.manual_seed(0)
        model = Net(width)
        ddp = nn.parallel.DistributedDataParallel(model, find_unused_parameters=find_unused)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(rank)
        missed, error = None, None
        try:
            with gradarg.watch(ddp) as w:
                for skip in ({skipped} - {None}, set()):
                    x, y = torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)
                    opt.zero_grad()
                    nn.functional.mse_loss(ddp(x, skip), y).backward()
                    if missed is None:
                        missed = sorted(n for n, p in ddp.named_parameters() if p.grad is None)
                    opt.step()
        except RuntimeError as e:
            error = str(e)
        return {"text": w.summary(checks=False), "missed": missed, "error": error}

    return fn


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(skipped=st.sampled_from([None, "block1", "block2"]), find_unused=st.booleans(),
       width=st.integers(2, 6))
def test_the_parameters_a_step_missed_are_named_when_ddp_raises(skipped, find_unused, width):
    for r in two_processes(rank_step(skipped, find_unused, width)):
        raised = r["error"] is not None and "finished reduction" in r["error"]
        assert raised == (skipped is not None and not find_unused), r["error"]  # torch's truth
        said = "in the step before, no gradient reached" in r["text"]
        assert said == raised, r["text"]
        if raised:
            assert all(n in r["text"] for n in r["missed"][:3]), (r["missed"], r["text"])
