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
from collections.abc import Set as AbstractSet
from typing import Any

import torch

__all__ = [
    "DOUBLE_VJP_WINS",
    "LEGACY_FAST_BACKWARD",
    "LEGACY_FAST_DOUBLE_BACKWARD",
    "LEGACY_FORWARD_MV_MAX_COLUMNS",
    "LEGACY_MAX_ROWS",
    "PLANS",
    "ROUTES",
    "TRIALS",
    "TRIAL_CALLS",
    "TRIAL_MAX_CALLS",
    "TRIAL_MIN_ENTRIES",
    "TRIAL_RUN",
    "TRIAL_RUN_MAX",
    "TRIAL_SECONDS",
    "USE_LEGACY_BATCHED_GRAD",
    "WRONG_BATCHED_BACKWARD",
    "WRONG_BATCHED_CREATE_GRAPH",
    "WRONG_FORWARD_OVER",
    "PlanCache",
    "RouteTrial",
    "RouteUnavailable",
    "auto_plan",
    "best_of_3",
    "end_trial",
    "end_trial_call",
    "legacy_forward_eligible",
    "legacy_reverse_eligible",
    "route_key",
    "signature",
    "start_trial",
    "stored_plan",
    "trial_of",
]

# Backward nodes whose functorch batching rule gives wrong results in the torch versions tested
# (torch 2.13: every row of cdist's batched backward is wrong, and torch.func.jacrev with it;
# tests/core/test_ops_corpus.py checks that torch still has the bug).  A graph containing one is
# differentiated with the loop instead: slower, right.
WRONG_BATCHED_BACKWARD = frozenset({"CdistBackward0"})

# Backward nodes whose batched backward is right but whose graph (create_graph=True) is not
# differentiable there: torch 2.13's batched det backward goes through an SVD, whose derivative
# is NaN where the matrix has equal singular values and far off near them (the Hessian of
# det(x @ a) at x @ a = I + rounding: entries off by 2.0; torch.func.hessian is NaN there,
# pytorch/pytorch#149694), where the plain det backward's derivative is right.  With
# create_graph a graph containing one is differentiated with the loop instead
# (tests/core/test_batched_nonfinite.py).
WRONG_BATCHED_CREATE_GRAPH = frozenset({"LinalgDetBackward0"})

# Backward nodes whose forward-mode derivative of their backward formula is wrong in torch
# 2.13 near matrices with equal singular values (torch.func.jacfwd(torch.func.jacrev(det)) at
# x @ a = I + rounding: entries off by 2.0; jacrev(jacrev(...)) and plain nested passes are
# right).  method="auto" takes reverse mode for a graph containing one, even with more outputs
# than inputs: fn may take a derivative of its own through it (a Hessian as the Jacobian of a
# create_graph Jacobian), which forward mode would differentiate with that formula.
WRONG_FORWARD_OVER = frozenset({"LinalgDetBackward0"})

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


def legacy_reverse_eligible(names: AbstractSet[str], rows: int) -> bool:
    """Whether torch's older batched backward (``is_grads_batched=True``) batches a graph whose
    backward nodes are ``names`` for ``rows`` cotangents without looping: every node in
    :data:`LEGACY_FAST_BACKWARD`, at most :data:`LEGACY_MAX_ROWS` rows.  The one rule for the
    reverse path, the tables and the route trial's candidates."""
    return rows <= LEGACY_MAX_ROWS and names <= LEGACY_FAST_BACKWARD


def legacy_forward_eligible(names: AbstractSet[str], columns: int) -> bool:
    """Whether torch's older vectorized forward mode batches a graph whose backward nodes are
    ``names`` for ``columns`` tangents without looping: every node in
    :data:`LEGACY_FAST_BACKWARD`, or ``MvBackward0`` at most :data:`LEGACY_FORWARD_MV_MAX_COLUMNS`
    columns (its forward rule is fast at few columns), and at most :data:`LEGACY_MAX_ROWS`
    columns.  The one rule for the forward path, the tables and the route trial's candidates."""
    fast = LEGACY_FAST_BACKWARD
    if columns <= LEGACY_FORWARD_MV_MAX_COLUMNS:
        fast = fast | {"MvBackward0"}
    return columns <= LEGACY_MAX_ROWS and names <= fast


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


# Which of jacobian(method="auto")'s two routes is faster (reverse mode: one batched VJP over the
# rows; forward mode: one batched JVP over the columns) depends on the machine, not only on the
# shape: W @ x at 256 x 256 in float64 took 1.23 ms forward against 1.72 ms reverse on one
# processor of this workplace (AMD EPYC, MKL with AVX-512), while reverse won on another (Intel
# Xeon: 1.6 against 2.25 ms, measured by benchmarks/jacobian.py --dtype float64); in float32
# reverse won on both.  So "auto" measures, per function and input signature, where it runs:
# its first call takes the rule's route (forward when there are more outputs than inputs);
# when the Jacobian has at least TRIAL_MIN_ENTRIES entries, the next calls take each other
# eligible path (ROUTES, below) in a run of at least three calls (more when they are short:
# TRIAL_SECONDS), then the rule's, each call returning its Jacobian as usual; a call is timed
# only when the call before it took the same route, and the fastest (the shortest of its timed
# calls) is kept, in PLANS and on disk per processor (gradarg.core.memory, kind "routes"), so
# that a later process on the same machine takes it from its first call.  Why in a row: a
# call right after one by the other route pays for the switch (caches, the allocator), and
# not alike for both.  Timed alternately (version 1 of the
# memory), jacobian(lambda x: x @ W.T) at 16 -> 512 in float64 kept reverse mode in 4 of 14
# fresh processes, where it takes 0.50 ms against forward mode's 0.22 ms once warm: its
# forward calls took 0.37-0.65 ms each right after a reverse call; timed in a row, 10 of 10
# kept forward (benchmarks/jacobian.py's problems, one thread).  What measuring costs: three
# calls by each slower eligible path (up to TRIAL_RUN_MAX of calls below TRIAL_SECONDS / 2),
# once per function and signature on a machine.  The paths' results agree to rounding, not
# bit for bit.
TRIAL_MIN_ENTRIES = 64 * 64
TRIAL_RUN = 3  # calls per route in a row: the first pays the switch, the others are timed
# A run goes on past TRIAL_RUN calls while its timed calls add up to less than TRIAL_SECONDS,
# up to TRIAL_RUN_MAX calls: a Jacobian of 0.1 ms gets 7 timed calls per route, one of 3 ms
# or more the 2 of a plain run.  With 2 timed calls, sin on 64 float64 entries kept the older
# batched backward (0.127 ms against 0.133 ms by the older forward mode, the trial's shortest
# calls, cold) on a machine where, warm, the forward mode takes 0.105 ms and the backward
# 0.117 ms (AMD EPYC, one thread): below a millisecond, two calls measure the first calls'
# noise, not the route.
TRIAL_SECONDS = 2e-3
TRIAL_RUN_MAX = 8
TRIAL_CALLS = 2 * TRIAL_RUN  # a trial of the two modes alone, at its shortest
ROUTES_VERSION = 4  # 1: timed alternately; 2: the two modes only; 3: runs of TRIAL_RUN calls

# The batched paths a trial may time, "<mode>:<path>" (see RouteTrial).  Which of torch's
# batching paths is faster for the same mode depends on the processor too: W @ x at 64 -> 256
# in float64 took 1.10 ms by torch's older vectorized forward mode against 0.35 ms by
# torch.func's (AMD EPYC, MKL with AVX-512; the table LEGACY_FORWARD_MV_MAX_COLUMNS, measured
# on an Intel Xeon, had it 0.8x there), and sin at 256 took 0.39 ms by the older batched
# backward against 0.30 ms by torch.func.vmap on the same machine, where the table has it
# faster.  The tables above now say only which paths can batch a graph without looping
# (eligible), and the trial times the eligible ones where they run.
ROUTES = ("reverse:legacy", "reverse:func", "forward:legacy", "forward:double", "forward:func")
TRIAL_MAX_CALLS = TRIAL_RUN_MAX * len(ROUTES)


class RouteUnavailable(Exception):
    """A path named by a trial or a remembered plan does not apply to this graph (the
    double-VJP's recorded backward holds a node without a fast batching rule, torch's older
    batching refused): the caller takes another route.  Never reaches the user."""


class RouteTrial:
    """The calls that time ``auto``'s routes: every other candidate's calls in a row, then
    those of ``first`` (the route of the call before the trial); a call is timed only after a
    call by the same route (the first of each run is its warm-up, and pays the switch from the
    other route).  A run is :data:`TRIAL_RUN` calls, longer while its timed calls add up to
    less than :data:`TRIAL_SECONDS` (at most :data:`TRIAL_RUN_MAX` calls): short calls are
    timed more often.  ``order`` lists the shortest trial's calls.  ``candidates`` defaults
    to the two modes, ``("forward", "reverse")``; a route that does not apply is dropped
    (:meth:`drop`).  Only eligible paths are candidates (those that batch the graph without
    looping), so a trial costs at most a few calls by a slower batched path, once per
    function and signature on a machine."""

    def __init__(self, first: str, candidates: Sequence[str] = ("forward", "reverse")) -> None:
        routes = list(dict.fromkeys([*candidates, first]))
        others = [r for r in routes if r != first]
        self.order = [r for r in others for _ in range(TRIAL_RUN)] + [first] * TRIAL_RUN
        self.pending = [*others, first]  # the runs still to make, the current one first
        self.calls = 0  # calls made in the current run
        self.times: dict[str, list[float]] = {r: [] for r in routes}
        self._last = first  # the route of the call before the trial

    def next_route(self) -> str:
        return self.pending[0]

    def drop(self, route: str) -> str | None:
        """Forget ``route`` (it does not apply); the winner if that ended the trial."""
        self.times.pop(route, None)
        if self.pending and self.pending[0] == route:
            self.calls = 0
        self.pending = [r for r in self.pending if r != route]
        return None if self.pending else self._winner()

    def record(self, route: str, seconds: float) -> str | None:
        """Note a call's time; the fastest route once every trial call is made, else None."""
        if route == self._last and route in self.times:
            self.times[route].append(seconds)
        self._last = route
        if self.pending and self.pending[0] == route:
            self.calls += 1
            if self.calls >= TRIAL_RUN_MAX or (self.calls >= TRIAL_RUN and
                                               sum(self.times[route]) >= TRIAL_SECONDS):
                self.pending.pop(0)
                self.calls = 0
        return None if self.pending else self._winner()

    def _winner(self) -> str:
        best = {r: min(ts) for r, ts in self.times.items() if ts}
        if not best:  # nothing timed (every other route dropped): the route taken before
            return self._last
        return min(best, key=best.__getitem__)


def route_key(fn: Callable[..., Any], xs: Sequence[torch.Tensor]) -> str:
    """The on-disk key of ``auto``'s route for ``fn`` at ``xs``'s signature on this machine:
    the function's description, the signature, the processor and torch's thread count."""
    from . import memory

    return memory.key([memory.describe(fn), repr(signature(xs)), memory.machine(),
                       torch.get_num_threads()], f"gradarg-routes {ROUTES_VERSION}")


def auto_plan(fn: Callable[..., Any], xs: Sequence[torch.Tensor]) -> str | None:
    """``auto``'s route remembered in this process for ``fn`` at this signature
    (``"forward"`` or ``"reverse"``), or ``None``."""
    return PLANS.get(fn, ("auto", signature(xs)))


def stored_plan(fn: Callable[..., Any], xs: Sequence[torch.Tensor]) -> str | None:
    """``auto``'s route for ``fn`` at this signature measured by an earlier process on this
    machine (read from disk once per function and signature, then kept in :data:`PLANS`), or
    ``None``.  Asked only for Jacobians large enough for a trial, once their size is known."""
    sig = signature(xs)
    if PLANS.get(fn, ("disk", sig)):
        return None
    from . import memory

    PLANS.set(fn, ("disk", sig), "read")
    got = memory.recall("routes", route_key(fn, xs), ROUTES_VERSION)
    plan = None if got is None else got.get("route")
    if plan in ("forward", "reverse", *ROUTES):
        PLANS.set(fn, ("auto", sig), plan)
        return plan
    return None


def start_trial(fn: Callable[..., Any], xs: Sequence[torch.Tensor], first: str,
                candidates: Sequence[str] = ("forward", "reverse")) -> None:
    """Begin timing ``auto``'s routes (``candidates``) for ``fn`` at this signature (its
    first call took ``first``)."""
    TRIALS.set(fn, ("trial", signature(xs)), RouteTrial(first, candidates))


def trial_of(fn: Callable[..., Any], xs: Sequence[torch.Tensor]) -> RouteTrial | None:
    return TRIALS.get(fn, ("trial", signature(xs)))


def end_trial_call(fn: Callable[..., Any], xs: Sequence[torch.Tensor], trial: RouteTrial,
                   route: str, seconds: float) -> None:
    """Record a trial call; when the trial is over, keep the winner (in this process and on
    disk)."""
    won = trial.record(route, seconds)
    if won is not None:
        end_trial(fn, xs, trial, won)


def end_trial(fn: Callable[..., Any], xs: Sequence[torch.Tensor], trial: RouteTrial,
              won: str) -> None:
    """Keep ``won`` for ``fn`` at this signature, in this process and on disk."""
    from . import memory

    sig = signature(xs)
    TRIALS.set(fn, ("trial", sig), None)
    PLANS.set(fn, ("auto", sig), won)
    memory.remember("routes", route_key(fn, xs), {
        "route": won, **{f"{r}_ms": f"{1e3 * min(t):.3f}" for r, t in trial.times.items() if t},
    }, ROUTES_VERSION)


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
        self._plans: weakref.WeakKeyDictionary[Any, dict[Hashable, Any]] = (
            weakref.WeakKeyDictionary()
        )

    @staticmethod
    def can_remember(fn: Callable[..., Any]) -> bool:
        """Whether ``fn`` can be weakly referenced (else nothing is remembered for it)."""
        try:
            weakref.ref(fn)
        except TypeError:
            return False
        return True

    def get(self, fn: Callable[..., Any], key: Hashable) -> Any:
        try:
            return self._plans.get(fn, {}).get(key)
        except TypeError:  # fn cannot be weakly referenced
            return None

    def set(self, fn: Callable[..., Any], key: Hashable, plan: Any) -> None:
        with contextlib.suppress(TypeError):
            plans = self._plans.setdefault(fn, {})
            if len(plans) >= self.max_plans:
                plans.clear()
            plans[key] = plan

    def of(self, fn: Callable[..., Any]) -> dict[Hashable, Any]:
        """Everything remembered for ``fn`` (a copy)."""
        try:
            return dict(self._plans.get(fn, {}))
        except TypeError:
            return {}


# The one plan cache of the core.  Keys: ("forward", signature, allow_double) -> the forward
# route's choice ("legacy", "double", "func"; see forward.forward_vectorized), and
# ("auto", signature) -> "forward" when jacobian(method="auto") found more outputs than inputs
# (auto learns the output size from a forward pass recorded for reverse mode, and when forward
# mode wins that pass is wasted, so repeated calls go straight to forward mode), or the route
# its trial measured faster ("forward" or "reverse", see RouteTrial); ("disk", signature) ->
# "read" once the on-disk memory was looked up.
PLANS = PlanCache()
# ("trial", signature) -> the RouteTrial under way (None once it is over).
TRIALS = PlanCache()
