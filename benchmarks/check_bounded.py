"""check_backward on wrong backwards of ordinary layer size: time and peak memory against gradcheck.

Two custom Functions with a wrong backward (``tests/check/layer_cases.py``): a linear layer
whose backward forgets the bias (input 32×64, weight 64×64), and a layer norm whose backward
reduces over the wrong dim (32×64); and a larger linear layer (input 128×256, weight 256×256:
98,560 input entries) where gradcheck's full Jacobians (about 25 GB) are not attempted.  Each
case runs in a fresh Python process, one thread; peak memory is the process's ``VmHWM`` (peak
resident set) at the end, and the same minus ``VmHWM`` before the call (torch and the inputs).
Targets: the default ``check_backward`` within 3× gradcheck's time or 5 s, whichever is larger,
and under 500 MB above the baseline; it must name the wrong pair.

    OMP_NUM_THREADS=1 python benchmarks/check_bounded.py          # defaults, probes, gradcheck
    OMP_NUM_THREADS=1 python benchmarks/check_bounded.py --full   # also localize="full" (slow)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = {
    "linear 32×64, bias forgotten": ("linear", {}, "b"),
    "layer norm 32×64, wrong dim": ("layer", {}, "x"),
    "linear 128×256, bias forgotten": ("linear", {"batch": 128, "n_in": 256, "n_out": 256}, "b"),
}
CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import torch, gradarg
from layer_cases import (LayerNormWrongDim, LinearForgotBias, layer_norm_inputs,
                         linear_inputs)

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
torch.set_num_threads(1)
kind, sizes, mode = sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
if kind == "linear":
    fn, args = LinearForgotBias.apply, linear_inputs(**sizes)
else:
    fn, args = LayerNormWrongDim.apply, layer_norm_inputs(**sizes)
base = hwm()
t = time.perf_counter()
named = ""
if mode == "gradcheck":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok = torch.autograd.gradcheck(fn, args, raise_exception=False)
    verdict = "right" if ok else "wrong"
else:
    localize = {"default": None, "probes": False, "full": "full"}[mode]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gradarg.check_backward(fn, *args, localize=localize)
    verdict = r.status
    named = ",".join(p.input for p in r.wrong_pairs)
dt = time.perf_counter() - t
print(json.dumps({"time": dt, "peak": hwm(), "above": hwm() - base, "verdict": verdict,
                  "named": named}))
"""


def run(kind: str, sizes: dict, mode: str) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(HERE.parent / "tests" / "check"), kind,
         json.dumps(sizes), mode], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    modes = ["gradcheck", "default", "probes"] + (["full"] if "--full" in argv else [])
    print("| case | run | time (s) | peak RSS (MB) | above baseline (MB) | verdict | "
          "pair named | time / gradcheck |")
    print("|---|---|---|---|---|---|---|---|")
    failed = []
    for name, (kind, sizes, bad) in CASES.items():
        ref = None
        for mode in modes:
            if mode in ("gradcheck", "full") and sizes:
                print(f"| {name} | {mode} | not run: full Jacobians of about 25 GB | | | | | |")
                continue
            r = run(kind, sizes, mode)
            if mode == "gradcheck":
                ref = r["time"]
            ratio = f"{r['time'] / ref:.2f}" if ref else ""
            print(f"| {name} | {mode} | {r['time']:.2f} | {r['peak'] / 2**20:.0f} | "
                  f"{r['above'] / 2**20:.0f} | {r['verdict']} | {r['named']} | {ratio} |",
                  flush=True)
            if mode == "default":
                limit = max(5.0, 3 * ref) if ref else 5.0
                if (r["time"] > limit or r["above"] > 500 * 2**20 or r["named"] != bad):
                    failed.append(name)
    if failed:
        print("over the target (3× gradcheck or 5 s, 500 MB, the wrong pair named):",
              ", ".join(failed))
        return 1
    print("every default run within 3× gradcheck's time (or 5 s), under 500 MB above the "
          "baseline, and names the wrong pair")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
