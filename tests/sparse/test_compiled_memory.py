"""The compiled call across processes: a second process compiles only the remembered winner,
the memory lives in ``$TORCHINDUCTOR_CACHE_DIR``, and torch's caches never hand back a result
computed with an earlier process's tensors (a corrupt, stale or wrong memory: in
``test_compiled.py``, in one process).

Each test runs fresh Python processes that share one temporary ``TORCHINDUCTOR_CACHE_DIR``
(the first one compiles cold, with inductor: a few seconds each).  What is asserted is
observable, never a time: how the first call chose (``choice``), how many functions it handed
to ``torch.compile`` (``compiled_candidates``, and torch's own count of traced graphs), and
the entries against the eager call's.

Two cold inductor compiles in two processes (about 30 s of CPU, a sixth of ``tests/sparse``):
run with ``GRADARG_SLOW_TESTS=1`` (``GRADARG_SLOW_TESTS=1 python -m pytest
tests/sparse/test_compiled_memory.py -n 0``).  CI keeps the same memory in one process:
``test_compiled.py::test_a_corrupt_stale_or_wrong_memory_costs_only_speed`` (a first call
times and remembers, the next compiles only the remembered candidate) and
``test_compiled.py::test_the_memory_names_function_pattern_shape_and_dtype`` (a function
rebuilt with the same code and captured shapes, as in the next process, finds the memory).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gradarg

OLD = tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 4)
NO_CXX = shutil.which("g++") is None and shutil.which("c++") is None
pytestmark = [
    pytest.mark.skipif(OLD, reason="torch.compile of torch.func transforms: torch>=2.4"),
    pytest.mark.skipif(NO_CXX, reason="inductor needs a C++ compiler"),
    pytest.mark.skipif(os.environ.get("GRADARG_SLOW_TESTS") != "1",
                       reason="two cold compiles in two processes: GRADARG_SLOW_TESTS=1 runs it"),
]

# One process: compile the Jacobian of a 2-D stencil times a captured tensor w (its row and
# column colourings tie: reverse and forward mode are both candidates), call it once, print
# what the first call did.  argv: w's scale, the backend.
SCRIPT = r"""
import json, os, sys
import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters
import gradarg

torch.set_num_threads(1)
s, scale, backend = 8, float(sys.argv[1]), sys.argv[2]
w = scale * (1 + torch.arange(s * s, dtype=torch.float64).reshape(s, s) / 10)

def f(u):
    up = F.pad(u, (1, 1, 1, 1))
    return (up[:-2, 1:-1] + up[2:, 1:-1] + up[1:-1, :-2] + up[1:-1, 2:] - 4 * u + u**3) * w

x = torch.linspace(-1, 1, s * s, dtype=torch.float64).reshape(s, s)
sj = gradarg.SparseJacobian(gradarg.jacobian_sparsity(f, x), x.shape)
jac = sj.compile(f, backend=backend)
got = jac(x).to_dense()
want = torch.func.jacfwd(f)(x)
folder = os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "gradarg", "compiled")
print(json.dumps({
    "choice": jac.choice, "compiled_candidates": jac.compiled_candidates,
    "mode": jac.mode, "variant": jac.variant, "route": jac.route,
    "graphs": counters["stats"]["unique_graphs"],
    "aot_hits": counters["aot_autograd"]["autograd_cache_hit"],
    "error": float((got - want).abs().max()), "scale": float(want.abs().max()),
    "memory": sorted(os.listdir(folder)) if os.path.isdir(folder) else [],
}))
"""


def run(cache: Path, scale: float = 1.0, backend: str = "inductor") -> dict:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache), OMP_NUM_THREADS="1")
    src = str(Path(gradarg.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(scale), backend], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # every process's result is right, whatever it found on disk
    assert out["error"] <= 1e-12 * out["scale"], out
    return out


def test_a_second_process_compiles_only_the_winner(tmp_path):
    cache = tmp_path / "inductor"
    first = run(cache)
    # two tied modes, then the faster one with the other inductor options
    assert first["choice"] == "timed" and first["compiled_candidates"] == 3
    assert first["graphs"] == 3 and len(first["memory"]) == 1  # in TORCHINDUCTOR_CACHE_DIR
    # A second process whose captured tensor holds other values (same shapes): the same
    # memory and torch's cached graph, and the new values in the result (run() checks it
    # against torch.func.jacfwd).  One process for both (each costs a torch start-up and a
    # trace): a memory or cache keyed on the values fails the first group of asserts, one
    # that hands back the first process's numbers fails run()'s check.
    second = run(cache, scale=3.0)
    assert second["choice"] == "remembered" and second["compiled_candidates"] == 1
    assert second["graphs"] == 1  # torch traced one graph
    assert (second["mode"], second["variant"], second["route"]) == (
        first["mode"], first["variant"], first["route"])
    if second["route"] == "compiled":  # torch's AOTAutograd cache served the traced graph
        assert second["aot_hits"] >= 1
    assert second["memory"] == first["memory"]
