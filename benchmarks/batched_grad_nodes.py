"""Per backward node: ``torch.autograd.grad(..., is_grads_batched=True)`` against ``torch.func.vmap``.

The reverse route of ``gradarg.jacobian`` takes the older batched path only for graphs whose
every node is in ``gradarg.core.speeds.LEGACY_FAST_BACKWARD``.  This script times, for each
node of that list (and a few candidates), a small function whose graph holds that node (plus
``AccumulateGrad`` and, where needed, views), at several sizes and, for matrix products, in
both product forms (``W @ x``, ``x @ W.T``, batched).  Both paths compute the same rows; the
time is the median of interleaved repeats (benchmarks/timing.py), one torch thread expected.

Run as ``OMP_NUM_THREADS=1 python benchmarks/batched_grad_nodes.py`` (``--quick`` for fewer
repeats, ``--only NAME`` to time one node).  Not part of ``nox -s bench``: it is how the list
was chosen; the bench's ``W @ x`` rows guard the outcome.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections.abc import Callable

import torch
import torch.nn.functional as F
from timing import sample

from gradarg.core import basis, graph

DTYPE = torch.float32


def _g(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _r(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=_g(seed), dtype=DTYPE)


def cases(n: int) -> list[tuple[str, str, Callable[[torch.Tensor], torch.Tensor], torch.Tensor]]:
    """(node, label, fn, x): ``fn(x)`` has about ``n`` outputs unless it reduces."""
    x = _r(n, seed=n).abs() + 0.5  # positive: log, sqrt, rsqrt defined
    c = _r(n, seed=1).abs() + 0.5
    k = math.isqrt(n)
    W = _r(n, n, seed=2) / math.sqrt(n)
    Wt = _r(n // 4, n, seed=3) / math.sqrt(n)  # n -> n/4
    Ww = _r(4 * n, n, seed=4) / math.sqrt(n)  # n -> 4n
    Wq = _r(n // 4, n // 4, seed=5) / math.sqrt(n // 4)  # for (4, n/4) batches
    B3 = _r(4, n // 4, n // 4, seed=7)
    sq = _r(k, k, seed=6)
    out = [
        ("AbsBackward0", "abs", torch.abs, x),
        ("AddBackward0", "x + c", lambda t: t + c, x),
        ("AddcmulBackward0", "addcmul", lambda t: torch.addcmul(c, t, t), x),
        ("Atan2Backward0", "atan2", lambda t: torch.atan2(t, c), x),
        ("AtanBackward0", "atan", torch.atan, x),
        ("CosBackward0", "cos", torch.cos, x),
        ("DivBackward0", "x / c", lambda t: t / c, x),
        ("ErfBackward0", "erf", torch.erf, x),
        ("ExpBackward0", "exp", torch.exp, x),
        ("HypotBackward0", "hypot", lambda t: torch.hypot(t, c), x),
        ("LerpBackward0", "lerp", lambda t: torch.lerp(t, c, 0.3), x),
        ("Log1PBackward0", "log1p", torch.log1p, x),
        ("LogBackward0", "log", torch.log, x),
        ("MulBackward0", "x * c", lambda t: t * c, x),
        ("NegBackward0", "neg", torch.neg, x),
        ("PowBackward0", "x**3", lambda t: t**3, x),
        ("ReciprocalBackward0", "reciprocal", torch.reciprocal, x),
        ("ReluBackward0", "relu", torch.relu, x - 1),
        ("RsqrtBackward0", "rsqrt", torch.rsqrt, x),
        ("SigmoidBackward0", "sigmoid", torch.sigmoid, x),
        ("SinBackward0", "sin", torch.sin, x),
        ("SinhBackward0", "sinh", torch.sinh, x),
        ("SqrtBackward0", "sqrt", torch.sqrt, x),
        ("SubBackward0", "x - c", lambda t: t - c, x),
        ("TanhBackward0", "tanh (unlisted)", torch.tanh, x),
        # reductions (over rows of a square view: about sqrt(n) outputs)
        ("AmaxBackward0", "amax(1)", lambda t: t.view(k, -1).amax(1), x[: k * k]),
        ("LogsumexpBackward0", "logsumexp(1)", lambda t: t.view(k, -1).logsumexp(1), x[: k * k]),
        ("MaxBackward1", "max()", lambda t: t.max().reshape(1), x),
        ("MeanBackward0", "mean()", lambda t: t.mean().reshape(1), x),
        ("MeanBackward1", "mean(1) (unlisted)", lambda t: t.view(k, -1).mean(1), x[: k * k]),
        ("ProdBackward0", "prod()", lambda t: (t / 2 + 0.75).prod().reshape(1), x),
        ("ProdBackward1", "prod(1)", lambda t: t.view(k, -1).prod(1), x[: k * k]),
        ("SumBackward0", "sum()", lambda t: t.sum().reshape(1), x),
        ("SumBackward1", "sum(1)", lambda t: t.view(k, -1).sum(1), x[: k * k]),
        ("TraceBackward0", "trace", lambda t: t.view(k, k).trace().reshape(1), x[: k * k]),
        ("VarBackward0", "var(1)", lambda t: t.view(k, -1).var(1), x[: k * k]),
        # matrix products, both forms, and batched
        ("MvBackward0", "W @ x (n->n)", lambda t: W @ t, x),
        ("MvBackward0", "W @ x (n->n/4)", lambda t: Wt @ t, x),
        ("MvBackward0", "W @ x (n->4n)", lambda t: Ww @ t, x),
        ("MvBackward0", "mv(W, x)", lambda t: torch.mv(W, t), x),
        ("MmBackward0", "x @ W.T (n->n)", lambda t: t @ W.T, x),
        ("MmBackward0", "x @ W.T (n->n/4)", lambda t: t @ Wt.T, x),
        ("MmBackward0", "X @ W.T (4 x n/4)", lambda t: t.view(4, -1) @ Wq.T, x),
        ("MmBackward0", "W @ X (k x k)", lambda t: sq @ t.view(k, k), x[: k * k]),
        ("AddmmBackward0", "linear(X, W, b)", lambda t: F.linear(t.view(4, -1), Wq, c[: n // 4]), x),
        ("AddmvBackward0", "addmv (unlisted)", lambda t: torch.addmv(c, W, t), x),
        ("BmmBackward0", "bmm", lambda t: torch.bmm(t.view(4, 1, -1), B3).reshape(-1), x),
        ("UnsafeViewBackward0", "X3 @ W.T", lambda t: t.view(2, 2, -1) @ Wq.T, x),
        # views and copies
        ("CatBackward0", "cat", lambda t: torch.cat([t, t]), x),
        ("CloneBackward0", "clone", lambda t: t.clone() * 1.0, x),
        ("DiagonalBackward0", "diagonal", lambda t: t.view(k, k).diagonal() * 2, x[: k * k]),
        ("ExpandBackward0", "expand", lambda t: t.expand(2, -1) * 2, x),
        ("PermuteBackward0", "permute", lambda t: t.view(k, -1).permute(1, 0) * 2, x[: k * k]),
        ("RepeatBackward0", "repeat", lambda t: t.repeat(2) * 2, x),
        ("SliceBackward0", "slice", lambda t: t[1:] * 2, x),
        ("SqueezeBackward1", "squeeze(0)", lambda t: t.view(1, -1).squeeze(0) * 2, x),
        ("SqueezeBackward4", "squeeze([0])", lambda t: t.view(1, -1).squeeze((0,)) * 2, x),
        ("StackBackward0", "stack", lambda t: torch.stack([t, t]) * 2, x),
        ("TBackward0", "t", lambda t: t.view(k, -1).t() * 2, x[: k * k]),
        ("UnfoldBackward0", "unfold", lambda t: t.unfold(0, 4, 4) * 2, x),
        ("UnsqueezeBackward0", "unsqueeze", lambda t: t.unsqueeze(0) * 2, x),
        ("ViewBackward0", "view", lambda t: t.view(2, -1) * 2, x),
    ]
    return out


def _rows(fn, x, legacy: bool) -> Callable[[], object]:
    def run() -> object:
        leaf = x.detach().requires_grad_(True)
        with torch.enable_grad():
            y = fn(leaf)
        flat = y.reshape(-1)
        m = flat.numel()
        eye = basis._identity(m, flat.dtype, flat.device)
        if legacy:
            return torch.autograd.grad(
                [flat], [leaf], [eye], retain_graph=True, is_grads_batched=True
            )[0]

        def vjp(v):
            return torch.autograd.grad([flat], [leaf], [v], retain_graph=True)[0]

        return torch.func.vmap(vjp)(eye)

    return run


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default=None)
    p.add_argument("--sizes", default="64,256,1024")
    args = p.parse_args(argv)
    repeats = 7 if args.quick else 15
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"torch {torch.__version__} | threads {torch.get_num_threads()} | ms per Jacobian, "
          f"median of {repeats} interleaved repeats | ratio = is_grads_batched / vmap")
    print("| node | function | n | rows | is_grads_batched | vmap | ratio | graph |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for n in sizes:
        for node, label, fn, x in cases(n):
            if args.only and args.only not in node:
                continue
            leaf = x.detach().requires_grad_(True)
            y = fn(leaf)
            names = sorted(graph.graph_names([y]) - {"torch::autograd::AccumulateGrad"})
            calls = {"legacy": _rows(fn, x, True), "vmap": _rows(fn, x, False)}
            try:
                a, b = calls["legacy"](), calls["vmap"]()
            except RuntimeError as err:
                print(f"| {node} | {label} | {n} | - | error: {str(err)[:60]} | | | |")
                continue
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
            number = {k: max(1, math.ceil(0.002 / max(sample(c, 1), 1e-7)))
                      for k, c in calls.items()}
            res: dict[str, list[float]] = {k: [] for k in calls}
            order = list(calls)
            rng = random.Random(f"{label}{n}")
            for _ in range(repeats):
                rng.shuffle(order)
                for k in order:
                    res[k].append(sample(calls[k], number[k]))
            med = {k: statistics.median(v) * 1e3 for k, v in res.items()}
            print(f"| {node} | {label} | {n} | {y.numel()} | {med['legacy']:.3f} | "
                  f"{med['vmap']:.3f} | {med['legacy'] / med['vmap']:.2f} | "
                  f"{' '.join(names)} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
