"""A compiled sparse derivative in a later process: torch's options, and the compiled call.

Run ``python benchmarks/compiled_later_process.py [--functions 0,3] [--options ...]`` (one
thread).  For each of the seven functions of ``benchmarks/problems.py`` and each option, a
first process compiles (and writes what the option keeps: nothing more, a cache-artifact
file, a package), then a later process, a fresh interpreter sharing that folder, is timed
from its start to its first compiled result: ``import torch``, ``import gradarg``, the
pattern (read from a file the parent wrote, as a script that keeps its pattern does; the
detection is timed apart), the construction, the first compiled call.  Options:

* ``torch.compile``: today's path, ``sj.compile(f)(x)``; the later process finds the
  remembered winner and inductor's FX graph and AOTAutograd caches, and pays Dynamo's
  start-up and trace.
* ``mega-cache``: the first process saves ``torch.compiler.save_cache_artifacts()``; the later
  process, in an empty cache folder, loads them (``load_cache_artifacts``) then compiles as
  above (what moving the caches to another machine costs).
* ``package``: the first process calls ``CompiledSparse.package(x)`` (AOTInductor, via
  ``make_fx`` and ``torch.export``); the later one loads it with the private
  ``torch._C._aoti.AOTIModelPackageLoader``.
* ``package (public loader)``: the same package loaded with
  ``torch._inductor.aoti_load_package``.
* ``make_fx + compile_fx``: no Dynamo: the pure pass traced by ``make_fx`` and compiled by
  inductor's ``compile_fx`` (its FX graph cache warm from the first process).

Then, in the process that built a package, the compiled call before and after
(``torch.compile``'s function, then the package's, same ``CompiledSparse``): µs per call in
a row (300 calls, median of 5) and interleaved (one call of each in turn, medians).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

T0 = time.perf_counter()  # the child's clock starts before torch's import

HERE = os.path.dirname(os.path.abspath(__file__))
OPTIONS = ("torch.compile", "mega-cache", "package", "package (public loader)",
           "make_fx + compile_fx")


def child(role: str, option: str, index: int, folder: str) -> dict:
    times: dict = {}
    import torch

    times["import torch"] = time.perf_counter() - T0
    torch.set_num_threads(1)
    sys.path.insert(0, HERE)
    from problems import problem

    import gradarg
    from gradarg.sparse import _aot

    times["import gradarg"] = time.perf_counter() - T0
    _, kind, f, x = problem(index)
    hessian = kind == "hessian"
    pattern_file = os.path.join(folder, "pattern.pt")
    if role == "first":
        start = time.perf_counter()
        pattern = (gradarg.hessian_sparsity if hessian else gradarg.jacobian_sparsity)(f, x)
        times["detect"] = time.perf_counter() - start
        torch.save(pattern, pattern_file)
    else:
        pattern = torch.load(pattern_file)
    build = gradarg.SparseHessian if hessian else gradarg.SparseJacobian
    op = build(pattern, x.shape)
    times["construct"] = time.perf_counter() - T0
    if option == "mega-cache" and role == "later":
        with open(os.path.join(folder, "artifacts.bin"), "rb") as file:
            torch.compiler.load_cache_artifacts(file.read())
        times["load artifacts"] = time.perf_counter() - T0
    if option == "package (public loader)":
        _aot.PUBLIC = True
    if option == "make_fx + compile_fx":
        from torch._inductor.compile_fx import compile_fx
        from torch.fx.experimental.proxy_tensor import make_fx

        jit = op.compile(f)  # for its chosen mode's pure pass (nothing compiled yet)
        mode = next(iter(jit._modes.values()))
        seeds = mode.seeds(x.dtype)
        with torch.no_grad():
            gm = make_fx(mode.pure(f))(x, *seeds)
            out = compile_fx(gm, [x, *seeds])(x, *seeds)
            values = mode.recover(out[0] if isinstance(out, (list, tuple)) else out)
    else:
        jit = op.compile(f)
        values = jit.values(x)
    times["first compiled result"] = time.perf_counter() - T0
    want = op(f, x).coalesce().values()
    times["error"] = float((values - want).abs().max() / want.abs().max())
    times["dynamo imported"] = "torch._dynamo" in sys.modules
    if option != "make_fx + compile_fx":
        times["artifact"] = jit.artifact
        times["mode"] = jit.mode
    if role == "first" and option == "mega-cache":
        artifacts = torch.compiler.save_cache_artifacts()
        with open(os.path.join(folder, "artifacts.bin"), "wb") as file:
            file.write(artifacts[0] if artifacts else b"")
    if role == "first" and option.startswith("package"):
        ready = jit._ready[x.shape, x.dtype]
        traced = ready.compiled
        start = time.perf_counter()
        jit.package(x)
        times["package build s"] = time.perf_counter() - start
        times.update(per_call(jit, x, traced))
    return times


def per_call(jit, x, traced) -> dict:
    """µs per call of ``jit(x)`` with torch.compile's function, then the package's."""
    k = (x.shape, x.dtype)
    packaged = jit._ready[k]

    def use(compiled):
        jit._ready[k] = packaged._replace(compiled=compiled)

    def row(compiled) -> float:
        use(compiled)
        jit(x)
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(300):
                jit(x)
            runs.append((time.perf_counter() - start) / 300)
        return statistics.median(runs) * 1e6

    out = {"row before µs": row(traced), "row after µs": row(packaged.compiled)}
    before, after = [], []
    for _ in range(300):
        for compiled, into in ((traced, before), (packaged.compiled, after)):
            use(compiled)
            start = time.perf_counter()
            jit(x)
            into.append(time.perf_counter() - start)
    out["interleaved before µs"] = statistics.median(before) * 1e6
    out["interleaved after µs"] = statistics.median(after) * 1e6
    use(packaged.compiled)
    return out


def run_child(role: str, option: str, index: int, folder: str, cache: str) -> dict:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--child", role, option, str(index), folder],
                         capture_output=True, text=True, env=env, check=False)
    if out.returncode:
        return {"failed": out.stderr.strip().splitlines()[-1][:200]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--functions", default="0,1,2,3,4,5,6")
    p.add_argument("--options", default="0,1,2,3,4",
        help="indices into " + ", ".join(f"{i}: {o}" for i, o in enumerate(OPTIONS)))
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        role, option, index, folder = args.child
        print(json.dumps(child(role, option, int(index), folder)))
        return 0
    sys.path.insert(0, HERE)
    from problems import PROBLEMS

    root = tempfile.mkdtemp(prefix="later-process-")
    for i in (int(v) for v in args.functions.split(",")):
        for o in (int(v) for v in args.options.split(",")):
            option = OPTIONS[o]
            folder = os.path.join(root, f"{i}-{o}")
            os.makedirs(folder)
            cache = os.path.join(folder, "inductor")
            first = run_child("first", option, i, folder, cache)
            if option == "mega-cache":
                cache = os.path.join(folder, "inductor-empty")
            later = run_child("later", option, i, folder, cache)
            print(json.dumps({"function": PROBLEMS[i][0], "option": option,
                              "first": first, "later": later}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
