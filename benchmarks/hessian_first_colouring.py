"""The benchmarks' two Hessians coloured in a fresh process: gradarg's first ``SparseHessian``
construction (wall and process CPU time) per source tree, beside asdex's warm colouring.

``python benchmarks/hessian_first_colouring.py [--src A --src B ...] [--reps 5]``: each
``--src`` is a ``src`` folder put first on ``PYTHONPATH`` of the fresh processes (say the
tree before a change and after it; default: the gradarg that is installed), run interleaved,
``--reps`` times each; the medians and minima are printed with the passes, the route the
colouring took (``SparseHessian.route``) and whether numba was loaded.  asdex's colouring
(``hessian_coloring_from_sparsity``, median of 15 after one) is measured in one more process
when ``asdex`` imports (the ``bench-asdex`` environment: ``.nox/bench-asdex/bin/python``).
One thread for torch and XLA.  A busy machine inflates wall times: compare CPU times there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
HESSIANS = (2, 4)  # indices of the Hessians in problems.PROBLEMS

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
import gradarg
from problems import problem
name, kind, f, x = problem(int(sys.argv[1]))
pattern = gradarg.hessian_sparsity(f, x)
wall, cpu = time.perf_counter(), time.process_time()
sh = gradarg.SparseHessian(pattern, x.shape)
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps({"name": name, "wall": wall, "cpu": cpu, "passes": sh.passes,
                  "route": getattr(sh, "route", "-"), "numba": "numba" in sys.modules}))
"""

ASDEX = r"""
import json, os, statistics, sys, time, warnings
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
import asdex, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
from problems import PROBLEMS
out = {}
for i in map(int, sys.argv[2:]):
    name, kind, build, x = PROBLEMS[i]
    sp = asdex.hessian_sparsity(build(jnp), jnp.asarray(x, dtype=jnp.float64))
    asdex.hessian_coloring_from_sparsity(sp)
    wall, cpu = [], []
    for _ in range(15):
        w, c = time.perf_counter(), time.process_time()
        colouring = asdex.hessian_coloring_from_sparsity(sp)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    out[i] = {"wall": statistics.median(wall), "cpu": statistics.median(cpu),
              "colours": int(colouring.num_colors)}
print(json.dumps(out))
"""


def _run(code: str, *args: str, src: str | None = None) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if src:
        env["PYTHONPATH"] = src
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", action="append", help="a src folder to import gradarg from")
    p.add_argument("--reps", type=int, default=5, help="fresh processes per tree and Hessian")
    args = p.parse_args(argv)
    trees = args.src or [None]
    runs: dict[tuple[int, str | None], list[dict]] = {}
    for _ in range(args.reps):
        for i in HESSIANS:
            for src in trees:
                runs.setdefault((i, src), []).append(_run(CHILD, str(i), str(HERE), src=src))
    try:
        theirs = _run(ASDEX, str(HERE), *map(str, HESSIANS))
    except subprocess.CalledProcessError:
        theirs = {}
    for i in HESSIANS:
        a = theirs.get(str(i))
        name = runs[(i, trees[0])][0]["name"]
        print(name + (f": asdex {a['wall'] * 1e3:.2f} ms wall, {a['cpu'] * 1e3:.2f} ms CPU, "
                      f"{a['colours']} colours" if a else ": asdex not importable here"))
        for src in trees:
            got = runs[(i, src)]
            wall = [r["wall"] * 1e3 for r in got]
            cpu = [r["cpu"] * 1e3 for r in got]
            ratio = (f"; CPU over asdex's {statistics.median(cpu) / (a['cpu'] * 1e3):.2f}"
                     if a else "")
            print(f"  {src or 'installed'}: first build {statistics.median(wall):.1f} ms wall "
                  f"(min {min(wall):.1f}), {statistics.median(cpu):.1f} ms CPU (min "
                  f"{min(cpu):.1f}){ratio}; passes {got[0]['passes']}, route {got[0]['route']}, "
                  f"numba loaded {got[0]['numba']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
