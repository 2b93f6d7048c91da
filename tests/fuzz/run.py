"""Run the edge cases of ``cases.py`` and classify each result (issue 44).

A measurement run by hand, not part of the pytest run::

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/fuzz/run.py [--out tests/fuzz/results.json]
        [--only SUBSTRING] [--timeout 90]
    python tests/fuzz/run.py --compare tests/fuzz/results.json tests/fuzz/results_after.json

The cases run one after another in a child process (``multiprocessing``, spawned) whose
address space is capped at 4 GB (``resource.setrlimit(RLIMIT_AS)``); a case that times out
or kills the child is recorded (TIMEOUT / CRASH) and a fresh child takes the next case.

Classes:

RIGHT
    The value (or verdict) agrees with the case's oracle, written before the run.
CLEAR-ERROR
    A ``TypeError`` / ``ValueError`` (or an exception the docstring names for this input)
    whose message names what was wrong (one of the case's keywords), without internal names.
UNCLEAR-ERROR
    Another exception type (``AttributeError``, ``KeyError``, ``RuntimeError`` from ATen...),
    or a message that does not name the argument, or one with internal names.
WARNED
    A value that disagrees with the oracle, returned with a warning (raised while the call
    ran) whose text names what is wrong (one of the case's keywords): wrong, but not in
    silence.  Cases with no keywords cannot be WARNED.
SILENTLY-WRONG
    A value that disagrees with the oracle; a refusal the oracle expects that did not come;
    an "ok"/"agree" verdict about something wrong or unchecked.
OOM / CRASH / TIMEOUT
    The allocator refused (past the 4 GB cap), the child died, or it ran out of time.
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing as mp
import os
import pathlib
import re
import sys
import time
import traceback
import warnings

HERE = pathlib.Path(__file__).resolve().parent
CAP = 4 << 30

INTERNAL_MARKERS = (
    "aten::", "at::", "c10::", "data pointer", "doesn't have storage", "has no attribute",
    "object is not subscriptable", "not supported between instances", "unsupported format",
    "__init__()", "'nonetype' object", "zip()", "could not run", "tensors of type", "internal assert",
    "torch._c.",  # torch._C.<name>, not torch._check
    "unsupported operand type", "must be real number, not", "object of type",
    "is not iterable", "enforce fail", "_validate", "object is not callable",
    "takes from", "positional argument", "missing 1 required", "can't convert",
    "cannot convert", "index out of range", "dimension out of range", "sizes of tensors must",
    "expected scalar type", "mismatch in shape", "the size of tensor",
)
OOM_MARKERS = ("can't allocate memory", "defaultcpuallocator", "not enough memory",
               "cannot allocate memory", "out of memory")


def _short(obj, n=300):
    try:
        s = repr(obj)
    except Exception as e:  # noqa: BLE001
        s = f"<repr failed: {type(e).__name__}: {e}>"
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _names(key, msg):
    """``key`` occurs in ``msg``: as a whole word when short (``x``, ``v``, ``f``)."""
    if len(key) <= 2:
        return re.search(rf"(?<![A-Za-z0-9_]){re.escape(key)}(?![A-Za-z0-9_])", msg) is not None
    return key.lower() in msg.lower()


def classify_exception(e, case):
    msg = f"{type(e).__name__}: {e}"
    low = str(e).lower()
    if any(m in low for m in OOM_MARKERS) and not isinstance(e, MemoryError):
        return "OOM", "the allocator refused (raw allocator message)"
    if isinstance(e, MemoryError):
        # an estimate made before allocating (gradarg: "needs about 160 GB ... nothing was
        # allocated"), not an allocator's own failure (numpy: "Unable to allocate 1.49 GiB")
        if (str(e).strip() and "unable to allocate" not in str(e).lower()
                and any(u in str(e) for u in ("GB", "MB", "bytes", "GiB", "MiB"))):
            return "CLEAR-ERROR", "refused with a memory estimate"
        return "OOM", "MemoryError without an estimate"
    allowed = (TypeError, ValueError, *case.allow)
    if not isinstance(e, allowed):
        return "UNCLEAR-ERROR", f"{type(e).__name__} is not an argument error"
    if (case.kind == "pred" and not case.either and not isinstance(e, tuple(case.allow))):
        return "UNCLEAR-ERROR", "refused an input the documentation accepts"
    bad = [m for m in INTERNAL_MARKERS if m in low]
    if bad:
        return "UNCLEAR-ERROR", f"internal/raw message ({bad[0]!r})"
    if case.keys and not any(_names(k, str(e)) for k in case.keys):
        return "UNCLEAR-ERROR", f"does not name any of {list(case.keys)}"
    del msg
    return "CLEAR-ERROR", ""


def _rss_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(case):
    t0 = time.perf_counter()
    rec = {"name": case.name, "group": case.group, "target": case.target,
           "oracle": case.oracle, "call": case.call}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = case.fn()
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            cls, why = classify_exception(e, case)
            rec.update(outcome=cls, why=why, error=f"{type(e).__name__}: {e}"[:1500],
                       where="".join(traceback.format_exception(e)[-3:])[-1200:])
        else:
            if not isinstance(out, dict) or "ok" not in out:
                rec.update(outcome="SILENTLY-WRONG", why="case returned no verdict",
                           got=_short(out))
            else:
                said = [w for w in out.get("warnings", [])
                        if case.keys and any(_names(k, w) for k in case.keys)]
                wrong = "WARNED" if said else "SILENTLY-WRONG"
                rec.update(outcome="RIGHT" if out["ok"] else wrong,
                           got=str(out.get("got", ""))[:1500],
                           expected=str(out.get("expected", ""))[:1500],
                           why=str(out.get("why", "")))
    rec["warnings"] = sorted({f"{w.category.__name__}: {str(w.message)[:300]}" for w in caught})
    rec["seconds"] = round(time.perf_counter() - t0, 3)
    rec["peak_rss_mb"] = round(_rss_mb(), 1)
    return rec


def worker(conn, module="cases"):
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.path.insert(0, str(HERE))
    import torch

    torch.set_num_threads(1)
    cases = importlib.import_module(module)

    conn.send(("ready", len(cases.CASES)))
    while True:
        i = conn.recv()
        if i is None:
            return
        case = cases.CASES[i]
        try:
            rec = run_one(case)
        except BaseException as e:  # noqa: BLE001
            rec = {"name": case.name, "group": case.group, "target": case.target,
                   "oracle": case.oracle, "call": case.call, "outcome": "CRASH",
                   "error": f"{type(e).__name__}: {e}"[:1000]}
        try:
            conn.send(("done", rec))
        except Exception as e:  # noqa: BLE001 (unpicklable?)
            conn.send(("done", {**{k: str(v) for k, v in rec.items()}, "note": str(e)}))


class Child:
    def __init__(self, module: str = "cases"):
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker, args=(child, module), daemon=True)
        self.proc.start()
        child.close()
        if not self.conn.poll(120):
            raise RuntimeError("worker did not start")
        _tag, self.n = self.conn.recv()

    def kill(self):
        try:
            self.proc.kill()
        finally:
            self.proc.join(5)


CLASSES = ("RIGHT", "CLEAR-ERROR", "UNCLEAR-ERROR", "WARNED", "SILENTLY-WRONG", "OOM", "CRASH", "TIMEOUT")


def compare(before_path, after_path):
    """Markdown: counts per class before/after, and every case whose class changed."""
    before = {r["name"]: r for r in json.loads(pathlib.Path(before_path).read_text())["results"]}
    after = {r["name"]: r for r in json.loads(pathlib.Path(after_path).read_text())["results"]}
    names = [n for n in before if n in after]
    lines = ["| class | before | after |", "| --- | ---: | ---: |"]
    for k in CLASSES:
        nb = sum(before[n]["outcome"] == k for n in names)
        na = sum(after[n]["outcome"] == k for n in names)
        lines.append(f"| {k} | {nb} | {na} |")
    lines.append(f"| total | {len(names)} | {len(names)} |")
    lines += ["", "| case | before | after | after: what came back |", "| --- | --- | --- | --- |"]
    for n in names:
        b, a = before[n]["outcome"], after[n]["outcome"]
        if a != b:
            what = (a_err := after[n].get("error")) or after[n].get("got", "")
            what = " ".join(str(what).split())[:160].replace("|", "\\|")
            lines.append(f"| {n} | {b} | {a} | {what if a_err else ''} |")
    return "\n".join(lines)


def main(argv=None):
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--compare":
        print(compare(sys.argv[2], sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results.json"))
    ap.add_argument("--only", default=None, help="run the cases whose name contains this")
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--cases", default="cases",
                    help="the case module in this folder (cases, cases_blind)")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(HERE))
    cases = importlib.import_module(args.cases)  # names only; values computed in the child

    todo = [i for i, c in enumerate(cases.CASES) if not args.only or args.only in c.name]
    child = Child(args.cases)
    results = []
    t_start = time.perf_counter()
    for i in todo:
        case = cases.CASES[i]
        child.conn.send(i)
        if child.conn.poll(args.timeout):
            try:
                _, rec = child.conn.recv()
            except EOFError:
                rec = None
        else:
            rec = {"outcome": "TIMEOUT", "why": f"no answer in {args.timeout:.0f} s"}
            child.kill()
            child = Child(args.cases)
        if rec is None:
            code = child.proc.exitcode if not child.proc.is_alive() else None
            child.proc.join(5)
            code = child.proc.exitcode
            rec = {"outcome": "CRASH", "why": f"the child died (exit code {code})"}
            child = Child(args.cases)
        base = {"name": case.name, "group": case.group, "target": case.target,
                "oracle": case.oracle, "call": case.call}
        rec = {**base, **rec}
        results.append(rec)
        flag = "" if rec["outcome"] in ("RIGHT", "CLEAR-ERROR") else "  <--"
        print(f"{len(results):4d} {rec['outcome']:15s} {case.name}{flag}", flush=True)
    child.conn.send(None)
    child.proc.join(10)

    counts = {}
    for r in results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    print()
    print(f"{'class':16s} count")
    for k in CLASSES:
        print(f"{k:16s} {counts.get(k, 0)}")
    print(f"{'total':16s} {len(results)}   ({time.perf_counter() - t_start:.0f} s)")
    out = pathlib.Path(args.out)
    meta = {"pythonpath": os.environ.get("PYTHONPATH", ""), "counts": counts,
            "n": len(results)}
    try:
        import gradarg

        meta["gradarg_file"] = gradarg.__file__
    except Exception as e:  # noqa: BLE001
        meta["gradarg_file"] = f"import failed: {e}"
    out.write_text(json.dumps({"meta": meta, "results": results}, indent=1, default=str))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
