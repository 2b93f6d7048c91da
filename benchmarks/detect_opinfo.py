"""Sparsity detection on PyTorch's OpInfo database: the table of outcomes.

Run as ``python benchmarks/detect_opinfo.py [--per-op N] [--only NAME ...] [--json FILE]``
(every float64 autograd operator of ``op_db``, 3 samples each by default; a few minutes on one
core).  Classes, as in ``tests/sparse/opinfo_detect.py``: exact, conservative (a superset of
the dense Jacobians' non-zeros at the sample and at random points near it), refused (a named
``UnsupportedOpError``), internal error, missed (a non-zero outside the pattern: must be 0).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sparse"))
from opinfo_detect import PER_OP, label, op_db, run, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-op", type=int, default=PER_OP)
    parser.add_argument("--only", nargs="*", default=None, help="operator names (op_db labels)")
    parser.add_argument("--json", default=None, help="write every outcome to this file")
    parser.add_argument("--log", action="store_true", help="one line per sample on stderr")
    a = parser.parse_args()
    torch.set_num_threads(1)
    ops = op_db()
    if a.only:
        ops = [o for o in ops if label(o) in a.only or o.name in a.only]
    t = time.perf_counter()
    results = run(ops, a.per_op, sys.stderr if a.log else None)
    elapsed = time.perf_counter() - t
    print(f"{len(ops)} operators, {len(results)} samples, {elapsed:.1f} s "
          f"(torch {torch.__version__})")
    print(table(results))
    if a.json:
        Path(a.json).write_text(json.dumps([asdict(r) for r in results], indent=0))


if __name__ == "__main__":
    main()
