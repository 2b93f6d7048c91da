"""watch under DistributedDataParallel and FSDP2: two processes on the gloo backend (CPU), one
step each, run by ``distributed_steps.py`` in a subprocess under a timeout.  The record is
compared with the same step on an unwrapped copy of the model (this process's gradient) and
with ``.grad`` read back after the step (the average over the processes)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gradarg

pytestmark = pytest.mark.skipif(
    not (torch.distributed.is_available() and torch.distributed.is_gloo_available()),
    reason="torch.distributed with the gloo backend is not available")

SCRIPT = Path(__file__).with_name("distributed_steps.py")


def has_fsdp2() -> bool:
    try:
        from torch.distributed.fsdp import fully_shard  # noqa: F401
    except ImportError:
        return False
    return True


KINDS = ["ddp", "ddp-unused", "ddp-nan"] + (["fsdp2"] if has_fsdp2() else [])


@pytest.fixture(scope="module")
def steps(tmp_path_factory) -> Path:
    """The three steps, one after the other in the same two processes (one start-up)."""
    out = tmp_path_factory.mktemp("distributed")
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(Path(gradarg.__file__).parents[1]),
                                           os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(SCRIPT), str(out), *KINDS], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def run(kind: str, out: Path) -> list[dict]:
    return [json.loads((out / f"{kind}-{rank}.json").read_text()) for rank in (0, 1)]


def close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-5)


def test_ddp_records_this_process_gradient_and_says_so(steps):
    for rank, out in enumerate(run("ddp", steps)):
        assert out["summary"].startswith("gradients ok: every parameter got"), out["summary"]
        assert f"DDP, process {rank} of 2" in out["summary"]
        # the record is this process's gradient (an unwrapped copy on the same batch) ...
        assert out["records"].keys() == out["local"].keys()
        for name, (grad, final) in out["records"].items():
            assert close(grad, out["local"][name]), name
            # ... and the final .grad, DDP's average, is read as it is
            assert close(final, out["grad"][name]), name
        # the processes had different batches: the average differs from either gradient,
        # which is why the comparison with the final .grad is not made (and says so)
        assert not close(out["grad"]["module.body.weight"], out["local"]["module.body.weight"])
        assert "not checked: edited after backward (under DDP" in out["summary"]
        assert "gradients changed after backward" not in out["summary"]
        assert out["hooks_left"] == 0
        # one pass accumulated into each parameter, and the optimizer step was seen
        assert set(out["passes"].values()) == {1} and out["steps_seen"] == [1]
        assert "accumulated into .grad" not in out["summary"]


def test_ddp_names_the_parameters_its_own_error_only_counts(steps):
    for out in run("ddp-unused", steps):
        s = out["summary"]
        assert "no gradient for 2 parameter(s): module.unused.weight, module.unused.bias" in s
        # the error the summary announces is the one DDP raises at the next forward
        assert "Expected to have finished reduction in the prior iteration" in s
        assert "Expected to have finished reduction in the prior iteration" in out["next_forward"]
        assert "module.unused" not in out["next_forward"]  # DDP's own message has indices
        # the step's .grad was not averaged: it equals this process's own gradient
        assert "was not averaged over the 2 processes" in s
        for name, value in out["local"].items():
            assert close(out["grad"][name], value), name


@pytest.mark.skipif(not has_fsdp2(), reason="FSDP2 (torch.distributed.fsdp.fully_shard) needs torch >= 2.6")
def test_fsdp2_follows_the_unsharded_parameters_and_global_norms(steps):
    outs = run("fsdp2", steps)
    for rank, out in enumerate(outs):
        s = out["summary"]
        assert s.startswith("gradients ok: every parameter got"), s
        assert "no gradient" not in s
        assert f"FSDP2, process {rank} of 2" in s and "are global" in s
        for name, (grad, final) in out["records"].items():
            assert close(grad, out["local"][name]), name  # this process's gradient
            assert close(final, out["grad"][name]), name  # the whole sharded .grad
        assert out["hooks_left"] == 0
        # the passes into the unsharded parameters count for the registered ones, and the
        # step over the sharded ones was seen
        assert set(out["passes"].values()) == {1} and out["steps_seen"] == [1]
        assert "accumulated into .grad" not in s
    # the global norms are the same on both processes; their own gradients are not
    for name in outs[0]["records"]:
        assert close(outs[0]["records"][name][1], outs[1]["records"][name][1])
    assert not close(outs[0]["local"]["0.weight"], outs[1]["local"]["0.weight"])


def test_ddp_judges_the_averaged_gradient_each_process_steps_with(steps):
    zero, one = run("ddp-nan", steps)
    # torch: process 0's own gradient is finite, the average both step with is not
    assert all(math.isfinite(v) for v in zero["local"].values())
    assert not any(math.isfinite(v) for v in zero["grad"].values())
    for out in (zero, one):
        assert not out["summary"].startswith("gradients ok"), out["summary"]
        assert "an optimizer step read a .grad holding NaN/Inf" in out["summary"]
    assert "another process sent the NaN/Inf" in zero["summary"]
    assert "another process" not in one["summary"]  # its own batch made it


def test_ddp_says_which_process_saw_the_nan_first(steps):
    """Process 1's batch holds a NaN: its own gradient is NaN (plain torch, on a copy), the
    average both step with is NaN; each process names process 1 as the first, and the
    parameter whose own gradient held it."""
    outs = run("ddp-nan", steps)
    bad = [r for r, out in enumerate(outs)
           if not all(math.isfinite(v) for v in out["local"].values())]
    assert bad == [1]
    names = [n for n, v in outs[1]["local"].items() if not math.isfinite(v)]
    zero, one = (out["summary"] for out in outs)
    assert "process 1 saw it first" in zero and "this process 1 saw it first" in one
    assert names[0] in zero
    assert "every other process's own gradient was finite" in zero
    # a healthy DDP step names no process as the first
    assert "saw it first" not in run("ddp", steps)[0]["summary"]
