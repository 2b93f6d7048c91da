"""Ten custom ``autograd.Function``s at real sizes (32-64 x 128-512), each with its right
backward and two realistic bugs, as people write them.

Every Function is written generically in its input's dtype (so that it runs on float64 copies
too).  A bug is a flag on the Function class (``BUG``); :data:`CASES` lists every
(Function, bug) with the input that the bug gets wrong (``wrong_input``), the pattern a checker
should name when there is a simple one (``kind``), and, for the straight-through estimators,
the backward they are meant to compute (``expected``).

Used by ``tests/check/test_corpus_scale.py`` and ``benchmarks/check_corpus.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

F64 = torch.float64
F32 = torch.float32


# =========================================================================== the Functions


def _function(name: str, forward, backward, bug: str | None) -> Callable:
    """A fresh ``autograd.Function`` subclass whose backward carries ``bug``."""

    def fwd(ctx, *args):
        out, saved, extra = forward(*args)
        ctx.save_for_backward(*saved)
        ctx.extra = extra
        return out

    def bwd(ctx, *grads):
        return backward(ctx.saved_tensors, ctx.extra, bug, *grads)

    import inspect

    sig = inspect.signature(forward)  # so that reports name the inputs as forward does
    fwd.__signature__ = sig.replace(parameters=[  # type: ignore[attr-defined]
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        *sig.parameters.values()])
    cls = type(f"{name}_{bug or 'right'}", (torch.autograd.Function,),
               {"forward": staticmethod(fwd), "backward": staticmethod(bwd)})
    return cls.apply


# --- sparsemax (Martins & Astudillo 2016), last dimension

def _sparsemax_fwd(x):
    z, _ = torch.sort(x, dim=-1, descending=True)
    k = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype)
    cum = z.cumsum(-1)
    support = (1 + k * z) > cum
    kz = support.sum(-1, keepdim=True)
    tau = (cum.gather(-1, kz - 1) - 1) / kz.to(x.dtype)
    p = (x - tau).clamp_min(0)
    return p, (p,), None


def _sparsemax_bwd(saved, extra, bug, g):
    (p,) = saved
    s = (p > 0).to(g.dtype)
    if bug == "no-support-mask":  # the mean over every element, gradient everywhere
        return g - g.mean(-1, keepdim=True)
    if bug == "wrong-scale":  # divides by the row length instead of the support size
        return s * (g - (g * s).sum(-1, keepdim=True) / p.shape[-1])
    return s * (g - (g * s).sum(-1, keepdim=True) / s.sum(-1, keepdim=True))


# --- entmax-1.5 by bisection on the threshold (Peters et al. 2019)

def _entmax_fwd(x):
    z = x / 2
    lo = z.max(-1, keepdim=True).values - 1  # sum relu(z - lo)^2 >= 1
    hi = z.max(-1, keepdim=True).values  # sum = 0
    for _ in range(60 if x.dtype == F64 else 40):
        mid = (lo + hi) / 2
        big = (z - mid).clamp_min(0).pow(2).sum(-1, keepdim=True) >= 1
        lo = torch.where(big, mid, lo)
        hi = torch.where(big, hi, mid)
    p = (z - (lo + hi) / 2).clamp_min(0).pow(2)
    p = p / p.sum(-1, keepdim=True)
    return p, (p,), None


def _entmax_bwd(saved, extra, bug, g):
    (p,) = saved
    gppr = p.sqrt()
    if bug == "p-not-sqrt":  # the 1.5-entmax weights taken as p instead of p^(1/2)
        gppr = p
    dx = g * gppr
    if bug == "no-projection":  # forgets to project onto sum(dp) = 0
        return dx
    q = dx.sum(-1, keepdim=True) / gppr.sum(-1, keepdim=True)
    return dx - q * gppr


# --- fused softmax + cross-entropy, mean over the rows whose target is not ignored

IGNORE = -100


def _ce_fwd(x, target):
    valid = target != IGNORE
    t = torch.where(valid, target, torch.zeros_like(target))
    lse = torch.logsumexp(x, -1)
    loss = (lse - x.gather(-1, t[:, None])[:, 0]) * valid.to(x.dtype)
    n = valid.sum().clamp_min(1)
    return loss.sum() / n, (x, target), None


def _ce_bwd(saved, extra, bug, g):
    x, target = saved
    valid = target != IGNORE
    t = torch.where(valid, target, torch.zeros_like(target))
    p = torch.softmax(x, -1)
    d = p - torch.nn.functional.one_hot(t, x.shape[-1]).to(x.dtype)
    n = valid.sum().clamp_min(1)
    if bug == "padded-rows":  # the ignored rows get a gradient too
        return g * d / n, None
    if bug == "mean-over-all":  # divides by every row, ignored ones included
        return g * d * valid[:, None].to(x.dtype) / x.shape[0], None
    return g * d * valid[:, None].to(x.dtype) / n, None


# --- RMSNorm with a weight

EPS = 1e-6


def _rms_fwd(x, w):
    r = (x.pow(2).mean(-1, keepdim=True) + EPS).rsqrt()
    return x * r * w, (x, w, r), None


def _rms_bwd(saved, extra, bug, g):
    x, w, r = saved
    gw = g * w
    if bug == "bf16-reduction":  # the reduction of grad*x in bfloat16
        m = (gw * x).to(torch.bfloat16).mean(-1, keepdim=True).to(x.dtype)
    else:
        m = (gw * x).mean(-1, keepdim=True)
    # "rms-not-cubed": r instead of r**3 in the correction term
    dx = gw * r - x * m * (r if bug == "rms-not-cubed" else r.pow(3))
    dw = (g * x * r).sum(0)
    return dx, dw


# --- LayerNorm with weight and bias

def _ln_fwd(x, w, b):
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    rs = (var + 1e-5).rsqrt()
    xh = (x - mu) * rs
    return xh * w + b, (x, w), None


def _ln_bwd(saved, extra, bug, g):
    x, w = saved
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=bug == "unbiased-variance", keepdim=True)
    rs = (var + 1e-5).rsqrt()
    xh = (x - mu) * rs
    gw = g * w
    if bug == "no-mean-term":  # forgets the mean of the gradient
        dx = rs * (gw - xh * (gw * xh).mean(-1, keepdim=True))
    else:
        dx = rs * (gw - gw.mean(-1, keepdim=True) - xh * (gw * xh).mean(-1, keepdim=True))
    return dx, (g * xh).sum(0), g.sum(0)


# --- Gumbel-softmax, hard, straight through: one-hot forward, soft backward

TAU = 0.7


def _gumbel_soft(logits, noise):
    return torch.softmax((logits + noise) / TAU, -1)


def _gumbel_fwd(logits, noise):
    y = _gumbel_soft(logits, noise)
    hard = torch.nn.functional.one_hot(y.argmax(-1), y.shape[-1]).to(y.dtype)
    return hard, (y,), None


def gumbel_intended(g, logits, noise):
    y = _gumbel_soft(logits, noise)
    return (y * (g - (g * y).sum(-1, keepdim=True)) / TAU, None)


def _gumbel_bwd(saved, extra, bug, g):
    (y,) = saved
    if bug == "no-temperature":  # forgets the 1/tau of the soft sample
        return y * (g - (g * y).sum(-1, keepdim=True)), None
    if bug == "no-centering":  # drops the softmax Jacobian's -y y^T part
        return y * g / TAU, None
    return y * (g - (g * y).sum(-1, keepdim=True)) / TAU, None


# --- fake quantisation, straight through inside the clipping range

SCALE, QMIN, QMAX = 0.05, -64, 63


def _fq_fwd(x):
    return (x / SCALE).round().clamp(QMIN, QMAX) * SCALE, (x,), None


def fq_intended(g, x):
    q = x / SCALE
    return g * ((q >= QMIN - 0.5) & (q <= QMAX + 0.5)).to(g.dtype)


def _fq_bwd(saved, extra, bug, g):
    (x,) = saved
    q = x / SCALE
    if bug == "no-clip-mask":  # passes the gradient where the forward clips
        return g.clone()
    if bug == "one-sided-mask":  # masks only the upper clip
        return g * (q <= QMAX + 0.5).to(g.dtype)
    return g * ((q >= QMIN - 0.5) & (q <= QMAX + 0.5)).to(g.dtype)


# --- fused linear + tanh-GELU

_C = math.sqrt(2 / math.pi)


def _lg_fwd(x, w, b):
    z = x @ w.T + b
    u = _C * (z + 0.044715 * z.pow(3))
    return 0.5 * z * (1 + torch.tanh(u)), (x, w, z), None


def _lg_bwd(saved, extra, bug, g):
    x, w, z = saved
    u = _C * (z + 0.044715 * z.pow(3))
    t = torch.tanh(u)
    if bug == "gelu-no-tanh-prime":  # drops the z * tanh'(u) u' half of the derivative
        d = 0.5 * (1 + t)
    else:
        d = 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * _C * (1 + 3 * 0.044715 * z * z)
    gz = g * d
    dw = x.T @ gz if bug == "transposed-weight-grad" else gz.T @ x
    return gz @ w, dw, gz.sum(0)


# --- a decaying cumulative scan, h_t = a * h_(t-1) + x_t along the last dimension

DECAY = 0.97


def _scan_fwd(x):
    n = x.shape[-1]
    k = torch.arange(n, dtype=x.dtype)
    pw = DECAY ** (k[:, None] - k[None, :])  # pw[t, s] = a^(t-s), s <= t
    L = torch.tril(pw)
    return x @ L.T, (), n


def _scan_bwd(saved, extra, bug, g):
    n = extra
    k = torch.arange(n, dtype=g.dtype)
    L = torch.tril(DECAY ** (k[:, None] - k[None, :]))
    if bug == "forward-scan":  # scans the gradient forwards instead of backwards
        return g @ L.T
    if bug == "exclusive":  # the reversed scan without the current step
        return g @ (L - torch.eye(n, dtype=g.dtype))
    return g @ L


# --- soft-min by log-sum-exp, one value per row

TEMP = 0.5


def _smin_fwd(x):
    return -TEMP * torch.logsumexp(-x / TEMP, -1), (x,), None


def _smin_bwd(saved, extra, bug, g):
    (x,) = saved
    if bug == "sign":  # the minus signs cancelled once too often
        return -g[:, None] * torch.softmax(-x / TEMP, -1)
    if bug == "softmax-of-x":  # the soft-max weights instead of the soft-min ones
        return g[:, None] * torch.softmax(x / TEMP, -1)
    return g[:, None] * torch.softmax(-x / TEMP, -1)


# =========================================================================== the cases


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable
    make: Callable[[torch.dtype, torch.Generator], tuple]
    bug: str | None  # None: the right backward
    wrong_input: str | None = None  # the input whose gradient the bug gets wrong
    kind: str | None = None  # the pattern a checker should name, when there is one
    expected: Callable | None = None  # the intended backward (straight-through estimators)

    @property
    def wrong(self) -> bool:
        return self.bug is not None

    def inputs(self, dtype: torch.dtype, seed: int = 0) -> tuple:
        return self.make(dtype, torch.Generator().manual_seed(seed))


def _grad(t: torch.Tensor, dtype) -> torch.Tensor:
    return t.to(dtype).requires_grad_()


def rows(b: int, n: int, scale: float = 1.0):
    def make(dtype, g):
        return (_grad(scale * torch.randn(b, n, generator=g, dtype=F64), dtype),)
    return make


def _ce(b, n):
    def make(dtype, g):
        x = _grad(torch.randn(b, n, generator=g, dtype=F64), dtype)
        t = torch.randint(0, n, (b,), generator=g)
        t[torch.randperm(b, generator=g)[: b // 4]] = IGNORE  # padded rows
        return x, t
    return make


def _norm(b, n, bias: bool):
    def make(dtype, g):
        x = _grad(torch.randn(b, n, generator=g, dtype=F64) * 2 + 0.5, dtype)
        w = _grad(1 + 0.3 * torch.randn(n, generator=g, dtype=F64), dtype)
        if not bias:
            return x, w
        return x, w, _grad(0.1 * torch.randn(n, generator=g, dtype=F64), dtype)
    return make


def _gumbel(b, n):
    def make(dtype, g):
        logits = _grad(torch.randn(b, n, generator=g, dtype=F64), dtype)
        u = torch.rand(b, n, generator=g, dtype=F64).clamp(1e-9, 1 - 1e-9)
        return logits, (-torch.log(-torch.log(u))).to(dtype)
    return make


def _linear(b, n):
    def make(dtype, g):
        x = _grad(torch.randn(b, n, generator=g, dtype=F64), dtype)
        w = _grad(torch.randn(n, n, generator=g, dtype=F64) / math.sqrt(n), dtype)
        return x, w, _grad(0.1 * torch.randn(n, generator=g, dtype=F64), dtype)
    return make


# (name, forward, backward, make(b, n), bugs: (bug, wrong input, kind), intended backward)
FUNCTIONS = [
    ("sparsemax", _sparsemax_fwd, _sparsemax_bwd, lambda b, n: rows(b, n, 3.0),
     [("no-support-mask", "x", None), ("wrong-scale", "x", None)], None),
    ("entmax15", _entmax_fwd, _entmax_bwd, lambda b, n: rows(b, n, 3.0),
     [("p-not-sqrt", "x", None), ("no-projection", "x", None)], None),
    ("softmax_ce", _ce_fwd, _ce_bwd, _ce,
     [("padded-rows", "x", None), ("mean-over-all", "x", "factor")], None),
    ("rmsnorm", _rms_fwd, _rms_bwd, lambda b, n: _norm(b, n, False),
     [("bf16-reduction", "x", None), ("rms-not-cubed", "x", None)], None),
    ("layernorm", _ln_fwd, _ln_bwd, lambda b, n: _norm(b, n, True),
     [("unbiased-variance", "x", None), ("no-mean-term", "x", None)], None),
    ("gumbel_ste", _gumbel_fwd, _gumbel_bwd, _gumbel,
     [("no-temperature", "logits", "factor"), ("no-centering", "logits", None)],
     gumbel_intended),
    ("fake_quant_ste", _fq_fwd, _fq_bwd, lambda b, n: rows(b, n, 1.6),
     [("no-clip-mask", "x", None), ("one-sided-mask", "x", None)], fq_intended),
    ("linear_gelu", _lg_fwd, _lg_bwd, _linear,
     [("transposed-weight-grad", "w", "transposed"), ("gelu-no-tanh-prime", "x", None)], None),
    ("decay_scan", _scan_fwd, _scan_bwd, rows,
     [("forward-scan", "x", "transposed"), ("exclusive", "x", None)], None),
    ("softmin", _smin_fwd, _smin_bwd, rows,
     [("sign", "x", "sign"), ("softmax-of-x", "x", None)], None),
]


def cases(b: int = 32, n: int = 128) -> list[Case]:
    """Every (Function, right or bug) at batch ``b`` and width ``n``."""
    out = []
    for name, fwd, bwd, make, bugs, intended in FUNCTIONS:
        out.append(Case(f"{name}", _function(name, fwd, bwd, None), make(b, n), None,
                        expected=intended))
        for bug, wrong_input, kind in bugs:
            out.append(Case(f"{name}/{bug}", _function(name, fwd, bwd, bug), make(b, n), bug,
                            wrong_input, kind, intended))
    return out


def dense_jacobian(case: Case, args: tuple) -> dict[str, torch.Tensor]:
    """The true Jacobian blocks per checked input name, from the *forward* by torch.func
    (jacfwd through the forward formulas, never the backward under test), in float64.

    For the straight-through estimators the 'true' Jacobian is that of the intended backward
    (rows from ``expected``)."""
    import inspect

    name = case.name.split("/")[0]
    fwd = next(f for n, f, *_ in FUNCTIONS if n == name)
    params = list(inspect.signature(fwd).parameters)
    args64 = tuple(a.detach().double() if a.is_floating_point() else a for a in args)
    checked = [i for i, a in enumerate(args) if a.requires_grad]
    out: dict[str, torch.Tensor] = {}
    if case.expected is not None:
        y = fwd(*args64)[0]
        for i in checked:
            rows_ = []
            for r in range(y.numel()):
                v = torch.zeros(y.numel(), dtype=F64)
                v[r] = 1
                g = case.expected(v.reshape(y.shape), *args64)
                g = g[i] if isinstance(g, tuple) else g
                rows_.append(g.reshape(-1))
            out[params[i]] = torch.stack(rows_)
        return out
    for i in checked:
        def f(t, i=i):
            a = list(args64)
            a[i] = t
            return fwd(*a)[0]
        J = torch.func.jacfwd(f)(args64[i])
        y_numel = J.numel() // args64[i].numel()
        out[params[i]] = J.reshape(y_numel, args64[i].numel())
    return out
