"""What ``import gradarg`` costs on top of ``import torch``, and which heavy modules it loads.

Each import runs in a fresh interpreter (five times; the median is printed).  networkx, numba
and matplotlib must not be loaded by ``import gradarg``: they are imported where they are
used (drawing layouts, colouring, plots).
"""

from __future__ import annotations

import statistics
import subprocess
import sys

CODE = ("import time, sys; t0 = time.perf_counter(); import torch; t1 = time.perf_counter(); "
        "import gradarg; t2 = time.perf_counter(); "
        "print(t1 - t0, t2 - t1, ','.join(m for m in ('networkx', 'numba', 'matplotlib') "
        "if m in sys.modules))")


def main() -> int:
    torch_s, extra_s, heavy = [], [], set()
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                             check=True).stdout.split()
        torch_s.append(float(out[0]))
        extra_s.append(float(out[1]))
        heavy.update(m for m in (out[2].split(",") if len(out) > 2 else []) if m)
    print(f"import torch: {statistics.median(torch_s):.2f} s; import gradarg on top: "
          f"{statistics.median(extra_s) * 1000:.0f} ms (median of 5 fresh interpreters)")
    print(f"heavy modules loaded by import gradarg: {sorted(heavy) or 'none'}")
    return 1 if heavy else 0


if __name__ == "__main__":
    raise SystemExit(main())
