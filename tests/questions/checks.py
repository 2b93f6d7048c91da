"""Run the ``check`` snippets of question records: each one is the key facts of a question's
right answer, as asserts on the installed torch.

    python tests/questions/checks.py corpus.json [ID ...]

The file is ``corpus.json`` itself or a plain JSON list of records (a collector's draft).

Each snippet runs in a fresh namespace (``isolated`` ones in a fresh interpreter), with
warnings recorded rather than printed, after ``torch.manual_seed(0)``; a snippet passes when it
runs to the end.  Prints one line per failing record and a count; exits 1 on any failure.
"""

from __future__ import annotations

import json
import subprocess
import sys
import traceback
import warnings
from pathlib import Path

TIMEOUT = 120


def run_one(record: dict) -> str | None:
    """None when the record's check runs to the end, else the error (last traceback lines)."""
    code = record["check"]
    if record.get("isolated"):
        proc = subprocess.run([sys.executable, "-c", "import torch; torch.manual_seed(0)\n" + code],
                              check=False, capture_output=True, text=True, timeout=TIMEOUT)
        return None if proc.returncode == 0 else proc.stderr.strip()[-2000:]
    import torch

    torch.manual_seed(0)
    before = (torch.is_grad_enabled(), torch.get_default_dtype(),
              torch.is_anomaly_enabled())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(code, f"<check {record['id']}>", "exec"), {"__name__": "__check__"})  # noqa: S102 (the corpus is our own data)
    except BaseException:  # noqa: BLE001 (any failure of a check is reported)
        return "".join(traceback.format_exc().splitlines(keepends=True)[-6:])
    finally:
        torch.set_grad_enabled(before[0])
        torch.set_default_dtype(before[1])
        torch.autograd.set_detect_anomaly(before[2])
    return None


_BATCH = r"""
import json, os, sys, traceback, types, warnings
import torch
out = {}
for n, record in enumerate(json.loads(sys.stdin.read())):
    torch.manual_seed(0)
    torch._dynamo.reset()          # no compiled code or guards carried from the last check
    module = types.ModuleType(f"check_{n}")   # its own module, as a script would be
    sys.modules[module.__name__] = module
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(record["check"], "<check " + record["id"] + ">", "exec"),
                 module.__dict__)
        out[record["id"]] = None
    except BaseException:
        out[record["id"]] = "".join(traceback.format_exc().splitlines(True)[-6:])
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
print(json.dumps(out), flush=True)
sys.stderr.flush()
# no interpreter teardown: gloo's threads still joinable at exit can abort it ("terminate
# called without an active exception"), after every result is printed
os._exit(0)
"""


def run_isolated(records: list[dict]) -> dict[str, str | None]:
    """The ``isolated`` checks (torch.compile, process groups) one after the other in one fresh
    interpreter, apart from the caller's: ``{id: None or the error}``."""
    proc = subprocess.run([sys.executable, "-c", _BATCH], input=json.dumps(records),
                          check=False, capture_output=True, text=True,
                          timeout=TIMEOUT * max(1, len(records)))
    if proc.returncode:
        return {r["id"]: proc.stderr[-2000:] for r in records}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    data = json.loads(Path(argv[0]).read_text())
    # corpus.json is {"about", "split_seed", "records"}; a collector's draft is a plain list
    records = data["records"] if isinstance(data, dict) else data
    wanted = set(argv[1:])
    failed = 0
    ran = 0
    for record in records:
        if wanted and record["id"] not in wanted:
            continue
        if not record.get("check"):
            continue
        ran += 1
        error = run_one(record)
        if error is not None:
            failed += 1
            print(f"FAIL {record['id']}: {error}\n")
    print(f"{ran - failed} of {ran} checks pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
