"""Sparsity detection over PyTorch's OpInfo database, as PyTorch runs its own operator tests.

Shared by ``tests/sparse/test_detect_opinfo.py`` (a bounded subset in CI, everything with
``GRADARG_OPINFO=all``) and ``benchmarks/detect_opinfo.py`` (the table).

For every entry of ``torch.testing._internal.common_methods_invocations.op_db`` (private, as
PyTorch's own tests use it) that supports float64 and autograd on the CPU, the first
:data:`PER_OP` float64 samples (seeded from the operator's name, so every run sees the same
ones) are turned into a function of one flat vector ``x`` (the sample's floating input
tensors, flattened and concatenated; the other arguments are constants) returning one flat
vector (the floating outputs after the sample's ``output_process_fn_grad``, flattened and
concatenated; complex outputs as their real and imaginary parts).  Then:

* ``jacobian_sparsity`` is run on it;
* the dense Jacobian (``torch.autograd.functional.jacobian``) is taken at the sample, at
  :data:`RANDOM_POINTS` random points near it (the sample perturbed: a point far from the
  sample may leave the operator's domain) and at one standard normal point; points where
  the function fails or the Jacobian is not finite are skipped;
* the outcome is one of :data:`CLASSES`: ``exact`` (pattern = union of the non-zeros),
  ``conservative`` (pattern ⊋ union), ``refused`` (an ``UnsupportedOpError`` that names
  the operator without a rule, or says that ``fn`` reads values of ``x``), ``internal error`` (any other exception from detection),
  ``missed`` (a non-zero of a dense Jacobian outside the pattern, confirmed by central
  finite differences at the same point: torch's own derivative of ``as_strided_scatter``
  is wrong in torch 2.13, such samples are reported and not scored), ``wrong value`` (an
  exact or conservative pattern whose ``SparseJacobian`` at the sample differs from the
  dense Jacobian there: compression read an entry wrongly).  Samples without a
  reference (no point where the Jacobian could be taken, an output that is not floating) are
  counted as ``no reference`` and never enter the other classes.
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings
import zlib
from collections import Counter
from dataclasses import dataclass, field

import torch

from gradarg import SparseJacobian, UnsupportedOpError, jacobian_sparsity

D = torch.float64
PER_OP = 3
RANDOM_POINTS = 2
# vmap's Jacobians (vectorize=True) are fast but not always right (cdist with a broadcast
# batch, torch 2.13): GRADARG_OPINFO_VECTORIZE=0 takes them row by row
VECTORIZE = os.environ.get("GRADARG_OPINFO_VECTORIZE", "1") != "0"
MAX_ENTRIES = 10**6  # larger dense Jacobians (rows x columns) are not taken: "no reference"
CLASSES = ("exact", "conservative", "refused", "internal error", "missed", "wrong value",
           "no reference")
# operators whose every sample was ever missed or internal-error (issue 44), and a spread of
# families (issue 45): the CI subset always runs these
ALWAYS = (
    "nn.functional.pad",
    "_native_batch_norm_legit",
    "_batch_norm_with_update",
    "fft.hfft",
    "fft.hfft2",
    "fft.hfftn",
    "nn.functional.conv2d",
    "nn.functional.conv3d",
    "nn.functional.conv_transpose2d",  # output_padding: an internal error once
    "stft",  # transpose_ in place below functionalization: missed once
    "as_strided_scatter",  # torch's own Jacobian is wrong: must not count as missed
    "nn.functional.ctc_loss",  # a block of 7e8 pairs: refused by its size, not allocated
)


def op_db() -> list:
    """The OpInfo entries that support float64 and autograd on the CPU.

    ``common_methods_invocations`` imports ``expecttest`` (a test-only dependency of PyTorch,
    in the ``test`` and ``docs`` extras)."""
    from torch.testing._internal.common_methods_invocations import op_db as db

    return [o for o in db if o.supports_autograd and D in o.supported_dtypes("cpu")]


def label(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


@dataclass
class Outcome:
    op: str
    index: int
    kind: str
    detail: str = ""
    missed: int = 0
    extra: int = 0
    nnz: int = 0
    seconds: float = 0.0


@dataclass
class Case:
    """One sample as a function of a flat vector."""

    fn: object
    x: torch.Tensor
    shapes: list = field(default_factory=list)


def floating_leaves(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value] if (value.is_floating_point() or value.is_complex()) else []
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in floating_leaves(v)]
    return []


def make_case(op, sample) -> Case | None:
    """The sample as ``fn(x)`` on a flat vector ``x``, or None when its input has no real
    floating tensor (nothing to differentiate)."""
    inp = sample.input
    if isinstance(inp, torch.Tensor):
        inputs, single = [inp], True
    elif isinstance(inp, (list, tuple)) and inp and all(isinstance(t, torch.Tensor) for t in inp):
        inputs, single = list(inp), False
    else:
        return None
    if not all(t.dtype == D and t.layout == torch.strided for t in inputs):
        return None
    shapes = [tuple(t.shape) for t in inputs]
    sizes = [t.numel() for t in inputs]
    x = torch.cat([t.detach().reshape(-1) for t in inputs]) if inputs else None
    args, kwargs, post = sample.args, sample.kwargs, sample.output_process_fn_grad

    def fn(v: torch.Tensor) -> torch.Tensor:
        parts = [p.reshape(s) for p, s in zip(torch.split(v, sizes), shapes, strict=True)]
        a = parts[0] if single else parts
        out = post(op(a, *args, **kwargs))
        flat = []
        for t in floating_leaves(out):
            if t.is_complex():
                t = torch.view_as_real(t)
            flat.append(t.reshape(-1))
        if not flat:
            raise LookupError("no floating output")
        return torch.cat(flat) if len(flat) > 1 else flat[0]

    return Case(fn, x, shapes)


def dense_jacobians(case: Case, seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``(point, Jacobian)`` at the sample, at RANDOM_POINTS points near it and at one
    standard normal point; points where the function fails or the Jacobian is not finite are
    left out."""
    g = torch.Generator().manual_seed(seed)
    points = [case.x]
    for _ in range(RANDOM_POINTS):
        noise = torch.randn(case.x.shape, generator=g, dtype=D)
        points.append(case.x + 0.1 * noise * (1 + case.x.abs()))
    points.append(torch.randn(case.x.shape, generator=g, dtype=D))  # away from the sample
    found = []
    for p in points:
        torch.manual_seed(seed)  # operators that draw random numbers (dropout) draw the same
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    if not VECTORIZE:
                        raise NotImplementedError
                    j = torch.autograd.functional.jacobian(case.fn, p, vectorize=True)
                except Exception:  # noqa: BLE001 - vmap refused: the loop over rows
                    j = torch.autograd.functional.jacobian(case.fn, p)
        except Exception:  # noqa: BLE001, S112 - no Jacobian at this point: the next one
            continue
        if bool(torch.isfinite(j).all()):
            found.append((p, j))
    return found


def finite_differences(case: Case, p: torch.Tensor, seed: int) -> torch.Tensor:
    """Central differences of ``fn`` at ``p``, one column per input element."""
    cols = []
    for k in range(p.numel()):
        h = 1e-6 * (1 + abs(float(p[k])))
        e = torch.zeros_like(p)
        e[k] = h
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(seed)
            up = case.fn(p + e)
            torch.manual_seed(seed)
            down = case.fn(p - e)
        cols.append((up - down) / (2 * h))
    return torch.stack(cols, 1) if cols else torch.zeros(0, 0, dtype=D)


def confirmed_misses(case: Case, jacobians, found: torch.Tensor, seed: int) -> torch.Tensor:
    """The entries outside ``found`` where torch's Jacobian is non-zero *and* finite
    differences agree that it is (torch's own derivative can be wrong: ``as_strided_scatter``
    in torch 2.13 returns the complement of the right pattern for ``self``)."""
    missed = torch.zeros_like(found)
    for p, j in jacobians:
        out = (j != 0) & ~found
        if not out.any():
            continue
        fd = finite_differences(case, p, seed).reshape(j.shape)
        scale = 1 + float(fd.abs().max()) if fd.numel() else 1.0
        missed |= out & (fd.abs() > 1e-5 * scale)
    return missed


def sparse_values_differ(case: Case, found: torch.Tensor, dense: torch.Tensor,
                         seed: int) -> str:
    """``SparseJacobian(found)`` evaluated at the sample against the dense Jacobian there:
    ``""`` when every entry agrees (rtol 1e-7, atol 1e-9 of the largest entry, or 16 eps of
    the result's dtype when narrower), else what differs; a failure of the sparse evaluation
    is reported the same way."""
    try:
        torch.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sj = SparseJacobian(found)
            torch.manual_seed(seed)
            got = sj(case.fn, case.x)
        got = got.to_dense() if got.layout != torch.strided else got
        got = got.reshape(dense.shape)
    except Exception as e:  # noqa: BLE001 - the evaluation itself fails: reported
        return f"SparseJacobian fails: {type(e).__name__}: {e}"[:200]
    # in fn(x)'s dtype from forward mode (documented): compared within that dtype's precision
    eps = torch.finfo(got.dtype).eps if got.is_floating_point() else 0.0
    got = got.to(dense.dtype)
    scale = float(dense.abs().max()) if dense.numel() else 0.0
    bad = ~torch.isclose(got, dense, rtol=max(1e-7, 16 * eps),
                         atol=max(1e-9, 16 * eps) * max(scale, 1.0))
    if bool(bad.any()):
        return (f"SparseJacobian differs at {int(bad.sum())} entries (largest error "
                f"{float((got - dense).abs().max()):.3g})")
    return ""


def samples(op, per_op: int = PER_OP):
    seed = zlib.crc32(label(op).encode())
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        it = op.sample_inputs("cpu", D, requires_grad=False)
        out = []
        for s in it:
            out.append(s)
            if len(out) == per_op:
                break
    return seed, out


def run_sample(op, index: int, sample, seed: int) -> Outcome:
    name = label(op)
    case = make_case(op, sample)
    if case is None:
        return Outcome(name, index, "no reference", "no float64 tensor input")
    try:
        torch.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = case.fn(case.x)
    except Exception as e:  # noqa: BLE001 - the sample itself fails: not scored
        return Outcome(name, index, "no reference", f"fn fails: {type(e).__name__}"[:120])
    if y.numel() * case.x.numel() > MAX_ENTRIES:
        return Outcome(name, index, "no reference", "Jacobian too large")
    t0 = time.perf_counter()
    try:
        torch.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = jacobian_sparsity(case.fn, case.x, layout=torch.strided)
    except UnsupportedOpError as e:
        msg = str(e)
        clear = msg.startswith(("no sparsity rule for ", "fn ")) or "would hold only" in msg
        kind = "refused" if clear else "internal error"
        return Outcome(name, index, kind, msg.split(";")[0][:160], seconds=time.perf_counter() - t0)
    except LookupError:
        return Outcome(name, index, "no reference", "no floating output")
    except Exception as e:  # noqa: BLE001 - anything else is a bug of detection
        return Outcome(name, index, "internal error", f"{type(e).__name__}: {e}"[:200],
                       seconds=time.perf_counter() - t0)
    seconds = time.perf_counter() - t0
    if y.numel() == 0 or case.x.numel() == 0:  # nothing to differentiate: an empty Jacobian
        jacobians = [(case.x, torch.zeros(y.numel(), case.x.numel(), dtype=D))]
    else:
        jacobians = dense_jacobians(case, seed)
    if not jacobians:
        return Outcome(name, index, "no reference", "no point with a finite Jacobian",
                       seconds=seconds)
    nz = jacobians[0][1] != 0
    for _, j in jacobians[1:]:
        nz |= j != 0
    if found.shape != nz.shape:
        return Outcome(name, index, "internal error",
                       f"pattern shape {tuple(found.shape)} != Jacobian {tuple(nz.shape)}",
                       seconds=seconds)
    detail = ""
    if (nz & ~found).any():
        confirmed = confirmed_misses(case, jacobians, found, seed)
        if not confirmed.any():
            return Outcome(name, index, "no reference",
                           f"torch's Jacobian has {int((nz & ~found).sum())} non-zeros that "
                           "finite differences say are zero", seconds=seconds)
        detail = f"{int((nz & ~found).sum() - confirmed.sum())} more not confirmed"
        nz = (nz & found) | confirmed
    missed = int((nz & ~found).sum())
    extra = int((found & ~nz).sum())
    kind = "missed" if missed else "conservative" if extra else "exact"
    if not missed and found.any() and jacobians[0][0] is case.x:
        wrong = sparse_values_differ(case, found, jacobians[0][1], seed)
        if wrong:
            kind, detail = "wrong value", wrong
    return Outcome(name, index, kind, detail, missed=missed, extra=extra, nnz=int(nz.sum()),
                   seconds=seconds)


def run(ops, per_op: int = PER_OP, log=None) -> list[Outcome]:
    """Every sample of every operator of ``ops``; ``log`` (a file) gets one line per sample."""
    results = []
    for op in ops:
        try:
            seed, ss = samples(op, per_op)
        except Exception as e:  # noqa: BLE001 - the sample generator fails: not scored
            results.append(Outcome(label(op), 0, "no reference", f"samples: {e}"[:120]))
            continue
        for i, s in enumerate(ss):
            results.append(run_sample(op, i, s, seed + i))
            if log is not None:
                r = results[-1]
                print(f"{r.op} #{r.index}: {r.kind} {r.detail}", file=log, flush=True)
    return results


def table(results: list[Outcome], top: int = 15) -> str:
    counts = Counter(r.kind for r in results)
    scored = sum(counts[k] for k in CLASSES[:-1])
    lines = [f"{'class':<16} {'samples':>8} {'share':>7}"]
    for k in CLASSES:
        share = f"{100 * counts[k] / scored:6.1f}%" if k != "no reference" and scored else ""
        lines.append(f"{k:<16} {counts[k]:>8} {share:>7}")
    lines.append(f"{'scored':<16} {scored:>8}")
    refused = Counter(r.detail.split(" (")[0] for r in results if r.kind == "refused")
    if refused:
        lines.append("")
        lines.append("most refused operators (samples):")
        for what, c in refused.most_common(top):
            lines.append(f"  {c:>4}  {what}")
    wrong = [r for r in results if r.detail.startswith("torch's Jacobian")]
    if wrong:
        lines.append("")
        lines.append("torch's own Jacobian contradicted by finite differences (not scored):")
        for r in wrong:
            lines.append(f"  {r.op} #{r.index}: {r.detail}")
    for k in ("missed", "internal error"):
        bad = [r for r in results if r.kind == k]
        if bad:
            lines.append("")
            lines.append(f"{k}:")
            for r in bad:
                more = f" ({r.missed} of {r.nnz} non-zeros)" if k == "missed" else ""
                lines.append(f"  {r.op} #{r.index}{more} {r.detail}")
    return "\n".join(lines)


def summary_seconds(results: list[Outcome]) -> float:
    return math.fsum(r.seconds for r in results)


CI_STRIDE = 5


def ci_subset(ops: list) -> list:
    """The bounded, deterministic subset CI runs: every ``CI_STRIDE``-th operator of
    ``op_db`` and every operator of :data:`ALWAYS`."""
    return [o for i, o in enumerate(ops) if i % CI_STRIDE == 0 or o.name in ALWAYS]


def main() -> None:
    """``python opinfo_detect.py [--ci] [NAME ...]``: the outcomes of the named operators
    (op_db labels or names; every operator without a name; ``--ci``: the CI subset of those)
    as JSON lines on stdout.  The tests run
    this in a child process: importing ``common_methods_invocations`` changes global state
    (``torch.backends.disable_global_flags()``, patched ``torch._C.ScriptFunction.__call__``)
    that other tests of the same process must not inherit."""
    import json
    from dataclasses import asdict

    torch.set_num_threads(1)
    names = set(sys.argv[1:]) - {"--ci"}
    ops = [o for o in op_db() if not names or label(o) in names or o.name in names]
    if "--ci" in sys.argv:
        ops = ci_subset(ops)
    for r in run(ops):
        print(json.dumps(asdict(r)), flush=True)


if __name__ == "__main__":
    main()
