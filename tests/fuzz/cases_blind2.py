"""Blind edge cases, second set: every public callable of gradarg, written before any was run.

Written from the public docstrings (``help()`` on ``gradarg.__all__``, ``gradarg.sparse.__all__``,
``gradarg.plot`` and the methods of the objects they return), the pages under ``docs/`` and
torch's own tools (``torch.func``, ``torch.autograd.functional``, ``torch.autograd.gradcheck``),
without reading ``src/gradarg``, the earlier case files' bodies or any results.  No gradarg
function was called while writing them; every torch-side oracle was run with torch alone.

The format is ``casekit``'s:

* ``E(...)``: the oracle is a refusal, a ``TypeError`` / ``ValueError`` whose message names one
  of ``keys`` (the argument's name, or the word the docstring uses).
* ``P(...)``: the call returns ``r`` and ``pred`` must hold (``W``: the warnings the call
  issued).  ``either=True``: a clear refusal is acceptable too (the documentation leaves the
  input open).  Exceptions that are neither ``TypeError`` nor ``ValueError`` (``KeyError``,
  ``RuntimeError``, ``CertificateError``, ``UnsupportedOpError``) are caught by ``catch`` and
  checked by a ``P`` predicate.

``MOCK`` maps some case names to a torch-only expression that produces what the documentation
promises; evaluating ``pred`` with ``r`` set to it checked each predicate before any run.

Groups: values, shapes, dtypes, modules, checker, watch, sparse, composition, misuse,
side-effects.  Held-out names: ``held_out_blind2.txt`` (``random.Random(4403)``).

Run by hand::

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/fuzz/run.py --cases cases_blind2 \
        --out tests/fuzz/results_blind2.json
"""

from __future__ import annotations

import math  # noqa: F401  (the calls use it)
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import torch
import torch.nn.functional as F
from casekit import (  # noqa: F401  (the predicates use them)
    D,
    Registry,
    S,
    arrow,
    close,
    close_notnan,
    coo,
    covers,
    csr,
    dense,
    jr,
    same_pattern,
    taj,
    tri,
    valid_coloring,
    vjp_ref,
)
from torch import nn
from torch.autograd.function import once_differentiable
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, vmap  # noqa: F401

import gradarg as ga

REG = Registry(globals())
CASES = REG.cases
MOCK: dict[str, str] = {}


def P(name, target, call, pred, oracle, group, *, mock=None, **kw):
    REG.P(name, target, call, pred, oracle, group=group, **kw)
    if mock is not None:
        MOCK[name] = mock


def E(name, target, call, keys, group="misuse", **kw):
    REG.E(name, target, call, keys, group=group, **kw)


# ----------------------------------------------------------------------------- helpers
def gen(seed):
    return torch.Generator().manual_seed(seed)


def rn(*shape, seed=0, dtype=D):
    return torch.randn(*shape, generator=gen(seed), dtype=dtype)


def catch(thunk):
    """The value of ``thunk()``, or the exception it raised."""
    try:
        return thunk()
    except Exception as e:  # noqa: BLE001
        return e


def fresh(build, seed=0):
    """``build()`` under a fixed seed, the caller's random state left as it was."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return build()


def in_inference(thunk):
    with torch.inference_mode():
        return thunk()


def rng_kept(thunk):
    """True when ``thunk()`` leaves the global CPU generator exactly where it was."""
    before = torch.get_rng_state()
    thunk()
    return torch.equal(before, torch.get_rng_state())


def near(a, b, rtol=1e-5, atol=1e-12):
    if a is None or b is None:
        return a is None and b is None
    return abs(float(a) - float(b)) <= atol + rtol * abs(float(b))


def hooks_left(m):
    """Number of hooks of any kind on ``m``, its submodules and its parameters."""
    n = 0
    for mod in m.modules():
        for d in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                  "_backward_pre_hooks"):
            n += len(getattr(mod, d, {}) or {})
    for p in m.parameters():
        n += len(p._backward_hooks or {})
        n += len(getattr(p, "_post_accumulate_grad_hooks", None) or {})
    return n


# ------------------------------------------------------------------ custom Functions
class SqOK(torch.autograd.Function):
    """x², right backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


class SqHalf(torch.autograd.Function):
    """x², backward off by a factor 1/2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


class SqSavesOut(torch.autograd.Function):
    """save_for_backward misuse: saves y = x² and uses it as if it were x (wrong)."""

    @staticmethod
    def forward(ctx, x):
        y = x * x
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return 2 * g * y


class SqOnce(torch.autograd.Function):
    """x², right backward under @once_differentiable."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


class SqNoncontig(torch.autograd.Function):
    """x², right values returned as a non-contiguous (transposed-copy) tensor."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return (2 * g * x).t().contiguous().t()


class SqJvp(torch.autograd.Function):
    """x², right backward and right jvp (forward mode available)."""

    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.x_fw = x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x

    @staticmethod
    def jvp(ctx, t):
        return 2 * ctx.x_fw * t


class SqBf16(torch.autograd.Function):
    """x², right formula rounded through bfloat16 for float32 inputs: wrong only in float32."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        r = 2 * g * x
        if x.dtype == torch.float32:
            r = r.to(torch.bfloat16).to(torch.float32)
        return r


class MulNone(torch.autograd.Function):
    """x * w, backward returns None for w although the output depends on it."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, None


class SinExpMissing(torch.autograd.Function):
    """sin(x) exp(x); the backward misses the product rule's second term."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x) * torch.exp(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x) * torch.exp(x)


class MatLinT(torch.autograd.Function):
    """x @ w.T (w square); the backward uses w.T where w belongs: transposed for x."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w.T

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.T, g.T @ x


class AbsKink(torch.autograd.Function):
    """|x|, right everywhere except at x == 0 where it returns 5 (outside [-1, 1])."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.abs()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.where(x == 0, torch.full_like(x, 5.0), torch.sign(x))


class LeakyWrong(torch.autograd.Function):
    """leaky_relu(x, 0.1); backward uses slope 0.2 where x < 0: wrong on one side of 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x > 0, x, 0.1 * x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.where(x > 0, torch.ones_like(x), torch.full_like(x, 0.2))


class SignSTE(torch.autograd.Function):
    """sign(x) forward, hardtanh's derivative backward (a straight-through estimator)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1)


class SinCosWrong2(torch.autograd.Function):
    """Two outputs; the cos output's term has the wrong sign (only that pair is wrong)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, ga_, gb):
        (x,) = ctx.saved_tensors
        return ga_ * torch.cos(x) + gb * torch.sin(x)


class Noisy(torch.autograd.Function):
    """x², right derivative times (1 + 1e-2 noise) drawn anew at each backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x * (1 + 1e-2 * torch.rand(x.shape, dtype=x.dtype))


class GatherScale(torch.autograd.Function):
    """3 * x[idx] with an integer index argument (passed through, no gradient)."""

    @staticmethod
    def forward(ctx, x, idx):
        ctx.save_for_backward(x)
        ctx.idx = idx
        return x[idx] * 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        out = torch.zeros_like(x)
        out.index_add_(0, ctx.idx, 3 * g)
        return out, None


class InplaceGrad(torch.autograd.Function):
    """x², right result computed by writing into grad_output in place."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        g.mul_(2).mul_(x)
        return g


class SinNoJvp(torch.autograd.Function):
    """sin with a right backward and no jvp: the reference is finite differences."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x)


def expected_wrong_shape(grad_output, x):
    return torch.zeros(x.numel() + 1, dtype=x.dtype)


# ------------------------------------------------------------------ inputs (fresh each call)
def X5(dtype=D, seed=0):
    return rn(5, seed=seed, dtype=dtype).requires_grad_()


def X34(dtype=D, seed=1):
    return rn(3, 4, seed=seed, dtype=dtype).requires_grad_()


def W44(seed=2):
    return rn(4, 4, seed=seed).requires_grad_()


def XREG():
    """Eight values, four below 0: for region findings."""
    return torch.tensor([-1.7, -0.9, -0.4, -1.2, 0.3, 0.8, 1.4, 2.1], dtype=D,
                        requires_grad=True)


def XKINK():
    return torch.tensor([0.0, 1.3, -0.7, 0.0, 2.0], dtype=D, requires_grad=True)


def XSTE():
    return torch.linspace(-1.9, 1.9, 8, dtype=D, requires_grad=True)


XK = torch.tensor([0.0, 1.0, -2.0, 0.0], dtype=D)
XT = torch.tensor([1.0, 3.0, 3.0], dtype=D)
XC = torch.tensor([0.0, 1.0, 0.5, 2.0, -0.5], dtype=D)
XW = torch.tensor([-1.0, 4.0, 0.0], dtype=D)
XNAN = torch.tensor([1.0, float("nan"), 2.0], dtype=D)
X800 = torch.tensor([800.0, 1.0], dtype=D)
XSUB = torch.tensor([5e-324, 1e-310, -2e-320], dtype=D)
X3 = rn(3, seed=3)
X4 = rn(4, seed=4)
X6 = rn(6, seed=6)
V3 = rn(3, seed=13)
V4 = rn(4, seed=14)
M34 = rn(3, 4, seed=5)
Z2 = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex128)
VZ2 = torch.tensor([0.5 - 1j, 2 + 0.25j], dtype=torch.complex128)
S05 = torch.tensor(0.5, dtype=D)
S07 = torch.tensor(0.7, dtype=D)
X32 = rn(6, seed=7, dtype=S)
V32 = rn(6, seed=17, dtype=S)
X16 = torch.tensor([0.5, 1.0, -0.25, 2.0], dtype=torch.float16)
V16 = torch.tensor([1.0, -0.5, 2.0, 0.25], dtype=torch.float16)
XB16 = torch.tensor([0.5, 1.0, -0.25, 2.0], dtype=torch.bfloat16)
XI = torch.arange(4)
XSPARSE = torch.eye(3, dtype=D).to_sparse()
XNC = rn(4, 3, seed=8).t()  # non-contiguous (3, 4)
XEXP = rn(1, 4, seed=9).expand(3, 4)  # stride 0 along dim 0
XCL = rn(1, 2, 4, 4, seed=10).contiguous(memory_format=torch.channels_last)
XE = torch.zeros(0, 3, dtype=D)
WCONV = rn(3, 2, 3, 3, seed=11)
A_ARANGE = torch.arange(1.0, 13.0, dtype=D).reshape(3, 4)
IDX = torch.tensor([0, 2, 0, 4])


def fexp_rows(t):
    return (t * A_ARANGE).sum(0) + torch.sin(t).prod(0)


def fmix(a, b):
    return a * b.sum(), torch.sin(a) + b[:3]


def fdict(t):
    return {"y": t * 2}


def fint(t):
    return (t * 3).long()


def fcplx_real(t):
    return t * (1 + 2j)


def ftuple(t):
    return t * 2, t.sin()


def fdetached(t):
    return t.detach() * 2


def fsample(t):
    """One sample (4,) -> (3,): for batch_dim."""
    return torch.tanh(M34 @ t) * t[:3]


# ------------------------------------------------------------------ modules (built fresh)
def lin_d():
    return fresh(lambda: nn.Linear(3, 2).double())


def conv_d():
    return fresh(lambda: nn.Conv2d(2, 3, 3, padding=1).double())


def lstm_d():
    return fresh(lambda: nn.LSTM(3, 4, batch_first=True).double())


def gru_d():
    return fresh(lambda: nn.GRU(3, 2, batch_first=True).double())


def mha_d():
    return fresh(lambda: nn.MultiheadAttention(4, 2, batch_first=True).double())


def bn_d(train=True):
    m = fresh(lambda: nn.BatchNorm1d(3).double())
    with torch.no_grad():
        m.running_mean.copy_(torch.tensor([0.1, -0.2, 0.3], dtype=D))
        m.running_var.copy_(torch.tensor([1.5, 0.5, 2.0], dtype=D))
        m.weight.copy_(torch.tensor([1.0, 2.0, -0.5], dtype=D))
    return m.train(train)


def emb_d():
    return fresh(lambda: nn.Embedding(5, 3, padding_idx=0).double())


def tel_d():
    return fresh(lambda: nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                                    batch_first=True).double().eval())


LIN = lin_d()
CONV = conv_d()
LSTM = lstm_d()
GRU = gru_d()
MHA = mha_d()
BN_EVAL = bn_d(train=False)
TEL = tel_d()
EMB_W = rn(5, 3, seed=21)
XLIN = rn(4, 3, seed=22)
XCONV = rn(1, 2, 4, 4, seed=23)
XSEQ = rn(1, 3, 3, seed=24)
XATT = rn(1, 3, 4, seed=25)
XBN = rn(4, 3, seed=27)


BN_TRAIN = bn_d(train=True)


def bn_train_fn(t):
    return BN_TRAIN(t)


def bn_train_ref(t):
    """Torch only: training-mode batch norm without running statistics (same output)."""
    return F.batch_norm(t, None, None, BN_TRAIN.weight.detach(), BN_TRAIN.bias.detach(),
                        training=True, eps=BN_TRAIN.eps)


def emb_fn(w):
    return F.embedding(IDX, w, padding_idx=0)


def lin_params_fn(w):
    return functional_call(LIN, {"weight": w, "bias": LIN.bias.detach()}, (XLIN,))


def req(t):
    return t.detach().clone().requires_grad_()


def fwhere_sqrt(t):
    return torch.where(t > 0, t.sqrt(), torch.zeros_like(t))


def fmax(t):
    return t.max()


def fclamp01(t):
    return t.clamp(0, 1)


def fz2(z):
    return z * z


def ftanh_sum(t):
    return torch.tanh(t) * t.sum()


J34 = rn(3, 4, seed=30)
EPS64 = torch.finfo(D).eps
EPS16 = torch.finfo(torch.float16).eps
EPSBF = torch.finfo(torch.bfloat16).eps
LATEX_VJP_ONEHOT = (r"v^\top J = \begin{bmatrix} 1 & 0 \end{bmatrix} "
                    r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix} = "
                    r"\begin{bmatrix} 1 & 2 \end{bmatrix}")


def log_chain(a_value=3.0):
    """d = log(8 a²) traced with names; returns (trace, a)."""
    a = torch.tensor(a_value, requires_grad=True)
    b = a * a
    c = 8 * b
    d = torch.log(c)
    t = ga.trace_backward(d, names={"a": a, "b": b, "c": c, "d": d})
    return t, a


def sqrt_trace():
    x = torch.tensor([0.0, 4.0], dtype=D, requires_grad=True)
    return ga.trace_backward(torch.sqrt(x).sum(), names={"x": x})


# ================================================================== values
P("v_jac_abs_kink", "jacobian", "ga.jacobian(torch.abs, XK)",
  "close(r, taj(torch.abs, XK))",
  "abs at exact zeros: torch's subgradient 0 (drop-in for autograd.functional.jacobian)",
  "values", mock="taj(torch.abs, XK)")
P("v_jac_max_ties", "jacobian", "ga.jacobian(fmax, XT)",
  "close(r, torch.tensor([0.0, 0.5, 0.5], dtype=D))",
  "max over a tie: torch splits the gradient evenly (jacrev gives [0, .5, .5])", "values",
  mock="jr(fmax, XT)")
P("v_jac_clamp_bounds", "jacobian", "ga.jacobian(fclamp01, XC)",
  "close(r, jr(fclamp01, XC))",
  "clamp at its bounds: torch's derivative 1 at both bounds, 0 outside", "values",
  mock="jr(fclamp01, XC)")
P("v_jac_where_sqrt_masked", "jacobian", "ga.jacobian(fwhere_sqrt, XW)",
  "close_notnan(r, jr(fwhere_sqrt, XW)) and float(r[1, 1]) == 0.25",
  "where(x>0, sqrt(x), 0): entries equal jacrev wherever jacrev is not NaN; d sqrt(4) = 0.25",
  "values", mock="jr(fwhere_sqrt, XW)")
P("v_jac_nan_input_warns", "jacobian", "ga.jacobian(torch.sin, XNAN)",
  "close(r, jr(torch.sin, XNAN)) and any(w.startswith('RuntimeWarning') for w in W)",
  "docstring: RuntimeWarning issued (not raised) when x contains NaN; values as jacrev",
  "values")
P("v_jac_exp_overflow", "jacobian", "ga.jacobian(torch.exp, X800)",
  "close_notnan(r, jr(torch.exp, X800)) and math.isinf(float(r[0, 0])) "
  "and near(r[1, 1], math.e, 1e-12)",
  "exp(800) overflows: the diagonal entry is inf, the other exp(1)", "values",
  mock="jr(torch.exp, X800)")
P("v_jac_subnormal", "jacobian", "ga.jacobian(lambda t: 2 * t, XSUB)",
  "torch.equal(r, 2 * torch.eye(3, dtype=D))",
  "a linear map at subnormal points: exactly 2·I", "values", mock="2 * torch.eye(3, dtype=D)")
P("v_jac_complex_holomorphic", "jacobian", "ga.jacobian(fz2, Z2)",
  "close(r, taj(fz2, Z2, vectorize=True))",
  "docstring Notes: holomorphic f gives conj(f'(z)) = conj(2z), as autograd.functional's "
  "vectorize=True", "values", mock="taj(fz2, Z2, vectorize=True)")
P("v_jac_complex_out_forward", "jacobian", "ga.jacobian(fcplx_real, X3, method='forward')",
  "r.is_complex() and close(r, taj(fcplx_real, X3, strategy='forward-mode', vectorize=True))",
  "docstring: method='forward' gives the complex derivative of a complex output of a real "
  "input: (1+2i)·I", "values",
  mock="taj(fcplx_real, X3, strategy='forward-mode', vectorize=True)")
E("v_jac_complex_out_reverse_refused", "jacobian", "ga.jacobian(fcplx_real, X3)",
  ("complex",), group="values",
  oracle="docstring: a complex output of a real input is refused (ValueError) by 'auto'")
E("v_jac_int_output_refused", "jacobian", "ga.jacobian(fint, X3)", ("int", "dtype"),
  group="values", oracle="docstring: an output with an integer dtype is a TypeError")
P("v_jac_fd_sin_1e17", "jacobian",
  "ga.jacobian(torch.sin, torch.tensor([1e17], dtype=D), method='finite-difference')",
  "bool(torch.isnan(r).all()) and any(w.startswith('RuntimeWarning') for w in W)",
  "docstring: sin at 1e17 cannot be resolved: NaN, never a number, with a RuntimeWarning",
  "values")
P("v_jac_fd_sum_beside_1e300", "jacobian",
  "ga.jacobian(lambda t: t.sum(), torch.tensor([0.0, 1e300], dtype=D), "
  "method='finite-difference')",
  "bool(torch.isnan(r[0])) and near(r[1], 1.0, 1e-6) "
  "and any(w.startswith('RuntimeWarning') for w in W)",
  "docstring: x.sum() along x[0] = 0 beside 1e300: that entry NaN (named in a warning)",
  "values")
P("v_vjp_nan_v", "backward_vjp",
  "ga.backward_vjp(torch.sin, X3, torch.tensor([1.0, float('nan'), 2.0], dtype=D))",
  "close(r, vjp_ref(torch.sin, X3, torch.tensor([1.0, float('nan'), 2.0], dtype=D)))",
  "NaN in v propagates to its own entry only (diagonal J)", "values",
  mock="vjp_ref(torch.sin, X3, torch.tensor([1.0, float('nan'), 2.0], dtype=D))")
P("v_vjp_complex", "backward_vjp", "ga.backward_vjp(fz2, Z2, VZ2)",
  "r.dtype == torch.complex128 and close(r, VZ2 * (2 * Z2).conj())",
  "z.grad of z² with gradient v is v·conj(2z) (PyTorch's conjugate Wirtinger convention)",
  "values", mock="vjp_ref(fz2, Z2, VZ2)")
P("v_contract_basic", "contract", "ga.contract(V3, J34)", "close(r, V3 @ J34)",
  "vᵀJ over the leading output dimension", "values", mock="V3 @ J34")
P("v_fd_step_f64", "fd_step", "ga.fd_step(torch.tensor([0.0, 10.0, -1000.0], dtype=D))",
  "close(r, EPS64 ** (1 / 3) * torch.tensor([1.0, 10.0, 1000.0], dtype=D), rtol=1e-12)",
  "eps^(1/3) · max(1, |x|)", "values",
  mock="EPS64 ** (1 / 3) * torch.tensor([1.0, 10.0, 1000.0], dtype=D)")
P("v_backward_rtol_table", "backward_rtol",
  "tuple(ga.backward_rtol(d) for d in (D, S, torch.float16, torch.bfloat16, torch.complex64,"
  " torch.complex128))",
  "r == (1e-10, 1e-5, 1e-3, 1.6e-2, 1e-5, 1e-10)",
  "docstring values; complex dtypes use their real dtype's", "values",
  mock="(1e-10, 1e-5, 1e-3, 1.6e-2, 1e-5, 1e-10)")
P("v_fmt_rules", "fmt",
  "(ga.fmt(2 / 3, 2), ga.fmt(torch.tensor([1.5, 2.0])), ga.fmt(torch.tensor(0.1)), "
  "ga.fmt(3 + 0.5j))",
  "r == ('0.67', '[1.5, 2]', '0.1', '3 + 0.5i')",
  "':.{digits}g' per entry, nested brackets, complex as in the docstring's '1 - 2i'",
  "values", mock="('0.67', '[1.5, 2]', '0.1', '3 + 0.5i')")
P("v_summarize_long", "summarize", "ga.summarize(torch.arange(10.0))",
  "r == '[0, 1, 2, …, 8, 9] (shape (10,), norm 16.88)'",
  "markdown_table docstring: first three, last two, shape, norm", "values",
  mock="'[0, 1, 2, …, 8, 9] (shape (10,), norm 16.88)'")
P("v_latex_vjp_onehot", "latex_vjp",
  "ga.latex_vjp(torch.tensor([1.0, 0.0]), torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "
  "torch.tensor([1.0, 2.0]))",
  "r == LATEX_VJP_ONEHOT", "the docstring's equation with v = [1, 0]", "values",
  mock="LATEX_VJP_ONEHOT")
P("v_markdown_pipe", "markdown_table", "ga.markdown_table([['|a|', 1.5]], ['q', 'v'])",
  r"r == '| q | v |\n| --- | --- |\n| \\|a\\| | 1.5 |'",
  "docstring: a | inside a cell is escaped", "values",
  mock=r"'| q | v |\n| --- | --- |\n| \\|a\\| | 1.5 |'")
P("v_explorer_jacobian", "explorer", "ga.explorer(ftanh_sum, X3)",
  "r.jacobian.dtype == D and close(r.jacobian, jr(ftanh_sum, X3)) "
  "and close(r.vjp(), torch.ones(3, dtype=D) @ jr(ftanh_sum, X3)) "
  "and close(r.vjp(V3), V3 @ jr(ftanh_sum, X3))",
  "J by reverse mode as an (m, n) float64 matrix; vjp() with v = ones; vjp(v) = vᵀJ",
  "values")
P("v_trace_log_chain", "trace_backward", "log_chain(3.0)",
  "near(r[1].grad, 2 / 3, 1e-6) and near(r[0].cotangent('b'), 1 / 9, 1e-6) "
  "and near(r[0].cotangent('c'), 1 / 72, 1e-6) and r[0].output_name == 'd'",
  "d = log(8a²) at a = 3: a.grad = 2/3, at b 8/c = 1/9, at c 1/c = 1/72", "values")
P("v_trace_first_nonfinite", "trace_backward", "sqrt_trace()",
  "r.first_nonfinite is not None and r.first_nonfinite.op == 'sqrt'",
  "sqrt at 0 receives a finite cotangent and sends inf: the first non-finite node", "values")


def fcl(t):
    return F.conv2d(t, WCONV[:, :2], padding=1).sin()


def fsz1(t):
    return (t * t.sum()).squeeze(-1)


J2345 = rn(2, 3, 4, 5, seed=32)
V23 = rn(2, 3, seed=33)
JFLAT = (rn(5, 6, seed=34) * (torch.rand(5, 6, generator=gen(35)) < 0.4)).to(D)
V5 = rn(5, seed=36)
XBATCH = rn(3, 4, seed=37)  # 3 samples of 4


# ================================================================== shapes
P("s_jac_0d", "jacobian", "ga.jacobian(torch.sin, S07)",
  "r.shape == () and near(r, math.cos(0.7), 1e-12)", "0-d in, 0-d out: a 0-d Jacobian",
  "shapes", mock="torch.cos(S07)")
P("s_jac_empty_x", "jacobian", "ga.jacobian(lambda t: t * 2, XE)",
  "tuple(r.shape) == (0, 3, 0, 3)",
  "docstring: an empty x gives a Jacobian with no columns, y.shape + x.shape", "shapes",
  mock="torch.zeros(0, 3, 0, 3)")
P("s_jac_size1_dims", "jacobian", "ga.jacobian(fsz1, rn(1, 3, 1, seed=40))",
  "tuple(r.shape) == (1, 3, 1, 3, 1) and close(r, jr(fsz1, rn(1, 3, 1, seed=40)))",
  "size-1 dimensions are kept on both sides", "shapes", mock="jr(fsz1, rn(1, 3, 1, seed=40))")
P("s_jac_noncontig_x", "jacobian", "ga.jacobian(fexp_rows, XNC)",
  "close(r, jr(fexp_rows, XNC.contiguous()))",
  "docstring: any strides; a transposed x gives the Jacobian of its values", "shapes",
  mock="jr(fexp_rows, XNC.contiguous())")
P("s_jac_expanded_x", "jacobian", "ga.jacobian(fexp_rows, XEXP)",
  "tuple(r.shape) == (4, 3, 4) and close(r, jr(fexp_rows, XEXP.contiguous()))",
  "a stride-0 expanded x: each of its 12 elements is its own column (private copies)",
  "shapes", mock="jr(fexp_rows, XEXP.contiguous())")
P("s_jac_channels_last", "jacobian", "ga.jacobian(fcl, XCL)",
  "close(r, jr(fcl, XCL.contiguous()))", "channels_last input to a convolution", "shapes",
  mock="jr(fcl, XCL.contiguous())")
P("s_jac_tuple_in_tuple_out", "jacobian", "ga.jacobian(fmix, (X3, X4))",
  "isinstance(r, tuple) and len(r) == 2 and all(len(b) == 2 for b in r) "
  "and close(r, taj(fmix, (X3, X4)))",
  "docstring: tuple inputs and outputs give autograd.functional's nested tuples J[k][j]",
  "shapes", mock="taj(fmix, (X3, X4))")
P("s_jac_single_in_tuple_out", "jacobian", "ga.jacobian(ftuple, X3)",
  "isinstance(r, tuple) and close(r, taj(ftuple, X3))",
  "one input, tuple output: a tuple of blocks", "shapes", mock="taj(ftuple, X3)")
E("s_jac_dict_output", "jacobian", "ga.jacobian(fdict, X3)", ("fn", "dict", "tensor"),
  group="shapes",
  oracle="docstring: fn returns a tensor or a tuple of tensors; something else is a TypeError")
P("s_jac_batch_dim0", "jacobian", "ga.jacobian(fsample, XBATCH, batch_dim=0)",
  "tuple(r.shape) == (3, 3, 4) and close(r, vmap(jacrev(fsample))(XBATCH))",
  "docstring: per-sample Jacobians, what vmap(jacrev(fn), in_dims=batch_dim) computes",
  "shapes", mock="vmap(jacrev(fsample))(XBATCH)")
P("s_jac_batch_dim_item_loop", "jacobian",
  "ga.jacobian(lambda t: t * t.sum().item(), XBATCH, batch_dim=0)",
  "close(r, torch.stack([torch.eye(4, dtype=D) * float(s.sum()) for s in XBATCH]))",
  "docstring: where fn cannot be batched (.item()) each sample is looped; .item() is a "
  "constant", "shapes",
  mock="torch.stack([torch.eye(4, dtype=D) * float(s.sum()) for s in XBATCH])")
P("s_vjp_expanded_x", "backward_vjp", "ga.backward_vjp(fexp_rows, XEXP, V4)",
  "tuple(r.shape) == (3, 4) and close(r, vjp_ref(fexp_rows, XEXP.contiguous(), V4))",
  "a stride-0 expanded x: the gradient of each of its 12 elements", "shapes",
  mock="vjp_ref(fexp_rows, XEXP.contiguous(), V4)")
P("s_vjp_channels_last", "backward_vjp",
  "ga.backward_vjp(fcl, XCL, torch.ones(1, 3, 4, 4, dtype=D))",
  "tuple(r.shape) == (1, 2, 4, 4) and close(r, vjp_ref(fcl, XCL.contiguous(), "
  "torch.ones(1, 3, 4, 4, dtype=D)))", "channels_last x: values by position", "shapes",
  mock="vjp_ref(fcl, XCL.contiguous(), torch.ones(1, 3, 4, 4, dtype=D))")
P("s_contract_coo", "contract", "ga.contract(V23, J2345.to_sparse())",
  "close(r, torch.einsum('ij,ijkl->kl', V23, J2345))",
  "docstring: a sparse COO Jacobian of shape y.shape + x.shape", "shapes",
  mock="torch.einsum('ij,ijkl->kl', V23, J2345)")
P("s_contract_csr_flat", "contract", "ga.contract(V5, JFLAT.to_sparse_csr())",
  "close(r, V5 @ JFLAT)", "docstring: a flat m × n CSR with v of shape (m,)", "shapes",
  mock="V5 @ JFLAT")
P("s_latex_jacobian_3d", "latex_jacobian",
  "ga.latex_jacobian(torch.tensor([[1.0, 0.0, 2.0], [0.5, 3.0, 1.0]]), (2,))",
  r"r == '\\begin{bmatrix} 1 & 0 & 2 \\\\ 0.5 & 3 & 1 \\end{bmatrix}'",
  "rows are output elements, columns input elements", "shapes",
  mock=r"'\\begin{bmatrix} 1 & 0 & 2 \\\\ 0.5 & 3 & 1 \\end{bmatrix}'")


def fto32(t):
    return torch.sin(t.float()) * 3


def fto64(t):
    return torch.sin(t.double()) * 3


def fstencil(u):
    up = F.pad(u, (1, 1))
    return up[:-2] - 2 * u + up[2:] + torch.sin(u)


X32_10 = torch.linspace(0, 1, 10, dtype=S)
X64_10 = torch.linspace(0, 1, 10, dtype=D)


def energy1(u):
    return ((u[1:] - u[:-1]) ** 2).sum() + torch.cos(u).sum() + (u ** 4).sum()


# ================================================================== dtypes
P("d_jac_f32", "jacobian", "ga.jacobian(torch.sin, X32)",
  "r.dtype == S and close(r, jr(torch.sin, X32), rtol=1e-6, atol=1e-7)",
  "float32 in, float32 Jacobian (in x's dtype)", "dtypes", mock="jr(torch.sin, X32)")
P("d_jac_f16", "jacobian", "ga.jacobian(torch.sin, X16)",
  "r.dtype == torch.float16 and close(r, jr(torch.sin, X16), rtol=1e-3, atol=1e-3)",
  "float16 is not in the documented list (float32/float64/complex): either refused or "
  "torch's float16 derivative (float16 rounding: 1e-3)", "dtypes", either=True,
  mock="jr(torch.sin, X16)")
P("d_jac_bf16", "jacobian", "ga.jacobian(torch.sin, XB16)",
  "r.dtype == torch.bfloat16 and close(r, jr(torch.sin, XB16), rtol=1.6e-2, atol=1e-2)",
  "bfloat16: either refused or torch's bfloat16 derivative (rtol of bfloat16)", "dtypes",
  either=True, mock="jr(torch.sin, XB16)")
E("d_jac_int_x", "jacobian", "ga.jacobian(torch.sin, XI)", ("x", "int", "dtype"),
  group="dtypes", oracle="docstring: x with an integer dtype is a TypeError")
P("d_jac_complex64", "jacobian", "ga.jacobian(fz2, Z2.to(torch.complex64))",
  "r.dtype == torch.complex64 and close(r, taj(fz2, Z2.to(torch.complex64), vectorize=True), "
  "rtol=1e-6, atol=1e-6)", "complex64 holomorphic: conj(2z), in complex64", "dtypes",
  mock="taj(fz2, Z2.to(torch.complex64), vectorize=True)")
P("d_jac_fn_changes_dtype", "jacobian", "ga.jacobian(fto32, X6)",
  "r.dtype == D and close(r, 3 * torch.diag(torch.cos(X6.float()).double()), rtol=1e-6)",
  "docstring Returns: in x's dtype (float64) although fn computes in float32", "dtypes",
  mock="3 * torch.diag(torch.cos(X6))")
P("d_vjp_f16", "backward_vjp", "ga.backward_vjp(torch.sin, X16, V16)",
  "r.dtype == torch.float16 and close(r, vjp_ref(torch.sin, X16, V16), rtol=1e-3, atol=1e-3)",
  "float16 x: float16 gradient, torch's own float16 computation", "dtypes",
  mock="vjp_ref(torch.sin, X16, V16)")
P("d_vjp_f32_fn_in_f64", "backward_vjp", "ga.backward_vjp(fto64, X32, V32)",
  "r.dtype == S and close(r, (3 * V32.double() * torch.cos(X32.double())).float(), rtol=1e-6)",
  "docstring: dtype x.dtype even when fn computes in float64", "dtypes",
  mock="(3 * V32.double() * torch.cos(X32.double())).float()")
P("d_fd_step_f16_bf16", "fd_step",
  "(ga.fd_step(torch.tensor([0.0, 8.0], dtype=torch.float16)), "
  "ga.fd_step(torch.tensor([-4.0], dtype=torch.bfloat16)))",
  "close(r[0], EPS16 ** (1 / 3) * torch.tensor([1.0, 8.0]), rtol=2e-3) "
  "and close(r[1], EPSBF ** (1 / 3) * torch.tensor([4.0]), rtol=1e-2)",
  "eps of the dtype itself (float16: 2^-10, bfloat16: 2^-7), rounded to that dtype",
  "dtypes", mock="(EPS16 ** (1 / 3) * torch.tensor([1.0, 8.0]), EPSBF ** (1 / 3) * "
  "torch.tensor([4.0]))")
P("d_compare_f16", "compare_vjp", "ga.compare_vjp(torch.sin, X16, V16)",
  "r.agree and r.status == 'agree' and close(r.backward, vjp_ref(torch.sin, X16, V16), "
  "rtol=1e-3, atol=1e-3)",
  "torch's own float16 sin backward agrees within float16's allowance (backward_rtol 1e-3 "
  "and the documented in-rounding rule for float32 and lower)", "dtypes")
P("d_sparse_f32", "SparseJacobian", "ga.SparseJacobian(tri(10))(fstencil, X32_10)",
  "r.dtype == S and close(r.to_dense(), jr(fstencil, X32_10), rtol=1e-6, atol=1e-6)",
  "float32 x: a float32 compressed Jacobian equal to jacrev", "dtypes",
  mock="jr(fstencil, X32_10).to_sparse()")
P("d_sparse_hessian_f32", "SparseHessian",
  "ga.SparseHessian(tri(10))(energy1, X32_10, layout=torch.strided)",
  "r.dtype == S and close(r, hessian(energy1)(X32_10.double()), rtol=1e-5, atol=1e-5)",
  "float32 x: the Hessian in x's dtype (float32 rounding of float64's)", "dtypes",
  mock="hessian(energy1)(X32_10)")


def lstm_out(t):
    return LSTM(t)[0]


def mha_out(t):
    return MHA(t, t, t)[0]


def tel_out(t):
    return TEL(t)


IDX_NOPAD = torch.tensor([1, 2, 4, 2])
IDX_PAD = torch.tensor([0, 2, 0, 4])


def emb_module(idx):
    """A padding_idx embedding whose pad row is not zero (as after loading weights)."""
    m = emb_d()
    with torch.no_grad():
        m.weight[0] = torch.tensor([0.5, -1.0, 2.0], dtype=D)
    return m


# ================================================================== modules
P("m_jac_lstm", "jacobian", "ga.jacobian(lstm_out, XSEQ)", "close(r, jr(lstm_out, XSEQ))",
  "LSTM output sequence wrt the input sequence (causal: zero blocks above)", "modules",
  mock="jr(lstm_out, XSEQ)")
P("m_jac_mha", "jacobian", "ga.jacobian(mha_out, XATT)", "close(r, jr(mha_out, XATT))",
  "self-attention (q = k = v) wrt its input", "modules", mock="jr(mha_out, XATT)")
P("m_jac_batchnorm_train", "jacobian", "ga.jacobian(bn_train_fn, XBN)",
  "close(r, jr(bn_train_ref, XBN))",
  "BatchNorm in training: every sample's output depends on the whole batch (the running "
  "statistics it updates do not enter the output)", "modules",
  mock="taj(bn_train_fn, XBN)")
P("m_jac_batchnorm_eval", "jacobian", "ga.jacobian(BN_EVAL, XBN)",
  "close(r, jr(BN_EVAL, XBN)) and close(r.reshape(12, 12), "
  "torch.diag((BN_EVAL.weight / torch.sqrt(BN_EVAL.running_var + BN_EVAL.eps)).detach()"
  ".repeat(4)))",
  "BatchNorm in eval: elementwise, w / sqrt(running_var + eps) on the diagonal", "modules",
  mock="jr(BN_EVAL, XBN)")
P("m_jac_embedding_pad_reverse", "jacobian", "ga.jacobian(emb_fn, EMB_W, method='reverse')",
  "close(r, jacrev(emb_fn)(EMB_W)) and float(r[0, :, 0].abs().sum()) == 0",
  "reverse mode uses embedding's backward, which zeroes the padding_idx row", "modules",
  mock="jacrev(emb_fn)(EMB_W)")
P("m_jac_embedding_pad_forward", "jacobian", "ga.jacobian(emb_fn, EMB_W, method='forward')",
  "close(r, jacfwd(emb_fn)(EMB_W)) and float(r[0, 0, 0, 0]) == 1.0",
  "forward mode differentiates the lookup itself: the padding row is read, derivative 1 "
  "(the docstring: ask 'forward' to check a backward against forward-mode formulas)",
  "modules", mock="jacfwd(emb_fn)(EMB_W)")
P("m_jac_functional_call", "jacobian", "ga.jacobian(lin_params_fn, LIN.weight.detach())",
  "close(r, jr(lin_params_fn, LIN.weight.detach()))",
  "a module's weight through torch.func.functional_call", "modules",
  mock="jr(lin_params_fn, LIN.weight.detach())")
P("m_jac_transformer_layer", "jacobian", "ga.jacobian(tel_out, XATT)",
  "close(r, jr(tel_out, XATT))", "TransformerEncoderLayer (eval, dropout 0) wrt its input",
  "modules", mock="jr(tel_out, XATT)")
P("m_compare_conv", "compare_vjp", "ga.compare_vjp(CONV, XCONV, rn(1, 3, 4, 4, seed=42))",
  "r.agree and close(r.backward, vjp_ref(CONV, XCONV, rn(1, 3, 4, 4, seed=42)))",
  "torch's Conv2d backward agrees with central differences", "modules")
P("m_check_linear_module", "check_backward", "ga.check_backward(lin_d(), req(XLIN))",
  "bool(r) and r.status == 'agree' and len(r.inputs) == 3",
  "a module: its input and its two parameters checked; torch's Linear is right", "modules")
P("m_check_batchnorm_train", "check_backward", "ga.check_backward(bn_d(True), req(XBN))",
  "bool(r) and r.status == 'agree'", "BatchNorm1d in training mode is right", "modules")
P("m_check_transformer_layer", "check_backward", "ga.check_backward(tel_d(), req(XATT))",
  "bool(r) and r.status == 'agree'", "TransformerEncoderLayer (eval, dropout 0) is right",
  "modules")
P("m_check_embedding_no_pad_used", "check_backward",
  "ga.check_backward(emb_module(IDX_NOPAD), IDX_NOPAD)",
  "bool(r) and len(r.skipped) >= 1",
  "indices without the padding index: the weight's gradient is the derivative; the integer "
  "indices are skipped", "modules")
P("m_check_embedding_pad_used", "check_backward",
  "ga.check_backward(emb_module(IDX_PAD), IDX_PAD)",
  "not r and r.status == 'wrong'",
  "the padding row is read by the forward (derivative 1, jacfwd) but the backward gives 0: "
  "not the derivative, a zero where J is not", "modules")


def XNAN5():
    return torch.tensor([1.0, float("nan"), -2.0, 0.5], dtype=D, requires_grad=True)


def X1E17():
    return torch.tensor([1e17, 2.0], dtype=D, requires_grad=True)


def mulnone_in_w(t):
    return MulNone.apply(X3, t)


def out_tensor_case():
    x = X3.clone().requires_grad_()
    x.grad = torch.full((3,), 7.0, dtype=D)
    y = x ** 2
    r = ga.compare_vjp(y, x, V3, reference=torch.diag(2 * X3).numpy())
    return r, x


def inplace_v_case():
    v = V3.clone()
    r = ga.compare_vjp(InplaceGrad.apply, X3, v)
    return r, v


# ================================================================== checker: check_backward
P("c_cb_sq_ok", "check_backward", "ga.check_backward(SqOK.apply, X5())",
  "bool(r) and r.status == 'agree' and r.summary != ''", "a right x² backward agrees",
  "checker")
P("c_cb_sq_half", "check_backward", "ga.check_backward(SqHalf.apply, X5())",
  "not r and r.status == 'wrong' and r.summary.startswith('WRONG') "
  "and r.pairs[0].pattern == 'factor' and '1/2' in r.pairs[0].sentence",
  "docstring example, other inputs: off by a constant factor 1/2", "checker")
P("c_cb_saves_output", "check_backward", "ga.check_backward(SqSavesOut.apply, X5())",
  "not r and r.status == 'wrong'", "save_for_backward of the output used as the input: wrong",
  "checker")
P("c_cb_once_differentiable", "check_backward", "ga.check_backward(SqOnce.apply, X5())",
  "bool(r) and r.status == 'agree'", "@once_differentiable right backward: agree", "checker")
P("c_cb_noncontig_grad", "check_backward", "ga.check_backward(SqNoncontig.apply, X34())",
  "bool(r) and r.status == 'agree'", "right values returned non-contiguous: agree", "checker")
P("c_cb_jvp_auto", "check_backward", "ga.check_backward(SqJvp.apply, X5())",
  "bool(r) and r.status == 'agree'", "a Function with a jvp: forward-mode reference, agree",
  "checker")
P("c_cb_bf16_path_f64", "check_backward", "ga.check_backward(SqBf16.apply, X5())",
  "bool(r) and r.status == 'agree'", "the bfloat16 rounding is only on float32: float64 agrees",
  "checker")
P("c_cb_bf16_path_f32", "check_backward", "ga.check_backward(SqBf16.apply, X5(S))",
  "not r and r.status == 'wrong'",
  "float32 input rounded through bfloat16 (relative error ~2e-3 >> 1e-5): wrong", "checker")
P("c_cb_none_for_input", "check_backward", "ga.check_backward(MulNone.apply, X5(), X5(seed=9))",
  "not r and len(r.wrong_pairs) == 1 and r.wrong_pairs[0].pattern == 'zero'",
  "None for w although y depends on it: that pair wrong, pattern 'zero'; x's pair right",
  "checker")
P("c_cb_missing_term", "check_backward", "ga.check_backward(SinExpMissing.apply, X5())",
  "not r and r.status == 'wrong'", "the product rule's second term missing: wrong", "checker")
P("c_cb_transposed", "check_backward", "ga.check_backward(MatLinT.apply, X34(), W44())",
  "not r and len(r.wrong_pairs) == 1 and r.wrong_pairs[0].pattern == 'transposed'",
  "guide 'a forgotten transpose': x's pair transposed, w's right", "checker")
P("c_cb_abs_kink_wrong", "check_backward", "ga.check_backward(AbsKink.apply, XKINK())",
  "not r and r.status == 'wrong'",
  "5 at x = 0, outside [-1, 1], where central differences give 0 at every step: wrong",
  "checker")
P("c_cb_region_negative", "check_backward", "ga.check_backward(LeakyWrong.apply, XREG())",
  "not r and r.pairs[0].region is not None "
  "and ('<' in r.pairs[0].region or '≤' in r.pairs[0].region)",
  "wrong exactly at the 4 elements x < 0: a region below a threshold", "checker")
P("c_cb_ste_not_derivative", "check_backward", "ga.check_backward(SignSTE.apply, XSTE())",
  "not r and r.wrong_pairs[0].pattern == 'not-derivative'",
  "guide: a straight-through estimator is named as a flat forward's gradient", "checker")
P("c_cb_two_outputs_wrong", "check_backward", "ga.check_backward(SinCosWrong2.apply, X5())",
  "not r and len(r.wrong_pairs) == 1 and r.wrong_pairs[0].pattern == 'sign'",
  "only the cos output's pair is wrong, by its sign", "checker")
P("c_cb_nondeterministic", "check_backward", "ga.check_backward(Noisy.apply, X5())",
  "r.status == 'non-deterministic'",
  "docstring Notes: two runs with the same v differing beyond tolerance: non-deterministic",
  "checker")
P("c_cb_int_arg_skipped", "check_backward",
  "ga.check_backward(GatherScale.apply, X5(), torch.tensor([0, 3, 3, 1]))",
  "bool(r) and len(r.skipped) == 1", "an integer argument is passed through and skipped",
  "checker")
P("c_cb_nan_input", "check_backward", "ga.check_backward(SqOK.apply, XNAN5())",
  "r.status == 'could-not-check'",
  "docstring: NaN inputs' columns are never compared: could-not-check, nothing wrong",
  "checker")
P("c_cb_sin_1e17", "check_backward", "ga.check_backward(SinNoJvp.apply, X1E17())",
  "r.status == 'could-not-check'",
  "docstring: finite differences of sin at 1e17 cannot be resolved: could-not-check",
  "checker")
P("c_cb_localize_false", "check_backward",
  "ga.check_backward(SqHalf.apply, X5(), localize=False)",
  "not r and len(r.pairs) == 0", "probes only: wrong, no full pairs", "checker")
P("c_cb_rtol_huge", "check_backward", "ga.check_backward(SqHalf.apply, X5(), rtol=10.0)",
  "bool(r)",
  "Notes: wrong only beyond 2e + rtol(|exp| + max|exp|); with rtol = 10 the 1/2 factor is "
  "inside the allowance", "checker")
P("c_cb_example_v_onehot", "check_backward", "ga.check_backward(SqHalf.apply, X5())",
  "r.example is not None and int((r.example.v != 0).sum()) == 1",
  "ExampleV: the one-hot of the worst row", "checker")
E("c_cb_expected_wrong_shape", "check_backward",
  "ga.check_backward(SqOK.apply, X5(), expected=expected_wrong_shape)", ("expected", "shape"),
  group="checker", oracle="docstring: expected returning gradients of the wrong shape: "
  "ValueError")

# ----------------------------------------------------------------- compare_vjp, backward_vjp
P("c_cv_sin_ok", "compare_vjp", "ga.compare_vjp(torch.sin, X3, V3)",
  "r.agree and r.status == 'agree' and r.reference_name == 'finite-difference' "
  "and close(r.backward, V3 * torch.cos(X3))", "torch's sin agrees with central differences",
  "checker")
P("c_cv_wrong", "compare_vjp", "ga.compare_vjp(SqHalf.apply, X3, V3)",
  "not r.agree and r.status == 'DISAGREE' and close(r.backward, V3 * X3)",
  "a factor-1/2 backward disagrees; backward is what it computed", "checker")
P("c_cv_ref_numpy", "compare_vjp",
  "ga.compare_vjp(SqOK.apply, X3, V3, reference=torch.diag(2 * X3).numpy())",
  "r.agree and close(r.reference, 2 * V3 * X3)", "a Jacobian by hand as a NumPy array",
  "checker")
P("c_cv_ref_callable", "compare_vjp",
  "ga.compare_vjp(SqHalf.apply, X3, V3, reference=lambda v: 2 * v * X3)",
  "not r.agree and close(r.reference, 2 * V3 * X3)",
  "a VJP function as the reference exposes the factor", "checker")
P("c_cv_output_tensor", "compare_vjp", "out_tensor_case()",
  "r[0].agree and close(r[1].grad, torch.full((3,), 7.0, dtype=D))",
  "an output tensor with a Jacobian reference; x.grad restored afterwards", "checker")
P("c_cv_none_for_input", "compare_vjp", "ga.compare_vjp(mulnone_in_w, X4[:3], V3)",
  "not r.agree and r.note != '' and close(r.backward, torch.zeros(3, dtype=D), atol=0)",
  "Notes: a backward returning None for x is compared as zeros, and note says so", "checker")
P("c_cv_inplace_grad_output", "compare_vjp", "inplace_v_case()",
  "r[0].agree and torch.equal(r[1], V3)",
  "Notes: v is copied: a backward writing into grad_output changes neither v nor the verdict",
  "checker")
P("c_bv_wrong_backward", "backward_vjp", "ga.backward_vjp(SqHalf.apply, X3, V3)",
  "close(r, V3 * X3)", "backward_vjp returns what the backward computes, right or not",
  "checker", mock="V3 * X3")


# ================================================================== watch: scenarios
XW16 = rn(16, 4, seed=50, dtype=S)
XW16B = rn(16, 4, seed=51, dtype=S)
XW16U = torch.rand(16, 4, generator=gen(52))  # in [0, 1)
XW16NAN = XW16.clone()
XW16NAN[3, 2] = float("nan")


def _mlp():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def _loss(m, x=XW16):
    return m(x).pow(2).mean()


class TwoBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 2)
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        return self.a(x) + self.b(x).detach()


class Root(nn.Module):
    def forward(self, x):
        return torch.sqrt(x.abs())


class LSTMHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(3, 5, batch_first=True)
        self.head = nn.Linear(5, 1)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


class EmbHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4, padding_idx=0)
        self.head = nn.Linear(4, 1)

    def forward(self, idx):
        return self.head(self.emb(idx)).squeeze(-1)


class Nested(nn.Module):
    def __init__(self, two=False):
        super().__init__()
        self.head = nn.Sequential()
        self.head.add_module("fc", nn.Linear(4, 2))
        if two:
            self.tail = nn.Sequential()
            self.tail.add_module("fc", nn.Linear(2, 1))

    def forward(self, x):
        h = self.head(x)
        return self.tail(h) if hasattr(self, "tail") else h


XSEQ_W = rn(6, 4, 3, seed=53, dtype=S)
IDX_W = torch.tensor([[0, 3, 5, 0], [2, 2, 9, 1]])


def _b_plain(m, tap):
    _loss(m).backward()
    tap("bw", m)


def _b_opt(lr=0.1, params=None, clip=None, zero_before_step=False):
    def body(m, tap):
        opt = torch.optim.SGD(list(m.parameters()) if params is None else params(m), lr=lr)
        opt.zero_grad()
        _loss(m).backward()
        tap("bw", m)
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(m.parameters(), clip)
        if zero_before_step:
            opt.zero_grad()
        opt.step()
        tap("end", m)
    return body


def _b_stale(m, tap):
    tap("pre", m)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    _loss(m).backward()  # no zero_grad: .grad holds the earlier pass too
    tap("bw", m)
    opt.step()
    tap("end", m)


def _b_twice(m, tap):
    loss = _loss(m)
    loss.backward(retain_graph=True)
    loss.backward()
    tap("bw", m)


def _b_micro(m, tap):
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    opt.zero_grad()
    _loss(m, XW16).backward()
    _loss(m, XW16B).backward()
    tap("bw", m)
    opt.step()


def _b_scaler(halfway=False):
    def body(m, tap):
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        opt.zero_grad()
        scaler.scale(_loss(m)).backward()
        tap("bw", m)
        if halfway:
            opt.step()
        else:
            scaler.step(opt)
            scaler.update()
        tap("end", m)
    return body


def _b_unused(m, tap):
    m[0](rn(4, 2, seed=54, dtype=S)).sum().backward()
    tap("bw", m)


def _b_nan(m, tap):
    _loss(m, XW16NAN).backward()
    tap("bw", m)


def _b_dead(m, tap):
    _loss(m, XW16U).backward()
    tap("bw", m)


def _b_lstm(m, tap):
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    opt.zero_grad()
    m(XSEQ_W).pow(2).mean().backward()
    tap("bw", m)
    opt.step()


def _b_emb(m, tap):
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    opt.zero_grad()
    m(IDX_W).pow(2).mean().backward()
    tap("bw", m)
    opt.step()


def _b_light(m, tap):
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    for x in (XW16, XW16B, XW16, XW16B):
        opt.zero_grad()
        _loss(m, x).backward()
        opt.step()
    tap("end", m)


def _b_nonfinite(m, tap):
    m(rn(5, 3, seed=55, dtype=S)).pow(2).mean().backward()
    tap("bw", m)


def _b_nested(m, tap):
    m(XW16).pow(2).mean().backward()
    tap("bw", m)


def _build_frozen():
    m = _mlp()
    m[0].requires_grad_(False)
    return m


def _build_stale():
    m = _mlp()
    _loss(m, XW16B).backward()
    return m


def _build_dead():
    m = _mlp()
    with torch.no_grad():
        m[0].bias.fill_(-10.0)
    return m


def _build_hooked():
    m = _mlp()
    m[0].weight.register_hook(lambda g: torch.zeros_like(g))
    return m


def _build_nonfinite():
    m = nn.Sequential(nn.Linear(3, 3), Root(), nn.Linear(3, 1))
    with torch.no_grad():
        m[0].weight.zero_()
        m[0].bias.zero_()
    return m


def _build_four():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3), nn.Tanh())


WS = {
    "healthy": (_mlp, _b_plain),
    "healthy_opt": (_mlp, _b_opt()),
    "zero_lr": (_mlp, _b_opt(lr=0.0)),
    "unused": (lambda: nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1)), _b_unused),
    "frozen": (_build_frozen, _b_plain),
    "detached": (TwoBranch, _b_plain),
    "nan_input": (_mlp, _b_nan),
    "stale": (_build_stale, _b_stale),
    "opt_missing": (_mlp, _b_opt(params=lambda m: list(m[0].parameters()))),
    "clip": (_mlp, _b_opt(clip=0.01)),
    "scaler_ok": (_mlp, _b_scaler()),
    "scaler_halfway": (_mlp, _b_scaler(halfway=True)),
    "twice": (_mlp, _b_twice),
    "dead": (_build_dead, _b_dead),
    "micro": (_mlp, _b_micro),
    "hook_zero": (_build_hooked, _b_opt()),
    "zero_before_step": (_mlp, _b_opt(zero_before_step=True)),
    "lstm": (LSTMHead, _b_lstm),
    "emb_pad": (EmbHead, _b_emb),
    "light": (_mlp, _b_light),
    "nonfinite": (_build_nonfinite, _b_nonfinite),
    "four": (_build_four, _b_nested),
    "nested": (Nested, _b_nested),
    "nested_two": (lambda: Nested(two=True), _b_nested),
}


def _noop(*a):
    return None


def watched(name, **kw):
    """Run scenario ``name`` inside ``gradarg.watch``; return the watch."""
    build, body = WS[name]
    m = fresh(build)
    with ga.watch(m, **kw) as w:
        body(m, _noop)
    return w


def wref(name):
    """Torch only: the same scenario without a watch; norms of every .grad at each tap."""
    build, body = WS[name]
    m = fresh(build)
    snaps = {}

    def tap(label, mod):
        snaps[label] = {n: (None if p.grad is None else float(p.grad.detach().double().norm()))
                        for n, p in mod.named_parameters()}
    body(m, tap)
    return snaps


def norms_match(w, name, label="bw", rtol=1e-5):
    ref = wref(name)[label]
    return all(near(w.parameters[n].grad, g, rtol) for n, g in ref.items())


def module_named(w, name):
    return next(c for c in w.modules if c.name == name)


def empty_watch():
    m = fresh(_mlp)
    with ga.watch(m) as w:
        pass
    return w


def watch_hooks_after():
    m = fresh(_mlp)
    before = hooks_left(m)
    with ga.watch(m):
        _loss(m).backward()
    return before, hooks_left(m)


def watch_remove_twice():
    m = fresh(_mlp)
    w = ga.watch(m)
    _loss(m).backward()
    w.remove()
    w.remove()
    return hooks_left(m)


def last_out_grad_norm():
    """Torch only: ‖∂loss/∂output‖ of the healthy scenario's model."""
    m = fresh(_mlp)
    out = m(XW16)
    (g,) = torch.autograd.grad(out.pow(2).mean(), out)
    return float(g.double().norm())


OK = "gradients ok"

# ================================================================== watch
P("w_healthy_summary", "watch", "watched('healthy')", "r.summary().startswith(OK)",
  "docstring example: a healthy step's summary begins 'gradients ok'", "watch")
P("w_healthy_param_norms", "GradWatch.parameters", "watched('healthy')",
  "norms_match(r, 'healthy') and all(p.state == 'ok' for p in r.parameters.values())",
  "ParamRecord.grad: the norm of this step's gradient (autograd's, float32 rounding)",
  "watch")
P("w_healthy_rows", "GradWatch.rows", "watched('healthy')",
  "[d['module'] for d in r.rows()] == ['0', '1', '2'] and all({'module', 'type', 'shape', "
  "'grad_out', 'grad_in', 'params', 'flags'} <= set(d) for d in r.rows())",
  "docstring: one row per innermost module call, the documented keys", "watch")
P("w_healthy_modules", "GradWatch.modules", "watched('healthy')",
  "[c.name for c in r.modules] == ['(model)', '0', '1', '2'] "
  "and [c.name for c in r.layers()] == ['0', '1', '2'] and r.modules[0].depth == 0",
  "ModuleRecord: index 0 is the model '(model)', then forward order; layers() innermost",
  "watch")
P("w_healthy_module_norms", "GradWatch.modules", "watched('healthy')",
  "near(module_named(r, '0').param_norm, math.hypot(wref('healthy')['bw']['0.weight'], "
  "wref('healthy')['bw']['0.bias'])) and near(module_named(r, '2').grad_out, "
  "last_out_grad_norm())",
  "param_norm: norm of the module's own parameter gradients; grad_out at the last layer: "
  "‖∂loss/∂y‖", "watch")
P("w_healthy_opt_summary", "watch", "watched('healthy_opt')",
  "r.summary().startswith(OK) and norms_match(r, 'healthy_opt')",
  "zero_grad, backward, step: 'gradients ok'", "watch")
P("w_zero_lr_norms", "watch", "watched('zero_lr')", "norms_match(r, 'zero_lr')",
  "lr = 0 changes no gradient: the recorded norms are autograd's", "watch")
P("w_unused_why", "GradWatch.why_no_grad", "watched('unused').why_no_grad('1.weight')",
  "r.startswith(\"no gradient reached 1.weight: module '1' (Linear) was never called\")",
  "docstring example: the unused module's parameter", "watch")
P("w_unused_record", "GradWatch.parameters", "watched('unused')",
  "r.parameters['1.weight'].state == 'none' and r.parameters['1.weight'].grad is None "
  "and not r.parameters['1.weight'].module_ran and not r.summary().startswith(OK)",
  "a parameter with no gradient: state 'none', its module never ran, not ok", "watch")
P("w_frozen_named", "GradWatch.summary", "watched('frozen')",
  "'0.weight' in r.summary() and r.parameters['0.weight'].requires_grad is False "
  "and r.parameters['0.weight'].state == 'none'",
  "summary docstring: frozen parameters are named", "watch")
P("w_detached_branch", "GradWatch.summary", "watched('detached')",
  "r.parameters['b.weight'].grad is None and r.parameters['a.weight'].state == 'ok' "
  "and not r.summary().startswith(OK) and len(r.problems()) >= 1",
  "a branch cut by .detach(): its parameters get nothing, named as a problem", "watch")
P("w_nan_input", "GradWatch.summary", "watched('nan_input')",
  "r.parameters['0.weight'].state == 'nonfinite' and not r.summary().startswith(OK) "
  "and len(r.problems()) >= 1", "a NaN in the input: non-finite gradients, a problem",
  "watch")
P("w_stale_grad", "GradWatch.parameters", "watched('stale')",
  "near(r.parameters['0.weight'].held_before, wref('stale')['pre']['0.weight']) "
  "and not r.summary().startswith(OK)",
  "held_before: the norm .grad already held; a .grad not zeroed is named", "watch")
P("w_opt_missing_param", "GradWatch.summary", "watched('opt_missing')",
  "'2.weight' in r.summary()",
  "watch docstring: parameters no optimizer seen holds are named", "watch")
P("w_clip_final", "GradWatch.parameters", "watched('clip')",
  "all(near(r.parameters[n].grad, g) and near(r.parameters[n].final, wref('clip')['end'][n]) "
  "for n, g in wref('clip')['bw'].items()) and r.parameters['0.weight'].final_known",
  "ParamRecord: grad before clipping, final = .grad at the end of the block (clipped)",
  "watch")
P("w_scaler_ok", "GradWatch.summary", "watched('scaler_ok')",
  "r.summary().startswith(OK) and near(r.parameters['0.weight'].grad, "
  "wref('scaler_ok')['bw']['0.weight']) and near(r.parameters['0.weight'].final, "
  "wref('scaler_ok')['end']['0.weight'])",
  "GradScaler used right: ok; grad at the loss's scale (65536×), final unscaled", "watch")
P("w_scaler_halfway", "GradWatch.summary", "watched('scaler_halfway')",
  "not r.summary().startswith(OK)",
  "a scaled loss stepped by a plain optimizer.step(): named, not ok", "watch")
P("w_same_graph_twice", "GradWatch.parameters", "watched('twice')",
  "r.parameters['0.weight'].passes == 2 and near(r.parameters['0.weight'].grad, "
  "wref('twice')['bw']['0.weight']) and not r.summary().startswith(OK)",
  "two passes over one graph: passes 2, grad the norm of their sum, a problem", "watch")
P("w_dead_relu", "GradWatch.modules", "watched('dead')",
  "module_named(r, '1').dead_units == (8, 8) and r.parameters['0.weight'].state == 'zero' "
  "and not r.summary().startswith(OK)",
  "every unit of the ReLU dead (bias -10): (8, 8); the first layer's gradient zero",
  "watch")
P("w_hook_zero", "GradWatch.summary", "watched('hook_zero')",
  "'hook' in r.summary().lower() and not r.summary().startswith(OK)",
  "docs: a hook of the user's that replaced a gradient with zeros is named", "watch")
P("w_zero_before_step", "GradWatch.summary", "watched('zero_before_step')",
  "not r.summary().startswith(OK)",
  "'.grad' reset between the backward and the step: named", "watch")
P("w_light_steps", "watch", "watched('light', full_steps=1)",
  "r.summary().startswith(OK)",
  "full_steps=1: light steps still check what the optimizer reads; healthy: ok", "watch")
P("w_first_nonfinite", "GradWatch.first_nonfinite", "watched('nonfinite')",
  "r.first_nonfinite() is not None and r.first_nonfinite().name == '1'",
  "sqrt(|x|) at x = 0 receives a finite gradient and sends inf", "watch")
P("w_draw_boxes", "draw_modules", "ga.draw_modules(watched('four')).svg",
  "r.count('<rect class=\"ga-box\"') == 4",
  "docstring: one box per direct submodule", "watch")
E("w_draw_nothing_recorded", "draw_modules", "ga.draw_modules(empty_watch())",
  ("record", "nothing", "run"), group="watch",
  oracle="docstring: nothing was recorded (the model did not run): ValueError")
P("w_plot_figure", "GradWatch.plot", "watched('healthy').plot()",
  "type(r).__name__ == 'Figure'", "plot() returns a matplotlib Figure", "watch")
P("w_why_unknown_param", "GradWatch.why_no_grad",
  "catch(lambda: watched('healthy').why_no_grad('nope.weight'))", "isinstance(r, KeyError)",
  "docstring: not a parameter of the watched model: KeyError", "watch")


# ----------------------------------------------------------------- why_no_grad (function)
def wn_detach():
    w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    return ga.why_no_grad((w.detach() * x).sum(), w)


def wn_inplace():
    w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = torch.sigmoid(w)
    h += 1
    return ga.why_no_grad(h.sum(), w)


def wn_accumulated():
    model = fresh(lambda: nn.Linear(3, 1))
    x, y = rn(16, 3, seed=61, dtype=S), rn(16, 1, seed=62, dtype=S)
    for _ in range(3):
        F.mse_loss(model(x), y).backward()
    return ga.why_no_grad(F.mse_loss(model(x), y), model.weight)


def wn_unused_param():
    m = fresh(lambda: nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1)))
    loss = m[0](rn(4, 2, seed=63, dtype=S)).sum()
    return ga.why_no_grad(loss, m[1].weight, module=m)


def wn_not_run():
    w = torch.tensor([1.0, -2.0, 3.0], dtype=D, requires_grad=True)
    y = (torch.sin(w) * w).sum()
    return ga.why_no_grad(y, w), w


def _drop_model():
    return nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.5), nn.Linear(16, 1))


def wn_random_forward():
    m = fresh(_drop_model).train()
    x = rn(8, 4, seed=64, dtype=S)
    m(x).pow(2).mean().backward()
    return ga.why_no_grad(lambda: m(x).pow(2).mean(), m[0].weight)


def wn_rng_kept():
    m = fresh(_drop_model).train()
    x = rn(8, 4, seed=64, dtype=S)
    m(x).pow(2).mean().backward()
    return rng_kept(lambda: ga.why_no_grad(lambda: m(x).pow(2).mean(), m[0].weight))


SIN_W_GRAD = (lambda w: torch.sin(w) + w * torch.cos(w))(
    torch.tensor([1.0, -2.0, 3.0], dtype=D))

P("wn_detach", "why_no_grad", "wn_detach()",
  "r.case == 'not-reachable' and '.detach() or .data' in r.message",
  "guide: a .detach() cuts the path: not-reachable, named", "watch")
P("wn_modified_in_place", "why_no_grad", "wn_inplace()",
  "r.case == 'modified-in-place' and r.node.startswith('Sigmoid')",
  "guide: sigmoid's saved output modified by +=", "watch")
P("wn_accumulated", "why_no_grad", "wn_accumulated()",
  "r.case == 'accumulated' and 'holds 3 times what one backward pass' in r.message",
  "guide: three backward passes without zero_grad", "watch")
P("wn_unused_parameter", "why_no_grad", "wn_unused_param()",
  "r.case == 'unused-parameter'",
  "docstring: no parameter of its module in the graph (module given)", "watch")
P("wn_not_run", "why_no_grad", "wn_not_run()",
  "r[0].case == 'not-run' and close(r[0].gradient, SIN_W_GRAD) and r[1].grad is None",
  "before backward: .grad not filled; the gradient one pass gives is d/dw (w sin w) = "
  "sin w + w cos w; nothing accumulated", "watch")
P("wn_random_forward", "why_no_grad", "wn_random_forward()",
  "r.case == 'random-forward'",
  "docstring: a recomputing callable whose two results differ (dropout in training)",
  "watch")


# ================================================================== sparse: inputs
N_ARROW = 60
U_ARROW = torch.linspace(0.5, 1.5, N_ARROW, dtype=D)
U12 = torch.linspace(-1, 1, 12, dtype=D)
U34 = rn(3, 4, seed=70)
U33 = rn(3, 3, seed=71)
A_BLOCK = rn(4, 3, 3, seed=72)
MASK = torch.rand(8, 10, generator=gen(73)) < 0.3
MASK[0, 0] = True
MVAL = rn(8, 10, seed=74) * MASK
U10 = rn(10, seed=75)
BAND2 = (torch.arange(12)[:, None] - torch.arange(12)).abs() <= 2
BLOCK = torch.block_diag(*[torch.ones(3, 3)] * 4).bool()
GRID4 = ((torch.arange(3)[:, None, None, None] - torch.arange(3)[None, None, :, None]).abs()
         + (torch.arange(4)[None, :, None, None] - torch.arange(4)[None, None, None, :]).abs()
         ) <= 1  # (i, j, k, l): |i-k| + |j-l| <= 1, shape (3, 4, 3, 4)
GRID33 = ((torch.arange(3)[:, None, None, None] - torch.arange(3)[None, None, :, None]).abs()
          + (torch.arange(3)[None, :, None, None] - torch.arange(3)[None, None, None, :]).abs()
          ) <= 1
RANDP = torch.rand(9, 12, generator=gen(76)) < 0.25
RANDP[:, 0] |= torch.arange(9) == 0
MCONST = torch.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
KER101 = torch.tensor([[[1.0, 0.0, 1.0]]])


def farrow(u):
    head = (u ** 2).sum(0, keepdim=True)
    return torch.cat([head, u[1:] * u[0] + torch.sin(u[1:])])


def fblock(u):
    return torch.tanh(torch.einsum("bij,bj->bi", A_BLOCK, u.reshape(4, 3))).reshape(12) + u ** 3


def frand(u):
    return MVAL @ torch.sin(u)


def f2d(u):
    up = F.pad(u, (1, 1, 1, 1))
    return (up[1:-1, :-2] + up[1:-1, 2:] + up[:-2, 1:-1] + up[2:, 1:-1] - 4 * u + u ** 3)


def fband_energy(u):
    return (((u[1:] - u[:-1]) ** 4).sum() + ((u[2:] * u[:-2]) ** 2).sum()
            + torch.cos(u).sum())


def farrow_energy(u):
    return ((u[1:] - u[0]) ** 4).sum() + torch.cos(u).sum()


def fgrid_energy(u):
    return (((u[1:, :] - u[:-1, :]) ** 2).sum() + ((u[:, 1:] - u[:, :-1]) ** 4).sum()
            + torch.exp(u).sum())


def fstencil_f32(u):
    return fstencil(u.float())


def sj_with(pattern, fn, x, **kw):
    call = {k: kw.pop(k) for k in ("layout", "certify", "generator") if k in kw}
    sj = ga.SparseJacobian(pattern, **kw)
    return sj, sj(fn, x, **call)


def sh_with(pattern, f, x, x_shape=None, **kw):
    call = {k: kw.pop(k) for k in ("layout", "certify", "generator") if k in kw}
    sh = ga.SparseHessian(pattern, x_shape, **kw)
    return sh, sh(f, x, **call)


def fconv101(t):
    return F.conv1d(t, KER101)


def fmconst(t):
    return MCONST @ t


def fwhere_flip(t):
    return torch.where(t > 0, t, t.flip(0))


def fmixed(u):
    return torch.cat([u[:3].cumsum(0), (u[3:] * u[:3].flip(0)).exp(), u.sum(0, keepdim=True)])


U6 = rn(6, seed=77)
X8C = rn(1, 1, 8, seed=78, dtype=S)
STRATS = ("best", "largest_first", "smallest_last", "incidence_degree",
          "dynamic_largest_first", "random_sequential", "DSATUR", "independent_set",
          "connected_sequential_bfs", "connected_sequential_dfs")

# ================================================================== sparse: SparseJacobian
P("sp_sj_tridiag_coo", "SparseJacobian", "sj_with(tri(10), fstencil, X64_10)",
  "r[0].passes == 3 and r[1].layout == torch.sparse_coo and r[1].is_coalesced() "
  "and r[1]._nnz() == int(tri(10).sum()) and close(r[1].to_dense(), jr(fstencil, X64_10))",
  "docstring: tridiagonal in 3 passes; COO coalesced, exactly the pattern's entries", "sparse")
P("sp_sj_tridiag_csr", "SparseJacobian",
  "sj_with(tri(10), fstencil, X64_10, layout=torch.sparse_csr)[1]",
  "r.layout == torch.sparse_csr and tuple(r.shape) == (10, 10) "
  "and close(r.to_dense(), jr(fstencil, X64_10))", "layout=torch.sparse_csr: flat m × n",
  "sparse", mock="jr(fstencil, X64_10).to_sparse_csr()")
P("sp_sj_forward", "SparseJacobian", "sj_with(tri(10), fstencil, X64_10, method='forward')",
  "r[0].mode == 'forward' and r[0].passes == 3 and close(r[1].to_dense(), jr(fstencil, X64_10))",
  "method='forward': 3 column colours", "sparse")
P("sp_sj_arrow_auto", "SparseJacobian", "sj_with(arrow(N_ARROW), farrow, U_ARROW)",
  "r[0].mode == 'bidirectional' and r[0].passes == 3 "
  "and close(r[1].to_dense(), jr(farrow, U_ARROW), rtol=1e-12)",
  "guide: the arrowhead in three passes, bidirectional", "sparse")
P("sp_sj_arrow_bidirectional", "SparseJacobian",
  "sj_with(arrow(N_ARROW), farrow, U_ARROW, method='bidirectional', certify=2, "
  "generator=gen(1))",
  "r[0].colors is None and close(r[1].to_dense(), jr(farrow, U_ARROW), rtol=1e-12)",
  "method='bidirectional': colors None, exact, certified", "sparse")
P("sp_sj_block", "SparseJacobian", "sj_with(BLOCK, fblock, U12)",
  "r[0].passes == 3 and close(r[1].to_dense(), jr(fblock, U12))",
  "four dense 3 × 3 blocks: 3 passes", "sparse")
P("sp_sj_random", "SparseJacobian",
  "sj_with(MASK, frand, U10, certify=2, generator=gen(2))[1]",
  "close(r.to_dense(), jr(frand, U10))", "a random pattern, exact and certified", "sparse",
  mock="jr(frand, U10).to_sparse()")
P("sp_sj_grid_xshape", "SparseJacobian", "sj_with(GRID4, f2d, U34, x_shape=(3, 4))[1]",
  "tuple(r.shape) == (3, 4, 3, 4) and close(r.to_dense(), jr(f2d, U34))",
  "a 4-d pattern y.shape + x.shape with x_shape", "sparse", mock="jr(f2d, U34).to_sparse()")
P("sp_sj_dtype_forward", "SparseJacobian",
  "sj_with(tri(10), fstencil_f32, X64_10, method='forward')[1]",
  "r.dtype == S and close(r.to_dense(), jr(fstencil_f32, X64_10), rtol=1e-6, atol=1e-6)",
  "docstring Returns: forward mode gives fn(x)'s dtype (float32)", "sparse")
P("sp_sj_certificate_fails", "SparseJacobian",
  "catch(lambda: sj_with(torch.eye(10, dtype=torch.bool), fstencil, X64_10, certify=3, "
  "generator=gen(3)))",
  "isinstance(r, ga.CertificateError)",
  "a diagonal pattern for a tridiagonal J: the random check fails (CertificateError)",
  "sparse")
P("sp_jac_sparsity_tensor", "jacobian", "ga.jacobian(fstencil, X64_10, sparsity=tri(10))",
  "r.layout == torch.sparse_coo and close(r.to_dense(), jr(fstencil, X64_10))",
  "jacobian(sparsity=P) returns a sparse COO tensor", "sparse",
  mock="jr(fstencil, X64_10).to_sparse()")

# ----------------------------------------------------------------- SparseHessian
P("sp_sh_arrow", "SparseHessian", "sh_with(arrow(40), farrow_energy, U_ARROW[:40])",
  "r[0].passes == 2 and close(r[1].to_dense(), hessian(farrow_energy)(U_ARROW[:40]))",
  "docstring: an arrowhead Hessian in 2 products", "sparse")
P("sp_sh_tridiag_layouts", "SparseHessian",
  "tuple(sh_with(tri(10), energy1, X64_10, layout=l)[1] for l in (torch.sparse_coo, "
  "torch.sparse_csr, torch.strided))",
  "r[0].layout == torch.sparse_coo and r[1].layout == torch.sparse_csr "
  "and r[2].layout == torch.strided and all(close(dense(h), hessian(energy1)(X64_10)) "
  "for h in r)", "COO, CSR (flat n × n) and dense layouts", "sparse",
  mock="(hessian(energy1)(X64_10).to_sparse(), hessian(energy1)(X64_10).to_sparse_csr(), "
  "hessian(energy1)(X64_10))")
P("sp_sh_acyclic_band", "SparseHessian",
  "sh_with(BAND2, fband_energy, U12, method='acyclic', layout=torch.strided)",
  "r[0].passes == 3 and close(r[1], hessian(fband_energy)(U12), rtol=1e-10, atol=1e-12)",
  "docstring: acyclic colouring of a band of half-width 2 needs β + 1 = 3 products",
  "sparse")
P("sp_sh_grid_xshape", "SparseHessian",
  "sh_with(GRID33, fgrid_energy, U33, x_shape=(3, 3), layout=torch.strided)[1]",
  "tuple(r.shape) == (3, 3, 3, 3) and close(r, hessian(fgrid_energy)(U33))",
  "a 4-d pattern with x_shape: dense x.shape + x.shape", "sparse",
  mock="hessian(fgrid_energy)(U33)")
P("sp_sh_certificate_fails", "SparseHessian",
  "catch(lambda: sh_with(torch.eye(10, dtype=torch.bool), energy1, X64_10, certify=3, "
  "generator=gen(4)))", "isinstance(r, ga.CertificateError)",
  "a diagonal pattern for a tridiagonal H: CertificateError", "sparse")

# ----------------------------------------------------------------- color_pattern
P("sp_cp_doc_largest_first", "color_pattern",
  "ga.color_pattern(tri(6), strategy='largest_first')",
  "torch.equal(r, torch.tensor([1, 2, 0, 1, 2, 0]))", "the docstring's colouring", "sparse",
  mock="torch.tensor([1, 2, 0, 1, 2, 0])")
P("sp_cp_block_best", "color_pattern", "ga.color_pattern(BLOCK)",
  "int(r.max()) + 1 == 3 and valid_coloring(r, BLOCK)",
  "'best' meets the lower bound (3 entries per column)", "sparse",
  mock="torch.arange(12) % 3")
P("sp_cp_band_best", "color_pattern", "ga.color_pattern(BAND2)",
  "int(r.max()) + 1 == 5 and valid_coloring(r, BAND2)",
  "'best': the index modulo the bound (5 entries per column of a half-width-2 band)",
  "sparse", mock="torch.arange(12) % 5")
P("sp_cp_columns", "color_pattern", "ga.color_pattern(RANDP, 'columns')",
  "valid_coloring(r, RANDP, side='columns')",
  "side='columns': same-colour columns share no row", "sparse")

# ----------------------------------------------------------------- jacobian_sparsity
P("sp_js_stencil", "jacobian_sparsity",
  "ga.jacobian_sparsity(fstencil, torch.zeros(7), layout=torch.strided)",
  "same_pattern(r, tri(7))", "docstring: the 1-d stencil is tridiagonal", "sparse",
  mock="tri(7)")
P("sp_js_conv_zero_tap", "jacobian_sparsity",
  "ga.jacobian_sparsity(fconv101, X8C, layout=torch.strided)",
  "same_pattern(r, jr(fconv101, X8C) != 0)",
  "a constant kernel [1, 0, 1]: its zero tap is used (y_i reads x_i and x_{i+2})", "sparse",
  mock="jr(fconv101, X8C) != 0")
P("sp_js_matmul_const_zeros", "jacobian_sparsity",
  "ga.jacobian_sparsity(fmconst, X3.float(), layout=torch.strided)",
  "same_pattern(r, MCONST != 0)", "a constant matrix's zeros are used", "sparse",
  mock="MCONST != 0")
P("sp_js_floor_empty", "jacobian_sparsity",
  "ga.jacobian_sparsity(lambda t: torch.floor(t) * 2, U6, layout=torch.strided)",
  "same_pattern(r, torch.zeros(6, 6, dtype=torch.bool))",
  "floor has zero derivative: empty sets", "sparse", mock="torch.zeros(6, 6, dtype=torch.bool)")
P("sp_js_where_both", "jacobian_sparsity",
  "ga.jacobian_sparsity(fwhere_flip, U6, layout=torch.strided)",
  "same_pattern(r, torch.eye(6).bool() | torch.eye(6).flip(0).bool())",
  "docstring: torch.where keeps both branches", "sparse",
  mock="torch.eye(6).bool() | torch.eye(6).flip(0).bool()")
P("sp_js_covers_mixed", "jacobian_sparsity",
  "ga.jacobian_sparsity(fmixed, U6, layout=torch.strided)",
  "covers(r, jr(fmixed, U6)) and same_pattern(r, jr(fmixed, U6) != 0)",
  "cumsum, flip, exp, sum: the exact structural pattern", "sparse",
  mock="jr(fmixed, U6) != 0")
P("sp_js_item_refused", "jacobian_sparsity",
  "catch(lambda: ga.jacobian_sparsity(lambda t: t * t.sum().item(), U6))",
  "isinstance(r, ga.UnsupportedOpError) and isinstance(r, NotImplementedError)",
  "docstring: converting a tensor that depends on x to a number raises UnsupportedOpError",
  "sparse")
P("sp_js_value_index_refused", "jacobian_sparsity",
  "catch(lambda: ga.jacobian_sparsity(lambda t: t[t.argmax()] * 2, U6))",
  "isinstance(r, ga.UnsupportedOpError)",
  "docstring: indices computed from the values of x are refused", "sparse")

# ----------------------------------------------------------------- hessian_sparsity
P("sp_hs_energy", "hessian_sparsity",
  "ga.hessian_sparsity(lambda u: ((u[1:] - u[:-1]) ** 2).sum() + torch.cos(u).sum(), "
  "torch.zeros(6), layout=torch.strided)",
  "same_pattern(r, tri(6))", "docstring: a sum of local terms is tridiagonal", "sparse",
  mock="tri(6)")
P("sp_hs_piecewise_linear_empty", "hessian_sparsity",
  "ga.hessian_sparsity(lambda u: (3 * u).sum() + torch.relu(u).sum() + u.abs().sum() "
  "+ u.clamp(-1, 1).sum(), U6, layout=torch.strided)",
  "same_pattern(r, torch.zeros(6, 6))",
  "docstring: linear and piecewise-linear operators add no pair", "sparse",
  mock="torch.zeros(6, 6, dtype=torch.bool)")

# ----------------------------------------------------------------- sparsity_pattern
P("sp_sp_bidiagonal", "sparsity_pattern",
  "ga.sparsity_pattern(lambda u: u[1:] - u[:-1], torch.zeros(5))",
  "same_pattern(r, torch.ones(4, 5).triu().tril(1))",
  "docstring: differences are bidiagonal", "sparse",
  mock="torch.ones(4, 5).triu().tril(1).bool()")
P("sp_sp_relu_missed", "sparsity_pattern",
  "ga.sparsity_pattern(lambda u: torch.relu(u - 100.0), torch.zeros(4))",
  "same_pattern(r, torch.zeros(4, 4))",
  "docstring: relu below its kink at every probed point is missed (local pattern)",
  "sparse", mock="torch.zeros(4, 4, dtype=torch.bool)")


# ================================================================== composition
def fquart(t):
    return (t ** 4).sum() + torch.sin(t).prod()


def jac_create_graph_hessian(x):
    g = lambda t: ga.jacobian(fquart, t, create_graph=True)
    return ga.jacobian(g, x)


P("co_grad_of_jacobian", "jacobian", "grad(lambda t: ga.jacobian(torch.exp, t))(S05)",
  "near(r, math.exp(0.5), 1e-12)",
  "docstring: inside torch.func.grad the Jacobian composes: d/dt exp'(t) = exp(t)",
  "composition", mock="torch.exp(S05)")
P("co_vmap_of_jacobian", "jacobian", "vmap(lambda t: ga.jacobian(torch.tanh, t))(U34)",
  "tuple(r.shape) == (3, 4, 4) and close(r, vmap(jacrev(torch.tanh))(U34))",
  "docstring: under vmap every sample gets its own Jacobian", "composition",
  mock="vmap(jacrev(torch.tanh))(U34)")
P("co_jacrev_of_jacobian", "jacobian", "jacrev(lambda t: ga.jacobian(fquart, t))(X4)",
  "close(r, hessian(fquart)(X4))", "jacrev of the gradient (a 1 × n Jacobian) is the Hessian",
  "composition", mock="hessian(fquart)(X4)")
P("co_fd_under_grad", "jacobian",
  "grad(lambda t: ga.jacobian(torch.sin, t, method='finite-difference'))(S05)",
  "near(r, -math.sin(0.5), 1e-5)",
  "docstring: under grad the finite-difference Jacobian's derivative is the same quotient "
  "of fn's derivative, accurate to the same order", "composition",
  mock="-torch.sin(S05)")
P("co_create_graph_hessian", "jacobian", "jac_create_graph_hessian(X4)",
  "close(r, hessian(fquart)(X4))",
  "docstring: the Jacobian of a create_graph Jacobian is the Hessian", "composition",
  mock="hessian(fquart)(X4)")
P("co_grad_of_backward_vjp", "backward_vjp",
  "grad(lambda t: ga.backward_vjp(torch.cos, t, 1.0))(S07)",
  "near(r, -math.cos(0.7), 1e-12)",
  "docstring: d/dt[-sin t] = -cos t under torch.func.grad", "composition",
  mock="-torch.cos(S07)")
P("co_jacrev_of_backward_vjp_in_v", "backward_vjp",
  "jacrev(lambda v: ga.backward_vjp(fexp_rows, M34, v))(V4)",
  "close(r, jr(fexp_rows, M34).permute(1, 2, 0))",
  "docstring: differentiable in v: d(vᵀJ)/dv = Jᵀ", "composition",
  mock="jr(fexp_rows, M34).permute(1, 2, 0)")
P("co_grad_of_contract_in_v", "contract", "grad(lambda v: ga.contract(v, J34).sum())(V3)",
  "close(r, J34.sum(1))", "docstring: grad of contract in v is right, not zero",
  "composition", mock="J34.sum(1)")
E("co_compare_vjp_in_vmap", "compare_vjp",
  "vmap(lambda t: ga.compare_vjp(torch.sin, t, torch.ones(4, dtype=D)).backward)(U34)",
  ("vmap",), group="composition",
  oracle="docstring: inside a torch.func transform: ValueError naming it")
E("co_sj_call_in_jacrev", "SparseJacobian",
  "(lambda sj: jacrev(lambda t: sj(fstencil, t, layout=torch.strided).sum(0))(X64_10))"
  "(ga.SparseJacobian(tri(10)))", ("jacrev",), group="composition",
  oracle="docstring: built outside, called inside jacrev: ValueError naming jacrev")
E("co_js_in_grad", "jacobian_sparsity",
  "grad(lambda t: (ga.jacobian_sparsity(torch.sin, t), t.sum())[1])(X64_10)", ("grad",),
  group="composition", oracle="docstring: inside a transform the trace would see wrappers: "
  "ValueError naming it")
E("co_jacobian_strict_in_grad", "jacobian",
  "grad(lambda t: ga.jacobian(torch.sin, t, strict=True))(S05)", ("grad", "strict"),
  group="composition", oracle="docstring: strict=True inside a transform: ValueError naming it")
E("co_sh_built_in_grad", "SparseHessian",
  "grad(lambda t: (ga.SparseHessian(tri(10)), t.sum())[1])(X64_10)", ("grad",),
  group="composition", oracle="docstring: built inside a torch.func transform: ValueError "
  "naming it")
P("co_jacobian_inference_tensor", "jacobian",
  "ga.jacobian(torch.sin, in_inference(lambda: X3 * 1.0))",
  "close(r, torch.diag(torch.cos(X3)))",
  "docstring: an inference tensor is copied; the Jacobian is still computed", "composition",
  mock="torch.diag(torch.cos(X3))")


# ================================================================== misuse
def a_model():
    return fresh(_mlp)


def fy_nonscalar(u):
    return u * 2


E("mi_jac_swapped_args", "jacobian", "ga.jacobian(X3, torch.sin)", ("fn", "callable", "x"),
  oracle="swapped arguments: a tensor as fn, a function as x: TypeError naming them")
E("mi_jac_method_unknown", "jacobian", "ga.jacobian(torch.sin, X3, method='backward')",
  ("method",), oracle="docstring: unknown method: ValueError")
E("mi_jac_strict_int", "jacobian", "ga.jacobian(torch.sin, X3, strict=1)", ("strict",),
  oracle="docstring: strict=1 (truthy for torch) is refused: TypeError")
E("mi_jac_certify_without_sparsity", "jacobian", "ga.jacobian(torch.sin, X3, certify=2)",
  ("certify", "sparsity"), oracle="docstring: certify given without sparsity: ValueError")
E("mi_jac_sparse_x", "jacobian", "ga.jacobian(torch.sin, XSPARSE)", ("sparse", "to_dense"),
  oracle="docstring: a sparse x is refused (pass x.to_dense()): TypeError")
P("mi_jac_strict_independent", "jacobian",
  "catch(lambda: ga.jacobian(lambda a, b: a * 2, (X3, X4), strict=True))",
  "isinstance(r, RuntimeError)",
  "docstring: strict=True and an output independent of an input: RuntimeError", "misuse")
E("mi_bvjp_swapped", "backward_vjp", "ga.backward_vjp(X3, torch.sin, V3)", ("fn", "x"),
  oracle="swapped fn and x: TypeError naming them (x is not a tensor)")
E("mi_bvjp_v_shape", "backward_vjp", "ga.backward_vjp(torch.sin, X3, V4)", ("v", "shape"),
  oracle="docstring: v.shape != y.shape: ValueError")
E("mi_bvjp_no_grad_output", "backward_vjp", "ga.backward_vjp(fdetached, X3, V3)",
  ("require", "grad", "depend"),
  oracle="docstring: y does not require grad (does not depend on x): ValueError")
E("mi_cv_fn_number", "compare_vjp", "ga.compare_vjp(3, X3, V3)", ("fn",),
  oracle="docstring: fn neither callable nor a tensor (named fn): TypeError")
E("mi_cv_reference_wrong_shape", "compare_vjp",
  "ga.compare_vjp(torch.sin, X3, V3, reference=torch.eye(4, dtype=D))", ("reference", "shape"),
  oracle="docstring: a reference Jacobian not y.shape + x.shape: ValueError")
E("mi_cv_output_tensor_string_ref", "compare_vjp",
  "(lambda x: ga.compare_vjp(torch.sin(x), x, V3))(X3.clone().requires_grad_())",
  ("reference",),
  oracle="docstring: an output tensor with the default string reference: ValueError")
E("mi_cb_fn_tensor", "check_backward", "ga.check_backward(SqOK.apply(X5()), X5())", ("fn",),
  oracle="docstring: fn is not callable (fn(x) passed): TypeError naming fn")
E("mi_cb_probes_zero", "check_backward", "ga.check_backward(SqOK.apply, X5(), probes=0)",
  ("probes",), oracle="docstring: probes < 1: ValueError")
E("mi_cb_localize_unknown", "check_backward",
  "ga.check_backward(SqOK.apply, X5(), localize='sometimes')", ("localize",),
  oracle="docstring: an unknown localize: ValueError")
E("mi_cb_no_input_requires_grad", "check_backward", "ga.check_backward(torch.sin, X3)",
  ("requires_grad", "requires grad"), oracle="docstring: no input requires grad: ValueError")
E("mi_cb_empty_input", "check_backward",
  "ga.check_backward(torch.sin, torch.zeros(0, dtype=D, requires_grad=True))", ("empty",),
  oracle="docstring: an input that requires grad is empty (named): ValueError")
E("mi_fmt_digits_zero", "fmt", "ga.fmt(1.5, 0)", ("digits",),
  oracle="docstring: digits out of range (1 to 40): ValueError")
E("mi_explorer_too_many_outputs", "explorer", "ga.explorer(lambda t: t * 2, torch.ones(17))",
  ("16", "entries", "y"), oracle="docstring: y has more than 16 entries: ValueError")
E("mi_trace_gradient_missing", "trace_backward",
  "ga.trace_backward(X3.clone().requires_grad_() * 2)", ("gradient",),
  oracle="docstring: gradient missing for a non-scalar output: ValueError")
E("mi_side_by_side_titles_str", "side_by_side",
  "ga.side_by_side([sqrt_trace()], titles='one')", ("titles",),
  oracle="docstring: titles is a string: TypeError")
E("mi_draw_modules_record", "draw_modules", "ga.draw_modules(a_model())", ("record",),
  oracle="docstring: record is not the record of watch: TypeError")
E("mi_watch_not_module", "watch", "ga.watch(lambda t: t)", ("model",),
  oracle="docstring: model is not a torch.nn.Module: TypeError")
E("mi_watch_full_steps_zero", "watch", "ga.watch(lin_d(), full_steps=0)", ("full_steps",),
  oracle="docstring: full_steps below 1: ValueError")
E("mi_why_names_list", "why_no_grad",
  "(lambda w: ga.why_no_grad((w * 2).sum(), w, names=[w]))(X3.clone().requires_grad_())",
  ("names",), oracle="docstring: names is not a mapping: TypeError")
E("mi_sj_int_pattern", "SparseJacobian", "ga.SparseJacobian(tri(5, torch.int64))", ("pattern",),
  oracle="docstring: pattern not a torch.bool tensor: TypeError")
E("mi_sj_method_unknown", "SparseJacobian", "ga.SparseJacobian(tri(5), method='sideways')",
  ("method",), oracle="docstring: unknown method: ValueError")
E("mi_sj_certify_negative", "SparseJacobian",
  "ga.SparseJacobian(tri(10))(fstencil, X64_10, certify=-1)", ("certify",),
  oracle="docstring: certify < 0: ValueError")
E("mi_sh_nonscalar_f", "SparseHessian", "ga.SparseHessian(tri(10))(fy_nonscalar, X64_10)",
  ("scalar",), oracle="docstring: f(x) is not a scalar: ValueError")
E("mi_js_layout_csr", "jacobian_sparsity",
  "ga.jacobian_sparsity(fstencil, X64_10, layout=torch.sparse_csr)", ("layout",),
  oracle="docstring: layout neither sparse_coo nor strided: ValueError")
E("mi_sp_points_zero", "sparsity_pattern", "ga.sparsity_pattern(torch.sin, X3, points=0)",
  ("points",), oracle="docstring: points < 1: ValueError")
E("mi_heatmap_out_shape", "plot.jacobian_heatmap",
  "gplot.jacobian_heatmap(torch.eye(3), (4,))", ("out_shape", "shape"),
  oracle="docstring: jac's shape does not start with out_shape: ValueError")

P("sp_cp_all_strategies", "color_pattern",
  "{s: valid_coloring(ga.color_pattern(RANDP, strategy=s), RANDP) for s in STRATS}",
  "len(r) == len(STRATS) and all(r.values())",
  "every strategy of gradarg.sparse.STRATEGIES gives a valid row colouring", "sparse",
  mock="{s: True for s in STRATS}")


# ================================================================== side effects
def fmut(t):
    t.mul_(2)
    return t * 1.0


def se_jacobian_leaves_x():
    x = X3.clone().requires_grad_()
    ga.jacobian(torch.sin, x)
    return x


def se_jacobian_fn_mutates():
    x = X3.clone()
    res = catch(lambda: ga.jacobian(fmut, x))
    return x, res


def se_bvjp_grad_kept():
    x = X3.clone().requires_grad_()
    x.grad = torch.full((3,), 5.0, dtype=D)
    ga.backward_vjp(torch.sin, x, V3)
    return x


def se_bvjp_plain_x():
    x = X3.clone()
    ga.backward_vjp(torch.sin, x, V3)
    return x


def se_why_then_backward():
    w = torch.tensor([1.0, -2.0, 3.0], dtype=D, requires_grad=True)
    y = (torch.sin(w) * w).sum()
    ga.why_no_grad(y, w)
    y.backward()  # the graph is still there: why_no_grad retained it
    return w


def se_why_bn_stats():
    m = fresh(lambda: nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))).train()
    x = rn(8, 3, seed=80, dtype=S)
    m(x).pow(2).sum().backward()
    before = m[1].running_mean.clone()
    ga.why_no_grad(lambda: m(x).pow(2).sum(), m[0].weight)
    return before, m[1].running_mean.clone()


def se_trace_use_grad():
    a = X3.clone().requires_grad_()
    t = ga.trace_backward((a * a).sum(), use_grad=True, names={"a": a})
    return a, t


def se_trace_plain():
    x = X3.clone().requires_grad_()
    ga.trace_backward(torch.sin(x) * x, V3)
    return x


def fsinx(t):
    return torch.sin(t) * t


P("se_jacobian_x_untouched", "jacobian", "se_jacobian_leaves_x()",
  "r.grad is None and r.requires_grad and torch.equal(r.detach(), X3)",
  "docstring: x never modified, fn receives private copies: no .grad left", "side-effects")
P("se_jacobian_fn_mutates_copy", "jacobian", "se_jacobian_fn_mutates()",
  "torch.equal(r[0], X3)",
  "fn writing into its argument writes into gradarg's private copy, never into x "
  "(whether or not the Jacobian can then be computed)", "side-effects",
  mock="(X3.clone(), None)")
P("se_bvjp_grad_kept", "backward_vjp", "se_bvjp_grad_kept()",
  "torch.equal(r.grad, torch.full((3,), 5.0, dtype=D)) and r.requires_grad "
  "and torch.equal(r.detach(), X3)",
  "docstring: x left untouched (.grad, requires_grad, values)", "side-effects")
P("se_bvjp_plain_x", "backward_vjp", "se_bvjp_plain_x()",
  "not r.requires_grad and r.grad is None and torch.equal(r, X3)",
  "docstring: a plain x stays plain", "side-effects", mock="X3.clone()")
P("se_check_backward_rng", "check_backward", "rng_kept(lambda: ga.check_backward(SqOK.apply, X5()))",
  "r is True", "docstring: seed of the probes; the caller's generator is not touched",
  "side-effects", mock="True")
P("se_sparsity_pattern_rng", "sparsity_pattern",
  "rng_kept(lambda: ga.sparsity_pattern(torch.sin, X3))", "r is True",
  "docstring: the global generator is never advanced", "side-effects", mock="True")
P("se_sj_certify_rng", "SparseJacobian",
  "rng_kept(lambda: ga.SparseJacobian(tri(10))(fstencil, X64_10, certify=2))", "r is True",
  "docstring: default generator a fresh seed; the global generator is never advanced",
  "side-effects", mock="True")
P("se_sh_certify_rng", "SparseHessian",
  "rng_kept(lambda: ga.SparseHessian(tri(10))(energy1, X64_10, certify=2))", "r is True",
  "SparseHessian certify: the global generator is never advanced", "side-effects",
  mock="True")
P("se_why_no_grad_rng", "why_no_grad", "wn_rng_kept()", "r is True",
  "docstring: a callable output runs under fork_rng: your random state is left as it was",
  "side-effects", mock="True")
P("se_why_no_grad_keeps_graph", "why_no_grad", "se_why_then_backward()",
  "close(r.grad, SIN_W_GRAD)",
  "Notes: nothing is changed (retain_graph=True): the user's backward still runs and "
  "accumulates exactly one pass", "side-effects")
P("se_why_no_grad_bn_stats", "why_no_grad", "se_why_bn_stats()",
  "not torch.equal(r[0], r[1])",
  "docstring: each call of the function is an ordinary forward: batch-norm running "
  "statistics move in training mode", "side-effects")
P("se_watch_no_hooks", "watch", "watch_hooks_after()", "r == (0, 0)",
  "docstring: leaving the block removes every hook", "side-effects", mock="(0, 0)")
P("se_watch_remove_twice", "GradWatch.remove", "watch_remove_twice()", "r == 0",
  "docstring: remove() twice is harmless, no hook left", "side-effects", mock="0")
P("se_trace_use_grad", "trace_backward", "se_trace_use_grad()", "r[0].grad is None",
  "docstring: use_grad=True touches no .grad", "side-effects")
P("se_trace_plain_grads", "trace_backward", "se_trace_plain()",
  "close(r.grad, vjp_ref(fsinx, X3, V3)) and not r._backward_hooks",
  "Notes: the caller's tensors end as after a plain backward, no hooks left", "side-effects")


# ================================================================== showing (values group)
def log_trace_a4():
    a = torch.tensor(4.0, requires_grad=True)
    return ga.trace_backward(torch.log(8 * a * a), names={"a": a})


def saved_svg_text():
    import pathlib
    import tempfile
    a = torch.tensor(2.0, requires_grad=True)
    out = ga.trace_backward(a * a, names={"a": a}).draw().save(
        pathlib.Path(tempfile.mkdtemp()) / "trace.svg")
    return pathlib.Path(out).read_text()


P("v_fd_tolerance", "fd_tolerance", "(ga.fd_tolerance(D), ga.fd_tolerance(S))",
  "near(r[0], 100 * torch.finfo(D).eps ** (2 / 3), 1e-9) "
  "and near(r[1], 100 * torch.finfo(S).eps ** (2 / 3), 1e-6)",
  "100 · eps^(2/3): 3.7e-9 for float64, 2.4e-3 for float32", "values",
  mock="(100 * torch.finfo(D).eps ** (2 / 3), 100 * torch.finfo(S).eps ** (2 / 3))")
P("v_latex_matrix_pmatrix", "latex_matrix",
  "ga.latex_matrix(torch.tensor([[1.0, 2.5], [-3.0, 4.0]]), env='pmatrix')",
  r"r == '\\begin{pmatrix} 1 & 2.5 \\\\ -3 & 4 \\end{pmatrix}'",
  "docstring: the env argument names the matrix environment", "values",
  mock=r"'\\begin{pmatrix} 1 & 2.5 \\\\ -3 & 4 \\end{pmatrix}'")
P("v_trace_svg_value", "trace_svg", "log_trace_a4().to_svg()",
  "r.startswith('<svg') and '0.5' in r",
  "docstring example at a = 4: the leaf shows a.grad = 2/a = 0.5", "values")
P("v_player_last_step", "BackwardTrace.player", "log_trace_a4().player().steps[-1].sent",
  "r == ('a.grad = 0.5',)", "BackwardPlayer example at a = 4: the final step's a.grad",
  "values", mock="('a.grad = 0.5',)")
P("v_trace_to_dot", "BackwardTrace.to_dot", "log_trace_a4().to_dot()",
  "isinstance(r, str) and 'digraph' in r and '->' in r",
  "Graphviz DOT text: a directed graph with edges", "values")
P("v_drawing_save", "Drawing.save", "saved_svg_text()", "r.startswith('<svg')",
  "Drawing.save docstring: an .svg name writes the SVG document", "values")
