"""Blind cases, fifth set: the caller's context and odd inputs, written before any was run.

Written from the public docstrings (``help()`` on ``gradarg.__all__``, ``gradarg.sparse.__all__``
and the methods of the objects they return), the pages under ``docs/`` and torch's own tools
(``torch.func.jacrev`` / ``jacfwd`` / ``hessian`` / ``vmap`` / ``vjp``,
``torch.autograd.functional.jacobian``, ``torch.autograd.gradcheck``), without reading
``src/gradarg``, the earlier case files' bodies (their first 60 lines only) or any results.
No gradarg function was called while writing them; every torch-side oracle was run with torch
alone, and every call was run once with ``gradarg`` replaced by a torch-only stub kept outside
the repository (to check that the torch parts of each call run and each predicate evaluates).

What they try: how and from where a practitioner calls the tools, and odd but legal inputs.
Calling contexts: ``torch.no_grad()``, ``torch.inference_mode()``, ``set_grad_enabled(False)``,
``enable_grad`` nested in ``no_grad``, CPU autocast to bfloat16, anomaly detection,
``use_deterministic_algorithms(True)``, float64 as the default dtype, the caller's
``saved_tensors_hooks``, ``torch.func`` transforms around the tools (where the docs say they
compose, and the refusals they document).  What stays as it was: the context's flags inside it
after the call (also when the call raised) and after leaving it; the input's values, ``.grad``,
``requires_grad``, version counter, leaf-ness and hooks; the global random state where the docs
promise it (``check_backward``'s seed, ``why_no_grad``'s ``fork_rng``, ``sparsity_pattern``, the
certificates of ``SparseJacobian`` / ``SparseHessian``); captured parameters' ``.grad``
(``backward_vjp``, ``compare_vjp``), a model's train/eval mode, the watch's and the caller's hooks.
Odd inputs: ``nn.Parameter`` with a ``.grad``, views of a leaf, transposed / stepped / expanded
(stride 0) / channels_last tensors, 0-d, size-1 and empty tensors, float16 / bfloat16 / complex,
inference tensors, buffers and ``nn.Buffer``, tuples of mixed dtypes, NaN / Inf / huge / tiny
entries; ``fn`` as an ``nn.Module``, ``functools.partial``, a bound method, a lambda capturing
parameters, a ``torch.compile``'d function, returning tuples / lists / dicts / its input /
constants, editing its input in place, calling ``.item()`` / ``.tolist()``, with data-dependent
control flow; kinks and ties (``abs`` / ``relu`` / ``sqrt`` / ``norm`` / ``log`` at 0, ``clamp`` at
its bounds, ``max`` with ties, ``where`` at its switch), duplicate indices in ``index_add`` /
``index_put`` / indexing.

Format (``casekit``): ``E(...)`` expects a ``TypeError`` / ``ValueError`` naming one of ``keys``;
``P(...)`` evaluates ``pred`` on the result ``r`` (and the warning texts ``W``); ``either=True``
where the docs leave a refusal acceptable.  Exceptions of other kinds the docs name
(``RuntimeError`` from ``strict`` or a failed backward, ``VectorizationError``,
``UnsupportedOpError``, torch's own errors) are caught by ``catch`` and checked in a predicate;
``inctx(name, f)`` runs a call inside a context and returns (value or exception, flags inside after
the call, flags after leaving).  Tolerances follow the dtype: ``near(a, b, rtol)`` is
``check_backward``'s entry rule ``|a - b| <= rtol (|b| + max|b|)``: float64 1e-12 (``close`` at
1e-12 where both sides compute the same products), float32 1e-5, float16 2e-3, bfloat16 3.2e-2 (two
roundings of 1.6e-2), finite differences 1e-6 (1e-5 through ``grad``); watch norms 1e-5 relative.

Groups (cases): context 27, inputs 26, callables 22, after 21, points 18, sparse 15, misuse 12,
composition 11, render 8 (160; 21 ``E``, 139 ``P``, 6 with ``either=True``).  Targets:
``jacobian`` 78, ``compare_vjp`` 13, ``check_backward`` 13, ``backward_vjp`` 11,
``trace_backward`` 7, ``why_no_grad`` 7, ``jacobian_sparsity`` 7, ``SparseJacobian`` 6,
``watch`` 5, ``summarize`` 3, ``hessian_sparsity`` 2, ``SparseHessian`` 2, ``side_by_side`` 2,
``sparsity_pattern`` 1, ``latex_matrix`` 1, ``latex_jacobian`` 1, ``markdown_table`` 1.
Held-out names: ``held_out_blind5.txt`` (``random.Random(7211)``).

Run by hand::

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/fuzz/run.py --cases cases_blind5 \\
        --out tests/fuzz/results_blind5.json
"""

from __future__ import annotations

import contextlib
import functools
import math
import warnings

import numpy as np
import torch
from casekit import D, Registry, S, close, close_notnan, dense, jr, same_pattern, taj, tri, vjp_ref
from torch import nn
from torch.func import jacfwd, jacrev, vmap

import gradarg as ga

# used inside the cases' call and predicate strings
_IN_STRINGS = (functools, math, np, close_notnan, same_pattern, taj, tri, jacfwd, vmap)

REG = Registry(globals())
B16 = torch.bfloat16
H16 = torch.float16
C128 = torch.complex128


# ----------------------------------------------------------------- helpers of this file
def catch(f):
    """``f()``, or the exception it raised (checked in a predicate)."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001
        return e


def near(a, b, rtol):
    """``|a - b| <= rtol (|b| + max|b|)`` entrywise (check_backward's entry rule), same shape."""
    if not isinstance(a, torch.Tensor):
        return False
    a, b = dense(a).detach().to(D), dense(torch.as_tensor(b)).detach().to(D)
    if tuple(a.shape) != tuple(b.shape):
        return False
    if b.numel() == 0:
        return True
    tol = rtol * (b.abs() + b.abs().max())
    return bool(((a - b).abs() <= tol).all())


def isexc(r, kind=Exception, *words):
    return isinstance(r, kind) and all(w.lower() in str(r).lower() for w in words)


def rnd(*shape, dtype=D, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


def seeded(seed, build):
    """Build with a seed without advancing the caller's generator."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return build()


def flags():
    return (torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
            torch.is_anomaly_enabled(), torch.are_deterministic_algorithms_enabled(),
            torch.get_default_dtype(), torch.is_autocast_enabled("cpu"))


@contextlib.contextmanager
def deterministic():
    old = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(old)


@contextlib.contextmanager
def default_dtype(dt):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dt)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


@contextlib.contextmanager
def enable_in_no_grad():
    with torch.no_grad(), torch.enable_grad():
        yield


PACKED = [0]


def _pack(t):
    PACKED[0] += 1
    return t


CTX = {
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
    "grad_off": lambda: torch.set_grad_enabled(False),
    "enable_in_no_grad": enable_in_no_grad,
    "anomaly": lambda: torch.autograd.set_detect_anomaly(True),
    "deterministic": deterministic,
    "default_f64": lambda: default_dtype(D),
    "saved_hooks": lambda: torch.autograd.graph.saved_tensors_hooks(_pack, lambda t: t),
    "autocast": lambda: torch.autocast("cpu", dtype=B16),
}


def flags_in(name):
    with CTX[name]():
        return flags()


def inctx(name, f):
    """Run ``f()`` inside the context ``name``: (value or exception, flags inside, flags after)."""
    with CTX[name]():
        r = catch(f)
        inside = flags()
    return r, inside, flags()


def ok_flags(r, name):
    return r[1] == flags_in(name) and r[2] == flags()


def snap(t):
    """What a helper must not change about a tensor."""
    return (t.detach().clone(), None if t.grad is None else t.grad.clone(), t.requires_grad,
            t._version, t.is_leaf, len(t._backward_hooks or {}))


def same(t, s):
    now = snap(t)
    if not torch.equal(now[0], s[0]) or now[2:] != s[2:]:
        return False
    if (now[1] is None) != (s[1] is None):
        return False
    return now[1] is None or torch.equal(now[1], s[1])


def rng_kept(f):
    """(value or exception, whether the global generator's state is unchanged by ``f()``)."""
    before = torch.get_rng_state()
    r = catch(f)
    return r, torch.equal(before, torch.get_rng_state())


def diag_ok(J, d):
    """A square Jacobian with diagonal ``d`` and off-diagonal entries 0 or NaN (0 · inf)."""
    if not isinstance(J, torch.Tensor) or J.shape != (len(d), len(d)):
        return False
    J = J.detach().to(D)
    off = J[~torch.eye(len(d), dtype=torch.bool)]
    return (close(torch.diagonal(J), torch.tensor(d, dtype=D))
            and bool(((off == 0) | off.isnan()).all()))


def warned(W, word):
    return any(word.lower() in w.lower() for w in W)


def Mc(dtype=D):
    return torch.cos(torch.arange(15.0, dtype=D)).reshape(5, 3).to(dtype)


def f_ms(t):
    """(4, 5) -> (4, 3): sin, then a constant matrix."""
    return torch.sin(t) @ Mc(t.dtype)


def X45(dtype=D):
    return rnd(4, 5, dtype=dtype, seed=3)


def f_el(t):
    return torch.tanh(t) * 2 + t**2


def d_el(t):
    """The derivative of ``f_el``."""
    return 2 * (1 - torch.tanh(t) ** 2) + 2 * t


def mlp(seed=0, dtype=S):
    return seeded(seed, lambda: nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 4))
                  .to(dtype))


def no_hooks(m):
    for mod in m.modules():
        if (mod._forward_hooks or mod._forward_pre_hooks or mod._backward_hooks
                or mod._backward_pre_hooks):
            return False
    for p in m.parameters():
        if p._backward_hooks or getattr(p, "_post_accumulate_grad_hooks", None):
            return False
    return True


def global_hooks():
    from torch.nn.modules import module as _m
    from torch.optim import optimizer as _o
    return (len(_o._global_optimizer_pre_hooks), len(_o._global_optimizer_post_hooks),
            len(_m._global_parameter_registration_hooks), len(_m._global_forward_hooks),
            len(_m._global_forward_pre_hooks), len(_m._global_backward_hooks),
            torch.Tensor.register_hook)


def prec(w, name):
    ps = w.parameters
    if hasattr(ps, "keys"):
        return ps[name]
    return next(p for p in ps if p.name == name)


def gnorm(p):
    return float(p.grad.detach().to(D).norm()) if p.grad is not None else None


def rel(a, b, r=1e-5):
    return a is not None and b is not None and abs(a - b) <= r * max(abs(b), 1e-30)


# ----------------------------------------------------------------- custom Functions
class Sq(torch.autograd.Function):
    """x², right backward (gradcheck: passes)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


class SqHalf(torch.autograd.Function):
    """x², backward off by 1/2 (gradcheck: fails)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


class SqEatsG(torch.autograd.Function):
    """x², right value, but the backward zeroes its ``grad_output`` in place."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        out = 2 * g * x
        g.zero_()
        return out


class SigOne(torch.autograd.Function):
    """sigmoid with a backward of 1 (gradcheck: fails)."""

    @staticmethod
    def forward(ctx, x):
        return torch.sigmoid(x)

    @staticmethod
    def backward(ctx, g):
        return g.clone()


class MulW(torch.autograd.Function):
    """x * w (two inputs), right backward (gradcheck: passes)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, g * x


class MulWBad(torch.autograd.Function):
    """x * w, the gradient of w wrong (g for g * x; gradcheck: fails on w only)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        _x, w = ctx.saved_tensors
        return g * w, g.clone()


class Scaled(nn.Module):
    """Linear(4, 3) times a registered buffer."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.register_buffer("scale", torch.tensor([1.0, 2.0, -0.5]))

    def forward(self, x):
        return self.lin(x) * self.scale


class Holder:
    """A user object whose bound method is the function."""

    def __init__(self):
        self.w = torch.linspace(-1, 1, 5, dtype=D)

    def f(self, t):
        return torch.sin(t) * self.w


def f_kw(t, *, scale=3.0, shift=0.5):
    return scale * torch.cos(t) + shift



# ======================================================================= context (grad modes...)
# jacobian in each context: the value of the same call outside it (jacrev, taken outside), and
# the context's flags as they were (inside it after the call, and after leaving it).
_JAC_CTX = [
    ("no_grad", "auto"), ("no_grad", "finite-difference"),
    ("inference_mode", "reverse"), ("inference_mode", "forward"),
    ("enable_in_no_grad", "auto"), ("anomaly", "reverse"),
    ("deterministic", "forward"), ("default_f64", "finite-difference"),
    ("saved_hooks", "reverse"),
]
for _c, _m in _JAC_CTX:
    _tol = "1e-6" if _m == "finite-difference" else "1e-12"
    REG.P(f"b5_ctx_jac_{_c}_{_m.replace('-', '_')}", "jacobian",
          f"inctx({_c!r}, lambda: ga.jacobian(f_ms, X45(), method={_m!r}))",
          f"isinstance(r[0], torch.Tensor) and r[0].dtype == D and near(r[0], jr(f_ms, X45()), {_tol})"
          f" and ok_flags(r, {_c!r})",
          f"the docstring: under no_grad / inference_mode the Jacobian is still computed; the"
          f" value is jacrev's outside the context ({_m}); the context's flags are kept",
          group="context")

REG.P("b5_ctx_jac_autocast_reverse", "jacobian",
      "inctx('autocast', lambda: ga.jacobian(f_ms, X45(S), method='reverse'))",
      "isinstance(r[0], torch.Tensor) and r[0].dtype == S and near(r[0], jr(f_ms, X45(D)), 3.2e-2)"
      " and ok_flags(r, 'autocast')",
      "J in x's dtype (float32); values within bfloat16 rounding of the float64 Jacobian "
      "(torch: jacrev under the same autocast is 1.9e-3 off W for a Linear)", group="context")
REG.P("b5_ctx_jac_batchdim_no_grad", "jacobian",
      "inctx('no_grad', lambda: ga.jacobian(f_el, rnd(6, 4, seed=5), batch_dim=0))",
      "isinstance(r[0], torch.Tensor) and close(r[0], vmap(jacrev(f_el))(rnd(6, 4, seed=5)), 1e-12)"
      " and ok_flags(r, 'no_grad')",
      "per-sample Jacobians computed under no_grad too (vmap(jacrev) outside)", group="context")
REG.P("b5_ctx_jac_sparsity_no_grad", "jacobian",
      "inctx('no_grad', lambda: ga.jacobian(lambda u: u[1:] * u[:-1], rnd(40, seed=2),"
      " sparsity=tri(40)[:39].triu()))",
      "isinstance(r[0], torch.Tensor) and close(dense(r[0]), jr(lambda u: u[1:] * u[:-1],"
      " rnd(40, seed=2)), 1e-12) and ok_flags(r, 'no_grad')",
      "jacobian(sparsity=P) is jacobian: still computed under no_grad", group="context")
REG.P("b5_ctx_jac_raises_restores_no_grad", "jacobian",
      "inctx('no_grad', lambda: ga.jacobian(lambda t: (_ for _ in ()).throw(KeyError('mine')),"
      " X45()))",
      "isinstance(r[0], Exception) and 'mine' in str(r[0]) and ok_flags(r, 'no_grad')",
      "fn raises: the error propagates and grad mode is still off (helpers restore what they "
      "switch, also when the call raised)", group="context")
REG.P("b5_ctx_jac_captured_inference_tensor", "jacobian",
      "ga_captured_inference()",
      "isexc(r, Exception, 'inference')",
      "the docstring: tensors fn captures that were created in inference mode cannot be saved"
      " for a backward pass; torch then raises and says so (torch: 'Inference tensors cannot "
      "be saved for backward')", group="context")


def ga_captured_inference():
    with torch.inference_mode():
        w = rnd(3, 3, seed=4)
    return catch(lambda: ga.jacobian(lambda t: t @ w, rnd(3, seed=5), method="reverse"))


REG.P("b5_ctx_vjp_anomaly", "backward_vjp",
      "inctx('anomaly', lambda: ga.backward_vjp(f_ms, X45(), rnd(4, 3, seed=6)))",
      "close(r[0], vjp_ref(f_ms, X45(), rnd(4, 3, seed=6)), 1e-12) and ok_flags(r, 'anomaly')",
      "vᵀJ from torch.func.vjp; anomaly mode still on", group="context")
REG.P("b5_ctx_vjp_default_f64_f32_input", "backward_vjp",
      "inctx('default_f64', lambda: ga.backward_vjp(f_ms, X45(S), rnd(4, 3, dtype=S, seed=6)))",
      "isinstance(r[0], torch.Tensor) and r[0].dtype == S and near(r[0], vjp_ref(f_ms, X45(),"
      " rnd(4, 3, seed=6)), 1e-5) and ok_flags(r, 'default_f64')",
      "dtype x.dtype (float32) whatever the default dtype; float32 rounding", group="context")
REG.P("b5_ctx_vjp_no_grad", "backward_vjp",
      "inctx('no_grad', lambda: ga.backward_vjp(f_ms, X45(), rnd(4, 3, seed=6)))",
      "close(r[0], vjp_ref(f_ms, X45(), rnd(4, 3, seed=6)), 1e-12) and ok_flags(r, 'no_grad')",
      "not stated for backward_vjp (a refusal that y has no graph is acceptable); a value must "
      "be vᵀJ, and grad mode still off", group="context", either=True)
REG.P("b5_ctx_vjp_saved_hooks", "backward_vjp",
      "inctx('saved_hooks', lambda: ga.backward_vjp(f_el, rnd(7, seed=1), rnd(7, seed=2)))",
      "close(r[0], rnd(7, seed=2) * d_el(rnd(7, seed=1)), 1e-12) and ok_flags(r, 'saved_hooks')",
      "an ordinary backward runs under the caller's saved-tensor hooks (torch's own backward "
      "does); v * f'(x) by hand", group="context")
REG.P("b5_ctx_cmp_no_grad", "compare_vjp",
      "inctx('no_grad', lambda: ga.compare_vjp(f_ms, X45(), rnd(4, 3, seed=6)))",
      "getattr(r[0], 'agree', False) and close(r[0].backward, vjp_ref(f_ms, X45(),"
      " rnd(4, 3, seed=6)), 1e-12) and ok_flags(r, 'no_grad')",
      "the docstring: works under torch.no_grad(); grad mode still off after", group="context")
REG.P("b5_ctx_cmp_grad_off_wrong", "compare_vjp",
      "inctx('grad_off', lambda: ga.compare_vjp(SqHalf.apply, rnd(6, seed=1), rnd(6, seed=2)))",
      "getattr(r[0], 'agree', True) is False and r[0].status == 'DISAGREE' and "
      "ok_flags(r, 'grad_off')",
      "a wrong backward (gradcheck fails) is still found with grad mode off", group="context")
REG.P("b5_ctx_check_anomaly_wrong", "check_backward",
      "inctx('anomaly', lambda: ga.check_backward(SqHalf.apply, rnd(6, seed=1)"
      ".requires_grad_()))",
      "getattr(r[0], 'status', '') == 'wrong' and r[0].pairs[0].pattern == 'factor' "
      "and ok_flags(r, 'anomaly')",
      "the docstring's own example (factor 1/2) under anomaly mode", group="context")
REG.P("b5_ctx_trace_no_grad", "trace_backward",
      "trace_in_no_grad()",
      "r[0] and r[1] and r[2] is False",
      "the docstring: the caller's tensors end up as after a plain backward (same .grad); torch's"
      " backward runs under no_grad; grad mode still off", group="context")


def trace_in_no_grad():
    a = rnd(5, seed=1).requires_grad_()
    a2 = rnd(5, seed=1).requires_grad_()
    y, y2 = (torch.exp(a) * a).sum(), (torch.exp(a2) * a2).sum()
    y2.backward()
    with torch.no_grad():
        t = catch(lambda: ga.trace_backward(y, names={"a": a}))
        mode = torch.is_grad_enabled()
    return (isinstance(t, ga.BackwardTrace), a.grad is not None and close(a.grad, a2.grad, 1e-12),
            mode)


REG.P("b5_ctx_trace_anomaly_nan_raises", "trace_backward",
      "trace_anomaly()",
      "isexc(r[0], RuntimeError, 'nan') and r[1] and r[2]",
      "the docstring: when the backward pass itself fails the error is torch's (anomaly mode: "
      "'SqrtBackward0 returned nan values', checked with torch); hooks removed in all cases; "
      "anomaly mode still on", group="context")


def trace_anomaly():
    x = torch.tensor([0.0, 1.0], dtype=D, requires_grad=True)
    with torch.autograd.set_detect_anomaly(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = (torch.sqrt(x) * 0).sum()
        r = catch(lambda: ga.trace_backward(y, names={"x": x}))
        on = torch.is_anomaly_enabled()
    return r, not x._backward_hooks, on


REG.P("b5_ctx_why_no_grad_in_no_grad", "why_no_grad",
      "why_in_no_grad()",
      "r[0] == 'non-leaf' and r[1] is False",
      "the docstring's example (h = w * 3 asked about h) with the call under no_grad: 'non-leaf';"
      " grad mode still off", group="context")


def why_in_no_grad():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    h = w * 3
    y = (h**2).sum()
    with torch.no_grad():
        d = ga.why_no_grad(y, h, names={"h": h})
        return d.case, torch.is_grad_enabled()


REG.P("b5_ctx_why_output_no_grad", "why_no_grad",
      "why_output_no_grad()",
      "r == 'output-no-grad'",
      "the loss computed under torch.no_grad(): 'output-no-grad' (the docstring's order: after "
      "integer/inference checks)", group="context")


def why_output_no_grad():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        loss = (w * 3).sum()
    return ga.why_no_grad(loss, w).case


REG.P("b5_ctx_why_inference_tensor", "why_no_grad",
      "why_inference()",
      "r == 'inference-mode'",
      "a tensor created under inference_mode: 'inference-mode'", group="context")


def why_inference():
    with torch.inference_mode():
        w = torch.tensor([1.0, 2.0])
    loss = (w * 3).sum()
    return ga.why_no_grad(loss, w).case


REG.P("b5_ctx_watch_anomaly", "watch",
      "watch_ctx('anomaly')",
      "r[0].startswith('gradients ok') and r[1] and r[2] == flags_in('anomaly')",
      "an ordinary step under anomaly mode: 'gradients ok', no hook left, anomaly still on",
      group="context")


def watch_ctx(name):
    with CTX[name]():
        dt = torch.get_default_dtype()
        net = mlp(1, dt)
        x = rnd(16, 6, dtype=dt, seed=2)
        with ga.watch(net) as w:
            net(x).pow(2).mean().backward()
        inside = flags()
    return w.summary(), no_hooks(net), inside


# ======================================================================= after (what stays as it was)
def param_with_grad(seed=1, n=6):
    p = nn.Parameter(rnd(n, seed=seed))
    p.grad = rnd(n, seed=seed + 10)
    return p


def after_call(make, call):
    """Make the input, snapshot it, call; (value or exception, input unchanged)."""
    x = make()
    s = snap(x)
    r = catch(lambda: call(x))
    return r, same(x, s)


REG.P("b5_after_jac_param_with_grad", "jacobian",
      "after_call(param_with_grad, lambda x: ga.jacobian(f_el, x))",
      "close(r[0], torch.diag(d_el(param_with_grad())), 1e-12) and r[1] "
      "and not r[0].requires_grad",
      "an nn.Parameter holding a .grad: J = diag(f'); the Parameter's values, .grad, version, "
      "requires_grad unchanged; J without history (create_graph=False)", group="after")
REG.P("b5_after_jac_inplace_fn", "jacobian",
      "after_call(lambda: rnd(6, seed=2), lambda x: ga.jacobian(lambda t: torch.sin(t.mul_(2)),"
      " x))",
      "r[1] and (isinstance(r[0], Exception) or close(r[0], torch.diag(2 * torch.cos(2 * "
      "rnd(6, seed=2))), 1e-12))",
      "fn edits its input in place: x is never modified (fn receives private copies); J of "
      "sin(2t) = diag(2cos 2x) (jacrev agrees), or a refusal", group="after", either=True)
REG.P("b5_after_jac_user_hook_kept", "jacobian",
      "jac_user_hook()",
      "r[0] and r[1] == 1",
      "x requires grad and carries a hook of the user's: J right; the hook still registered "
      "afterwards (nothing of x changed)", group="after")


def jac_user_hook():
    x = rnd(5, seed=3).requires_grad_()
    x.register_hook(lambda g: g)
    J = ga.jacobian(f_el, x)
    return close(J, torch.diag(d_el(x.detach())), 1e-12), len(x._backward_hooks or {})


REG.P("b5_after_jac_model_eval_kept", "jacobian",
      "jac_model_mode(False)",
      "r[0] and r[1] is False",
      "a model with dropout in eval mode: J = jacrev's (deterministic), and the model is still in"
      " eval mode", group="after")


def jac_model_mode(train):
    m = seeded(2, lambda: nn.Sequential(nn.Linear(5, 6), nn.Dropout(0.5), nn.Linear(6, 3))
               .to(D))
    m.train(train)
    x = rnd(5, seed=4)
    J = catch(lambda: ga.jacobian(m, x))
    mode = m.training
    ok = isinstance(J, torch.Tensor) and J.shape == (3, 5)
    if not train:
        ok = ok and close(J, jr(m, x), 1e-12)
    return ok, mode


REG.P("b5_after_vjp_param_with_grad", "backward_vjp",
      "after_call(param_with_grad, lambda x: ga.backward_vjp(f_el, x, rnd(6, seed=9)))",
      "close(r[0], rnd(6, seed=9) * d_el(param_with_grad()), 1e-12) and r[1]",
      "the docstring: x left untouched (.grad, requires_grad, values)", group="after")
REG.P("b5_after_vjp_captured_params", "backward_vjp",
      "vjp_captured()",
      "r[0] and r[1]",
      "the docstring: tensors fn captures get no gradient, their .grad left as it was (None, "
      "and a .grad put there before)", group="after")


def vjp_captured():
    m = mlp(3, D)
    m[2].weight.grad = torch.ones_like(m[2].weight)
    x, v = rnd(2, 6, seed=1), rnd(2, 4, seed=2)
    r = ga.backward_vjp(m, x, v)
    ok = close(r, vjp_ref(m, x, v), 1e-12)
    return ok, (m[0].weight.grad is None and torch.equal(m[2].weight.grad,
                                                         torch.ones_like(m[2].weight)))


REG.P("b5_after_cmp_captured_params", "compare_vjp",
      "cmp_captured()",
      "r[0] and r[1]",
      "the docstring: captured parameters' .grad left as it was", group="after")


def cmp_captured():
    m = mlp(3, D)
    m[0].bias.grad = torch.full_like(m[0].bias, 7.0)
    x, v = rnd(2, 6, seed=1), rnd(2, 4, seed=2)
    c = ga.compare_vjp(m, x, v)
    return c.agree, (m[2].weight.grad is None and torch.equal(m[0].bias.grad,
                                                              torch.full_like(m[0].bias, 7.0)))


REG.P("b5_after_cmp_output_tensor_grad_restored", "compare_vjp",
      "cmp_output_tensor()",
      "r[0] and r[1]",
      "the docstring: with an output tensor, x's .grad is restored after the comparison (x held"
      " a .grad of its own)", group="after")


def cmp_output_tensor():
    x = rnd(4, 3, seed=1).requires_grad_()
    x.grad = torch.full((4, 3), 0.25, dtype=D)
    y = torch.tanh(x) @ Mc()[:3]
    J = jr(lambda t: torch.tanh(t) @ Mc()[:3], x.detach())
    c = ga.compare_vjp(y, x, rnd(4, 3, seed=2), reference=J)
    return c.agree, torch.equal(x.grad, torch.full((4, 3), 0.25, dtype=D))


REG.P("b5_after_cmp_v_copied", "compare_vjp",
      "cmp_v_copied()",
      "r[0] and r[1]",
      "the docstring: v is copied before the backward pass; a backward that zeroes its "
      "grad_output changes neither the caller's v nor the reference (its returned gradient is "
      "right: 'agree')", group="after")


def cmp_v_copied():
    v = rnd(6, seed=2)
    v0 = v.clone()
    c = ga.compare_vjp(SqEatsG.apply, rnd(6, seed=1), v)
    return c.agree, torch.equal(v, v0)


REG.P("b5_after_check_rng", "check_backward",
      "rng_kept(lambda: ga.check_backward(Sq.apply, rnd(8, seed=1).requires_grad_(), seed=5))",
      "getattr(r[0], 'status', '') == 'agree' and r[1]",
      "the docstring: the seed of the random probes; the caller's generator is not touched",
      group="after")
REG.P("b5_after_check_same_seed_same_probes", "check_backward",
      "[ga.check_backward(Sq.apply, rnd(8, seed=1).requires_grad_(), seed=11, localize=False)"
      " for _ in range(2)]",
      "[(p.got, p.expected) for p in r[0].probes] == [(p.got, p.expected) for p in r[1].probes]",
      "same seed, same random probes (the seed is the probes' source)", group="after")


def check_module_state():
    m = seeded(4, Scaled).to(D).eval()
    b0 = m.scale.clone()
    r, kept = rng_kept(lambda: ga.check_backward(m, rnd(2, 4, seed=1).requires_grad_()))
    return getattr(r, "status", r), kept, torch.equal(m.scale, b0)


REG.P("b5_after_why_rng_callable", "why_no_grad",
      "why_dropout()",
      "r[0] == 'random-forward' and r[1] and r[2]",
      "the docstring: a function is called twice under fork_rng (your random state is left as "
      "it was); dropout in training mode after a backward: 'random-forward'; .grad unchanged",
      group="after")


def why_dropout():
    m = seeded(5, lambda: nn.Sequential(nn.Linear(6, 16), nn.Dropout(0.5), nn.Linear(16, 1)))
    x = rnd(8, 6, dtype=S, seed=1)
    torch.manual_seed(123)
    m(x).sum().backward()
    g0 = m[0].weight.grad.clone()
    before = torch.get_rng_state()
    d = ga.why_no_grad(lambda: m(x).sum(), m[0].weight, module=m)
    return (d.case, torch.equal(before, torch.get_rng_state()),
            torch.equal(m[0].weight.grad, g0))


REG.P("b5_after_why_nothing_changed", "why_no_grad",
      "why_nothing_changed()",
      "r[0] == 'accumulated' and r[1] and r[2]",
      "two backward passes of one retained graph: 'accumulated' (exactly 2 passes); nothing "
      "changed: .grad and hooks as before", group="after")


def why_nothing_changed():
    w = rnd(5, seed=1).requires_grad_()
    y = (torch.sin(w) * w).sum()
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    g = w.grad.clone()
    d = ga.why_no_grad(y, w)
    return d.case, torch.equal(w.grad, g), not w._backward_hooks


REG.P("b5_after_trace_grad_as_plain", "trace_backward",
      "trace_vs_plain(False)",
      "r[0] and r[1] and r[2] == 1",
      "the docstring: .grad as after a plain backward (a Parameter holding a .grad gets one more"
      " pass added); the user's hook on it kept and no other left", group="after")
REG.P("b5_after_trace_use_grad", "trace_backward",
      "trace_vs_plain(True)",
      "r[0] and r[1] and r[2] == 1",
      "use_grad=True: no .grad touched (the old one stays); leaves' gradient recorded",
      group="after")


def trace_vs_plain(use_grad):
    p = param_with_grad(2, 5)
    p.register_hook(lambda g: g)
    q = param_with_grad(2, 5)
    y, yq = (torch.cos(p) * p).sum(), (torch.cos(q) * q).sum()
    old = p.grad.clone()
    t = ga.trace_backward(y, names={"p": p}, use_grad=use_grad)
    yq.backward()
    if use_grad:
        g = t.leaves.get("p") if hasattr(t.leaves, "get") else None
        return (torch.equal(p.grad, old),
                g is not None and close(g, q.grad - old, 1e-12), len(p._backward_hooks or {}))
    return close(p.grad, q.grad, 1e-12), True, len(p._backward_hooks or {})


REG.P("b5_after_trace_freed_graph", "trace_backward",
      "trace_freed()",
      "isinstance(r[0], RuntimeError) and r[1] and r[2]",
      "the docstring: RuntimeError when the graph was freed by an earlier backward; hooks "
      "removed in all cases; .grad as the first backward left it", group="after")


def trace_freed():
    a = rnd(4, seed=1).requires_grad_()
    y = (torch.exp(a) * a).sum()
    y.backward()
    g = a.grad.clone()
    r = catch(lambda: ga.trace_backward(y, names={"a": a}))
    return r, not a._backward_hooks, torch.equal(a.grad, g)


REG.P("b5_after_watch_exception", "watch",
      "watch_exception()",
      "isinstance(r[0], KeyError) and r[1] and r[2] and r[3]",
      "the block raises: the exception propagates (the watch names it, it does not swallow it), "
      "no hook left on the model, no global hook left, user's forward hook kept",
      group="after")


def watch_exception():
    net = mlp(2)
    h = net[0].register_forward_hook(lambda *a: None)
    g0 = global_hooks()
    try:
        with ga.watch(net):
            net(rnd(4, 6, dtype=S, seed=1)).sum().backward()
            raise KeyError("user's own")
    except KeyError as e:
        r = e
    ok = len(net[0]._forward_hooks) == 1
    h.remove()
    return r, no_hooks(net), global_hooks() == g0, ok


REG.P("b5_after_watch_user_param_hook", "watch",
      "watch_user_hook()",
      "r[0] == 1 and r[1]",
      "the docstring: the watch reads around the user's hooks and leaves none of its own; the "
      "user's Tensor hook (doubling) is still there and still runs after the block",
      group="after")


def watch_user_hook():
    net = mlp(3)
    net[2].bias.register_hook(lambda g: 2 * g)
    x = rnd(4, 6, dtype=S, seed=1)
    with ga.watch(net):
        net(x).sum().backward()
    n = len(net[2].bias._backward_hooks or {})
    net.zero_grad()
    net(x).sum().backward()
    return n, close(net[2].bias.grad, torch.full((4,), 8.0), 1e-6)


REG.P("b5_after_watch_mode_and_grads", "watch",
      "watch_mode_grads()",
      "r[0] is False and r[1] and r[2]",
      "a model in eval mode watched: still in eval mode; its .grad equal to an unwatched run's; "
      "the record's norms equal those of the .grad", group="after")


def watch_mode_grads():
    a, b = mlp(4).eval(), mlp(4).eval()
    x = rnd(8, 6, dtype=S, seed=1)
    with ga.watch(a) as w:
        a(x).pow(2).mean().backward()
    b(x).pow(2).mean().backward()
    same_g = all(torch.equal(p.grad, q.grad) for p, q in zip(a.parameters(), b.parameters(),
                                                               strict=True))
    norms = all(rel(prec(w, n).grad, gnorm(p)) for n, p in a.named_parameters())
    return a.training, same_g, norms


REG.P("b5_after_sparsity_pattern_rng", "sparsity_pattern",
      "after_call(lambda: rnd(12, seed=1), lambda x: rng_kept(lambda: ga.sparsity_pattern("
      "lambda u: u[1:] - u[:-1], x)))",
      "r[1] and r[0][1] and same_pattern(r[0][0], tri(12)[:11].triu())",
      "the docstring: the global generator is never advanced; x not modified; bidiagonal",
      group="after")
REG.P("b5_after_sj_certify_rng", "SparseJacobian",
      "after_call(lambda: rnd(30, seed=1), lambda x: rng_kept(lambda: ga.SparseJacobian("
      "tri(30))(lambda u: torch.sin(u) + torch.nn.functional.pad(u, (1, 1))[:-2] * 0.5, x,"
      " certify=2)))",
      "r[1] and r[0][1] and close(dense(r[0][0]), jr(lambda u: torch.sin(u) + "
      "torch.nn.functional.pad(u, (1, 1))[:-2] * 0.5, rnd(30, seed=1)), 1e-12)",
      "the docstring: certify's vectors from a fresh seed, the global generator never advanced;"
      " x never modified; jacrev",
      group="after")


# ======================================================================= inputs (odd but legal)
def base_view():
    base = rnd(8, seed=1).requires_grad_()
    return base, base[2:7]


def jac_of_view():
    base, x = base_view()
    J = ga.jacobian(f_el, x)
    return J, base.grad is None and x.grad is None, base.detach()[2:7]


REG.P("b5_in_view_of_leaf", "jacobian",
      "jac_of_view()",
      "close(r[0], torch.diag(d_el(r[2])), 1e-12) and r[1]",
      "a view of a leaf that requires grad: J = diag(f'); neither the view nor its base gets a "
      ".grad", group="inputs")
REG.P("b5_in_transposed_forward", "jacobian",
      "ga.jacobian(lambda t: torch.sin(t) @ Mc()[:4], rnd(4, 5, seed=1).T, method='forward')",
      "close(r, jr(lambda t: torch.sin(t) @ Mc()[:4], rnd(4, 5, seed=1).T.contiguous()), 1e-12)",
      "a transposed view (5, 4), non-contiguous, forward mode", group="inputs")
REG.P("b5_in_expanded", "jacobian",
      "ga.jacobian(torch.sin, rnd(3, 1, seed=4).expand(3, 4))",
      "close(r, torch.diag(torch.cos(rnd(3, 1, seed=4).expand(3, 4)).reshape(-1)).reshape(3, 4, "
      "3, 4), 1e-12)",
      "an expanded tensor (stride 0): its 12 elements are 12 inputs (any strides; fn gets private"
      " copies; jacrev gives the same 12 × 12 diagonal)", group="inputs")


def conv_fn(t):
    w = torch.cos(torch.arange(3 * 3 * 2 * 2, dtype=t.dtype)).reshape(3, 3, 2, 2)
    return torch.nn.functional.conv2d(t, w, padding=1)


REG.P("b5_in_channels_last", "jacobian",
      "ga.jacobian(conv_fn, rnd(1, 3, 4, 5, seed=6).contiguous(memory_format=torch.channels_last))",
      "close(r, jr(conv_fn, rnd(1, 3, 4, 5, seed=6)), 1e-12)",
      "a channels_last input to a convolution: the logical (row-major) Jacobian", group="inputs")
REG.P("b5_in_zero_dim", "jacobian",
      "ga.jacobian(lambda t: t**3 + torch.sin(t), torch.tensor(0.7, dtype=D))",
      "isinstance(r, torch.Tensor) and r.shape == () and close(r, torch.tensor(3 * 0.49 + math.cos(0.7), dtype=D), 1e-12)",
      "0-d in, 0-d out: J of shape () = 3x² + cos x", group="inputs")
for _m in ("auto", "finite-difference"):
    REG.P(f"b5_in_empty_x_{_m.replace('-', '_')}", "jacobian",
          f"ga.jacobian(lambda t: t.sum(0) + 1.0, torch.zeros(0, 3, dtype=D), method={_m!r})",
          "isinstance(r, torch.Tensor) and r.shape == (3, 0, 3)",
          "the docstring: an empty x gives a Jacobian with no columns, shape y.shape + x.shape "
          "(jacrev: (3, 0, 3))", group="inputs")
REG.P("b5_in_float16", "jacobian",
      "ga.jacobian(f_el, rnd(6, dtype=H16, seed=1))",
      "r.dtype == H16 and near(r, torch.diag(d_el(rnd(6, dtype=H16, seed=1).to(D))), 2e-3)",
      "the docstring: float16 too, the Jacobian in x's dtype; float16 rounding", group="inputs")
REG.P("b5_in_bfloat16_forward", "jacobian",
      "ga.jacobian(f_ms, X45(B16), method='forward')",
      "r.dtype == B16 and near(r, jr(f_ms, X45(B16).to(D)), 3.2e-2)",
      "bfloat16 in x's dtype, forward mode; bfloat16 rounding", group="inputs")
REG.P("b5_in_complex_holomorphic", "jacobian",
      "ga.jacobian(lambda z: z**2 * 1j, torch.tensor([1 + 2j, -0.5 + 1j], dtype=C128))",
      "close(r, taj(lambda z: z**2 * 1j, torch.tensor([1 + 2j, -0.5 + 1j], dtype=C128), "
      "vectorize=True), 1e-12) and close(torch.diagonal(r), (2j * torch.tensor([1 + 2j, -0.5 + "
      "1j], dtype=C128)).conj(), 1e-12)",
      "the docstring: conj(f'(z)) for a holomorphic f, as autograd.functional.jacobian("
      "vectorize=True) (torch: [2-4j, -1-2j] for z²)", group="inputs")
REG.P("b5_in_real_to_complex_forward", "jacobian",
      "ga.jacobian(lambda t: torch.exp(1j * t), rnd(3, seed=1), method='forward')",
      "r.dtype == C128 and close(r, taj(lambda t: torch.exp(1j * t), rnd(3, seed=1), "
      "strategy='forward-mode', vectorize=True), 1e-12)",
      "the docstring: a real input with a complex output in forward mode: the complex ∂y/∂x, in"
      " the output's dtype", group="inputs")
REG.P("b5_in_inference_tensor", "jacobian",
      "ga.jacobian(f_el, inference_tensor())",
      "close(r, torch.diag(d_el(rnd(5, seed=7))), 1e-12)",
      "the docstring: an inference tensor is copied; called outside inference mode",
      group="inputs")


def inference_tensor():
    with torch.inference_mode():
        return rnd(5, seed=7)


REG.P("b5_in_inference_tensor_vjp", "backward_vjp",
      "ga.backward_vjp(f_el, inference_tensor(), rnd(5, seed=8))",
      "close(r, rnd(5, seed=8) * d_el(rnd(5, seed=7)), 1e-12)",
      "not stated for backward_vjp: a refusal acceptable, a value must be v * f'(x)",
      group="inputs", either=True)


def buffer_fn():
    m = buffer_model()
    return lambda t: m(t) + m.extra * t[:, :3]


def captured_fn():
    w = mlp(2, D)[0].weight
    return lambda t: torch.tanh(t @ w.T)


def buffer_model():
    m = seeded(3, Scaled).to(D)
    m.extra = nn.Buffer(torch.tensor([0.5, -1.0, 2.0], dtype=D))
    return m


REG.P("b5_in_buffer_model", "jacobian",
      "ga.jacobian(buffer_fn(), rnd(2, 4, seed=1))",
      "close(r, jr(buffer_fn(), rnd(2, 4, seed=1)), 1e-12)",
      "a module with registered buffers and an nn.Buffer attribute (not inputs): jacrev",
      group="inputs")
REG.P("b5_in_tuple_mixed_dtypes", "jacobian",
      "ga.jacobian(lambda p, q: (p.sum() * q, p * 2), (rnd(3, seed=1), rnd(2, 2, dtype=S, seed=2)))",
      "isinstance(r, tuple) and len(r) == 2 and r[0][0].shape == (2, 2, 3) and "
      "r[0][1].shape == (2, 2, 2, 2) and r[1][0].shape == (3, 3) and r[1][1].shape == (3, 2, 2)"
      " and r[0][0].dtype == D and r[0][1].dtype == S and close(r[1][0], 2 * torch.eye(3), 1e-12)"
      " and close(r[1][1], torch.zeros(3, 2, 2), 0) and close(r[0][0], taj(lambda p, q: (p.sum()"
      " * q, p * 2), (rnd(3, seed=1), rnd(2, 2, dtype=S, seed=2)))[0][0], 1e-6)",
      "the docstring: nested tuples J[k][j] of autograd.functional.jacobian, each block in its "
      "input's dtype (torch: float64 and float32 blocks); the zero block", group="inputs")
REG.P("b5_in_nan_entry_warns", "jacobian",
      "ga.jacobian(lambda t: t**2, torch.tensor([1.0, float('nan'), 3.0], dtype=D))",
      "warned(W, 'RuntimeWarning') and close_notnan(r, jr(lambda t: t**2, torch.tensor([1.0, "
      "float('nan'), 3.0], dtype=D))) and r[0, 0] == 2 and r[2, 2] == 6",
      "the docstring: a RuntimeWarning when x holds NaN; the entries jacrev gives are there "
      "(its NaN column from 0 · NaN left open)", group="inputs")
REG.P("b5_in_huge_tiny", "jacobian",
      "ga.jacobian(lambda t: t * torch.tensor([1e-300, 1e300], dtype=D), "
      "torch.tensor([1e300, 1e-300], dtype=D), method='finite-difference')",
      "near(r, torch.diag(torch.tensor([1e-300, 1e300], dtype=D)), 1e-6)",
      "linear with huge and tiny coefficients at huge and tiny points: central differences are "
      "exact up to rounding", group="inputs")


def cmp_param():
    p = nn.Parameter(rnd(3, 4, seed=1))
    p.grad = torch.ones(3, 4, dtype=D)
    s = snap(p)
    c = ga.compare_vjp(lambda t: torch.sin(t) @ Mc()[:4], p, rnd(3, 3, seed=2))
    return c.agree, same(p, s)


REG.P("b5_in_cmp_param", "compare_vjp",
      "cmp_param()",
      "r[0] and r[1]",
      "an nn.Parameter with a .grad as x: 'agree'; x never modified (values, .grad)",
      group="inputs")
REG.P("b5_in_cmp_complex", "compare_vjp",
      "ga.compare_vjp(lambda z: z**2, torch.tensor([1 + 2j, -0.5 + 1j], dtype=C128), "
      "torch.ones(2, dtype=C128))",
      "r.agree and close(r.backward, torch.tensor([2 - 4j, -1 - 2j], dtype=C128), 1e-12)",
      "a complex input: backward(1) of z² is conj(2z) (torch: [2-4j, -1-2j])", group="inputs")
REG.P("b5_in_cmp_noncontiguous_v", "compare_vjp",
      "ga.compare_vjp(lambda t: t.T * 3, rnd(4, 6, seed=1)[:, ::2], rnd(4, 3, seed=2).T)",
      "r.agree and close(r.backward, 3 * rnd(4, 3, seed=2), 1e-12)",
      "a strided x, a transposed v and a transposing fn: vᵀJ = 3 vᵀ", group="inputs")
REG.P("b5_in_cmp_bfloat16", "compare_vjp",
      "ga.compare_vjp(f_el, rnd(8, dtype=B16, seed=1), rnd(8, dtype=B16, seed=2))",
      "r.agree and r.backward.dtype == B16",
      "a right (torch's own) backward in bfloat16 agrees with its rounding allowance",
      group="inputs")
REG.P("b5_in_check_param_input", "check_backward",
      "ga.check_backward(MulW.apply, nn.Parameter(rnd(5, seed=1)), rnd(5, seed=2))",
      "r.status == 'agree' and len(r.inputs) == 1",
      "an nn.Parameter (requires grad) is checked, the plain tensor passed through: one checked "
      "input (gradcheck: MulW right)", group="inputs")
REG.P("b5_in_check_skipped", "check_backward",
      "ga.check_backward(lambda x, k, c: MulW.apply(x, x * 0 + 1) * k + c.real, "
      "rnd(5, seed=1).requires_grad_(), torch.arange(5), torch.ones(5, dtype=C128))",
      "r.status == 'agree' and len(r.skipped) >= 2",
      "the docstring: integer and complex tensors are passed through and reported in skipped",
      group="inputs")
REG.P("b5_in_check_noncontiguous", "check_backward",
      "ga.check_backward(MulWBad.apply, rnd(4, 6, seed=1).T.requires_grad_(), "
      "rnd(6, 4, seed=2).requires_grad_())",
      "r.status == 'wrong' and len(r.wrong_pairs) == 1",
      "transposed (non-contiguous) leaves; only the w block is wrong (gradcheck: x right, w "
      "wrong)", group="inputs")
REG.P("b5_in_check_expanded", "check_backward",
      "ga.check_backward(Sq.apply, rnd(3, 1, seed=1).requires_grad_().expand(3, 4))",
      "r.status == 'agree'",
      "an expanded non-leaf that requires grad (stride 0): right backward; strides are not "
      "promised for check_backward, so a refusal is acceptable", group="inputs", either=True)
REG.P("b5_in_check_bfloat16", "check_backward",
      "ga.check_backward(Sq.apply, rnd(16, dtype=B16, seed=1).requires_grad_())",
      "r.status == 'agree'",
      "a right backward in bfloat16: rounding measured on float64 copies, not wrong",
      group="inputs")


# ======================================================================= callables (what fn is)
def lin_d():
    return seeded(6, lambda: nn.Linear(4, 5)).to(D)


REG.P("b5_fn_module", "jacobian",
      "ga.jacobian(lin_d(), rnd(3, 4, seed=1))",
      "close(r, jr(lin_d(), rnd(3, 4, seed=1)), 1e-12) and r.shape == (3, 5, 3, 4)",
      "fn an nn.Module: called as fn(x)", group="callables")
REG.P("b5_fn_partial_kwargs", "jacobian",
      "ga.jacobian(functools.partial(f_kw, scale=-2.0, shift=1.0), rnd(6, seed=1))",
      "close(r, torch.diag(2.0 * torch.sin(rnd(6, seed=1))), 1e-12)",
      "a functools.partial with keyword arguments: -2 cos' = 2 sin", group="callables")
REG.P("b5_fn_bound_method", "jacobian",
      "ga.jacobian(Holder().f, rnd(5, seed=2))",
      "close(r, torch.diag(torch.cos(rnd(5, seed=2)) * torch.linspace(-1, 1, 5, dtype=D)), 1e-12)",
      "a bound method of a user object", group="callables")
REG.P("b5_fn_lambda_captures_params", "jacobian",
      "ga.jacobian(captured_fn(), rnd(2, 6, seed=3))",
      "close(r, jr(captured_fn(), rnd(2, 6, seed=3)), 1e-12)",
      "a lambda capturing a module's parameters (they require grad)", group="callables")
REG.P("b5_fn_lambda_captures_params_create_graph", "jacobian",
      "jac_params_graph()",
      "r[0] and r[1]",
      "the docstring: create_graph=True makes J differentiable towards the tensors fn captures "
      "(a module's parameters): autograd.grad of J.sum() in W equals jacrev-of-functional's",
      group="callables")


def jac_params_graph():
    w = rnd(3, 4, seed=1).requires_grad_()
    x = rnd(4, seed=2)
    J = ga.jacobian(lambda t: torch.tanh(w @ t), x, create_graph=True)
    (gw,) = torch.autograd.grad(J.sum(), w)
    ref = torch.func.grad(lambda W: jacrev(lambda t: torch.tanh(W @ t))(x).sum())(w.detach())
    return J.requires_grad, close(gw, ref, 1e-12)


REG.P("b5_fn_compiled", "jacobian",
      "ga.jacobian(torch.compile(lambda t: torch.sin(t) * t.sum(), backend='eager'), "
      "rnd(5, seed=1))",
      "close(r, jr(lambda t: torch.sin(t) * t.sum(), rnd(5, seed=1)), 1e-12)",
      "a torch.compile'd function (backend 'eager'; jacrev of it agrees in torch 2.13)",
      group="callables")
REG.P("b5_fn_returns_tuple", "jacobian",
      "ga.jacobian(lambda t: (t.sum(), torch.sin(t)), rnd(4, seed=1))",
      "isinstance(r, tuple) and close(r[0], torch.ones(4), 0) and close(r[1], "
      "torch.diag(torch.cos(rnd(4, seed=1))), 1e-12)",
      "a tuple of outputs: a tuple of blocks (0-d output: shape x.shape)", group="callables")
REG.P("b5_fn_returns_list", "jacobian",
      "ga.jacobian(lambda t: [t * 2, t.sum()], rnd(3, seed=1))",
      "isinstance(r, (tuple, list)) and len(r) == 2 and close(r[0], 2 * torch.eye(3), 0) "
      "and close(r[1], torch.ones(3), 0)",
      "a list of outputs: not named by the docs (a tuple is); as autograd.functional.jacobian "
      "would, blocks per output, or a refusal", group="callables", either=True)
REG.E("b5_fn_returns_dict", "jacobian",
      "ga.jacobian(lambda t: {'y': t * 2}, rnd(3, seed=1))",
      ("dict", "tensor", "tuple", "fn", "return"),
      group="callables",
      oracle="the docstring: fn returns something other than tensors (a dict): TypeError")
for _m in ("forward", "finite-difference"):
    REG.P(f"b5_fn_constant_{_m.replace('-', '_')}", "jacobian",
          f"ga.jacobian(lambda t: torch.ones(3, dtype=D), rnd(4, seed=1), method={_m!r})",
          "isinstance(r, torch.Tensor) and r.shape == (3, 4) and not r.any()",
          "the docstring: an output that does not depend on the input gives a zero block",
          group="callables")
REG.P("b5_fn_constant_strict", "jacobian",
      "catch(lambda: ga.jacobian(lambda t: torch.ones(3, dtype=D), rnd(4, seed=1), strict=True))",
      "isinstance(r, RuntimeError)",
      "the docstring: strict=True raises a RuntimeError when an output is independent of the "
      "input", group="callables")
REG.P("b5_fn_item_reverse", "jacobian",
      "ga.jacobian(lambda t: t * t.sum().item(), rnd(4, seed=1), method='reverse')",
      "close(r, float(rnd(4, seed=1).sum()) * torch.eye(4, dtype=D), 1e-12)",
      "the docstring: reverse mode evaluates fn once, so .item() is fine (a constant to autograd:"
      " s · I; torch: the same)", group="callables")
REG.P("b5_fn_item_forward", "jacobian",
      "ga.jacobian(lambda t: t * t.sum().item(), rnd(4, seed=1), method='forward')",
      "close(r, float(rnd(4, seed=1).sum()) * torch.eye(4, dtype=D), 1e-12)",
      "forward mode loops where fn cannot be batched: s · I (jacfwd: the same)",
      group="callables")
REG.P("b5_fn_item_forward_vectorize_true", "jacobian",
      "catch(lambda: ga.jacobian(lambda t: t * t.sum().item(), rnd(4, seed=1), method='forward',"
      " vectorize=True))",
      "isinstance(r, ga.VectorizationError) or close(r, float(rnd(4, seed=1).sum()) * "
      "torch.eye(4, dtype=D), 1e-12)",
      "vectorize=True raises VectorizationError where fn cannot be batched; if torch can batch it"
      " (.item() of an unbatched primal), the value", group="callables")
REG.P("b5_fn_tolist", "jacobian",
      "ga.jacobian(lambda t: t * max(t.tolist()), rnd(5, seed=2), method='reverse')",
      "close(r, max(rnd(5, seed=2).tolist()) * torch.eye(5, dtype=D), 1e-12)",
      ".tolist() in fn: reverse mode evaluates fn once, unbatched", group="callables")
REG.P("b5_fn_data_dependent_batch_dim", "jacobian",
      "ga.jacobian(lambda s: s**2 if s.sum() > 0 else -s, torch.tensor([[1.0, 2.0], [-1.0, -2.0]],"
      " dtype=D), batch_dim=0)",
      "close(r, torch.stack([torch.diag(torch.tensor([2.0, 4.0])), -torch.eye(2)]).to(D), 0)",
      "the docstring: batch_dim with data-dependent control flow loops per sample; each sample"
      " its own branch", group="callables")
REG.P("b5_fn_data_dependent_batch_dim_vectorize", "jacobian",
      "catch(lambda: ga.jacobian(lambda s: s**2 if s.sum() > 0 else -s, torch.tensor([[1.0, "
      "2.0], [-1.0, -2.0]], dtype=D), batch_dim=0, vectorize=True))",
      "isinstance(r, ga.VectorizationError)",
      "the docstring: vectorize=True raises VectorizationError where fn cannot be batched over "
      "the samples", group="callables")
REG.P("b5_fn_item_batch_dim", "jacobian",
      "ga.jacobian(lambda s: s * s.sum().item(), rnd(3, 4, seed=1), batch_dim=0)",
      "close(r, torch.stack([float(rnd(3, 4, seed=1)[i].sum()) * torch.eye(4, dtype=D) for i in "
      "range(3)]), 1e-12)",
      "the docstring: .item() per sample: the loop; each sample's own sum", group="callables")
REG.P("b5_fn_dropout_eval_batch_dim", "jacobian",
      "ga.jacobian(seeded(1, lambda: nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.3))).to(D)"
      ".eval(), rnd(5, 4, seed=2), batch_dim=0)",
      "close(r, seeded(1, lambda: nn.Linear(4, 3)).to(D).weight.detach().expand(5, 3, 4), 1e-12)",
      "dropout in eval mode draws nothing: the weight for every sample", group="callables")
REG.P("b5_fn_inplace_vjp", "backward_vjp",
      "after_call(lambda: rnd(4, seed=3), lambda x: ga.backward_vjp(lambda t: torch.sin(t.mul_(2)),"
      " x, torch.ones(4, dtype=D)))",
      "r[1] and (isinstance(r[0], Exception) or close(r[0], 2 * torch.cos(2 * rnd(4, seed=3)), "
      "1e-12))",
      "fn edits its (private leaf) input in place: torch refuses in-place ops on a leaf that "
      "requires grad, so a refusal is acceptable; x left untouched either way",
      group="callables", either=True)
REG.P("b5_fn_module_check", "check_backward",
      "ga.check_backward(seeded(2, lambda: nn.Sequential(nn.Linear(3, 4), nn.Tanh())).to(D), "
      "rnd(2, 3, seed=1).requires_grad_(), parameters=False)",
      "r.status == 'agree' and len(r.inputs) == 1",
      "parameters=False: only the input is checked", group="callables")


# ======================================================================= points (values at odd points)
_Z = "torch.tensor([0.0, 1.5, -2.0], dtype=D)"
for _m in ("reverse",):
    REG.P(f"b5_pt_abs_at_zero_{_m.replace('-', '_')}", "jacobian",
          f"ga.jacobian(torch.abs, {_Z}, method={_m!r})",
          "close(r, torch.diag(torch.tensor([0.0, 1.0, -1.0], dtype=D)), 1e-9)",
          "|x| at 0: torch's sgn(0) = 0 (jacrev, jacfwd); the central difference is 0 too",
          group="points")
for _m in ("forward",):
    REG.P(f"b5_pt_relu_at_zero_{_m}", "jacobian",
          f"ga.jacobian(torch.relu, {_Z}, method={_m!r})",
          "close(r, torch.diag(torch.tensor([0.0, 1.0, 0.0], dtype=D)), 0)",
          "relu at 0: 0 (jacrev and jacfwd in torch 2.13)", group="points")
REG.P("b5_pt_relu_at_zero_fd", "jacobian",
      f"ga.jacobian(torch.relu, {_Z}, method='finite-difference')",
      "abs(float(r[0, 0]) - 0.5) < 1e-6 or (math.isnan(float(r[0, 0])) and warned(W, "
      "'RuntimeWarning'))",
      "relu at 0 by central differences: (h - 0) / 2h = 1/2 at every step (by hand), or an "
      "entry marked unresolved with a warning", group="points")
REG.P("b5_pt_sqrt_at_zero_reverse", "jacobian",
      "ga.jacobian(torch.sqrt, torch.tensor([0.0, 4.0], dtype=D), method='reverse')",
      "diag_ok(r, [math.inf, 0.25])",
      "sqrt at 0: inf on the diagonal; off it 0 or 0 · inf = NaN (jacrev: NaN at [1, 0])",
      group="points")
REG.P("b5_pt_norm_at_zero", "jacobian",
      "ga.jacobian(lambda t: t.norm(), torch.zeros(4, dtype=D))",
      "close(r, torch.zeros(4), 0)",
      "the norm at 0: torch's subgradient 0 (jacrev, jacfwd)", group="points")
REG.P("b5_pt_clamp_boundary", "jacobian",
      "ga.jacobian(lambda t: t.clamp(-1, 1), torch.tensor([-1.0, 1.0, 0.5, 2.0], dtype=D))",
      "close(torch.diagonal(r), torch.tensor([1.0, 1.0, 1.0, 0.0]), 0)",
      "clamp at its bounds: torch passes the gradient there (jacrev, jacfwd: 1)", group="points")
REG.P("b5_pt_max_tie_forward", "jacobian",
      "ga.jacobian(lambda t: t.max(), torch.tensor([2.0, 2.0, 1.0], dtype=D), method='forward')",
      "close(r, torch.tensor([0.5, 0.5, 0.0]), 0)",
      "max() with a tie: split evenly (jacrev, jacfwd: [0.5, 0.5, 0])", group="points")
REG.P("b5_pt_where_at_zero", "jacobian",
      "ga.jacobian(lambda t: torch.where(t > 0, t**2, -t), torch.tensor([0.0, 2.0], dtype=D))",
      "close(r, torch.tensor([[-1.0, 0.0], [0.0, 4.0]]), 0)",
      "where at its switch: the branch taken (jacrev: -1 at 0)", group="points")
for _m in ("auto",):
    REG.P(f"b5_pt_index_add_dup_{_m}", "jacobian",
          f"inctx('deterministic', lambda: ga.jacobian(lambda t: torch.zeros(3, dtype=D)"
          f".index_add(0, torch.tensor([0, 0, 2]), t), rnd(3, seed=1), method={_m!r}))",
          "close(r[0], torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), 0) "
          "and ok_flags(r, 'deterministic')",
          "index_add with a duplicate index, deterministic algorithms on (jacrev: rows "
          "[1,1,0], [0,0,0], [0,0,1])", group="points")
REG.P("b5_pt_index_put_accumulate_fd", "jacobian",
      "ga.jacobian(lambda t: torch.zeros(3, dtype=D).index_put((torch.tensor([2, 2, 0]),), t**2,"
      " accumulate=True), rnd(3, seed=1), method='finite-difference')",
      "near(r, jr(lambda t: torch.zeros(3, dtype=D).index_put((torch.tensor([2, 2, 0]),), t**2, "
      "accumulate=True), rnd(3, seed=1)), 1e-6)",
      "index_put(accumulate=True) with duplicates, by central differences", group="points")
REG.P("b5_pt_gather_dup_vjp", "backward_vjp",
      "ga.backward_vjp(lambda t: t[torch.tensor([0, 0, 0, 2])] ** 2, rnd(3, seed=1), "
      "torch.ones(4, dtype=D))",
      "close(r, torch.tensor([6.0, 0.0, 2.0], dtype=D) * rnd(3, seed=1), 1e-12)",
      "indexing with a repeated index: the gradient sums the repeats (by hand: 3 · 2x0, 0, 2x2)",
      group="points")
REG.P("b5_pt_cmp_nan_input", "compare_vjp",
      "ga.compare_vjp(lambda t: t**3, torch.tensor([1.0, float('nan'), 2.0], dtype=D), "
      "torch.ones(3, dtype=D))",
      "r.status == 'could not check' and not r.agree",
      "the docstring: the reference cannot resolve vᵀJ where fn is not finite (NaN input): "
      "'could not check', not agree", group="points")
REG.P("b5_pt_cmp_sigmoid_30_wrong", "compare_vjp",
      "ga.compare_vjp(SigOne.apply, torch.tensor([30.0, 0.0], dtype=D), torch.ones(2, dtype=D))",
      "r.status == 'DISAGREE' and not r.agree",
      "the docstring's own case: a backward of 1 where sigmoid's derivative is 9.3e-14 "
      "(torch) is DISAGREE; at 0 the truth is 0.25 (also off)", group="points")
REG.P("b5_pt_check_nan_input_right", "check_backward",
      "ga.check_backward(Sq.apply, torch.tensor([1.0, float('nan'), -2.0], dtype=D, "
      "requires_grad=True))",
      "r.status == 'could-not-check' and not r",
      "the docstring: NaN inputs' columns are never compared; nothing else wrong: "
      "'could-not-check'", group="points")
REG.P("b5_pt_check_nan_input_wrong", "check_backward",
      "ga.check_backward(SqHalf.apply, torch.tensor([1.0, float('nan'), -2.0], dtype=D, "
      "requires_grad=True))",
      "r.status == 'wrong'",
      "the factor bug at the finite elements is wrong whatever the NaN column", group="points")
REG.P("b5_pt_trace_first_nonfinite", "trace_backward",
      "ga.trace_backward((torch.sqrt(torch.tensor([0.0, 4.0], dtype=D, requires_grad=True)) * 0)"
      ".sum(), use_grad=True)",
      "r.first_nonfinite is not None and (r.first_nonfinite.op == 'sqrt' or "
      "'Sqrt' in r.first_nonfinite.grad_fn)",
      "sqrt at 0 receives 0 and sends 0 · inf = NaN (torch): the first node to send NaN",
      group="points")
REG.P("b5_pt_why_nonfinite_sqrt", "why_no_grad",
      "why_sqrt()",
      "r == 'nonfinite'",
      "the docstring's example at another point: sqrt at 0 behind a product, after backward",
      group="points")


def why_sqrt():
    x = torch.tensor([0.0, 9.0, 1.0], requires_grad=True)
    y = (torch.sqrt(x) * torch.tensor([1.0, 2.0, 3.0])).sum()
    y.backward()
    return ga.why_no_grad(y, x, names={"x": x}).case


REG.P("b5_pt_why_dead_relu_zero", "why_no_grad",
      "why_relu_zero()",
      "r == 'zero'",
      "relu of negative values only: the gradient is exactly zero ('zero'), read before backward",
      group="points")


def why_relu_zero():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.relu(-w - 1).sum()
    return ga.why_no_grad(y, w).case


# ======================================================================= composition (torch.func)
def g_of(jac_fn):
    """grad of a function of the Jacobian, with jac_fn(f, t) its Jacobian routine."""
    return torch.func.grad(lambda t: (jac_fn(f_el, t) ** 2).sum())(rnd(5, seed=1))


REG.P("b5_comp_grad_of_jacobian", "jacobian",
      "g_of(lambda f, t: ga.jacobian(f, t))",
      "close(r, g_of(lambda f, t: jacrev(f)(t)), 1e-10)",
      "the docstring: grad of a function of the Jacobian is the right second derivative",
      group="composition")
REG.P("b5_comp_grad_of_jacobian_fd", "jacobian",
      "g_of(lambda f, t: ga.jacobian(f, t, method='finite-difference'))",
      "near(r, g_of(lambda f, t: jacrev(f)(t)), 1e-5)",
      "the docstring: through grad, finite differences give the difference quotient of fn's "
      "derivative, accurate to the same order", group="composition")
REG.P("b5_comp_vmap_jacobian", "jacobian",
      "vmap(lambda t: ga.jacobian(f_ms, t))(rnd(3, 4, 5, seed=2))",
      "close(r, vmap(jacrev(f_ms))(rnd(3, 4, 5, seed=2)), 1e-12)",
      "vmap of jacobian: every sample its own Jacobian", group="composition")
REG.P("b5_comp_jacfwd_of_vjp", "backward_vjp",
      "(lambda V: jacfwd(lambda t: ga.backward_vjp(f_ms, t, V))(X45()))(rnd(4, 3, seed=6))",
      "close(r, (lambda V: jacfwd(lambda t: vjp_ref(f_ms, t, V))(X45()))(rnd(4, 3, seed=6)), "
      "1e-10)",
      "the docstring: backward_vjp composes with jacfwd (differentiated in x)",
      group="composition")
REG.P("b5_comp_grad_params_functional_call", "jacobian",
      "grad_params(lambda f, t: ga.jacobian(f, t))",
      "all(close(r[k], grad_params(lambda f, t: jacrev(f)(t))[k], 1e-10) for k in r)",
      "the docstring: a grad over a module's parameters through functional_call, around a "
      "function that calls jacobian", group="composition")


def grad_params(jac_fn):
    m = mlp(7, D)
    params = {k: v.detach() for k, v in m.named_parameters()}
    x = rnd(6, seed=1)

    def loss(p):
        return (jac_fn(lambda t: torch.func.functional_call(m, p, (t,)), x) ** 2).sum()

    return torch.func.grad(loss)(params)


REG.P("b5_comp_batch_dim_under_grad", "jacobian",
      "torch.func.grad(lambda t: ga.jacobian(f_el, t, batch_dim=0).sum())(rnd(3, 2, seed=1))",
      "close(r, torch.func.grad(lambda t: vmap(jacrev(f_el))(t).sum())(rnd(3, 2, seed=1)), 1e-10)",
      "the docstring: batch_dim composes with torch.func transforms", group="composition")
REG.E("b5_comp_strict_under_grad", "jacobian",
      "torch.func.grad(lambda t: ga.jacobian(f_el, t, strict=True).sum())(rnd(3, seed=1))",
      ("grad", "transform", "strict"), group="composition",
      oracle="the docstring: strict=True inside a torch.func transform: ValueError naming it")
REG.E("b5_comp_sparsity_under_vmap", "jacobian",
      "vmap(lambda t: ga.jacobian(torch.sin, t, sparsity=torch.eye(3, dtype=torch.bool)))"
      "(rnd(2, 3, seed=1))",
      ("vmap", "transform", "sparsity"), group="composition",
      oracle="the docstring: sparsity inside a torch.func transform: ValueError naming it")
REG.E("b5_comp_compare_vjp_under_grad", "compare_vjp",
      "torch.func.grad(lambda t: torch.as_tensor(float(ga.compare_vjp(torch.sin, t, 1.0)"
      ".max_abs_error)) + t.sum())(rnd(3, seed=1))",
      ("grad", "transform"), group="composition",
      oracle="the docstring: compare_vjp inside a torch.func transform: ValueError naming it")
REG.E("b5_comp_jacobian_sparsity_under_vmap", "jacobian_sparsity",
      "vmap(lambda t: ga.jacobian_sparsity(torch.sin, t, layout=torch.strided).float())"
      "(rnd(2, 3, seed=1))",
      ("vmap", "transform"), group="composition",
      oracle="the docstring: jacobian_sparsity inside a transform: ValueError naming it")
REG.E("b5_comp_sparse_jacobian_call_under_grad", "SparseJacobian",
      "torch.func.grad(lambda t: ga.SparseJacobian(torch.eye(3, dtype=torch.bool))(torch.sin, t,"
      " layout=torch.strided).sum())(rnd(3, seed=1))",
      ("grad", "transform"), group="composition",
      oracle="the docstring: a SparseJacobian call inside a transform: ValueError naming it")


# ======================================================================= sparse
def band(n, k=1):
    i = torch.arange(n)
    return (i[:, None] - i).abs() <= k


def stencil(u):
    up = torch.nn.functional.pad(u, (1, 1))
    return up[:-2] - 2 * u + up[2:] + torch.sin(u)


REG.P("b5_sp_jsp_transposed_x", "jacobian_sparsity",
      "ga.jacobian_sparsity(lambda u: u[:, 1:] * u[:, :-1], rnd(6, 3, seed=1).T, "
      "layout=torch.strided)",
      "same_pattern(r, jr(lambda u: u[:, 1:] * u[:, :-1], rnd(6, 3, seed=1).T.contiguous()) != 0)",
      "a transposed x: only its shape matters; products of neighbours along dim 1 (jacrev's "
      "non-zeros at a random point)", group="sparse")
REG.P("b5_sp_jsp_no_grad", "jacobian_sparsity",
      "inctx('no_grad', lambda: ga.jacobian_sparsity(stencil, rnd(6, seed=1), "
      "layout=torch.strided))",
      "same_pattern(r[0], band(6)) and ok_flags(r, 'no_grad')",
      "traced under no_grad: the docstring's own tridiagonal example; grad mode kept",
      group="sparse")
REG.P("b5_sp_jsp_item_unsupported", "jacobian_sparsity",
      "catch(lambda: ga.jacobian_sparsity(lambda u: u * u.sum().item(), rnd(4, seed=1)))",
      "isinstance(r, ga.UnsupportedOpError) and isinstance(r, NotImplementedError)",
      "the docstring: a tensor that depends on x converted to a Python number raises "
      "UnsupportedOpError (a NotImplementedError)", group="sparse")
REG.P("b5_sp_jsp_branch_unsupported", "jacobian_sparsity",
      "catch(lambda: ga.jacobian_sparsity(lambda u: u**2 if u.sum() > 0 else -u, rnd(4, seed=1)))",
      "isinstance(r, ga.UnsupportedOpError)",
      "the docstring: Python control flow on the values of x is refused", group="sparse")
REG.P("b5_sp_jsp_where_both_branches", "jacobian_sparsity",
      "ga.jacobian_sparsity(lambda u: torch.where(u > 0, u, u.roll(1)), rnd(5, seed=1), "
      "layout=torch.strided)",
      "same_pattern(r, torch.eye(5) + torch.eye(5).roll(1, 0))",
      "the docstring: torch.where keeps both branches (u and its roll)", group="sparse")
REG.P("b5_sp_jsp_times_zero_kept", "jacobian_sparsity",
      "ga.jacobian_sparsity(lambda u: u * 0 + u.floor(), rnd(4, seed=1), layout=torch.strided)",
      "same_pattern(r, torch.eye(4))",
      "the docstring: x * 0 keeps its entries; floor adds none", group="sparse")
REG.P("b5_sp_hsp_piecewise_linear_empty", "hessian_sparsity",
      "ga.hessian_sparsity(lambda u: torch.relu(u).sum() + (u[1:] - u[:-1]).abs().sum() + "
      "u.clamp(-1, 1).sum(), rnd(5, seed=1), layout=torch.strided)",
      "isinstance(r, torch.Tensor) and r.shape == (5, 5) and not r.any()",
      "the docstring: relu, abs, clamp add no pair", group="sparse")
REG.P("b5_sp_hsp_neighbour_products", "hessian_sparsity",
      "ga.hessian_sparsity(lambda u: (u[1:] * u[:-1]).sum(), rnd(6, seed=1), layout=torch.strided)",
      "same_pattern(r, band(6))",
      "the docstring's rule: the pairs of each product's output element: tridiagonal",
      group="sparse")
REG.P("b5_sp_sj_transposed_x", "SparseJacobian",
      "ga.SparseJacobian(band(12), (12,))(stencil, rnd(12, 2, seed=1).T[0])",
      "close(dense(r), jr(stencil, rnd(12, 2, seed=1).T[0].contiguous()), 1e-12)",
      "a strided (column of a transposed matrix) x", group="sparse")
REG.P("b5_sp_sj_param_x", "SparseJacobian",
      "after_call(lambda: nn.Parameter(rnd(12, seed=2)), lambda x: ga.SparseJacobian(band(12))"
      "(stencil, x, layout=torch.strided))",
      "r[1] and close(r[0], jr(stencil, rnd(12, seed=2)), 1e-12)",
      "an nn.Parameter as x: right, x never modified", group="sparse")
REG.P("b5_sp_sj_default_f64_f32", "SparseJacobian",
      "inctx('default_f64', lambda: ga.SparseJacobian(band(12), method='reverse')(stencil, "
      "rnd(12, dtype=S, seed=2)))",
      "r[0].dtype == S and near(dense(r[0]), jr(stencil, rnd(12, seed=2)), 1e-5) and "
      "ok_flags(r, 'default_f64')",
      "reverse mode gives x's dtype (float32) under a float64 default", group="sparse")
REG.P("b5_sp_sj_module_fn", "SparseJacobian",
      "ga.SparseJacobian(band(10, 1), (10,))(conv1d_fn(), rnd(10, seed=3), certify=1, "
      "generator=torch.Generator().manual_seed(0))",
      "close(dense(r), jr(conv1d_fn(), rnd(10, seed=3)), 1e-12)",
      "fn an nn.Module wrapping a width-3 Conv1d: a tridiagonal Jacobian", group="sparse")


class _Conv1dFlat(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv1d(1, 1, 3, padding=1, bias=True)

    def forward(self, u):
        return torch.tanh(self.c(u[None, None]))[0, 0]


def conv1d_fn():
    return seeded(8, _Conv1dFlat).to(D)


REG.P("b5_sp_jac_sparsity_deterministic", "jacobian",
      "inctx('deterministic', lambda: ga.jacobian(stencil, rnd(20, seed=4), sparsity=band(20), "
      "certify=2))",
      "close(dense(r[0]), jr(stencil, rnd(20, seed=4)), 1e-12) and ok_flags(r, 'deterministic')",
      "a compressed Jacobian with certificate under deterministic algorithms", group="sparse")
REG.P("b5_sp_sh_lambda_params", "SparseHessian",
      "ga.SparseHessian(band(8))(sh_fn(), rnd(8, seed=1), layout=torch.strided)",
      "close(r, torch.func.hessian(sh_fn())(rnd(8, seed=1)), 1e-10)",
      "f captures a parameter that requires grad: the Hessian in x only", group="sparse")


def sh_fn():
    w = nn.Parameter(torch.linspace(0.5, 2.0, 8, dtype=D))
    return lambda u: (w * torch.cos(u)).sum() + ((u[1:] - u[:-1]) ** 2 * w[1:]).sum()


REG.E("b5_sp_sh_int_output", "SparseHessian",
      "ga.SparseHessian(band(4))(lambda u: (u > 0).sum(), rnd(4, seed=1))",
      ("f(x)", "floating", "integer", "dtype", "int64"), group="sparse",
      oracle="the docstring: f(x) not real floating (an integer output): TypeError")


# ======================================================================= render
REG.P("b5_rd_summarize_transposed", "summarize",
      "ga.summarize(torch.arange(6.0).reshape(2, 3).T)",
      "r == '[0, 3, 1, 4, 2, 5]'",
      "the docstring: flattened row-major (of the logical tensor, whatever its strides)",
      group="render")
REG.P("b5_rd_summarize_long_requires_grad", "summarize",
      "ga.summarize(nn.Parameter(torch.arange(12.0).reshape(3, 4).T))",
      "r == '[0, 4, 8, …, 7, 11] (shape (4, 3), norm 22.49)'",
      "the docstring's long form for a transposed Parameter: first three, last two, shape, "
      "norm 22.49 (√506)", group="render")
REG.P("b5_rd_summarize_zero_dim_inference", "summarize",
      "ga.summarize(inference_half())",
      "r == '0.5'",
      "a 0-d inference tensor is shown as a number", group="render")


def inference_half():
    with torch.inference_mode():
        return torch.tensor(0.5)


REG.P("b5_rd_latex_matrix_transposed", "latex_matrix",
      "ga.latex_matrix(torch.tensor([[1.0, 2.0], [3.0, 4.0]]).T)",
      "r == '\\\\begin{bmatrix} 1 & 3 \\\\\\\\ 2 & 4 \\\\end{bmatrix}'",
      "the transposed matrix's logical rows", group="render")
REG.P("b5_rd_latex_jacobian_noncontiguous", "latex_jacobian",
      "ga.latex_jacobian(torch.arange(8.0).reshape(2, 2, 2).permute(2, 1, 0), (2,))",
      "r == '\\\\begin{bmatrix} 0 & 4 & 2 & 6 \\\\\\\\ 1 & 5 & 3 & 7 \\\\end{bmatrix}'",
      "a permuted (non-contiguous) Jacobian (2, 2, 2) with out_shape (2,): 2 × 4, row-major "
      "of the logical tensor", group="render")
REG.P("b5_rd_markdown_pipes_newlines", "markdown_table",
      "ga.markdown_table([['a|b', 'x\\ny'], ['long', torch.arange(10.0)]], ['k', 'v'])",
      "all(ln.startswith('|') for ln in r.split('\\n\\n')[0].splitlines()) and '\\\\|' in r "
      "and '<br>' in r and '<details' in r",
      "the docstring: | escaped, a line break becomes <br>, every table line starts with |; a "
      "long tensor's values in a <details> block", group="render")
REG.E("b5_rd_side_by_side_title_string", "side_by_side",
      "ga.side_by_side([two_traces()[0]], titles='one')",
      ("titles", "str"), group="render",
      oracle="the docstring: titles a string: TypeError")
REG.E("b5_rd_side_by_side_title_count", "side_by_side",
      "ga.side_by_side(two_traces(), titles=['only one'])",
      ("titles", "entry", "trace", "one per"), group="render",
      oracle="the docstring: titles without one entry per trace: ValueError")


def two_traces():
    out = []
    for k in (2.0, 3.0):
        a = torch.tensor(k, requires_grad=True)
        out.append(ga.trace_backward(a * a, names={"a": a}))
    return out


# ======================================================================= misuse
REG.E("b5_mis_strict_int", "jacobian", "ga.jacobian(torch.sin, rnd(3), strict=1)", "strict",
      oracle="the docstring: strict=1 is refused (not a bool): TypeError naming strict")
REG.E("b5_mis_int_output", "jacobian", "ga.jacobian(lambda t: (t > 0).long(), rnd(3))",
      ("int", "dtype", "output"), oracle="the docstring: an integer output: TypeError")
REG.E("b5_mis_complex_forward", "jacobian",
      "ga.jacobian(lambda z: z * 2, torch.ones(2, dtype=C128), method='forward')",
      ("complex", "forward"), oracle="the docstring: forward mode with complex inputs: ValueError")
REG.E("b5_mis_real_to_complex_auto", "jacobian",
      "ga.jacobian(lambda t: torch.exp(1j * t), rnd(3))",
      ("complex", "forward", "view_as_real"),
      oracle="the docstring: a complex output of a real input, auto: ValueError")
REG.E("b5_mis_vectorize_str", "jacobian", "ga.jacobian(torch.sin, rnd(3), vectorize='yes')",
      "vectorize", oracle="the docstring: vectorize neither None nor a bool: TypeError")
REG.E("b5_mis_certify_without_sparsity", "jacobian",
      "ga.jacobian(torch.sin, rnd(3), certify=2)", ("certify", "sparsity"),
      oracle="the docstring: certify without sparsity: ValueError")
REG.E("b5_mis_vjp_independent", "backward_vjp",
      "ga.backward_vjp(lambda t: torch.ones(2, dtype=D), rnd(3), torch.ones(2, dtype=D))",
      ("require", "grad", "depend"),
      oracle="the docstring: y does not require grad: ValueError")
REG.E("b5_mis_cmp_empty_x", "compare_vjp",
      "ga.compare_vjp(torch.sin, torch.zeros(0, dtype=D), torch.zeros(0, dtype=D))",
      ("empty", "x", "element"), oracle="the docstring: x empty: ValueError")
REG.E("b5_mis_check_no_requires_grad", "check_backward",
      "ga.check_backward(Sq.apply, rnd(3))", ("requires", "grad"),
      oracle="the docstring: no input requires grad: ValueError")
REG.E("b5_mis_check_probes_bool", "check_backward",
      "ga.check_backward(Sq.apply, rnd(3).requires_grad_(), probes=True)", "probes",
      oracle="the docstring: probes a bool: TypeError naming probes")
REG.E("b5_mis_watch_full_steps_zero", "watch", "ga.watch(mlp(), full_steps=0)", "full_steps",
      oracle="the docstring: full_steps below 1: ValueError")
REG.E("b5_mis_trace_no_gradient", "trace_backward",
      "ga.trace_backward(rnd(3).requires_grad_() * 2)", ("gradient", "scalar"),
      oracle="the docstring: gradient missing for a non-scalar output: ValueError")

CASES = REG.cases
