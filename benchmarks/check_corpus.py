"""check_backward on the scale corpus against torch.autograd.gradcheck, one process per case.

For every case of ``tests/check/scale_corpus.py`` (ten custom Functions, right and with two
realistic bugs) at the given size, a fresh Python process times ``gradarg.check_backward``
(float64 and float32 inputs) and ``torch.autograd.gradcheck`` (float64, full and
``fast_mode=True``), and reports each one's verdict, wall time and peak resident memory
(``ru_maxrss`` of that process, so one tool's memory does not hide another's).  The budget of
the issue is ``max(3 x gradcheck float64, 10 s)``; a gradcheck run is stopped after
``--limit`` seconds (then the budget uses the limit, a lower bound).

    python benchmarks/check_corpus.py                 # 64 x 512
    python benchmarks/check_corpus.py --size 32 128 --only rmsnorm
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMORY_LIMIT = 12 * 2**30


def child(name: str, tool: str, b: int, n: int) -> None:
    import resource
    import warnings

    # each tool gets at most MEMORY_LIMIT of address space: a run that needs more fails with
    # MemoryError ("error") instead of taking the machine down (gradcheck's fast_mode on the
    # fake-quantizer reached 15.9 GB)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    import torch

    sys.path.insert(0, str(ROOT / "tests" / "check"))
    import scale_corpus as sc

    import gradarg

    case = next(c for c in sc.cases(b, n) if c.name == name)
    dtype = torch.float32 if tool == "gradarg32" else torch.float64
    args = case.inputs(dtype)
    t0 = time.perf_counter()
    if tool.startswith("gradarg"):
        r = gradarg.check_backward(case.fn, *args, expected=case.expected)
        verdict = r.status
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ok = torch.autograd.gradcheck(case.fn, args, raise_exception=False,
                                              fast_mode=tool == "fast")
                verdict = "agree" if ok else "wrong"
            except Exception as err:  # noqa: BLE001 - an error is a verdict too
                verdict = f"error ({type(err).__name__})"
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MB on Linux
    print(json.dumps({"verdict": verdict, "seconds": seconds, "peak_mb": peak}))


def run(name: str, tool: str, b: int, n: int, limit: float) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    try:
        out = subprocess.run([sys.executable, __file__, "--child", name, tool, str(b), str(n)],
                             capture_output=True, text=True, timeout=limit, env=env,
                             check=False)
    except subprocess.TimeoutExpired:
        return {"verdict": "stopped", "seconds": limit, "peak_mb": float("nan")}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        why = (out.stderr.strip().splitlines() or [f"exit code {out.returncode}"])[-1]
        return {"verdict": "failed: " + why[:60],
                "seconds": float("nan"), "peak_mb": float("nan")}
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", nargs=2, type=int, default=[64, 512])
    ap.add_argument("--only", default="")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds per gradcheck run")
    ap.add_argument("--child", nargs=4)
    a = ap.parse_args()
    if a.child:
        name, tool, b, n = a.child
        child(name, tool, int(b), int(n))
        return
    sys.path.insert(0, str(ROOT / "tests" / "check"))
    import scale_corpus as sc

    b, n = a.size
    print(f"check_backward vs gradcheck at {b} x {n}, one process per case and tool")
    head = (f"{'case':34s} {'truth':5s} | {'gradarg f64':>20s} | {'gradarg f32':>20s} | "
            f"{'gradcheck f64':>20s} | {'fast_mode':>20s} | budget")
    print(head)
    for case in sc.cases(b, n):
        if a.only and a.only not in case.name:
            continue
        res = {t: run(case.name, t, b, n, a.limit if t in ("gradcheck", "fast") else 3600)
               for t in ("gradarg64", "gradarg32", "gradcheck", "fast")}
        budget = max(3 * res["gradcheck"]["seconds"], 10.0)
        within = all(res[t]["seconds"] <= budget for t in ("gradarg64", "gradarg32"))

        def cell(r):
            return f"{r['verdict'][:7]:7s} {r['seconds']:5.1f}s {r['peak_mb']:5.0f}MB"

        truth = "wrong" if case.wrong else "right"
        print(f"{case.name:34s} {truth:5s} | " + " | ".join(
            f"{cell(res[t]):>20s}" for t in ("gradarg64", "gradarg32", "gradcheck", "fast"))
            + f" | {budget:.0f}s {'ok' if within else 'OVER'}", flush=True)


if __name__ == "__main__":
    main()
