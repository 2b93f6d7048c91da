"""What was measured about torch's batching paths, and the per-function route plans.

The tables below decide which batched path a route takes; each says what was measured (torch
2.13, one thread; the scripts are in ``benchmarks/``).  A new measured fact goes here, next to
the table it changes; the routes (:mod:`.reverse`, :mod:`.forward`) read these names at call
time (tests switch them).  :data:`PLANS` remembers, per function and input signature, which
route won, so that a graph is recorded and inspected once rather than on every call.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import torch

__all__ = [
    "DOUBLE_VJP_WINS",
    "FLOAT64_MV_FORWARD",
    "LEGACY_FAST_BACKWARD",
    "LEGACY_FAST_DOUBLE_BACKWARD",
    "LEGACY_FORWARD_MV_MAX_COLUMNS",
    "LEGACY_MAX_ROWS",
    "PLANS",
    "USE_LEGACY_BATCHED_GRAD",
    "WRONG_BATCHED_BACKWARD",
    "PlanCache",
    "best_of_3",
    "float64_mv_forward_faster",
    "signature",
]

# Backward nodes whose functorch batching rule gives wrong results in the torch versions tested
# (torch 2.13: every row of cdist's batched backward is wrong, and torch.func.jacrev with it;
# tests/core/test_ops_corpus.py checks that torch still has the bug).  A graph containing one is
# differentiated with the loop instead: slower, right.
WRONG_BATCHED_BACKWARD = frozenset({"CdistBackward0"})

# Backward nodes for which torch.autograd.grad(..., is_grads_batched=True) (public; torch's older
# batching rules) is faster than torch.func.vmap over torch.autograd.grad: measured with torch
# 2.13, one thread, 64 and 256 batched cotangents, every op of tests/core/test_ops_corpus.py plus
# common view and arithmetic nodes (benchmarks/batched_grad_nodes.py times each node alone).
# For these the older path takes 0.70-0.92x the time of vmap at both sizes (its per-call Python
# overhead is smaller, its rules are as fast).  Nodes without an older rule (tanh, softmax,
# linalg, convolution, indexing, ...) make it loop per cotangent instead, 1.2-25x slower,
# growing with the batch: they are not listed, and one such node in the graph keeps the whole
# backward on torch.func.vmap.  MvBackward0 (``W @ x`` with a 1-d ``x``) and AddmvBackward0 are
# out: the older rule for mv's backward is 2.3x slower at 64 rows, 33x at 256, 200x at 1024
# (``x @ W.T`` goes through MmBackward0, which is fast on both paths).
LEGACY_FAST_BACKWARD = frozenset(
    {
        "torch::autograd::AccumulateGrad",
        # elementwise
        "AbsBackward0", "AddBackward0", "AddcmulBackward0", "Atan2Backward0", "AtanBackward0",
        "CosBackward0", "DivBackward0", "ErfBackward0", "ExpBackward0", "HypotBackward0",
        "LerpBackward0", "Log1PBackward0", "LogBackward0", "MulBackward0", "NegBackward0",
        "PowBackward0", "ReciprocalBackward0", "ReluBackward0", "RsqrtBackward0",
        "SigmoidBackward0", "SinBackward0", "SinhBackward0", "SqrtBackward0", "SubBackward0",
        # reductions
        "AmaxBackward0", "LogsumexpBackward0", "MaxBackward1", "MeanBackward0", "ProdBackward0",
        "ProdBackward1", "SumBackward0", "SumBackward1", "TraceBackward0", "VarBackward0",
        # matrix products
        "AddmmBackward0", "BmmBackward0", "MmBackward0",
        # views and copies
        "CatBackward0", "CloneBackward0", "DiagonalBackward0", "ExpandBackward0",
        "PermuteBackward0", "RepeatBackward0", "SliceBackward0", "SqueezeBackward1",
        "SqueezeBackward4", "StackBackward0", "TBackward0", "UnfoldBackward0",
        "UnsafeViewBackward0", "UnsqueezeBackward0", "ViewBackward0",
    }
)  # fmt: skip

# Torch's older vectorized forward mode (forward_legacy_batched) is fast for a matrix-vector
# product with few columns, though its backward rule is not: W @ x (float32 and float64, torch
# 2.13, one thread) took 0.65x the time of torch.func's forward mode at 16 -> 512 and 0.8x at
# 64 -> 64, but 3.7x at 256 -> 256 and 5x at 256 -> 1024.  So MvBackward0 counts as fast for the
# forward path up to this many columns.
LEGACY_FORWARD_MV_MAX_COLUMNS = 64

# The older batched path only up to this many rows (cotangents): the range measured.
LEGACY_MAX_ROWS = 1024
# False: every batched backward goes through torch.func.vmap (the tests run both paths).
USE_LEGACY_BATCHED_GRAD = True


# The double-VJP (forward_by_double_vjp) is taken only for graphs with a matrix product plus bias
# (``nn.Linear``, ``F.linear`` with bias: AddmmBackward0 / AddmvBackward0), whose forward-mode
# rule is slow under both batching implementations: measured with torch 2.13, one thread, 16 to
# 256 inputs and 256 to 1024 outputs (benchmarks/forward_routes.py), the double-VJP takes
# 0.58-0.86x the time of the best forward-mode path on one or two linear layers with bias and
# tanh, relu or softmax (once 1.06x), but 1.09-1.42x on the same layers without bias (except
# a plain 256 -> 1024 product, 0.88x), so without bias it is not used.
DOUBLE_VJP_WINS = frozenset({"AddmmBackward0", "AddmvBackward0"})
# Backward-of-backward nodes (what a backward pass records under ``create_graph=True``) allowed
# in the double-VJP's batched pass: torch's older batching rules handle them without a loop
# (the graphs above).  MvBackward0 is not among them (2.3-200x slower on the older path, see
# LEGACY_FAST_BACKWARD).
LEGACY_FAST_DOUBLE_BACKWARD = LEGACY_FAST_BACKWARD | frozenset(
    {
        "SoftmaxBackwardDataBackward0", "TanhBackwardBackward0", "SigmoidBackwardBackward0",
        "ThresholdBackwardBackward0", "LogSoftmaxBackwardDataBackward0",
    }
)  # fmt: skip


# Square float64 Jacobians of a matrix-vector product (``W @ x`` with a 1-d ``x``: MvBackward0,
# AddmvBackward0) from FLOAT64_MV_FORWARD inputs on: which mode is faster depends on the machine.
# On one machine of this workplace forward mode (one batched JVP over the identity) took
# 0.62-0.72x the time of reverse mode (tanh(W @ x) and W @ x, W 256x256 and 512x512, torch 2.13,
# one thread); on another, of the same kind, reverse mode was faster (0.83 against 1.07 ms at
# 256, 28 against 33 ms at 1024).  So it is measured once per process, at the first such
# Jacobian (float64_mv_forward_faster).  Below 256 the two are within noise or reverse wins;
# without a matrix-vector product (an MLP on a batch, X @ W.T) reverse mode stays faster in
# float64 too (1.2-1.4x), and in float32 reverse wins throughout (0.8-0.95x of forward).
# benchmarks/jacobian.py --dtype float64 shows it.
FLOAT64_MV_FORWARD = 256

_mv_forward: bool | None = None  # the measurement, once per process


def float64_mv_forward_faster() -> bool:
    """Whether forward mode computes the Jacobian of ``W @ x`` (``W`` 256 × 256, float64)
    in less than 0.9 times reverse mode's time on this machine: measured at the first call of
    the process (best of 3 batched passes each, after one untimed, about 10 ms; the first JVP
    of a process also loads torch's forward-mode decompositions, about 0.1 s), then kept."""
    global _mv_forward
    if _mv_forward is None:
        g = torch.Generator().manual_seed(0)
        n = FLOAT64_MV_FORWARD
        w = torch.randn(n, n, generator=g, dtype=torch.float64)
        x = torch.randn(n, generator=g, dtype=torch.float64)
        eye = torch.eye(n, dtype=torch.float64)

        def reverse() -> torch.Tensor:
            leaf = x.detach().requires_grad_(True)
            with torch.enable_grad():
                y = w @ leaf
            return torch.func.vmap(lambda v: torch.autograd.grad(
                y, leaf, v, retain_graph=True)[0])(eye)

        def forward() -> torch.Tensor:
            return torch.func.vmap(lambda t: torch.func.jvp(
                lambda u: w @ u, (x,), (t,))[1])(eye)

        forward()  # one untimed call each
        reverse()
        _mv_forward = best_of_3(forward) < 0.9 * best_of_3(reverse)
    return _mv_forward


def best_of_3(call: Callable[[], Any]) -> float:
    """The shortest of 3 timed calls of ``call``, seconds (``time.perf_counter``)."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def signature(xs: Sequence[torch.Tensor]) -> tuple:
    """The input signature a plan is remembered for: shape, dtype and device of each input."""
    return tuple((tuple(x.shape), x.dtype, x.device) for x in xs)


class PlanCache:
    """Per function, a few remembered choices: ``{key: plan}`` (weak keys: no function is
    kept alive by the cache; at most ``max_plans`` keys per function, then it starts afresh).

    A plan only picks the faster route, never the result: every route checks what its
    correctness needs each time.  A function that cannot be weakly referenced (some
    builtins) is simply not remembered.
    """

    def __init__(self, max_plans: int = 32) -> None:
        self.max_plans = max_plans
        self._plans: weakref.WeakKeyDictionary[Any, dict[Hashable, str]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, fn: Callable[..., Any], key: Hashable) -> str | None:
        try:
            return self._plans.get(fn, {}).get(key)
        except TypeError:  # fn cannot be weakly referenced
            return None

    def set(self, fn: Callable[..., Any], key: Hashable, plan: str) -> None:
        with contextlib.suppress(TypeError):
            plans = self._plans.setdefault(fn, {})
            if len(plans) >= self.max_plans:
                plans.clear()
            plans[key] = plan

    def of(self, fn: Callable[..., Any]) -> dict[Hashable, str]:
        """Everything remembered for ``fn`` (a copy)."""
        try:
            return dict(self._plans.get(fn, {}))
        except TypeError:
            return {}


# The one plan cache of the core.  Keys: ("forward", signature, allow_double) -> the forward
# route's choice ("legacy", "double", "func"; see forward.forward_vectorized), and
# ("auto", signature) -> "forward" when jacobian(method="auto") found more outputs than inputs:
# auto learns the output size from a forward pass recorded for reverse mode, and when forward
# mode wins that pass is wasted, so repeated calls (a loop over data points) go straight to
# forward mode.
PLANS = PlanCache()
