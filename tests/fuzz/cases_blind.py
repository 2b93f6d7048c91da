"""Blind edge cases for every public callable of gradarg (session 16), written before any was run.

Written from the public docstrings (``help()``), ``docs/`` and torch's own tools, without
reading ``src/gradarg`` or the earlier case files and results.  The format is
``casekit``'s:

* ``E(...)``: the oracle is a refusal, a ``TypeError`` / ``ValueError`` (or an exception
  the docstring names, ``allow=``) whose message names one of ``keys``.
* ``P(...)``: the call returns ``r`` and ``pred`` must hold (``W``: the warnings the call
  issued).  ``either=True``: a clear refusal is acceptable too (the documentation leaves
  the input open).

Run by hand::

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/fuzz/run.py --cases cases_blind \
        --out tests/fuzz/results_blind.json
"""

from __future__ import annotations

import math  # noqa: F401  (the calls use it)
import os
import pathlib
import tempfile
import xml.etree.ElementTree as ET

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np
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
from torch.func import grad, hessian, jacfwd, jacrev, vmap  # noqa: F401

import gradarg as ga
import gradarg.plot
import gradarg.sparse

REG = Registry(globals())
CASES = REG.cases
E, P = REG.E, REG.P

NAN, INF = float("nan"), float("inf")
C = torch.complex128


# ------------------------------------------------------------------------------ inputs
def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def rn(*shape, dtype=D, seed=0):
    return torch.randn(*shape, generator=gen(seed), dtype=dtype)


x3 = torch.tensor([0.5, -1.2, 2.0], dtype=D)
v3 = torch.tensor([1.0, -2.0, 0.5], dtype=D)
x5 = torch.linspace(-1, 1, 5, dtype=D)
x8 = rn(8, seed=3)
XB = rn(4, 3, seed=1)
X23 = rn(2, 3, seed=4)
A34 = rn(3, 4, seed=2)
W33 = torch.tensor([[1.0, 2.0, 0.0], [0.0, 3.0, 4.0], [5.0, 0.0, 6.0]], dtype=D)
M22 = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
z3 = torch.tensor([1 + 2j, -0.5 + 0.3j, 2 - 1j], dtype=C)
vz3 = torch.tensor([1 - 1j, 0.5 + 2j, -1 + 0j], dtype=C)
Z23 = torch.tensor([[1 + 1j, 2 - 1j, 0.5j], [-1 + 0j, 3 + 2j, 1 - 1j]], dtype=C)
XE = torch.tensor([1.0, 2.0], dtype=D).expand(3, 2)
AR6 = torch.arange(6, dtype=D).reshape(3, 2)
WC = torch.tensor([[[1.0, 0.0, 2.0]]], dtype=D)


def stencil(u):
    up = F.pad(u, (1, 1))
    return up[:-2] - 2 * u + up[2:] + torch.sin(u)


def stencil_J(u):
    """By hand: -2 + cos(u) on the diagonal, 1 beside it."""
    n = u.numel()
    one = torch.ones(n - 1, dtype=u.dtype)
    return torch.diag(-2 + torch.cos(u)) + torch.diag(one, 1) + torch.diag(one, -1)


def mix(t):  # R^3 -> R^2
    return torch.stack([t[0] * t[1], torch.sin(t[2]) + t[0] ** 2])


def wide(t):  # R^3 -> R^9: more outputs than inputs
    return torch.outer(t, torch.sin(t)).flatten()


def energy(u):
    return ((u[1:] - u[:-1]) ** 2).sum() + torch.cos(u).sum()


def arrow_energy(u):
    return ((u[1:] - u[0]) ** 4).sum() + torch.cos(u).sum()


def arrow_grad(u):
    """∇ of arrow_energy by hand."""
    d = u[1:] - u[0]
    return torch.cat([(-4 * (d ** 3).sum()).reshape(1), 4 * d ** 3]) - torch.sin(u)


def f4(U):  # scalar of a (2, 3) input, Hessian couples U[0, j] with U[1, j]
    return (U ** 3).sum() + (U[0] * U[1]).sum()


P4 = torch.zeros(2, 3, 2, 3, dtype=torch.bool)
for _i in range(2):
    for _j in range(3):
        P4[_i, _j, _i, _j] = True
        P4[_i, _j, 1 - _i, _j] = True


def fn_item(t):
    return t * (2.0 if t.sum().item() > 0 else 3.0)


def fn_np(t):
    return torch.from_numpy(np.sin(t.numpy()))


def conv_fn(t):
    return F.conv1d(t.reshape(1, 1, -1), WC).flatten()


def diag_pattern(n):
    i = torch.arange(n)
    return torch.sparse_coo_tensor(torch.stack([i, i]), torch.ones(n, dtype=torch.bool), (n, n))


def is_diag_02(J):
    """A dropout(0.5) Jacobian: diagonal, each entry 0 or 2."""
    off = J - torch.diag(torch.diagonal(J))
    d = torch.diagonal(J)
    return bool((off == 0).all()) and bool(((d == 0) | (d == 2)).all())


def hooks_of(t):
    return bool(t._backward_hooks) or bool(getattr(t, "_post_accumulate_grad_hooks", None))


def under_no_grad(f):
    with torch.no_grad():
        return f()


def under_inference(f):
    with torch.inference_mode():
        return f()


def inf_tensor(t):
    with torch.inference_mode():
        return t.clone()


def fig_name(fig):
    import matplotlib.pyplot as plt

    name = type(fig).__name__
    plt.close("all")
    return name


def heat(*a, **k):
    import matplotlib.pyplot as plt

    ax = gradarg.plot.jacobian_heatmap(*a, **k)
    name = type(ax).__name__
    plt.close("all")
    return name


def tmpfile(name):
    return str(pathlib.Path(tempfile.mkdtemp()) / name)


def norm_in(s):
    """The norm a summary line shows, as a float (its own number format)."""
    import re

    return float(re.search(r"norm ([^)]*)\)", s).group(1))


def xml_ok(svg):
    ET.fromstring(svg)
    return True


# ------------------------------------------------------------------ custom Functions
class SquareHalf(torch.autograd.Function):
    """x², backward g·x (wrong: 2x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


class SinNeg(torch.autograd.Function):
    """sin, backward -g·cos (sign bug)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return -g * torch.cos(x)


class MatT(torch.autograd.Function):
    """W33 @ x, backward W33 @ g (should be W33ᵀ g): transposed."""

    @staticmethod
    def forward(ctx, x):
        return W33 @ x

    @staticmethod
    def backward(ctx, g):
        return W33 @ g


class STE(torch.autograd.Function):
    """round, backward identity (a straight-through estimator)."""

    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return g


class NoneBack(torch.autograd.Function):
    """2x, backward None."""

    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        return None


class Noisy(torch.autograd.Function):
    """sin, backward with random noise of 1e-3."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x) + 1e-3 * torch.randn_like(g)


class BF16Back(torch.autograd.Function):
    """sin, backward rounded through bfloat16."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return (g * torch.cos(x)).to(torch.bfloat16).to(g.dtype)


class ZSqBad(torch.autograd.Function):
    """z², backward g·2z (PyTorch's convention wants g·conj(2z))."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * 2 * z


class ZSq(torch.autograd.Function):
    """z², backward g·conj(2z): right."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * torch.conj(2 * z)


class GradOutInplace(torch.autograd.Function):
    """identity, backward doubles grad_output in place and returns it (wrong: 2v)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        g.mul_(2)
        return g


class OneOff(torch.autograd.Function):
    """sin, backward right except element 3 of x, off by 1 %."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        r = (g * torch.cos(x)).clone()
        r[3] = r[3] * 1.01
        return r


class SinRightJvp(torch.autograd.Function):
    """sin with a right backward and a right jvp."""

    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.x = x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x)

    @staticmethod
    def jvp(ctx, t):
        return t * torch.cos(ctx.x)


class SqrtMod(nn.Module):
    def forward(self, x):
        return torch.sqrt(x)


def lin_fixed(n_in=3, n_out=2):
    lin = nn.Linear(n_in, n_out).double()
    with torch.no_grad():
        lin.weight.copy_(torch.arange(n_in * n_out, dtype=D).reshape(n_out, n_in) / 7 - 0.3)
        lin.bias.copy_(torch.linspace(-0.5, 0.5, n_out, dtype=D))
    return lin


# ----------------------------------------------------------------- side-effect helpers
def side_jac(method):
    x = x3.clone().requires_grad_()
    before = x.detach().clone()
    J = ga.jacobian(mix, x, method=method)
    return {"J": J, "grad": x.grad, "same": torch.equal(x.detach(), before), "rg": x.requires_grad,
                "hooks": hooks_of(x)}


def captured_jac(method):
    w = torch.tensor([1.5, -0.5, 2.0], dtype=D, requires_grad=True)
    J = ga.jacobian(lambda t: t * w, x3, method=method)
    return {"J": J, "wgrad": w.grad, "hooks": hooks_of(w)}


def inplace_jac(method):
    x = x3.clone()
    J = ga.jacobian(lambda t: t.mul_(2), x, method=method)
    return {"J": J, "same": torch.equal(x, x3)}


def cg_param():
    lin = lin_fixed()
    J = ga.jacobian(lambda t: torch.tanh(lin(t)), x3, create_graph=True)
    g = torch.autograd.grad((J ** 2).sum(), lin.weight)[0]
    lin2 = lin_fixed()
    J2 = torch.autograd.functional.jacobian(lambda t: torch.tanh(lin2(t)), x3, create_graph=True)
    g2 = torch.autograd.grad((J2 ** 2).sum(), lin2.weight)[0]
    return g, g2


def fcall_grad(use_ga):
    lin = lin_fixed()
    params = {k: v.detach() for k, v in lin.named_parameters()}

    def loss(p):
        f = lambda t: torch.tanh(torch.func.functional_call(lin, p, (t,)))
        J = ga.jacobian(f, x3) if use_ga else jacrev(f)(x3)
        return (J ** 2).sum()

    return grad(loss)(params)["weight"]


def remembered_auto():
    f = lambda t: t.repeat(int(t[0].item()))
    a = torch.tensor([5.0, 1.0, 2.0], dtype=D)
    b = torch.tensor([1.0, 1.0, 2.0], dtype=D)
    return ga.jacobian(f, a), ga.jacobian(f, b), taj(f, a), taj(f, b)


def bv_side():
    x = x3.clone().requires_grad_()
    w = torch.tensor([1.5, -0.5, 2.0], dtype=D, requires_grad=True)
    g = ga.backward_vjp(lambda t: t * w, x, v3)
    return {"g": g, "xgrad": x.grad, "wgrad": w.grad, "same": torch.equal(x.detach(), x3),
                "hooks": hooks_of(x) or hooks_of(w)}


def cv_side():
    x = x3.clone().requires_grad_()
    x.grad = torch.ones(3, dtype=D)
    w = torch.tensor([1.5, -0.5, 2.0], dtype=D, requires_grad=True)
    r = ga.compare_vjp(lambda t: t * w, x, v3)
    return {"r": r, "xgrad": x.grad, "wgrad": w.grad, "same": torch.equal(x.detach(), x3),
                "hooks": hooks_of(x) or hooks_of(w)}


def cv_output_tensor():
    x = x3.clone().requires_grad_()
    y = x ** 2
    r = ga.compare_vjp(y, x, v3, reference=torch.diag(2 * x3))
    return {"r": r, "xgrad": x.grad}


def cv_grad_out_inplace():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=D)
    v = torch.tensor([1.0, -1.0, 0.5], dtype=D)
    r = ga.compare_vjp(GradOutInplace.apply, x, v)
    return {"r": r, "v_same": torch.equal(v, torch.tensor([1.0, -1.0, 0.5], dtype=D))}


def cb_module_side():
    lin = lin_fixed()
    x = rn(4, 3).requires_grad_()
    r = ga.check_backward(lin, x)
    return {"r": r, "wgrad": lin.weight.grad, "bgrad": lin.bias.grad, "xgrad": x.grad,
                "hooks": hooks_of(x) or hooks_of(lin.weight),
                "mod_hooks": bool(lin._forward_hooks or lin._forward_pre_hooks
                               or lin._backward_hooks)}


def cb_x_side():
    x = x8.clone().requires_grad_()
    r = ga.check_backward(torch.sin, x)
    return {"r": r, "xgrad": x.grad, "same": torch.equal(x.detach(), x8), "rg": x.requires_grad}


def sj_side():
    w = torch.ones(5, dtype=D, requires_grad=True)
    J = ga.SparseJacobian(tri(5))(lambda t: stencil(t) * w, x5)
    return {"J": J, "wgrad": w.grad}


def sp_rng():
    before = torch.random.get_rng_state()
    Pp = ga.sparsity_pattern(lambda u: u[1:] - u[:-1], torch.zeros(4), generator=gen(1))
    return {"P": Pp, "same": torch.equal(before, torch.random.get_rng_state())}


def js_captured():
    w = torch.ones(4, dtype=D, requires_grad=True)
    Pp = ga.jacobian_sparsity(lambda t: t * w, torch.zeros(4, dtype=D), layout=torch.strided)
    return {"P": Pp, "wgrad": w.grad}


def bn_train(n=2):
    bn = nn.BatchNorm1d(n).double()
    bn.train()
    return bn


# ---------------------------------------------------------------------- trace helpers
def chain():
    a = torch.tensor(5.0, requires_grad=True)
    b = a * a
    c = 8 * b
    d = torch.log(c)
    return a, b, c, d


def tb_doc():
    a, b, c, d = chain()
    t = ga.trace_backward(d, names={"a": a, "b": b, "c": c, "d": d})
    return {"t": t, "agrad": a.grad, "arrived": [(n.label, round(n.arrived.item(), 4)) for n in t.executed]}


def tb_use_grad():
    a, _b, _c, d = chain()
    t = ga.trace_backward(d, names={"a": a}, use_grad=True)
    return {"t": t, "agrad": a.grad, "leaves": t.leaves}


def tb_twice():
    _a, _b, _c, d = chain()
    ga.trace_backward(d)
    return ga.trace_backward(d)


def tb_retain():
    a, _b, _c, d = chain()
    ga.trace_backward(d, retain_graph=True)
    ga.trace_backward(d)
    return a.grad


def tb_inputs():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    y = (a * b).sum()
    ga.trace_backward(y, inputs=[a])
    return {"agrad": a.grad, "bgrad": b.grad}


def tb_existing_grad():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    a.grad = torch.ones(2)
    y = (a ** 2).sum()
    ga.trace_backward(y)
    return {"agrad": a.grad, "hooks": hooks_of(a)}


def tb_sqrt0():
    x = torch.tensor([0.0, 4.0], requires_grad=True)
    y = torch.sqrt(x).sum()
    return ga.trace_backward(y, names={"x": x})


def tb_nan_v():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    return ga.trace_backward(y, torch.tensor([NAN, 1.0]))


def tb_complex():
    z = torch.tensor([1 + 2j, 3 - 1j], dtype=C, requires_grad=True)
    y = (z * z).abs().sum()
    ga.trace_backward(y)
    z2 = z.detach().clone().requires_grad_()
    (z2 * z2).abs().sum().backward()
    return {"got": z.grad, "ref": z2.grad}


def tb_embedding():
    emb = nn.Embedding(5, 2, sparse=True)
    y = emb(torch.tensor([1, 3, 1])).sum()
    t = ga.trace_backward(y)
    return {"t": t, "grad": emb.weight.grad}


def tb_simple(**kw):
    a = torch.tensor([1.0, -2.0], requires_grad=True)
    y = (a * 3).sum()
    return ga.trace_backward(y, names={"a": a}, **kw)


def tb_names_escape():
    a = torch.tensor(2.0, requires_grad=True)
    b = a * 3
    return ga.trace_backward(b, names={"<b>&'\"": a, "x<y": b})


def tb_checkpoint():
    from torch.utils.checkpoint import checkpoint

    lin = nn.Linear(2, 2)
    x = torch.ones(1, 2, requires_grad=True)
    y = checkpoint(lin, x, use_reentrant=True).sum()
    return ga.trace_backward(y, names={"w": lin.weight})


def tb_meta():
    a = torch.empty(2, device="meta", requires_grad=True)
    return ga.trace_backward((a * 2).sum())


def tb_inference_output():
    with torch.inference_mode():
        y = torch.ones(2).sum()
    return ga.trace_backward(y)


# ------------------------------------------------------------------- why_no_grad helpers
def wng_nonfinite():
    x = torch.tensor([0.0, 4.0], requires_grad=True)
    y = torch.sqrt(x).sum()
    y.backward()
    return ga.why_no_grad(y, x, names={"x": x})


def wng_newleaf():
    x = torch.tensor([1.0, 4.0], requires_grad=True)
    y = torch.sqrt(x).sum()
    loss = torch.tensor(y.item(), requires_grad=True)
    return ga.why_no_grad(loss, x)


def wng_not_reachable():
    w1 = torch.tensor([1.0, 2.0], requires_grad=True)
    w2 = torch.tensor([3.0], requires_grad=True)
    y = (w1 * 2).sum()
    return ga.why_no_grad(y, w2, names={"w2": w2})


def wng_dead_relu():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.relu(w - 10).sum()
    return ga.why_no_grad(y, w, names={"w": w})


def wng_ok():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (w ** 2).sum()
    d = ga.why_no_grad(y, w)
    return {"d": d, "wgrad": w.grad}


def wng_accumulated():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (w ** 2).sum()
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    return ga.why_no_grad(y, w)


def wng_inplace():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    h = w * 2
    y = (h ** 2).sum()
    h.add_(1)
    return ga.why_no_grad(y, w)


def wng_random():
    torch.manual_seed(0)
    drop = nn.Dropout(0.5)
    w = torch.ones(64, requires_grad=True)
    f = lambda: drop(w * 2).sum()
    f().backward()
    state = torch.random.get_rng_state()
    d = ga.why_no_grad(f, w)
    return {"d": d, "rng_same": torch.equal(state, torch.random.get_rng_state())}


def wng_integer():
    return ga.why_no_grad(torch.ones(2, requires_grad=True).sum(), torch.arange(3))


def wng_inference():
    w = torch.ones(2, requires_grad=True)
    y = (w * 2).sum()
    with torch.inference_mode():
        t = torch.ones(2)
    return ga.why_no_grad(y, t)


def wng_output_no_grad():
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = (w * 2).sum()
    return ga.why_no_grad(y, w)


def wng_unused_param():
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    y = net[0](torch.ones(3, 2)).sum()
    return ga.why_no_grad(y, net[1].weight, module=net)


def wng_self():
    w = torch.ones(2, requires_grad=True)
    y = (w * 2).sum()
    return ga.why_no_grad(y, y)


def wng_nonleaf():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    h = w * 3
    y = (h ** 2).sum()
    return ga.why_no_grad(y, h, names={"h": h})


def wng_names_list():
    w = torch.ones(2, requires_grad=True)
    return ga.why_no_grad((w * 2).sum(), w, names=[("w", w)])


def wng_module_str():
    w = torch.ones(2, requires_grad=True)
    return ga.why_no_grad((w * 2).sum(), w, module="net")


# -------------------------------------------------------------------------- watch helpers
def net3(act=nn.ReLU):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), act(), nn.Linear(8, 1))


def watch_basic():
    net = net3()
    with ga.watch(net) as w:
        loss = net(torch.randn(16, 4)).pow(2).mean()
        loss.backward()
    mods = list(net.modules())
    left = any(bool(m._forward_hooks or m._forward_pre_hooks or m._backward_hooks
                    or getattr(m, "_backward_pre_hooks", None)) for m in mods)
    left = left or any(hooks_of(p) for p in net.parameters())
    import torch.nn.modules.module as _mm
    import torch.optim.optimizer as _oo

    left = left or bool(_oo._global_optimizer_pre_hooks) or bool(_oo._global_optimizer_post_hooks)
    left = left or any(bool(getattr(_mm, n)) for n in (
        "_global_parameter_registration_hooks", "_global_forward_hooks", "_global_forward_pre_hooks",
        "_global_backward_hooks", "_global_backward_pre_hooks", "_global_module_registration_hooks"))
    return {"w": w, "rows": [r["module"] for r in w.rows()], "summary": w.summary(), "left": left,
                "layers": [m.kind for m in w.layers()], "table": w.table()}


def watch_dead():
    net = net3()
    with torch.no_grad():
        net[0].bias.fill_(-100.0)
    with ga.watch(net) as w:
        net(torch.randn(16, 4)).pow(2).mean().backward()
    return {"summary": w.summary(), "problems": w.problems()}


def watch_sqrt():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 2), SqrtMod())
    with torch.no_grad():
        net[0].weight.zero_()
        net[0].bias.zero_()
    with ga.watch(net) as w:
        net(torch.randn(3, 2)).sum().backward()
    return {"summary": w.summary(), "first": w.first_nonfinite()}


def watch_unused():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    with ga.watch(net) as w:
        net[0](torch.randn(4, 2)).sum().backward()
    return w.why_no_grad("1.weight")


def watch_keyerror():
    net = net3()
    with ga.watch(net) as w:
        net(torch.randn(2, 4)).sum().backward()
    return w.why_no_grad("nope")


def watch_no_params():
    net = nn.Sequential(nn.ReLU())
    with ga.watch(net) as w:
        net(torch.randn(3, requires_grad=True)).sum().backward()
    return w.summary()


def watch_zero_before_step():
    net = net3()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with ga.watch(net) as w:
        net(torch.randn(16, 4)).pow(2).mean().backward()
        opt.zero_grad()
        opt.step()
    return w.summary()


def watch_twice_same_graph():
    net = net3()
    with ga.watch(net) as w:
        loss = net(torch.randn(16, 4)).pow(2).mean()
        loss.backward(retain_graph=True)
        loss.backward()
    return w.summary()


def watch_frozen():
    net = net3()
    net[0].weight.requires_grad_(False)
    with ga.watch(net) as w:
        net(torch.randn(16, 4)).pow(2).mean().backward()
    return w.summary()


def watch_plot():
    net = net3()
    with ga.watch(net) as w:
        net(torch.randn(16, 4)).pow(2).mean().backward()
    return fig_name(w.plot())


def watch_draw():
    net = net3(nn.Tanh)
    with ga.watch(net) as w:
        net(torch.randn(16, 4)).pow(2).mean().backward()
    return ga.draw_modules(w).svg


def draw_nothing():
    w = ga.watch(net3())
    w.remove()
    return ga.draw_modules(w)


def draw_expand_bad():
    net = net3()
    with ga.watch(net) as w:
        net(torch.randn(2, 4)).sum().backward()
    return ga.draw_modules(w, expand=["nope"])


# -------------------------------------------------------------------- check helpers
def cb_figure():
    r = ga.check_backward(SquareHalf.apply, torch.tensor([1.0, -2.0, 3.0], requires_grad=True))
    return fig_name(r.figure())


def cb_figure_probes():
    r = ga.check_backward(SquareHalf.apply, torch.tensor([1.0, -2.0, 3.0], requires_grad=True),
                          localize=False)
    return r.figure()


def explorer_doc():
    return ga.explorer(lambda x: x @ M22, torch.tensor([[2.0, 1.0]]), v=[[1.0, 0.0]])


# ======================================================================================
#                                       CASES
# ======================================================================================

# ---------------------------------------------------------------- jacobian: dtypes
T = "jacobian"
P("jac_f16", T, "ga.jacobian(torch.sin, x3.half())",
  "r.dtype == torch.float16 and close(r, torch.diag(torch.cos(x3)), rtol=3e-3, atol=2e-3)",
  "diag(cos x) in float16 ('in x's dtype'); the docstring lists float32/float64/complex, so a "
  "refusal naming the dtype is acceptable", group="dtype", either=True,
  keys=("dtype", "float16", "Half"))
P("jac_bf16", T, "ga.jacobian(torch.sin, x3.bfloat16())",
  "r.dtype == torch.bfloat16 and close(r, torch.diag(torch.cos(x3)), rtol=2e-2, atol=1e-2)",
  "diag(cos x) in bfloat16, or a refusal naming the dtype", group="dtype", either=True,
  keys=("dtype", "bfloat16", "BFloat16"))
E("jac_int_x", T, "ga.jacobian(torch.sin, torch.arange(3))", ("dtype", "integer", "int64", "x"),
  group="dtype")
E("jac_bool_x", T, "ga.jacobian(lambda t: t * 1.0, torch.tensor([True, False]))",
  ("dtype", "bool", "x"), group="dtype")
P("jac_complex_holo", T, "ga.jacobian(lambda z: z * z, z3)",
  "close(r, torch.diag(torch.conj(2 * z3)))",
  "conj(f'(z)) = conj(2z) on the diagonal (docstring Notes; taj(vectorize=True))", group="dtype")
E("jac_complex_forward", T, "ga.jacobian(lambda z: z * z, z3, method='forward')",
  ("forward", "complex"), group="dtype")
E("jac_real_to_complex_auto", T, "ga.jacobian(lambda t: t * (1 + 2j), x3)", ("complex",),
  group="dtype")
E("jac_real_to_complex_fd", T,
  "ga.jacobian(lambda t: t * (1 + 2j), x3, method='finite-difference')", ("complex",),
  group="dtype")
P("jac_real_to_complex_fwd", T, "ga.jacobian(lambda t: t * (1 + 2j), x3, method='forward')",
  "r.is_complex() and close(r, torch.eye(3, dtype=C) * (1 + 2j))",
  "∂y/∂x = (1+2j) I (docstring: forward gives the complex derivative; "
  "taj(strategy='forward-mode', vectorize=True) gives the same)", group="dtype")
P("jac_complex_to_real", T, "ga.jacobian(lambda z: z.abs() ** 2, z3)",
  "close(r, taj(lambda z: z.abs() ** 2, z3))",
  "torch.autograd.functional.jacobian: diag(2z) (PyTorch's convention for a real output)",
  group="dtype")
P("jac_f32_fn_casts", T, "ga.jacobian(lambda t: t.float() ** 2, x3)",
  "r.dtype == D and close(r, torch.diag(2 * x3), rtol=1e-6)",
  "diag(2x), in x's dtype float64 (Returns: 'in x's dtype')", group="dtype")
P("jac_tuple_mixed_dtype", T, "ga.jacobian(lambda a, b: a * b.double().sum(), (x3, x3.float()))",
  "r[0].dtype == D and r[1].dtype == S and "
  "close(r, taj(lambda a, b: a * b.double().sum(), (x3, x3.float())), rtol=1e-6)",
  "taj's blocks, each in its input's dtype", group="dtype")
E("jac_tuple_with_int", T, "ga.jacobian(lambda a, b: a * b, (x3, torch.arange(3)))",
  ("dtype", "integer", "int64"), group="dtype")
E("jac_int_output", T, "ga.jacobian(lambda t: (t * 10).long(), x3)",
  ("integer", "dtype", "int64", "output"), group="dtype")
E("jac_bool_output", T, "ga.jacobian(lambda t: t > 0, x3)", ("bool", "dtype", "output"),
  group="dtype")

# ---------------------------------------------------------------- jacobian: layouts, devices
P("jac_0d", T, "ga.jacobian(torch.sin, torch.tensor(0.3, dtype=D))",
  "r.shape == () and close(r, torch.cos(torch.tensor(0.3, dtype=D)))", "cos(0.3), 0-d",
  group="layout")
P("jac_0d_to_vec", T, "ga.jacobian(lambda t: torch.stack([t, t ** 2]), torch.tensor(0.3, dtype=D))",
  "r.shape == (2,) and close(r, torch.tensor([1.0, 0.6], dtype=D))", "[1, 2x] by hand",
  group="layout")
P("jac_empty", T, "ga.jacobian(torch.sin, torch.empty(0, dtype=D))", "r.shape == (0, 0)",
  "shape y.shape + x.shape = (0, 0) (docstring)", group="layout")
P("jac_empty_cols", T, "ga.jacobian(lambda t: t.sum(1), torch.empty(2, 0, dtype=D))",
  "r.shape == (2, 2, 0)", "y = zeros(2): shape (2, 2, 0), as jacrev", group="layout")
P("jac_empty_out", T, "ga.jacobian(lambda t: t[:0], x3)", "r.shape == (0, 3)",
  "an empty output: shape (0, 3), as jacrev", group="layout")
P("jac_fd_empty", T, "ga.jacobian(torch.sin, torch.empty(0, dtype=D), method='finite-difference')",
  "r.shape == (0, 0)", "shape (0, 0)", group="layout")
P("jac_noncontig", T, "ga.jacobian(lambda t: torch.tanh(t) * t.sum(0), XB.t())",
  "close(r, jr(lambda t: torch.tanh(t) * t.sum(0), XB.t().contiguous()))",
  "jacrev on the contiguous copy ('any strides')", group="layout")
P("jac_expanded", T, "ga.jacobian(lambda t: t ** 2 * AR6, XE)",
  "close(r, jr(lambda t: t ** 2 * AR6, XE.contiguous()))",
  "an expanded x is 6 independent elements (fn gets private copies): jacrev on a contiguous copy",
  group="layout")
P("jac_channels_last", T,
  "ga.jacobian(lambda t: (t * t).sum((2, 3)), rn(1, 2, 3, 3).to(memory_format=torch.channels_last))",
  "close(r, jr(lambda t: (t * t).sum((2, 3)), rn(1, 2, 3, 3)))", "jacrev, same values",
  group="layout")
E("jac_sparse_x", T, "ga.jacobian(torch.sin, x3.to_sparse())", ("sparse",), group="layout")
E("jac_sparse_csr_x", T, "ga.jacobian(lambda t: t * 2, W33.to_sparse_csr())", ("sparse",),
  group="layout")
E("jac_meta_x", T, "ga.jacobian(torch.sin, torch.empty(3, device='meta'))", ("meta",),
  group="device")
E("jac_meta_tuple", T, "ga.jacobian(lambda a, b: a * b, (x3, torch.empty(3, device='meta', dtype=D)))",
  ("meta",), group="device")

# ---------------------------------------------------------------- jacobian: values
P("jac_nan_x", T, "ga.jacobian(torch.sin, torch.tensor([NAN, 1.0], dtype=D))",
  "bool(torch.isnan(r[0, 0])) and close_notnan(r, torch.tensor([[NAN, 0.0], [NAN, math.cos(1.0)]], dtype=D)) "
  "and any('nan' in w.lower() for w in W)",
  "diag(cos x): NaN at the NaN element (column 0 otherwise open: torch's 0·NaN), and a "
  "RuntimeWarning (docstring: NaN in x warns)", keys=("NaN",))
P("jac_inf_x", T, "ga.jacobian(torch.exp, torch.tensor([INF, 0.0], dtype=D))",
  "r[0, 0] == INF and r[0, 1] == 0 and r[1, 1] == 1 and any('inf' in w.lower() for w in W)",
  "diag(exp x) = [inf, 1], entry (1, 0) open (torch: 0·inf = NaN), a RuntimeWarning", keys=("Inf", "inf"))
P("jac_subnormal", T, "ga.jacobian(lambda t: 3 * t, torch.tensor([1e-310, 5e-324, 0.0], dtype=D))",
  "close(r, 3 * torch.eye(3, dtype=D), rtol=1e-12)", "3 I by hand")
P("jac_fd_subnormal", T,
  "ga.jacobian(lambda t: 3 * t, torch.tensor([1e-310, 5e-324, 0.0], dtype=D), method='finite-difference')",
  "close(r, 3 * torch.eye(3, dtype=D), rtol=1e-8)", "3 I: a linear function, any step is exact")
P("jac_fd_subnormal_sq", T,
  "ga.jacobian(lambda t: t ** 2, torch.tensor([1e-310, 5e-324], dtype=D), method='finite-difference')",
  "close(r, torch.zeros(2, 2, dtype=D), atol=1e-12)", "diag(2x) ≈ 0 within 1e-12")
P("jac_large", T, "ga.jacobian(lambda t: t ** 2, torch.tensor([1e30, -1e30, 3.0], dtype=D))",
  "close(r, torch.diag(torch.tensor([2e30, -2e30, 6.0], dtype=D)), rtol=1e-12)", "diag(2x)")
P("jac_fd_large", T,
  "ga.jacobian(lambda t: t ** 2, torch.tensor([1e30, -1e30, 3.0], dtype=D), method='finite-difference')",
  "(lambda E, m: bool(torch.allclose(r[m], E[m], rtol=1e-6, atol=1e-6)) and not bool(torch.isnan(r.diagonal()).any()) "
  "and (bool(m.all()) or len(W) > 0))(torch.diag(torch.tensor([2e30, -2e30, 6.0], dtype=D)), ~torch.isnan(r))",
  "diag(2x): t² curves on the scale of x itself, the steps from max(1, |x|) resolve it; an "
  "off-diagonal entry of an output so large that no step moves it (y[0] = 1e60 along x[2]) "
  "may be NaN with a RuntimeWarning (docstring, Raises/RuntimeWarning) [oracle fixed after the run]")
P("jac_fd_tiny_linear", T,
  "ga.jacobian(lambda t: t * 1e30, torch.tensor([1e-30, 2e-30], dtype=D), method='finite-difference')",
  "close(r, 1e30 * torch.eye(2, dtype=D), rtol=1e-6)", "1e30 I: linear")
P("jac_f32_overflow_y", T, "ga.jacobian(lambda t: t ** 2, torch.tensor([1e30, 1.0]))",
  "r.dtype == S and close(r, torch.diag(torch.tensor([2e30, 2.0])), rtol=1e-6)",
  "y[0] overflows to inf in float32, its derivative 2e30 does not: diag(2x)")
P("jac_fd_relu_kink", T,
  "ga.jacobian(torch.relu, torch.tensor([0.0, 1.0, -1.0], dtype=D), method='finite-difference')",
  "(math.isnan(float(r[0, 0])) and len(W) > 0 or 0.0 <= float(r[0, 0]) <= 1.0) "
  "and abs(float(r[1, 1]) - 1) < 1e-8 and abs(float(r[2, 2])) < 1e-8",
  "at the kink a number in relu's subdifferential [0, 1] or NaN with a warning; 1 and 0 elsewhere")
P("jac_fd_jump", T,
  "ga.jacobian(lambda t: (t > 0).to(t.dtype) + t, torch.tensor([0.0, 2.0], dtype=D), method='finite-difference')",
  "math.isnan(float(r[0, 0])) and len(W) > 0 and abs(float(r[1, 1]) - 1) < 1e-8",
  "docstring: a function that jumps is not resolved: NaN and a RuntimeWarning; 1 at x = 2",
  keys=("jump", "resolve", "x"))
P("jac_fd_sin_1e17", T,
  "ga.jacobian(torch.sin, torch.tensor([1e17, 0.5], dtype=D), method='finite-difference')",
  "math.isnan(float(r[0, 0])) and len(W) > 0 and abs(float(r[1, 1]) - math.cos(0.5)) < 1e-8",
  "docstring example: sin at 1e17 is NaN with a warning; cos(0.5) beside it",
  keys=("resolve", "1e+17", "1e17"))
P("jac_fd_oscillating", T,
  "ga.jacobian(lambda t: torch.sin(1 / t), torch.tensor([1e-3], dtype=D), method='finite-difference')",
  "close(r, torch.tensor([[-math.cos(1000.0) / 1e-6]], dtype=D), rtol=1e-5) "
  "or (math.isnan(float(r.flatten()[0])) and len(W) > 0)",
  "-cos(1/x)/x² by hand, or NaN with a warning")
P("jac_fd_f32_sin1e3", T,
  "ga.jacobian(torch.sin, torch.tensor([1000.0, 0.1]), method='finite-difference')",
  "r.dtype == S and close(r, torch.diag(torch.cos(torch.tensor([1000.0, 0.1]).double())), rtol=1e-5, atol=1e-6)",
  "docstring of finite_diff: sin at 1e3 in float32 is resolved (float64 copies): diag(cos x)")
P("jac_fd_complex", T, "ga.jacobian(lambda z: z * z, z3, method='finite-difference')",
  "close(r, torch.diag(torch.conj(2 * z3)), rtol=1e-6, atol=1e-8)",
  "conj(2z) on the diagonal (PyTorch's convention, finite_diff docstring)")
P("jac_fd_numpy_fn", T, "ga.jacobian(fn_np, x3, method='finite-difference')",
  "close(r, torch.diag(torch.cos(x3)), rtol=1e-6, atol=1e-9)",
  "central differences never touch autograd, so a NumPy function has its Jacobian diag(cos x)")
P("jac_const_output", T, "ga.jacobian(lambda t: torch.ones(2, dtype=D), x3)",
  "close(r, torch.zeros(2, 3, dtype=D))", "docstring: an output independent of x gives a zero block")
E("jac_const_strict", T, "ga.jacobian(lambda t: torch.ones(2, dtype=D), x3, strict=True)",
  ("output", "require", "independent"), allow=(RuntimeError,),
  oracle="RuntimeError (docstring, strict) naming the output")
E("jac_strict_independent", T, "ga.jacobian(lambda a, b: a * 2, (x3, v3), strict=True)",
  ("input", "independent"), allow=(RuntimeError,),
  oracle="RuntimeError (strict): output independent of input 1")

# ---------------------------------------------------------------- jacobian: misuse
P("jac_list_output", T, "ga.jacobian(lambda t: [t, t ** 2], x3)",
  "len(r) == 2 and close(r[0], torch.eye(3, dtype=D)) and close(r[1], torch.diag(2 * x3))",
  "a list of outputs taken as a tuple, or refused naming the list", group="misuse", either=True,
  keys=("list", "tuple", "tensor", "fn"))
E("jac_float_output", T, "ga.jacobian(lambda t: 3.0, x3)", ("tensor", "fn", "float", "output"))
E("jac_none_output", T, "ga.jacobian(lambda t: None, x3)", ("tensor", "None", "fn", "output"))
E("jac_numpy_output", T, "ga.jacobian(lambda t: t.detach().numpy(), x3)",
  ("tensor", "ndarray", "numpy", "fn", "output"))
E("jac_swapped_args", T, "ga.jacobian(x3, torch.sin)", ("fn", "callable"))
E("jac_fn_is_tensor", T, "ga.jacobian(torch.sin(x3), x3)", ("fn", "callable"))
E("jac_x_list", T, "ga.jacobian(torch.sin, [1.0, 2.0])", ("x", "tensor"))
E("jac_x_float", T, "ga.jacobian(torch.sin, 0.5)", ("x", "tensor"))
E("jac_x_ndarray", T, "ga.jacobian(torch.sin, np.ones(3))", ("x", "tensor", "ndarray"))
E("jac_numpy_in_fn", T, "ga.jacobian(lambda t: torch.from_numpy(t.numpy()), x3)",
  ("numpy",), allow=(RuntimeError,), oracle="torch's RuntimeError naming numpy() (or a refusal)")
P("jac_side_effect_fn", T, "(lambda log: ga.jacobian(lambda t: (log.append(1), t * 2)[1], x3))([])",
  "close(r, 2 * torch.eye(3, dtype=D))", "2 I; the side effect (a list append) is irrelevant")
P("jac_item_reverse", T, "ga.jacobian(fn_item, x3)", "close(r, 2 * torch.eye(3, dtype=D))",
  "docstring: .item() is fine in reverse mode; sum(x) > 0 so 2 I")
P("jac_item_forward", T, "ga.jacobian(fn_item, x3, method='forward')",
  "close(r, 2 * torch.eye(3, dtype=D))",
  "docstring: forward mode eagerly is backward passes over one evaluation: .item() fine")
P("jac_item_vectorize_true", T, "ga.jacobian(fn_item, x3, vectorize=True)",
  "close(r, 2 * torch.eye(3, dtype=D))", "reverse mode batches only the backward passes")
P("jac_item_fwd_vectorize_true", T, "ga.jacobian(fn_item, x3, method='forward', vectorize=True)",
  "close(r, 2 * torch.eye(3, dtype=D))", "forward mode eagerly without a custom Function: fine")
P("jac_dropout_train", T, "ga.jacobian(nn.Dropout(0.5), torch.ones(6, dtype=D))",
  "is_diag_02(r)", "one evaluation: diagonal with entries 0 or 2 (one mask)", group="misuse")
P("jac_dropout_train_fwd", T, "ga.jacobian(nn.Dropout(0.5), torch.ones(6, dtype=D), method='forward')",
  "is_diag_02(r)", "forward mode eagerly: one evaluation, one mask", group="misuse")
P("jac_dropout_train_fd", T,
  "ga.jacobian(nn.Dropout(0.5), torch.ones(6, dtype=D), method='finite-difference')",
  "(len(W) > 0 and bool(torch.isnan(r).any())) or is_diag_02(r)",
  "a random function: differences of different masks are not resolved (NaN with a warning), "
  "never confident wrong numbers", group="misuse", keys=("random", "resolve"))
P("jac_batchnorm_train", T, "(lambda bn: ga.jacobian(bn, XB[:, :2].contiguous()))(bn_train())",
  "close(r, taj(bn_train(), XB[:, :2].contiguous()), rtol=1e-7, atol=1e-9)",
  "torch.autograd.functional.jacobian of the same batch norm in training mode", group="misuse")
E("jac_method_bad", T, "ga.jacobian(torch.sin, x3, method='backward')", ("method",), group="options")
E("jac_method_none", T, "ga.jacobian(torch.sin, x3, method=None)", ("method",), group="options")
E("jac_method_case", T, "ga.jacobian(torch.sin, x3, method='Reverse')", ("method",), group="options")
E("jac_strategy_contradict", T, "ga.jacobian(torch.sin, x3, strategy='forward-mode', method='reverse')",
  ("strategy", "method"), group="options")
E("jac_strategy_bad", T, "ga.jacobian(torch.sin, x3, strategy='forward')", ("strategy",),
  group="options")
P("jac_strategy_forward", T, "ga.jacobian(mix, x3, strategy='forward-mode')",
  "close(r, jr(mix, x3))", "jacrev", group="options")
E("jac_create_graph_int", T, "ga.jacobian(torch.sin, x3, create_graph=1)", ("create_graph",),
  group="options")
E("jac_strict_int", T, "ga.jacobian(torch.sin, x3, strict=1)", ("strict",), group="options")
P("jac_strict_np_bool", T, "ga.jacobian(mix, x3, strict=np.bool_(False))", "close(r, jr(mix, x3))",
  "docstring: NumPy's bool is accepted", group="options")
E("jac_vectorize_str", T, "ga.jacobian(torch.sin, x3, vectorize='auto')", ("vectorize",),
  group="options")
E("jac_certify_no_sparsity", T, "ga.jacobian(torch.sin, x3, certify=2)", ("certify", "sparsity"),
  group="options")
E("jac_certify_neg", T, "ga.jacobian(stencil, x5, sparsity=tri(5), certify=-1)", ("certify",),
  group="options")
E("jac_certify_float", T, "ga.jacobian(stencil, x5, sparsity=tri(5), certify=1.5)", ("certify",),
  group="options")
E("jac_fd_create_graph", T, "ga.jacobian(torch.sin, x3, method='finite-difference', create_graph=True)",
  ("create_graph", "finite"), group="options")
E("jac_fd_strict", T, "ga.jacobian(torch.sin, x3, method='finite-difference', strict=True)",
  ("strict", "finite"), group="options")
E("jac_fwd_strict_cg", T, "ga.jacobian(torch.sin, x3, method='forward', strict=True, create_graph=True)",
  ("forward", "strict", "create_graph"), group="options")

# ---------------------------------------------------------------- jacobian: tuples
P("jac_tuple_in", T, "ga.jacobian(lambda a, b: a * b.sum(), (x3, v3))",
  "close(r, taj(lambda a, b: a * b.sum(), (x3, v3)))", "taj's nesting and values",
  group="layout")
P("jac_tuple_out", T, "ga.jacobian(lambda t: (t.sin(), t.sum()), x3)",
  "close(r, taj(lambda t: (t.sin(), t.sum()), x3))", "taj's nesting and values", group="layout")
P("jac_tuple_both", T, "ga.jacobian(lambda a, b: (a * b, (a ** 2).sum() + b[0]), (x3, v3))",
  "close(r, taj(lambda a, b: (a * b, (a ** 2).sum() + b[0]), (x3, v3)))", "taj", group="layout")
P("jac_tuple_one", T, "ga.jacobian(lambda a: a * 2, (x3,))",
  "close(r, taj(lambda a: a * 2, (x3,)))", "taj: a 1-tuple gives (J,)", group="layout")

# ---------------------------------------------------------------- jacobian: create_graph
P("jac_hessian_via_cg", T,
  "ga.jacobian(lambda t: ga.jacobian(lambda s: (s ** 3).sum() * s[0], t, create_graph=True), x3)",
  "close(r, hessian(lambda s: (s ** 3).sum() * s[0])(x3))", "torch.func.hessian", group="compose")
P("jac_cg_requires_grad", T, "ga.jacobian(torch.sin, x3.clone().requires_grad_(), create_graph=True)",
  "r.requires_grad and close(r, torch.diag(torch.cos(x3)))", "differentiable, diag(cos x)",
  group="compose")
P("jac_no_cg_plain", T, "ga.jacobian(torch.sin, x3.clone().requires_grad_())",
  "not r.requires_grad and r.grad_fn is None and close(r, torch.diag(torch.cos(x3)))",
  "create_graph=False: a plain tensor (docstring)", group="compose")
P("jac_cg_forward", T,
  "ga.jacobian(lambda t: ga.jacobian(lambda s: (s ** 3).sum(), t, create_graph=True, method='forward'), x3)",
  "close(r, torch.diag(6 * x3))", "Hessian diag(6x) by hand (forward mode records its tangents)",
  group="compose")
P("jac_cg_captured_param", T, "cg_param()", "close(r[0], r[1])",
  "grad of a function of J in a module's weight = the same through taj(create_graph=True)",
  group="compose")

# ---------------------------------------------------------------- jacobian: batch_dim
P("jac_bd0", T, "ga.jacobian(mix, XB, batch_dim=0)", "close(r, vmap(jacrev(mix))(XB))",
  "vmap(jacrev(fn)) (docstring)", group="options")
P("jac_bd1", T, "ga.jacobian(mix, XB.t(), batch_dim=1)",
  "close(r, vmap(jacrev(mix), in_dims=1)(XB.t()))", "vmap(jacrev(fn), in_dims=1)", group="options")
P("jac_bd_neg", T, "ga.jacobian(mix, XB.t(), batch_dim=-1)",
  "close(r, vmap(jacrev(mix), in_dims=1)(XB.t()))",
  "-1 is the last dimension, as vmap's in_dims; or a refusal naming batch_dim", group="options",
  either=True, keys=("batch_dim",))
E("jac_bd_oob", T, "ga.jacobian(mix, XB, batch_dim=2)", ("batch_dim",), group="options")
E("jac_bd_float", T, "ga.jacobian(mix, XB, batch_dim=0.0)", ("batch_dim",), group="options")
E("jac_bd_bool", T, "ga.jacobian(mix, XB, batch_dim=True)", ("batch_dim",), group="options")
E("jac_bd_sparsity", T, "ga.jacobian(torch.sin, XB, batch_dim=0, sparsity=tri(3))",
  ("batch_dim", "sparsity"), group="options")
E("jac_bd_create_graph", T, "ga.jacobian(mix, XB, batch_dim=0, create_graph=True)",
  ("batch_dim", "create_graph"), group="options")
E("jac_bd_strict", T, "ga.jacobian(mix, XB, batch_dim=0, strict=True)", ("batch_dim", "strict"),
  group="options")
E("jac_bd_tuple", T, "ga.jacobian(lambda a, b: a * b, (XB, XB), batch_dim=0)",
  ("batch_dim", "tuple", "tensor"), group="options")
P("jac_bd_item", T, "ga.jacobian(fn_item, XB, batch_dim=0)",
  "close(r, torch.stack([taj(fn_item, XB[i]) for i in range(4)]))",
  "docstring: .item() per sample falls back to a loop; taj per sample", group="options")
E("jac_bd_item_vectorize", T, "ga.jacobian(fn_item, XB, batch_dim=0, vectorize=True)",
  ("vectorize", "batch"), allow=(ga.VectorizationError,),
  oracle="VectorizationError (docstring, batch_dim)", group="options")
P("jac_bd_empty", T, "ga.jacobian(mix, torch.empty(0, 3, dtype=D), batch_dim=0)",
  "r.shape == (0, 2, 3)",
  "shape (0, 2, 3), or a refusal; torch's own vmap(jacrev(mix)) over 0 samples raises "
  "IndexError('select(): index 0 out of range ...'), and the docstring defines batch_dim as "
  "that computation, so torch's error is accepted too [oracle fixed after the run: it said "
  "vmap gives (0, 2, 3)]",
  group="options", either=True, allow=(IndexError,), keys=("batch_dim", "empty", "sample", "select"))
P("jac_bd_scalar_samples", T, "ga.jacobian(torch.sin, x3, batch_dim=0)",
  "close(r, torch.cos(x3))", "0-d samples: vmap(jacrev(sin))(x) = cos(x)", group="options")

# ---------------------------------------------------------------- jacobian: sparsity
P("jac_sparsity_tri", T, "ga.jacobian(stencil, x5, sparsity=tri(5))",
  "r.layout == torch.sparse_coo and close(r, stencil_J(x5))", "tridiagonal J by hand, COO",
  group="layout")
P("jac_sparsity_coo", T, "ga.jacobian(stencil, x5, sparsity=coo(tri(5)))",
  "r.layout == torch.sparse_coo and close(r, stencil_J(x5))", "same, COO pattern", group="layout")
P("jac_sparsity_csr", T, "ga.jacobian(stencil, x5, sparsity=csr(tri(5)))",
  "r.layout == torch.sparse_coo and close(r, stencil_J(x5))", "same, CSR pattern", group="layout")
P("jac_sparsity_sj", T, "ga.jacobian(stencil, x5, sparsity=ga.SparseJacobian(tri(5)))",
  "close(r, stencil_J(x5))", "same, a SparseJacobian", group="layout")
P("jac_sparsity_nd", T,
  "ga.jacobian(torch.sin, X23, sparsity=torch.eye(6, dtype=torch.bool).reshape(2, 3, 2, 3))",
  "close(r, jr(torch.sin, X23))", "pattern y.shape + x.shape; jacrev", group="layout")
E("jac_sparsity_missing", T, "ga.jacobian(stencil, x5, sparsity=torch.eye(5, dtype=torch.bool), certify=3)",
  ("pattern", "non-zero", "nonzero", "certif", "miss"), group="values",
  oracle="CertificateError (a ValueError): the pattern misses the off-diagonals")
E("jac_sparsity_wrong_shape", T, "ga.jacobian(stencil, x5, sparsity=tri(4))",
  ("sparsity", "shape", "pattern"), group="options")
E("jac_sparsity_float", T, "ga.jacobian(stencil, x5, sparsity=tri(5, D))",
  ("bool", "sparsity", "pattern", "dtype"), group="options")
E("jac_sparsity_fd", T, "ga.jacobian(stencil, x5, sparsity=tri(5), method='finite-difference')",
  ("method", "sparsity", "finite"), group="options")
E("jac_sparsity_tuple", T, "ga.jacobian(lambda a, b: a * b, (x3, v3), sparsity=tri(3))",
  ("sparsity", "tuple", "single"), group="options")
E("jac_sparsity_all_false", T, "ga.jacobian(stencil, x5, sparsity=torch.zeros(5, 5, dtype=torch.bool))",
  ("pattern", "False", "empty", "sparsity"), group="options")
E("jac_sparsity_in_vmap", T, "vmap(lambda t: ga.jacobian(stencil, t, sparsity=tri(5)))(rn(2, 5))",
  ("sparsity", "vmap"), group="compose")
E("jac_strict_in_grad", T, "grad(lambda t: ga.jacobian(torch.sin, t, strict=True).sum())(x3)",
  ("strict", "grad"), group="compose")
P("jac_sparsity_huge", T,
  "ga.jacobian(torch.sin, torch.linspace(0, 1, 10 ** 6, dtype=D), sparsity=diag_pattern(10 ** 6))",
  "r.layout == torch.sparse_coo and r.shape == (10 ** 6, 10 ** 6) and r._nnz() == 10 ** 6 "
  "and torch.allclose(r.coalesce().values(), torch.cos(torch.linspace(0, 1, 10 ** 6, dtype=D)))",
  "diag(cos x) with 10⁶ entries, in O(nnz) memory", group="memory")

# ---------------------------------------------------------------- jacobian: composition
P("jac_in_vmap", T, "vmap(lambda t: ga.jacobian(mix, t))(XB)", "close(r, vmap(jacrev(mix))(XB))",
  "vmap(jacrev)", group="compose")
P("jac_in_grad", T, "grad(lambda t: ga.jacobian(mix, t).pow(2).sum())(x3)",
  "close(r, grad(lambda t: jacrev(mix)(t).pow(2).sum())(x3))", "grad over jacrev", group="compose")
P("jac_in_jacfwd", T, "jacfwd(lambda t: ga.jacobian(mix, t))(x3)",
  "close(r, jacfwd(jacrev(mix))(x3))", "jacfwd(jacrev)", group="compose")
P("jac_fwd_in_jacrev", T, "jacrev(lambda t: ga.jacobian(mix, t, method='forward'))(x3)",
  "close(r, jacrev(jacfwd(mix))(x3))", "jacrev(jacfwd)", group="compose")
P("jac_in_hessian", T, "hessian(lambda t: ga.jacobian(energy, t).sum())(x5)",
  "close(r, hessian(lambda t: jacrev(energy)(t).sum())(x5))", "hessian over jacrev",
  group="compose")
P("jac_fd_in_grad", T, "grad(lambda t: ga.jacobian(torch.sin, t, method='finite-difference').sum())(x3)",
  "close(r, -torch.sin(x3), rtol=1e-6, atol=1e-8)",
  "d/dx Σ cos x = -sin x (the difference quotient's derivative, docstring)", group="compose")
P("jac_fwd_in_vmap", T, "vmap(lambda t: ga.jacobian(mix, t, method='forward'))(XB)",
  "close(r, vmap(jacfwd(mix))(XB))", "vmap(jacfwd)", group="compose")
P("jac_complex_in_vmap", T, "vmap(lambda z: ga.jacobian(lambda w: w * w, z))(Z23)",
  "close(r, torch.stack([torch.diag(torch.conj(2 * Z23[i])) for i in range(2)]))",
  "conj(2z) per sample", group="compose")
P("jac_functional_call_grad", T, "fcall_grad(True)", "close(r, fcall_grad(False))",
  "grad over parameters through functional_call, against jacrev", group="compose")
P("jac_vmap_batch_dim", T, "vmap(lambda t: ga.jacobian(mix, t, batch_dim=0))(XB.reshape(2, 2, 3))",
  "close(r, vmap(vmap(jacrev(mix)))(XB.reshape(2, 2, 3)))",
  "docstring: jacobian (batch_dim too) composes with vmap", group="compose")
P("jac_under_no_grad", T, "under_no_grad(lambda: ga.jacobian(mix, x3))", "close(r, jr(mix, x3))",
  "docstring: computed under no_grad", group="compose")
P("jac_under_inference", T, "under_inference(lambda: ga.jacobian(mix, x3))",
  "close(r, jr(mix, x3))", "docstring: computed under inference_mode", group="compose")
P("jac_inference_x", T, "ga.jacobian(mix, inf_tensor(x3))", "close(r, jr(mix, x3))",
  "docstring: an inference tensor is copied", group="compose")
P("jac_auto_wide", T, "ga.jacobian(wide, x3)", "close(r, jr(wide, x3))",
  "jacrev (auto picks forward for a wide output)", group="options")
P("jac_auto_remembered", T, "remembered_auto()", "close(r[0], r[2]) and close(r[1], r[3])",
  "taj at both points: the remembered forward choice must not change the values "
  "(output size depends on x[0])", group="options")

# ---------------------------------------------------------------- jacobian: side effects
for _m in ("reverse", "forward", "finite-difference"):
    P(f"jac_x_untouched_{_m}", T, f"side_jac({_m!r})",
      "r['grad'] is None and r['same'] and r['rg'] and not r['hooks'] and close(r['J'], jr(mix, x3), rtol=1e-6, atol=1e-8)",
      "x keeps no .grad, no hooks, same values and requires_grad (docstring: never modified)",
      group="side-effects")
for _m in ("reverse", "forward"):
    P(f"jac_captured_leaf_{_m}", T, f"captured_jac({_m!r})",
      "r['wgrad'] is None and not r['hooks'] and close(r['J'], torch.diag(torch.tensor([1.5, -0.5, 2.0], dtype=D)))",
      "a captured leaf w gets no .grad (a helper leaves none); J = diag(w)", group="side-effects")
for _m in ("auto", "finite-difference"):
    P(f"jac_inplace_fn_{_m}", T, f"inplace_jac({_m!r})",
      "r['same'] and close(r['J'], 2 * torch.eye(3, dtype=D), rtol=1e-8)",
      "fn receives private copies (docstring): x unchanged, J = 2 I as jacrev(lambda t: t.mul_(2))",
      group="side-effects", either=True, allow=(RuntimeError,), keys=("in-place", "inplace"))

# ---------------------------------------------------------------- jacobian: memory
E("jac_huge_refused", T, "ga.jacobian(lambda t: t * 2, torch.zeros(200000, dtype=D))",
  ("memory", "GB"), group="memory", oracle="MemoryError with an estimate (320 GB), nothing allocated")
E("jac_huge_fd_refused", T,
  "ga.jacobian(lambda t: t * 2, torch.zeros(60000, dtype=D), method='finite-difference')",
  ("memory", "GB"), group="memory", oracle="MemoryError with an estimate")
P("jac_1gb", T, "ga.jacobian(lambda t: t * 2, torch.zeros(11000, dtype=D))",
  "r.shape == (11000, 11000) and bool((r.diagonal() == 2).all()) and float(r.sum()) == 22000.0",
  "2 I; the Jacobian is 0.97 GB, so under a 4 GB cap it fits unless the method needs > 4x it",
  group="memory", either=True, keys=("memory",))

# ---------------------------------------------------------------- backward_vjp
T = "backward_vjp"
P("bv_basic", T, "ga.backward_vjp(lambda t: t ** 2, x3, v3)", "close(r, 2 * x3 * v3)", "2 x v")
P("bv_scalar_number_v", T, "ga.backward_vjp(lambda t: (t ** 2).sum(), x3, 1.0)",
  "close(r, 2 * x3)", "v a number for a scalar output")
P("bv_number_v_vector_y", T, "ga.backward_vjp(lambda t: t ** 2, x3, 2.0)",
  "close(r, 4 * x3)", "a number v broadcast over y, or a refusal naming v / shape",
  either=True, keys=("v", "shape"))
E("bv_v_wrong_shape", T, "ga.backward_vjp(lambda t: t ** 2, x3, torch.ones(4, dtype=D))",
  ("v", "shape"))
E("bv_v_transposed", T, "ga.backward_vjp(lambda t: t * 2, X23, torch.ones(3, 2, dtype=D))",
  ("v", "shape"))
E("bv_x_int", T, "ga.backward_vjp(lambda t: t * 2, torch.arange(3), torch.ones(3))",
  ("x", "dtype", "float", "integer"), group="dtype")
E("bv_x_list", T, "ga.backward_vjp(lambda t: t * 2, [1.0, 2.0], torch.ones(2))", ("x", "tensor"))
E("bv_v_list", T, "ga.backward_vjp(lambda t: t * 2, x3, [1.0, 2.0, 3.0])", ("v", "tensor"))
E("bv_fn_tuple", T, "ga.backward_vjp(lambda t: (t, t), x3, v3)", ("tuple", "fn"))
E("bv_no_dependence", T, "ga.backward_vjp(lambda t: torch.ones(3, dtype=D), x3, v3)",
  ("require", "depend", "grad"))
E("bv_swapped", T, "ga.backward_vjp(x3, lambda t: t * 2, v3)", ("fn", "callable", "x"))
P("bv_complex", T, "ga.backward_vjp(lambda z: z * z, z3, vz3)", "close(r, vjp_ref(lambda z: z * z, z3, vz3))",
  "torch.func.vjp: v·conj(2z)", group="dtype")
P("bv_complex_real_v", T, "ga.backward_vjp(lambda z: z * z, z3, torch.ones(3, dtype=D))",
  "close(r, vjp_ref(lambda z: z * z, z3, torch.ones(3, dtype=C)))",
  "torch refuses a real v for a complex output ('same dtype'): either v cast to complex, or a "
  "refusal naming v / dtype", group="dtype", either=True, keys=("v", "dtype", "complex"))
P("bv_nan_v", T, "ga.backward_vjp(lambda t: t * 2, x3, torch.tensor([NAN, 1.0, 1.0], dtype=D))",
  "close(r, torch.tensor([NAN, 2.0, 2.0], dtype=D))", "2 v, NaN where v is NaN", group="values")
P("bv_f16", T, "ga.backward_vjp(torch.sin, x3.half(), v3.half())",
  "r.dtype == torch.float16 and close(r, vjp_ref(torch.sin, x3.half(), v3.half()), rtol=1e-3, atol=1e-3)",
  "torch.func.vjp in float16", group="dtype")
P("bv_bf16", T, "ga.backward_vjp(torch.sin, x3.bfloat16(), v3.bfloat16())",
  "r.dtype == torch.bfloat16 and close(r, vjp_ref(torch.sin, x3.bfloat16(), v3.bfloat16()), rtol=1e-2, atol=1e-2)",
  "torch.func.vjp in bfloat16", group="dtype")
P("bv_0d", T, "ga.backward_vjp(torch.sin, torch.tensor(0.5, dtype=D), torch.tensor(2.0, dtype=D))",
  "r.shape == () and close(r, 2 * torch.cos(torch.tensor(0.5, dtype=D)))", "2 cos(0.5)",
  group="layout")
P("bv_empty", T, "ga.backward_vjp(torch.sin, torch.empty(0, dtype=D), torch.empty(0, dtype=D))",
  "r.shape == (0,)", "an empty gradient; or a clear refusal", group="layout", either=True,
  keys=("empty", "x"))
P("bv_expanded_x", T, "ga.backward_vjp(lambda t: t * AR6, XE, torch.ones(3, 2, dtype=D))",
  "r.shape == (3, 2) and close(r, AR6)", "x.grad of shape x.shape: ∂/∂x of Σ x·AR6 = AR6",
  group="layout")
P("bv_meta", T, "ga.backward_vjp(torch.sin, torch.empty(3, device='meta'), torch.empty(3, device='meta'))",
  "r.device.type == 'meta' and r.shape == (3,)", "a meta gradient, or a refusal naming meta",
  group="device", either=True, keys=("meta",))
P("bv_side_effects", T, "bv_side()",
  "r['xgrad'] is None and r['wgrad'] is None and r['same'] and not r['hooks'] and "
  "close(r['g'], v3 * torch.tensor([1.5, -0.5, 2.0], dtype=D))",
  "x untouched (docstring); a captured leaf w gets no .grad; g = v·w", group="side-effects")
P("bv_in_grad", T, "grad(lambda t: ga.backward_vjp(torch.sin, t, 1.0))(torch.tensor(0.5, dtype=D))",
  "close(r, -torch.sin(torch.tensor(0.5, dtype=D)))", "docstring example: -sin(0.5)",
  group="compose")
P("bv_in_vmap_v", T, "vmap(lambda v: ga.backward_vjp(mix, x3, v))(rn(4, 2, seed=5))",
  "close(r, vmap(lambda v: vjp_ref(mix, x3, v))(rn(4, 2, seed=5)))", "vmap over v of torch.func.vjp",
  group="compose")
P("bv_in_jacrev", T, "jacrev(lambda t: ga.backward_vjp(mix, t, torch.tensor([1.0, -1.0], dtype=D)))(x3)",
  "close(r, jacrev(lambda t: vjp_ref(mix, t, torch.tensor([1.0, -1.0], dtype=D)))(x3))",
  "jacrev of torch.func.vjp", group="compose")
P("bv_in_hessian", T, "hessian(lambda t: ga.backward_vjp(energy, t, 1.0).sum())(x5)",
  "close(r, hessian(lambda t: jacrev(energy)(t).sum())(x5))", "third derivatives by torch.func",
  group="compose")
P("bv_under_no_grad", T, "under_no_grad(lambda: ga.backward_vjp(lambda t: t ** 2, x3, v3))",
  "close(r, 2 * x3 * v3)", "2 x v under no_grad", group="compose")

# ---------------------------------------------------------------- contract
T = "contract"
P("ct_basic", T, "ga.contract(v3[:2], A34[:2])", "close(r, v3[:2] @ A34[:2])", "vᵀJ")
P("ct_nd", T, "ga.contract(X23, rn(2, 3, 4, seed=6))",
  "close(r, torch.einsum('ij,ijk->k', X23, rn(2, 3, 4, seed=6)))", "einsum over y's dims")
P("ct_numpy", T, "ga.contract(np.array([1.0, 0.0]), np.array([[1.0, 3.0], [2.0, 4.0]]))",
  "isinstance(r, torch.Tensor) and close(r, torch.tensor([1.0, 3.0], dtype=D))", "docstring example with arrays")
P("ct_mixed_dtype", T, "ga.contract(v3.float(), rn(3, 2))",
  "r.dtype == D and close(r, v3.float().double() @ rn(3, 2))", "promoted to float64", group="dtype")
P("ct_complex", T, "ga.contract(vz3, Z23.t())",
  "close(r, (vz3[:, None] * Z23.t()).sum(0))", "Σ v_i J_ij, no conjugation (docstring formula)",
  group="dtype")
P("ct_int", T, "ga.contract(torch.tensor([1, 2]), torch.tensor([[1, 2], [3, 4]]))",
  "r.dtype == torch.int64 and torch.equal(r, torch.tensor([7, 10]))", "integer formula",
  group="dtype")
P("ct_sparse_coo", T, "ga.contract(v3, A34.to_sparse())", "close(r, v3 @ A34)",
  "COO J contracted", group="layout")
P("ct_sparse_csr", T, "ga.contract(v3, A34.to_sparse_csr())", "close(r, v3 @ A34)",
  "CSR J contracted", group="layout")
P("ct_sparse_v", T, "ga.contract(v3.to_sparse(), A34)", "close(r, v3 @ A34)",
  "a sparse v is densified", group="layout")
P("ct_noncontig", T, "ga.contract(v3, A34.t().contiguous().t())", "close(r, v3 @ A34)",
  "strides do not matter", group="layout")
P("ct_0d_v", T, "ga.contract(torch.tensor(2.0, dtype=D), x3)", "close(r, 2 * x3)",
  "scalar y: J has shape x.shape", group="layout")
P("ct_nan_dense", T, "ga.contract(torch.tensor([NAN, 1.0], dtype=D), torch.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=D))",
  "close(r, torch.tensor([NAN, NAN], dtype=D))", "IEEE: NaN·0 = NaN in Σ v_i J_ij", group="values")
P("ct_huge_sparse", T,
  "ga.contract(torch.ones(10 ** 7, dtype=D), torch.sparse_coo_tensor(torch.tensor([[0, 9999999], [5, 9999998]]), torch.tensor([2.0, 3.0], dtype=D), (10 ** 7, 10 ** 7)))",
  "r.shape == (10 ** 7,) and float(r[5]) == 2.0 and float(r[9999998]) == 3.0 and float(r.abs().sum()) == 5.0",
  "two entries of a 10⁷ × 10⁷ COO J, contracted without densifying", group="memory")
E("ct_shape_mismatch", T, "ga.contract(torch.ones(4, dtype=D), A34)", ("shape", "jac", "v"))
E("ct_meta", T, "ga.contract(torch.empty(3, device='meta'), torch.empty(3, 4, device='meta'))",
  ("meta",), group="device")
E("ct_list_v", T, "ga.contract([1.0, 2.0, 3.0], A34)", ("v", "tensor", "array"))
E("ct_swapped", T, "ga.contract(A34, v3)", ("shape", "jac", "v"))
P("ct_in_grad", T, "grad(lambda J: ga.contract(v3, J).pow(2).sum())(A34)",
  "close(r, grad(lambda J: (v3 @ J).pow(2).sum())(A34))", "grad in jac, not zero (docstring)",
  group="compose")
P("ct_in_vmap", T, "vmap(lambda v: ga.contract(v, A34))(rn(5, 3, seed=7))",
  "close(r, rn(5, 3, seed=7) @ A34)", "batched vᵀJ", group="compose")

# ---------------------------------------------------------------- fd_step, fd_tolerance, backward_rtol
T = "fd_step"
P("fds_doc", T, "ga.fd_step(torch.tensor([0.0, 10.0], dtype=D))",
  "close(r, torch.finfo(D).eps ** (1 / 3) * torch.tensor([1.0, 10.0], dtype=D), rtol=1e-12)",
  "eps^(1/3)·max(1, |x|)")
P("fds_f32", T, "ga.fd_step(torch.tensor([-3.0, 0.5]))",
  "r.dtype == S and close(r, torch.finfo(S).eps ** (1 / 3) * torch.tensor([3.0, 1.0]), rtol=1e-6)",
  "float32 eps", group="dtype")
P("fds_complex", T, "ga.fd_step(torch.tensor([3 + 4j, 0.1j], dtype=C))",
  "not r.is_complex() and close(r, torch.finfo(D).eps ** (1 / 3) * torch.tensor([5.0, 1.0], dtype=D), rtol=1e-12)",
  "real: eps(float64)^(1/3)·max(1, |z|)", group="dtype")
P("fds_f16", T, "ga.fd_step(torch.tensor([0.0, 100.0], dtype=torch.float16))",
  "close(r.double(), (2.0 ** -10) ** (1 / 3) * torch.tensor([1.0, 100.0], dtype=D), rtol=2e-3)",
  "float16 eps 2^-10", group="dtype")
P("fds_bf16", T, "ga.fd_step(torch.tensor([0.0, 100.0], dtype=torch.bfloat16))",
  "close(r.double(), (2.0 ** -7) ** (1 / 3) * torch.tensor([1.0, 100.0], dtype=D), rtol=1e-2)",
  "bfloat16 eps 2^-7", group="dtype")
P("fds_empty", T, "ga.fd_step(torch.empty(0, 3, dtype=D))", "r.shape == (0, 3)", "empty, same shape",
  group="layout")
P("fds_1e300", T, "ga.fd_step(torch.tensor([1e300, -1e-300], dtype=D))",
  "close(r, torch.finfo(D).eps ** (1 / 3) * torch.tensor([1e300, 1.0], dtype=D), rtol=1e-12)",
  "formula", group="values")
E("fds_int", T, "ga.fd_step(torch.arange(3))", ("x", "float", "dtype", "integer"), group="dtype")
E("fds_number", T, "ga.fd_step(2.0)", ("tensor", "x"))
T = "fd_tolerance"
P("fdt_values", T, "(ga.fd_tolerance(torch.float64), ga.fd_tolerance(torch.float32))",
  "abs(r[0] - 100 * torch.finfo(D).eps ** (2 / 3)) < 1e-12 and abs(r[1] - 100 * torch.finfo(S).eps ** (2 / 3)) < 1e-7",
  "100·eps^(2/3)")
P("fdt_complex64", T, "ga.fd_tolerance(torch.complex64)",
  "abs(r - 100 * torch.finfo(S).eps ** (2 / 3)) < 1e-7", "complex64 = float32's", group="dtype")
P("fdt_bf16", T, "ga.fd_tolerance(torch.bfloat16)", "abs(r - 100 * (2.0 ** -7) ** (2 / 3)) < 1e-6",
  "100·eps^(2/3) for bfloat16", group="dtype")
E("fdt_str", T, "ga.fd_tolerance('float64')", ("dtype",))
E("fdt_int_dtype", T, "ga.fd_tolerance(torch.int64)", ("dtype", "float"), group="dtype")
E("fdt_tensor", T, "ga.fd_tolerance(x3)", ("dtype",))
T = "backward_rtol"
P("br_values", T, "[ga.backward_rtol(d) for d in (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.complex128, torch.complex64)]",
  "r == [1e-10, 1e-5, 1e-3, 1.6e-2, 1e-10, 1e-5]", "docstring values")
E("br_str", T, "ga.backward_rtol('float32')", ("dtype",))
E("br_bool", T, "ga.backward_rtol(torch.bool)", ("dtype", "float"), group="dtype")
E("br_none", T, "ga.backward_rtol(None)", ("dtype",))

# ---------------------------------------------------------------- compare_vjp
T = "compare_vjp"
P("cv_right", T, "ga.compare_vjp(lambda t: t ** 2, x3, v3)",
  "r.agree and r.status == 'agree' and close(r.backward, 2 * x3 * v3)", "torch's pow backward is right")
P("cv_wrong_factor", T, "ga.compare_vjp(SquareHalf.apply, x3, v3)",
  "not r.agree and r.status == 'DISAGREE' and close(r.reference, 2 * x3 * v3, rtol=1e-6)",
  "backward g·x against 2x: DISAGREE")
P("cv_ref_forward", T, "ga.compare_vjp(mix, x3, torch.tensor([1.0, -2.0], dtype=D), reference='forward')",
  "r.agree and close(r.reference, vjp_ref(mix, x3, torch.tensor([1.0, -2.0], dtype=D)))", "forward-mode Jacobian")
P("cv_ref_reverse", T, "ga.compare_vjp(mix, x3, torch.tensor([1.0, -2.0], dtype=D), reference='reverse')",
  "r.agree", "consistency")
P("cv_ref_numpy_wrong", T,
  "ga.compare_vjp(lambda t: t ** 2, x3, v3, reference=np.diag(x3.numpy()))",
  "not r.agree and r.status == 'DISAGREE'", "a hand Jacobian diag(x) ≠ diag(2x): disagree")
P("cv_ref_numpy_right", T,
  "ga.compare_vjp(lambda t: t ** 2, torch.tensor([1.0, 2.0], dtype=D), torch.tensor([100.0, 1.0]), reference=np.array([[2.0, 0.0], [0.0, 4.0]]))",
  "r.agree and close(r.backward, torch.tensor([200.0, 4.0], dtype=D))", "docstring example")
E("cv_ref_wrong_shape", T, "ga.compare_vjp(lambda t: t ** 2, x3, v3, reference=torch.eye(2, dtype=D))",
  ("reference", "shape", "jacobian"))
P("cv_ref_callable", T, "ga.compare_vjp(lambda t: t ** 2, x3, v3, reference=lambda v: 2 * x3 * v)",
  "r.agree", "a VJP function, right")
E("cv_ref_callable_shape", T, "ga.compare_vjp(lambda t: t ** 2, x3, v3, reference=lambda v: torch.ones(5, dtype=D))",
  ("reference", "shape"))
E("cv_ref_unknown_str", T, "ga.compare_vjp(lambda t: t ** 2, x3, v3, reference='backward')",
  ("reference",), group="options")
E("cv_ref_int", T, "ga.compare_vjp(lambda t: t ** 2, x3, v3, reference=3)", ("reference",),
  group="options")
P("cv_output_tensor", T, "cv_output_tensor()", "r['r'].agree and r['xgrad'] is None",
  "an output tensor with a Jacobian reference; x.grad restored (None)", group="side-effects")
E("cv_output_tensor_fd", T, "(lambda x: ga.compare_vjp(x ** 2, x, v3))(x3.clone().requires_grad_())",
  ("reference", "function"), group="misuse")
E("cv_x_empty", T, "ga.compare_vjp(torch.sin, torch.empty(0, dtype=D), torch.empty(0, dtype=D))",
  ("x", "empty"), group="layout")
E("cv_in_grad", T, "grad(lambda t: ga.compare_vjp(torch.sin, t, torch.ones(3, dtype=D)).backward.sum())(x3)",
  ("grad", "transform"), group="compose")
E("cv_in_vmap", T, "vmap(lambda t: ga.compare_vjp(torch.sin, t, torch.ones(3, dtype=D)).backward)(XB)",
  ("vmap", "transform"), group="compose")
P("cv_nan_x", T, "ga.compare_vjp(torch.sin, torch.tensor([NAN, 1.0, 2.0], dtype=D), torch.ones(3, dtype=D))",
  "not r.agree and r.status == 'could not check'", "docstring: NaN inputs: could not check",
  group="values")
P("cv_relu_kink", T, "ga.compare_vjp(torch.relu, torch.tensor([0.0, 1.0, -1.0], dtype=D), torch.ones(3, dtype=D))",
  "r.status != 'DISAGREE'",
  "torch's relu backward (0 at the kink, a subgradient) is right: 'agree' or 'could not check', "
  "never a DISAGREE verdict", group="values")
P("cv_abs_kink", T, "ga.compare_vjp(torch.abs, torch.tensor([0.0, 1.0, -1.0], dtype=D), torch.ones(3, dtype=D))",
  "r.status != 'DISAGREE'", "abs' backward (sgn(0) = 0) is right; central difference is 0 too",
  group="values")
P("cv_f32", T, "ga.compare_vjp(torch.sin, x8.float(), torch.ones(8))", "r.agree",
  "float32 sin: agree", group="dtype")
P("cv_bf16", T, "ga.compare_vjp(torch.sin, x8.bfloat16(), torch.ones(8, dtype=torch.bfloat16))",
  "r.agree", "bfloat16 sin: torch's backward is right (within rounding)", group="dtype")
P("cv_f16_wrong", T, "ga.compare_vjp(SquareHalf.apply, x3.half(), torch.ones(3, dtype=torch.float16))",
  "not r.agree", "a factor 1/2 in float16 is far above rounding", group="dtype")
P("cv_complex", T, "ga.compare_vjp(lambda z: z * z, z3, vz3)",
  "r.agree and close(r.backward, vjp_ref(lambda z: z * z, z3, vz3))", "holomorphic z²: agree",
  group="dtype")
P("cv_complex_wrong", T, "ga.compare_vjp(ZSqBad.apply, z3, vz3)", "not r.agree",
  "backward g·2z misses the conjugate", group="dtype")
P("cv_complex_right_fn", T, "ga.compare_vjp(ZSq.apply, z3, vz3)", "r.agree",
  "backward g·conj(2z) is PyTorch's convention", group="dtype")
E("cv_rtol_neg", T, "ga.compare_vjp(torch.sin, x3, v3, rtol=-1.0)", ("rtol",), group="options")
E("cv_rtol_nan", T, "ga.compare_vjp(torch.sin, x3, v3, rtol=NAN)", ("rtol",), group="options")
E("cv_atol_str", T, "ga.compare_vjp(torch.sin, x3, v3, atol='1e-3')", ("atol",), group="options")
P("cv_grad_out_inplace", T, "cv_grad_out_inplace()", "r['v_same'] and not r['r'].agree",
  "docstring: v copied; the backward returns 2v for the identity: DISAGREE", group="side-effects")
P("cv_none_backward", T, "ga.compare_vjp(NoneBack.apply, x3, v3)", "not r.agree and r.note != ''",
  "docstring: None compared as zeros, said in note", group="misuse")
P("cv_under_no_grad", T, "under_no_grad(lambda: ga.compare_vjp(lambda t: t ** 2, x3, v3))",
  "r.agree", "docstring: works under no_grad", group="compose")
P("cv_side_effects", T, "cv_side()",
  "r['r'].agree and torch.equal(r['xgrad'], torch.ones(3, dtype=D)) and r['wgrad'] is None and r['same'] and not r['hooks']",
  "x.grad, values unchanged (docstring); a captured leaf gets no .grad", group="side-effects")
P("cv_number_v", T, "ga.compare_vjp(lambda t: (t ** 2).sum(), x3, 1.0)",
  "r.agree and close(r.backward, 2 * x3)", "number v for a scalar output")
E("cv_int_x", T, "ga.compare_vjp(lambda t: t * 2, torch.arange(3), torch.ones(3))",
  ("x", "integer", "dtype", "float"), group="dtype")
E("cv_meta", T, "ga.compare_vjp(torch.sin, torch.empty(3, device='meta'), torch.ones(3))",
  ("meta",), group="device")
E("cv_fn_not_callable", T, "ga.compare_vjp('sin', x3, v3)", ("fn",))
P("cv_sin_1e17", T, "ga.compare_vjp(torch.sin, torch.tensor([1e17, 0.5], dtype=D), torch.ones(2, dtype=D))",
  "r.status == 'could not check'", "finite differences cannot resolve sin at 1e17", group="values")
P("cv_large", T, "ga.compare_vjp(lambda t: t ** 2, torch.tensor([1e30, 2.0], dtype=D), torch.ones(2, dtype=D))",
  "r.status in ('agree', 'could not check')",
  "2x at 1e30 by both; or 'could not check' where an output so large that no step moves it "
  "(y[0] = 1e60 along x[1]) hides the other (VJPComparison.status docstring) [oracle fixed after the run]",
  group="values")
P("cv_tiny", T, "ga.compare_vjp(lambda t: t ** 3, torch.tensor([1e-300, 1e-310], dtype=D), torch.ones(2, dtype=D))",
  "r.agree", "3x² underflows to 0 in both", group="values")
P("cv_zero_v", T, "ga.compare_vjp(torch.sin, x3, torch.zeros(3, dtype=D))",
  "r.agree and close(r.backward, torch.zeros(3, dtype=D))", "v = 0: vᵀJ = 0", group="values")
P("cv_dropout_train", T, "ga.compare_vjp(nn.Dropout(0.5), torch.ones(64, dtype=D), torch.ones(64, dtype=D))",
  "r.status != 'DISAGREE'",
  "dropout's backward is right for the mask it drew; the reference replays the same random "
  "state (its values equal the backward's, as torch gives with the RNG state restored), so "
  "'agree' is right; a DISAGREE would blame a right backward [oracle fixed after the run]",
  group="misuse")

# ---------------------------------------------------------------- check_backward
T = "check_backward"
P("cb_right", T, "ga.check_backward(torch.sin, x8.clone().requires_grad_())",
  "bool(r) and r.status == 'agree'", "torch's sin backward is right")
P("cb_doc_square", T, "ga.check_backward(SquareHalf.apply, torch.tensor([1.0, -2.0, 3.0], requires_grad=True))",
  "not bool(r) and r.status == 'wrong' and r.pairs[0].pattern == 'factor'", "docstring example")
P("cb_sign", T, "ga.check_backward(SinNeg.apply, x8.clone().requires_grad_())",
  "r.status == 'wrong' and r.pairs[0].pattern == 'sign'", "-g cos: a sign bug")
P("cb_transposed", T, "ga.check_backward(MatT.apply, x3.clone().requires_grad_())",
  "r.status == 'wrong' and r.pairs[0].pattern == 'transposed'", "W g instead of Wᵀ g")
P("cb_one_entry", T, "ga.check_backward(OneOff.apply, x8.clone().requires_grad_())",
  "r.status == 'wrong' and r.pairs[0].n_wrong == 1 and r.pairs[0].worst[0].input_index == (3,)",
  "only entry (3, 3) is wrong by 1 %")
P("cb_none_return", T, "ga.check_backward(NoneBack.apply, x3.clone().requires_grad_())",
  "r.status == 'wrong' and r.pairs[0].pattern == 'zero'", "None for an input that matters: zero")
P("cb_nondeterministic", T, "ga.check_backward(Noisy.apply, x8.clone().requires_grad_())",
  "r.status == 'non-deterministic'", "docstring: differing backward runs: non-deterministic")
P("cb_bf16_rounding_bug", T, "ga.check_backward(BF16Back.apply, rn(64, dtype=S).requires_grad_())",
  "r.status == 'wrong'", "docstring: a backward rounding through bfloat16 is caught", group="dtype")
P("cb_f32_tanh", T, "ga.check_backward(torch.tanh, torch.tensor([-10.0, 0.5, 3.0], requires_grad=True))",
  "bool(r)", "docstring Notes: tanh at -10 in float32 is right", group="dtype")
P("cb_complex_skipped", T,
  "ga.check_backward(lambda a, z: a * z.real, x3.clone().requires_grad_(), z3.clone().requires_grad_())",
  "bool(r) and len(r.skipped) >= 1", "complex inputs are passed through and reported in skipped",
  group="dtype")
P("cb_int_arg", T, "ga.check_backward(lambda t, i: t[i] * 2, x8.clone().requires_grad_(), torch.tensor([0, 3, 3]))",
  "bool(r) and len(r.skipped) >= 1", "an index tensor passes through (skipped); backward right",
  group="dtype")
P("cb_nan_input", T, "ga.check_backward(torch.sin, torch.tensor([NAN, 1.0, 2.0], dtype=D, requires_grad=True))",
  "r.status == 'could-not-check'", "docstring: NaN inputs: could-not-check", group="values")
P("cb_relu_kink_fd", T,
  "ga.check_backward(torch.relu, torch.tensor([0.0, 1.0, -1.0], dtype=D, requires_grad=True), reference='finite-difference')",
  "r.status != 'wrong'", "torch's relu backward is right at the kink (a subgradient)",
  group="values")
P("cb_relu_kink_auto", T, "ga.check_backward(torch.relu, torch.tensor([0.0, 1.0, -1.0], dtype=D, requires_grad=True))",
  "bool(r)", "forward mode (auto) gives relu's same convention at 0", group="values")
P("cb_ste_expected", T,
  "ga.check_backward(STE.apply, torch.tensor([0.3, 1.7, -2.2], dtype=D, requires_grad=True), expected=lambda g, x: g)",
  "bool(r)", "the intended backward is the identity", group="options")
P("cb_ste_plain", T, "ga.check_backward(STE.apply, torch.tensor([0.3, 1.7, -2.2], dtype=D, requires_grad=True))",
  "r.status == 'wrong' and r.pairs[0].pattern == 'not-derivative'",
  "docstring: a gradient where the forward is flat: not-derivative", group="options")
E("cb_expected_wrong_shape", T,
  "ga.check_backward(STE.apply, torch.tensor([0.3, 1.7, -2.2], dtype=D, requires_grad=True), expected=lambda g, x: g[:2])",
  ("expected", "shape"), group="options")
P("cb_localize_false", T, "ga.check_backward(SquareHalf.apply, torch.tensor([1.0, -2.0, 3.0], requires_grad=True), localize=False)",
  "not bool(r) and len(r.pairs) == 0", "probes only: wrong, no pairs", group="options")
E("cb_figure_probes_only", "BackwardCheck.figure", "cb_figure_probes()",
  ("full", "Jacobian", "probe"), group="options")
P("cb_figure", "BackwardCheck.figure", "cb_figure()", "r == 'Figure'", "a matplotlib Figure",
  group="options")
P("cb_module", T, "ga.check_backward(lin_fixed(), rn(4, 3).requires_grad_())",
  "bool(r) and any('weight' in s for s in r.inputs)", "Linear: input and parameters checked",
  group="options")
P("cb_module_side_effects", T, "cb_module_side()",
  "bool(r['r']) and r['wgrad'] is None and r['bgrad'] is None and r['xgrad'] is None and not r['hooks'] and not r['mod_hooks']",
  "a checker leaves no .grad and no hooks on the module or x", group="side-effects")
P("cb_x_side_effects", T, "cb_x_side()", "bool(r['r']) and r['xgrad'] is None and r['same'] and r['rg']",
  "x untouched", group="side-effects")
P("cb_dropout_train", T, "ga.check_backward(nn.Dropout(0.5), torch.ones(32, dtype=D, requires_grad=True))",
  "r.status != 'wrong' or any(k in r.summary.lower() for k in ('random', 'dropout', 'determin', 'train'))",
  "dropout's backward is right for its mask; with the random state replayed 'agree' is right; "
  "a random forward must not be called a wrong backward without saying the forward is random "
  "[oracle fixed after the run]", group="misuse")
P("cb_batchnorm_train", T, "ga.check_backward(bn_train(), XB[:, :2].contiguous().requires_grad_())",
  "bool(r)", "batch norm's backward in training mode is right", group="misuse")
P("cb_bounded_wrong", T, "ga.check_backward(SinNeg.apply, rn(200).requires_grad_())",
  "r.status == 'wrong'", "200 × 200 > 16,384 entries: bounded localisation still says wrong",
  group="memory")
E("cb_no_requires_grad", T, "ga.check_backward(torch.sin, x3)", ("requires grad", "requires_grad", "require"),
  group="misuse")
E("cb_empty_input", T, "ga.check_backward(torch.sin, torch.empty(0, dtype=D, requires_grad=True))",
  ("empty",), group="layout")
E("cb_fn_tensor", T, "(lambda x: ga.check_backward(torch.sin(x), x))(x3.clone().requires_grad_())",
  ("fn", "callable"))
E("cb_probes_0", T, "ga.check_backward(torch.sin, x3.clone().requires_grad_(), probes=0)",
  ("probes",), group="options")
E("cb_probes_bool", T, "ga.check_backward(torch.sin, x3.clone().requires_grad_(), probes=True)",
  ("probes",), group="options")
E("cb_probes_float", T, "ga.check_backward(torch.sin, x3.clone().requires_grad_(), probes=2.0)",
  ("probes",), group="options")
E("cb_rtol_nan", T, "ga.check_backward(torch.sin, x3.clone().requires_grad_(), rtol=NAN)",
  ("rtol",), group="options")
E("cb_rtol_inf", T, "ga.check_backward(torch.sin, x3.clone().requires_grad_(), rtol=INF)",
  ("rtol",), group="options")
E("cb_rtol_str", T, "ga.check_backward(torch.sin, x3.clone().requires_grad_(), rtol='1e-5')",
  ("rtol",), group="options")
E("cb_localize_bad", T, "ga.check_backward(torch.sin, x3.clone().requires_grad_(), localize='partial')",
  ("localize",), group="options")
E("cb_reference_reverse", T, "ga.check_backward(torch.sin, x3.clone().requires_grad_(), reference='reverse')",
  ("reference",), group="options")
E("cb_parameters_int", T, "ga.check_backward(lin_fixed(), rn(4, 3), parameters=1)",
  ("parameters",), group="options")
E("cb_seed_huge", T, "ga.check_backward(torch.sin, x3.clone().requires_grad_(), seed=2 ** 64)",
  ("seed",), group="options")
E("cb_seed_str", T, "ga.check_backward(torch.sin, x3.clone().requires_grad_(), seed='0')",
  ("seed",), group="options")
E("cb_module_no_params", T, "ga.check_backward(lin_fixed(), rn(4, 3), parameters=False)",
  ("requires grad", "requires_grad", "require"), group="misuse")
E("cb_fwd_no_jvp", T, "ga.check_backward(SquareHalf.apply, x3.clone().requires_grad_(), reference='forward')",
  ("forward", "jvp"), group="options")
P("cb_custom_jvp", T, "ga.check_backward(SinRightJvp.apply, x8.clone().requires_grad_(), reference='forward')",
  "bool(r)", "a right backward and jvp", group="options")

# ---------------------------------------------------------------- SparseJacobian
T = "SparseJacobian"
P("sj_tri", T, "ga.SparseJacobian(tri(50))(stencil, torch.linspace(0, 1, 50, dtype=D))",
  "r.layout == torch.sparse_coo and close(r, stencil_J(torch.linspace(0, 1, 50, dtype=D)))",
  "tridiagonal J by hand")
P("sj_passes", T, "ga.SparseJacobian(tri(50)).passes", "r == 3", "3 colours for a tridiagonal")
P("sj_csr_layout", T, "ga.SparseJacobian(tri(6))(stencil, x8[:6], layout=torch.sparse_csr)",
  "r.layout == torch.sparse_csr and close(r, stencil_J(x8[:6]))", "flat CSR", group="layout")
P("sj_strided_layout", T, "ga.SparseJacobian(tri(6))(stencil, x8[:6], layout=torch.strided)",
  "r.layout == torch.strided and close(r, stencil_J(x8[:6]))", "dense", group="layout")
E("sj_layout_bad", T, "ga.SparseJacobian(tri(6))(stencil, x8[:6], layout=torch.sparse_csc)",
  ("layout",), group="layout")
P("sj_pattern_coo", T, "ga.SparseJacobian(coo(tri(6)))(stencil, x8[:6])", "close(r, stencil_J(x8[:6]))",
  "COO pattern", group="layout")
P("sj_pattern_csr", T, "ga.SparseJacobian(csr(tri(6)))(stencil, x8[:6])", "close(r, stencil_J(x8[:6]))",
  "CSR pattern", group="layout")
P("sj_pattern_nd", T,
  "ga.SparseJacobian(torch.eye(6, dtype=torch.bool).reshape(2, 3, 2, 3), (2, 3))(torch.sin, X23)",
  "close(r, jr(torch.sin, X23))", "pattern y.shape + x.shape with x_shape", group="layout")
P("sj_pattern_noncontig", T, "ga.SparseJacobian(tri(6).t())(stencil, x8[:6])",
  "close(r, stencil_J(x8[:6]))", "a transposed (non-contiguous) pattern", group="layout")
E("sj_pattern_float", T, "ga.SparseJacobian(tri(5, D))", ("bool", "pattern"), group="options")
E("sj_pattern_all_false", T, "ga.SparseJacobian(torch.zeros(5, 5, dtype=torch.bool))",
  ("pattern", "False", "empty"), group="options")
E("sj_pattern_meta", T, "ga.SparseJacobian(torch.ones(3, 3, dtype=torch.bool, device='meta'))",
  ("meta",), group="device")
E("sj_nd_no_x_shape", T, "ga.SparseJacobian(torch.eye(6, dtype=torch.bool).reshape(2, 3, 2, 3))",
  ("x_shape",), group="options")
P("sj_x_shape_list", T, "ga.SparseJacobian(tri(5), [5])(stencil, x5)", "close(r, stencil_J(x5))",
  "a list accepted as the shape, or refused naming x_shape", group="options", either=True,
  keys=("x_shape",))
E("sj_x_shape_wrong", T, "ga.SparseJacobian(tri(5), (4,))", ("x_shape", "shape"), group="options")
E("sj_method_bad", T, "ga.SparseJacobian(tri(5), method='sideways')", ("method",), group="options")
E("sj_strategy_bad", T, "ga.SparseJacobian(tri(5), strategy='greedy')", ("strategy",),
  group="options")
for _s in gradarg.sparse.STRATEGIES:
    P(f"sj_strategy_{_s}", T, f"ga.SparseJacobian(arrow(12), strategy={_s!r})(arrow_grad, x8.repeat(2)[:12])",
      "close(r, jr(arrow_grad, x8.repeat(2)[:12]))",
      "the arrow Jacobian of ∇(arrow energy) by jacrev, whatever the colouring", group="options")
for _m in ("reverse", "forward", "bidirectional"):
    P(f"sj_method_{_m}", T, f"ga.SparseJacobian(arrow(12), method={_m!r})(arrow_grad, x8.repeat(2)[:12])",
      "close(r, jr(arrow_grad, x8.repeat(2)[:12]))", "jacrev", group="options")
E("sj_x_int", T, "ga.SparseJacobian(tri(5))(stencil, torch.arange(5))", ("x", "float", "dtype"),
  group="dtype")
E("sj_x_complex", T, "ga.SparseJacobian(tri(3))(lambda z: z * z, z3)", ("x", "real", "complex"),
  group="dtype")
P("sj_x_f16", T, "ga.SparseJacobian(tri(5))(stencil, x5.half())",
  "close(r, stencil_J(x5), rtol=5e-3, atol=5e-3)",
  "float16 stencil Jacobian, or a refusal naming the dtype (docstring says float32/float64)",
  group="dtype", either=True, keys=("x", "float", "dtype"))
E("sj_x_sparse", T, "ga.SparseJacobian(tri(5))(stencil, x5.to_sparse())", ("sparse",), group="layout")
E("sj_x_meta", T, "ga.SparseJacobian(tri(5))(stencil, torch.empty(5, device='meta', dtype=D))",
  ("meta",), group="device")
E("sj_x_wrong_numel", T, "ga.SparseJacobian(tri(5))(stencil, x8)", ("x", "shape", "pattern"))
E("sj_out_wrong_shape", T, "ga.SparseJacobian(tri(5))(lambda t: t[:4] * 2, x5)",
  ("shape", "pattern", "output"))
E("sj_fn_tuple", T, "ga.SparseJacobian(tri(5))(lambda t: (t, t), x5)", ("tensor", "tuple", "fn"))
E("sj_certify_missing", T, "ga.SparseJacobian(torch.eye(5, dtype=torch.bool))(stencil, x5, certify=3)",
  ("pattern", "non-zero", "nonzero", "certif", "miss"), group="values",
  oracle="CertificateError: the pattern misses the off-diagonal non-zeros")
P("sj_certify_ok", T, "ga.SparseJacobian(tri(5))(stencil, x5, certify=3, generator=gen(2))",
  "close(r, stencil_J(x5))", "the right pattern passes", group="values")
E("sj_certify_neg", T, "ga.SparseJacobian(tri(5))(stencil, x5, certify=-1)", ("certify",),
  group="options")
E("sj_certify_bool", T, "ga.SparseJacobian(tri(5))(stencil, x5, certify=True)", ("certify",),
  group="options")
E("sj_generator_int", T, "ga.SparseJacobian(tri(5))(stencil, x5, certify=1, generator=0)",
  ("generator",), group="options")
E("sj_in_vmap", T, "(lambda s: vmap(lambda t: s(stencil, t).to_dense())(rn(2, 5)))(ga.SparseJacobian(tri(5)))",
  ("vmap",), group="compose")
E("sj_in_grad", T, "(lambda s: grad(lambda t: s(stencil, t).to_dense().sum())(x5))(ga.SparseJacobian(tri(5)))",
  ("grad",), group="compose")
E("sj_built_in_vmap", T, "vmap(lambda t: t * ga.SparseJacobian(tri(5)).passes)(rn(2, 5))",
  ("vmap",), group="compose")
P("sj_f32", T, "ga.SparseJacobian(tri(6))(stencil, x8[:6].float())",
  "r.dtype == S and close(r, stencil_J(x8[:6]), rtol=1e-5, atol=1e-6)", "float32", group="dtype")
P("sj_fn_casts", T, "(lambda s: (s, s(lambda t: stencil(t).float(), x5)))(ga.SparseJacobian(tri(5)))",
  "close(r[1], stencil_J(x5), rtol=1e-6, atol=1e-6) and r[1].dtype == (D if r[0].mode == 'reverse' else S)",
  "docstring: x's dtype from reverse mode, fn(x)'s from forward", group="dtype")
P("sj_nan_x", T, "ga.SparseJacobian(tri(5))(stencil, torch.tensor([0.1, 0.2, NAN, 0.4, 0.5], dtype=D))",
  "close_notnan(r, (lambda J: (J.index_fill_(0, torch.tensor([2]), NAN).index_fill_(1, torch.tensor([2]), NAN)))(stencil_J(torch.tensor([0.1, 0.2, NAN, 0.4, 0.5], dtype=D))))",
  "entries outside the NaN element's row and column are the hand Jacobian's (a NaN must not "
  "leak into other rows through the compression)", group="values")
P("sj_side_effects", T, "sj_side()", "r['wgrad'] is None and close(r['J'], stencil_J(x5))",
  "a captured leaf gets no .grad", group="side-effects")
P("sj_huge_diag", T, "ga.SparseJacobian(diag_pattern(10 ** 6))(lambda t: t * t, torch.linspace(0, 1, 10 ** 6, dtype=D))",
  "r._nnz() == 10 ** 6 and torch.allclose(r.coalesce().values(), 2 * torch.linspace(0, 1, 10 ** 6, dtype=D))",
  "diag(2x) with 10⁶ entries, one pass", group="memory")
E("sj_huge_cols", T,
  "ga.SparseJacobian(torch.sparse_coo_tensor(torch.tensor([[0], [0]]), torch.tensor([True]), (1, 2 * 10 ** 9)))",
  ("memory", "GB"), group="memory", oracle="docstring: a MemoryError with an estimate (~128 GB)")
P("sj_compile_aot", "SparseJacobian.compile",
  "(lambda s: (s.compile(stencil, backend='aot_eager')(x5), s(stencil, x5)))(ga.SparseJacobian(tri(5)))",
  "close(r[0], r[1])", "docstring: the compiled call returns what the eager call returns",
  group="compose")
E("sj_compile_item", "SparseJacobian.compile",
  "ga.SparseJacobian(tri(3)).compile(fn_item, backend='aot_eager')(x3)",
  ("item", "compile", "captur", "graph"), allow=(RuntimeError,), group="compose",
  oracle="docstring: RuntimeError at the first call naming what could not be captured")
E("sj_compile_package_aot", "CompiledSparse.package",
  "ga.SparseJacobian(tri(5)).compile(stencil, backend='aot_eager').package(x5)",
  ("backend", "inductor", "package"), group="options")
E("sj_compile_wrong_x", "CompiledSparse.__call__",
  "ga.SparseJacobian(tri(5)).compile(stencil, backend='aot_eager')(x8)",
  ("x", "shape", "pattern"), group="misuse")


# ---------------------------------------------------------------- SparseHessian
T = "SparseHessian"
P("sh_tri", T, "ga.SparseHessian(tri(20))(energy, torch.linspace(0, 1, 20, dtype=D))",
  "r.layout == torch.sparse_coo and close(r, hessian(energy)(torch.linspace(0, 1, 20, dtype=D)))",
  "torch.func.hessian")
P("sh_arrow", T, "(lambda s: (s.passes, s(arrow_energy, torch.linspace(0, 1, 50, dtype=D))))(ga.SparseHessian(arrow(50)))",
  "r[0] == 2 and close(r[1], hessian(arrow_energy)(torch.linspace(0, 1, 50, dtype=D)))",
  "docstring: 2 products; torch.func.hessian")
P("sh_distance2", T, "ga.SparseHessian(arrow(50)).distance2_colors", "r == 50",
  "docstring: a distance-2 colouring of an arrowhead needs n colours")
P("sh_acyclic", T, "ga.SparseHessian(arrow(30), method='acyclic')(arrow_energy, torch.linspace(0, 1, 30, dtype=D))",
  "close(r, hessian(arrow_energy)(torch.linspace(0, 1, 30, dtype=D)), rtol=1e-9, atol=1e-9)",
  "torch.func.hessian", group="options")
P("sh_acyclic_band", T, "ga.SparseHessian(tri(40), method='acyclic')(energy, x8.repeat(5))",
  "close(r, hessian(energy)(x8.repeat(5)), rtol=1e-9, atol=1e-9)", "torch.func.hessian",
  group="options")
E("sh_method_bad", T, "ga.SparseHessian(tri(5), method='distance2')", ("method",), group="options")
E("sh_nonsquare", T, "ga.SparseHessian(torch.ones(3, 4, dtype=torch.bool))", ("square", "pattern"),
  group="options")
E("sh_float_pattern", T, "ga.SparseHessian(tri(5, D))", ("bool", "pattern"), group="options")
E("sh_all_false", T, "ga.SparseHessian(torch.zeros(4, 4, dtype=torch.bool))",
  ("pattern", "False", "empty"), group="options")
E("sh_f_vector", T, "ga.SparseHessian(tri(5))(torch.sin, x5)", ("scalar", "element", "f"))
E("sh_f_int", T, "ga.SparseHessian(tri(5))(lambda t: (t * 10).long().sum(), x5)",
  ("f", "float", "integer", "dtype"), group="dtype")
E("sh_f_complex", T, "ga.SparseHessian(tri(5))(lambda t: (t * 1j).sum(), x5)",
  ("f", "complex", "float", "real"), group="dtype")
E("sh_x_int", T, "ga.SparseHessian(tri(5))(energy, torch.arange(5))", ("x", "float", "dtype"),
  group="dtype")
E("sh_x_wrong_size", T, "ga.SparseHessian(tri(5))(energy, x8)", ("x", "pattern", "shape"))
P("sh_csr", T, "ga.SparseHessian(tri(6))(energy, x8[:6], layout=torch.sparse_csr)",
  "r.layout == torch.sparse_csr and close(r, hessian(energy)(x8[:6]))", "flat CSR", group="layout")
P("sh_strided", T, "ga.SparseHessian(tri(6))(energy, x8[:6], layout=torch.strided)",
  "r.layout == torch.strided and close(r, hessian(energy)(x8[:6]))", "dense", group="layout")
E("sh_layout_bad", T, "ga.SparseHessian(tri(6))(energy, x8[:6], layout=torch.sparse_csc)",
  ("layout",), group="layout")
E("sh_certify_missing", T, "ga.SparseHessian(torch.eye(5, dtype=torch.bool))(energy, x5, certify=2)",
  ("pattern", "non-zero", "nonzero", "certif", "miss"), group="values",
  oracle="CertificateError: the diagonal pattern misses H's off-diagonals")
P("sh_certify_ok", T, "ga.SparseHessian(tri(5))(energy, x5, certify=2, generator=gen(3))",
  "close(r, hessian(energy)(x5))", "the right pattern passes", group="values")
P("sh_nd", T, "ga.SparseHessian(P4, (2, 3))(f4, X23)", "close(r, hessian(f4)(X23))",
  "pattern x.shape + x.shape; torch.func.hessian", group="layout")
P("sh_asymmetric_pattern", T, "ga.SparseHessian(tri(6) & torch.ones(6, 6, dtype=torch.bool).triu())(energy, x8[:6])",
  "close(r, hessian(energy)(x8[:6]))", "docstring: the pattern is symmetrised (P | Pᵀ)",
  group="layout")
P("sh_f32", T, "ga.SparseHessian(tri(6))(energy, x8[:6].float())",
  "r.dtype == S and close(r, hessian(energy)(x8[:6]), rtol=1e-5, atol=1e-5)", "in x's dtype",
  group="dtype")
E("sh_in_grad", T, "(lambda s: grad(lambda t: s(energy, t).to_dense().sum())(x5))(ga.SparseHessian(tri(5)))",
  ("grad",), group="compose")
P("sh_compile_aot", "SparseHessian.compile",
  "(lambda s: (s.compile(energy, backend='aot_eager')(x5), s(energy, x5)))(ga.SparseHessian(tri(5)))",
  "close(r[0], r[1])", "the compiled call returns what the eager call returns", group="compose")

# ---------------------------------------------------------------- color_pattern
T = "color_pattern"
P("cp_tri", T, "ga.color_pattern(tri(6))", "valid_coloring(r, tri(6)) and int(r.max()) + 1 == 3",
  "a valid colouring with 3 colours (the lower bound)")
P("cp_tri_columns", T, "ga.color_pattern(tri(6), 'columns')",
  "valid_coloring(r, tri(6), side='columns') and int(r.max()) + 1 == 3", "columns side")
P("cp_arrow_rows", T, "ga.color_pattern(arrow(5))", "valid_coloring(r, arrow(5)) and int(r.max()) + 1 == 5",
  "docstring example: 5")
P("cp_rect", T, "ga.color_pattern(A34 != 0, 'columns')", "valid_coloring(r, A34 != 0, side='columns')",
  "a dense 3×4: valid colouring (4 colours)")
for _s in ("largest_first", "DSATUR", "smallest_last", "random_sequential", "independent_set"):
    P(f"cp_{_s}", T, f"ga.color_pattern(arrow(9) | tri(9), strategy={_s!r})",
      "valid_coloring(r, arrow(9) | tri(9))", "a valid colouring", group="options")
P("cp_coo", T, "ga.color_pattern(coo(tri(7)))", "valid_coloring(r, tri(7))", "COO pattern",
  group="layout")
P("cp_csr", T, "ga.color_pattern(csr(tri(7)), 'columns')", "valid_coloring(r, tri(7), side='columns')",
  "CSR pattern", group="layout")
P("cp_nd", T, "ga.color_pattern(torch.eye(6, dtype=torch.bool).reshape(2, 3, 2, 3), x_shape=(2, 3))",
  "r.shape == (6,) and int(r.max()) == 0", "identity: one colour", group="layout")
E("cp_nd_no_x_shape", T, "ga.color_pattern(torch.eye(6, dtype=torch.bool).reshape(2, 3, 2, 3))",
  ("x_shape", "shape"), group="options")
P("cp_1x1", T, "ga.color_pattern(torch.ones(1, 1, dtype=torch.bool))", "r.tolist() == [0]",
  "one colour", group="layout")
E("cp_all_false", T, "ga.color_pattern(torch.zeros(4, 4, dtype=torch.bool))", ("pattern", "False", "empty"))
E("cp_empty", T, "ga.color_pattern(torch.zeros(0, 5, dtype=torch.bool))", ("pattern", "False", "empty", "shape"))
E("cp_int_pattern", T, "ga.color_pattern(tri(5, torch.int64))", ("bool", "pattern"), group="dtype")
E("cp_side_bad", T, "ga.color_pattern(tri(5), 'cols')", ("side",), group="options")
E("cp_strategy_bad", T, "ga.color_pattern(tri(5), strategy='dsatur')", ("strategy",), group="options")
E("cp_meta", T, "ga.color_pattern(torch.ones(3, 3, dtype=torch.bool, device='meta'))", ("meta",),
  group="device")

# ---------------------------------------------------------------- sparsity_pattern
T = "sparsity_pattern"
P("sp_bidiag", T, "ga.sparsity_pattern(lambda u: u[1:] - u[:-1], torch.zeros(4))",
  "r.dtype == torch.bool and same_pattern(r, jr(lambda u: u[1:] - u[:-1], torch.zeros(4)) != 0)",
  "docstring example")
P("sp_stencil", T, "ga.sparsity_pattern(stencil, x5)", "same_pattern(r, tri(5))", "tridiagonal")
P("sp_relu_local", T, "ga.sparsity_pattern(lambda t: torch.relu(t - 100), torch.zeros(3, dtype=D))",
  "same_pattern(r, torch.zeros(3, 3, dtype=torch.bool))",
  "docstring: a local pattern misses an entry whose derivative vanishes at every probe",
  group="values")
P("sp_rng_untouched", T, "sp_rng()", "r['same'] and same_pattern(r['P'], jr(lambda u: u[1:] - u[:-1], torch.zeros(4)) != 0)",
  "docstring: the global generator is never advanced", group="side-effects")
E("sp_points_0", T, "ga.sparsity_pattern(torch.sin, x3, points=0)", ("points",), group="options")
E("sp_points_float", T, "ga.sparsity_pattern(torch.sin, x3, points=2.0)", ("points",), group="options")
E("sp_nan_x", T, "ga.sparsity_pattern(torch.sin, torch.tensor([NAN, 1.0], dtype=D))", ("NaN", "x"),
  group="values")
E("sp_inf_x", T, "ga.sparsity_pattern(torch.sin, torch.tensor([INF, 1.0], dtype=D))", ("Inf", "inf", "x"),
  group="values")
E("sp_int_x", T, "ga.sparsity_pattern(torch.sin, torch.arange(3))", ("x", "float", "dtype"), group="dtype")
E("sp_meta", T, "ga.sparsity_pattern(torch.sin, torch.empty(3, device='meta'))", ("meta",), group="device")
E("sp_generator_int", T, "ga.sparsity_pattern(torch.sin, x3, generator=1)", ("generator",),
  group="options")

# ---------------------------------------------------------------- jacobian_sparsity
T = "jacobian_sparsity"
P("js_stencil", T, "ga.jacobian_sparsity(stencil, torch.zeros(5), layout=torch.strided)",
  "same_pattern(r, tri(5))", "docstring example")
P("js_coo_default", T, "ga.jacobian_sparsity(stencil, torch.zeros(5))",
  "r.layout == torch.sparse_coo and r.dtype == torch.bool and same_pattern(r, tri(5))", "COO by default")
P("js_matmul_zeros", T, "ga.jacobian_sparsity(lambda t: t @ W33, x3, layout=torch.strided)",
  "same_pattern(r, W33.t() != 0)", "a constant operand's zeros are used: J[k, j] = W[j, k]")
P("js_conv_zeros", T, "ga.jacobian_sparsity(conv_fn, x8, layout=torch.strided)",
  "same_pattern(r, jr(conv_fn, x8) != 0)", "a constant weight's zeros are used")
P("js_cumsum", T, "ga.jacobian_sparsity(lambda t: torch.cumsum(t, 0), x5, layout=torch.strided)",
  "same_pattern(r, torch.ones(5, 5).tril())", "lower triangle")
P("js_sort", T, "ga.jacobian_sparsity(lambda t: torch.sort(t).values, x5, layout=torch.strided)",
  "same_pattern(r, torch.ones(5, 5))", "docstring: each value depends on its whole slice")
P("js_where", T, "ga.jacobian_sparsity(lambda t: torch.where(t > 0, t, t.roll(1)), x5, layout=torch.strided)",
  "same_pattern(r, (jr(lambda t: t.roll(1), x5) != 0) | torch.eye(5, dtype=torch.bool))",
  "docstring: where keeps both branches; the comparison adds nothing")
P("js_fft", T, "ga.jacobian_sparsity(lambda t: torch.view_as_real(torch.fft.fft(t)).flatten(), x8, layout=torch.strided)",
  "covers(r, jr(lambda t: torch.view_as_real(torch.fft.fft(t)).flatten(), x8))", "conservative",
  group="dtype")
P("js_bn_train", T, "ga.jacobian_sparsity(bn_train(), XB[:, :2].contiguous(), layout=torch.strided)",
  "same_pattern(r, torch.eye(2, dtype=torch.bool)[None, :, None, :].expand(4, 2, 4, 2))",
  "docstring: training batch norm: each element on its channel across the batch", group="misuse")
P("js_nan_x", T, "ga.jacobian_sparsity(stencil, torch.tensor([NAN, INF, 1.0, -INF, 0.0], dtype=D), layout=torch.strided)",
  "same_pattern(r, tri(5))", "never looks at x's values", group="values")
P("js_empty_x", T, "ga.jacobian_sparsity(torch.sin, torch.empty(0, dtype=D), layout=torch.strided)",
  "r.shape == (0, 0) and r.dtype == torch.bool", "docstring: no columns", group="layout")
P("js_captured", T, "js_captured()", "r['wgrad'] is None and same_pattern(r['P'], torch.eye(4, dtype=torch.bool))",
  "diag, and the captured leaf gets no .grad", group="side-effects")
E("js_item", T, "ga.jacobian_sparsity(fn_item, x3)", ("Python", "number", "item"),
  allow=(ga.UnsupportedOpError,), group="misuse")
E("js_data_index", T, "ga.jacobian_sparsity(lambda t: t[t.argmax()], x3)",
  ("indices", "index", "argmax", "values", "value"), allow=(ga.UnsupportedOpError,), group="misuse")
E("js_layout_csr", T, "ga.jacobian_sparsity(torch.sin, x3, layout=torch.sparse_csr)", ("layout",),
  group="options")
E("js_int_x", T, "ga.jacobian_sparsity(torch.sin, torch.arange(3))", ("x", "float", "dtype"),
  group="dtype")
E("js_complex_x", T, "ga.jacobian_sparsity(lambda z: z * 2, z3)", ("x", "real", "complex", "float"),
  group="dtype")
E("js_tuple_out", T, "ga.jacobian_sparsity(lambda t: (t, t), x3)", ("tensor", "tuple"))
E("js_in_vmap", T, "vmap(lambda t: ga.jacobian_sparsity(torch.sin, t, layout=torch.strided).to(t.dtype))(rn(2, 3))",
  ("vmap",), group="compose")
P("js_huge", T, "ga.jacobian_sparsity(torch.sin, torch.zeros(10 ** 6, dtype=D))",
  "r.layout == torch.sparse_coo and r.shape == (10 ** 6, 10 ** 6) and r._nnz() == 10 ** 6 "
  "and bool((r._indices()[0] == r._indices()[1]).all())", "the diagonal, O(nnz)", group="memory")
E("js_block_limit", T, "ga.jacobian_sparsity(lambda t: torch.linalg.inv(t.reshape(100, 100)), torch.eye(100, dtype=D).flatten())",
  ("pairs", "block", "large", "inv"), allow=(ga.UnsupportedOpError,), group="memory",
  oracle="docstring: a conservative block over 5·10⁷ pairs is refused (UnsupportedOpError)")

# ---------------------------------------------------------------- hessian_sparsity
T = "hessian_sparsity"
P("hs_energy", T, "ga.hessian_sparsity(energy, torch.zeros(4), layout=torch.strided)",
  "same_pattern(r, tri(4))", "docstring example")
P("hs_linear", T, "ga.hessian_sparsity(lambda t: (3 * t).sum(), x5, layout=torch.strided)",
  "same_pattern(r, torch.zeros(5, 5, dtype=torch.bool))", "a linear f: no pairs")
P("hs_relu", T, "ga.hessian_sparsity(lambda t: torch.relu(t).sum(), x5, layout=torch.strided)",
  "same_pattern(r, torch.zeros(5, 5, dtype=torch.bool))", "piecewise linear: no pairs (docstring)")
P("hs_product", T, "ga.hessian_sparsity(lambda t: t[0] * t[1] + t[2] ** 2, x3, layout=torch.strided)",
  "covers(r, hessian(lambda t: t[0] * t[1] + t[2] ** 2)(x3)) and bool(r[0, 1]) and bool(r[2, 2]) and not bool(r[0, 2])",
  "covers the Hessian; (0, 2) is never combined by a nonlinear operator")
P("hs_covers", T, "ga.hessian_sparsity(arrow_energy, x8, layout=torch.strided)",
  "covers(r, hessian(arrow_energy)(x8)) and bool((r == r.t()).all())", "conservative and symmetric")
P("hs_coo", T, "ga.hessian_sparsity(energy, x5)", "r.layout == torch.sparse_coo and same_pattern(r, tri(5))",
  "COO by default", group="layout")
P("hs_nd", T, "ga.hessian_sparsity(f4, X23, layout=torch.strided)", "covers(r, hessian(f4)(X23)) and r.shape == (2, 3, 2, 3)",
  "x.shape + x.shape", group="layout")
E("hs_vector_f", T, "ga.hessian_sparsity(torch.sin, x3)", ("element", "scalar", "f"))
E("hs_layout_bad", T, "ga.hessian_sparsity(energy, x5, layout=torch.sparse_csr)", ("layout",),
  group="options")
E("hs_int_x", T, "ga.hessian_sparsity(energy, torch.arange(5))", ("x", "float", "dtype"), group="dtype")

# ---------------------------------------------------------------- fmt
T = "fmt"
P("fmt_doc", T, "(ga.fmt(0.4000000059604645), ga.fmt(2.0), ga.fmt(2 / 3), ga.fmt(-0.0), ga.fmt(1 - 2j))",
  "r == ('0.4', '2', '0.6667', '0', '1 - 2i')", "docstring example")
P("fmt_tensor", T, "ga.fmt(torch.tensor([[3.0, 7.0]]))", "r == '[[3, 7]]'", "docstring example")
P("fmt_nan", T, "ga.fmt(NAN)", "'nan' in r.lower()", "NaN shown as NaN", group="values")
P("fmt_inf", T, "(ga.fmt(INF), ga.fmt(-INF))",
  "('inf' in r[0].lower() or '∞' in r[0]) and r[1].lstrip().startswith(('-', '−')) and r[0] != r[1]",
  "±inf distinguishable", group="values")
P("fmt_subnormal", T, "ga.fmt(5e-324)", "'4.941' in r and '324' in r", "4.941e-324 (:.4g)",
  group="values")
P("fmt_1e30", T, "ga.fmt(1e30)", "'30' in r and '000000' not in r", "1e+30, not its digits",
  group="values")
P("fmt_bf16", T, "ga.fmt(torch.tensor(0.1, dtype=torch.bfloat16))", "r == '0.1001'",
  "bfloat16's 0.1 is 0.10009765625: '0.1001' at 4 digits", group="dtype")
P("fmt_int_tensor", T, "ga.fmt(torch.tensor([1, 2]))", "r == '[1, 2]'", "integers", group="dtype")
P("fmt_complex_tensor", T, "ga.fmt(torch.tensor([1 - 2j]))", "r == '[1 - 2i]'", "as the scalar form",
  group="dtype")
P("fmt_sparse", T, "ga.fmt(torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse())", "r == '[[0, 1], [2, 0]]'",
  "docstring: a sparse tensor shown densified", group="layout")
P("fmt_empty", T, "ga.fmt(torch.empty(0))", "r == '[]'", "an empty list", group="layout")
P("fmt_0d", T, "ga.fmt(torch.tensor(2.5))", "r == '2.5'", "a number", group="layout")
P("fmt_noncontig", T, "ga.fmt(torch.tensor([[1.0, 2.0], [3.0, 4.0]]).t())", "r == '[[1, 3], [2, 4]]'",
  "the transpose's values", group="layout")
P("fmt_numpy", T, "ga.fmt(np.array([0.5, 2.0]))", "r == '[0.5, 2]'", "an array")
P("fmt_digits2", T, "ga.fmt(math.pi, 2)", "r == '3.1'", ":.2g", group="options")
E("fmt_digits0", T, "ga.fmt(1.0, 0)", ("digits",), group="options")
E("fmt_digits41", T, "ga.fmt(1.0, 41)", ("digits",), group="options")
E("fmt_digits_float", T, "ga.fmt(1.0, 4.0)", ("digits",), group="options")
E("fmt_str", T, "ga.fmt('abc')", ("value",))
E("fmt_none", T, "ga.fmt(None)", ("value",))
E("fmt_meta", T, "ga.fmt(torch.empty(2, device='meta'))", ("meta",), group="device")

# ---------------------------------------------------------------- latex
T = "latex_matrix"
P("lm_doc", T, "(ga.latex_matrix(torch.tensor([[1.0, 2.0], [3.0, 4.0]])), ga.latex_matrix(torch.tensor(0.5)))",
  "r == ('\\\\begin{bmatrix} 1 & 2 \\\\\\\\ 3 & 4 \\\\end{bmatrix}', '0.5')", "docstring example")
P("lm_1d", T, "ga.latex_matrix(torch.tensor([1.0, 2.0]))", "r == '\\\\begin{bmatrix} 1 & 2 \\\\end{bmatrix}'",
  "a row vector (latex_vjp's docstring shows the form)")
P("lm_3d", T, "ga.latex_matrix(torch.arange(8.0).reshape(2, 2, 2))",
  "r == '\\\\begin{bmatrix} 0 & 1 & 2 & 3 \\\\\\\\ 4 & 5 & 6 & 7 \\\\end{bmatrix}'",
  "first dimension against the rest flattened", group="layout")
P("lm_pmatrix", T, "ga.latex_matrix(torch.tensor([[1.0]]), env='pmatrix')",
  "r.startswith('\\\\begin{pmatrix}') and r.endswith('\\\\end{pmatrix}')", "the env given", group="options")
P("lm_list", T, "ga.latex_matrix([[1, 2], [3, 4]])", "r == '\\\\begin{bmatrix} 1 & 2 \\\\\\\\ 3 & 4 \\\\end{bmatrix}'",
  "array-like", group="layout")
P("lm_nan", T, "ga.latex_matrix(torch.tensor([NAN, 1.0]))", "'nan' in r.lower()", "NaN shown", group="values")
E("lm_env_space", T, "ga.latex_matrix(torch.eye(2), env='b matrix')", ("env",), group="options")
E("lm_env_inject", T, "ga.latex_matrix(torch.eye(2), env='bmatrix}\\\\evil{')", ("env",), group="options")
E("lm_env_int", T, "ga.latex_matrix(torch.eye(2), env=3)", ("env",), group="options")
E("lm_str", T, "ga.latex_matrix('abc')", ("t", "number"))
E("lm_meta", T, "ga.latex_matrix(torch.empty(2, 2, device='meta'))", ("meta",), group="device")
E("lm_digits0", T, "ga.latex_matrix(torch.eye(2), digits=0)", ("digits",), group="options")
T = "latex_jacobian"
P("lj_doc", T, "ga.latex_jacobian(torch.eye(2).reshape(1, 2, 1, 2), (1, 2))",
  "r == '\\\\begin{bmatrix} 1 & 0 \\\\\\\\ 0 & 1 \\\\end{bmatrix}'", "docstring example")
P("lj_scalar_out", T, "ga.latex_jacobian(torch.tensor([1.0, 2.0]), ())",
  "r == '\\\\begin{bmatrix} 1 & 2 \\\\end{bmatrix}'", "a scalar output: one row", group="layout")
P("lj_out_shape_list", T, "ga.latex_jacobian(torch.eye(2).reshape(1, 2, 1, 2), [1, 2])",
  "r == '\\\\begin{bmatrix} 1 & 0 \\\\\\\\ 0 & 1 \\\\end{bmatrix}'",
  "a list shape accepted, or refused naming out_shape", group="options", either=True,
  keys=("out_shape",))
E("lj_out_shape_bad", T, "ga.latex_jacobian(torch.eye(2).reshape(1, 2, 1, 2), (2, 1))",
  ("out_shape", "shape"))
E("lj_not_tensor", T, "ga.latex_jacobian([[1.0]], (1,))", ("jac", "tensor"))
E("lj_out_shape_int", T, "ga.latex_jacobian(torch.eye(2), 2)", ("out_shape",))
T = "latex_vjp"
P("lv_doc", T, "ga.latex_vjp(torch.tensor([1.0, 1.0]), M22, torch.tensor([1.0, 1.0]) @ M22)",
  "r.replace(' \\\\begin', '\\n\\\\begin') == 'v^\\\\top J =\\n\\\\begin{bmatrix} 1 & 1 \\\\end{bmatrix}\\n\\\\begin{bmatrix} 1 & 2 \\\\\\\\ 3 & 4 \\\\end{bmatrix} =\\n\\\\begin{bmatrix} 4 & 6 \\\\end{bmatrix}'",
  "docstring example")
E("lv_shape_mismatch", T, "ga.latex_vjp(torch.ones(3), M22, torch.ones(2))", ("shape", "jac", "v"))

# ---------------------------------------------------------------- markdown_table, summarize
T = "markdown_table"
P("mt_doc", T, "ga.markdown_table([['a.grad', torch.tensor(0.4)], ['|z|', 1.0]], ['quantity', 'value'])",
  "r.strip() == '| quantity | value |\\n| --- | --- |\\n| a.grad | 0.4 |\\n| \\\\|z\\\\| | 1 |'", "docstring example")
P("mt_long", T, "ga.markdown_table([['y', torch.arange(10.0)]], ['name', 'value'])",
  "r.startswith('| name | value |\\n| --- | --- |\\n| y | [0, 1, 2, …, 8, 9] (shape (10,), norm 16.88) |') and 'y = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]' in r",
  "docstring example")
P("mt_newline_cell", T, "ga.markdown_table([['a\\nb', 1.0]], ['k', 'v'])",
  "all(l.startswith('|') for l in r.strip().splitlines())",
  "a newline in a cell must not break the table", group="values")
P("mt_empty_rows", T, "ga.markdown_table([], ['a', 'b'])", "r.strip() == '| a | b |\\n| --- | --- |'",
  "header only", group="layout")
E("mt_row_length", T, "ga.markdown_table([[1, 2, 3]], ['a', 'b'])", ("row", "headers", "cells", "columns"))
E("mt_max_entries_neg", T, "ga.markdown_table([['y', torch.arange(3.0)]], ['a', 'b'], max_entries=-1)",
  ("max_entries",), group="options")
E("mt_headers_str", T, "ga.markdown_table([[1, 2]], 'ab')", ("headers",), group="misuse")
E("mt_digits0", T, "ga.markdown_table([[1, 2]], ['a', 'b'], digits=0)", ("digits",), group="options")
T = "summarize"
P("sm_doc", T, "(ga.summarize(torch.tensor([1.0, 0.5])), ga.summarize(torch.arange(12.0).reshape(3, 4)))",
  "r == ('[1, 0.5]', '[0, 1, 2, …, 10, 11] (shape (3, 4), norm 22.49)')", "docstring example")
P("sm_nan", T, "ga.summarize(torch.tensor([NAN] + [1.0] * 11))", "'nan' in r.lower()", "a NaN norm shown",
  group="values")
P("sm_huge_values", T, "ga.summarize(torch.full((12,), 1e200, dtype=D))",
  "norm_in(r) == float(torch.linalg.vector_norm(torch.full((12,), 1e200, dtype=D)))",
  "torch.linalg.vector_norm's value (inf: torch's and NumPy's norms overflow here too) "
  "[oracle fixed after the run: it was √12·1e200]", group="values")
P("sm_tiny_values", T, "ga.summarize(torch.full((12,), 1e-200, dtype=D))",
  "norm_in(r) == float(torch.linalg.vector_norm(torch.full((12,), 1e-200, dtype=D)))",
  "torch.linalg.vector_norm's value (0: torch's and NumPy's norms underflow here too) "
  "[oracle fixed after the run: it was √12·1e-200]", group="values")
P("sm_f16_norm_overflow", T, "ga.summarize(torch.full((12,), 60000.0, dtype=torch.float16))",
  "abs(norm_in(r) - 207846.1) / 207846.1 < 1e-3",
  "√12·60000 = 207846, beyond float16's range, in the summary's own number format "
  "[oracle fixed after the run: it required the spelling 'e+05']", group="dtype")
P("sm_int", T, "ga.summarize(torch.arange(12))", "r == '[0, 1, 2, …, 10, 11] (shape (12,), norm 22.49)'",
  "integers", group="dtype")
P("sm_complex", T, "ga.summarize(torch.tensor([1 + 1j] * 10))", "'norm 4.472' in r", "√20",
  group="dtype")
P("sm_sparse", T, "ga.summarize(torch.tensor([1.0, 0.5]).to_sparse())", "r == '[1, 0.5]'", "densified",
  group="layout")
P("sm_0d", T, "ga.summarize(torch.tensor(2.5))", "r == '2.5'", "a number", group="layout")
P("sm_empty", T, "ga.summarize(torch.empty(0))", "r == '[]'", "empty", group="layout")
P("sm_numpy", T, "ga.summarize(np.arange(12.0).reshape(3, 4))", "r == '[0, 1, 2, …, 10, 11] (shape (3, 4), norm 22.49)'",
  "an array")
P("sm_max_entries_0", T, "ga.summarize(torch.tensor([1.0, 2.0]), max_entries=0)", "'norm 2.236' in r",
  "every tensor is summarised", group="options")
E("sm_max_entries_neg", T, "ga.summarize(torch.ones(3), max_entries=-1)", ("max_entries",), group="options")
E("sm_meta", T, "ga.summarize(torch.empty(3, device='meta'))", ("meta",), group="device")
E("sm_str", T, "ga.summarize('abc')", ("x", "tensor"))

# ---------------------------------------------------------------- explorer, heatmap
T = "explorer"
P("ex_doc", T, "explorer_doc()",
  "r.y_shape == (1, 2) and r.x_shape == (1, 2) and close(r.jacobian, torch.tensor([[1.0, 3.0], [2.0, 4.0]])) "
  "and close(r.vjp(), torch.tensor([[1.0, 3.0]])) and close(r.vjp([[1.0, 1.0]]), torch.tensor([[3.0, 7.0]]))",
  "docstring example")
P("ex_f32", T, "ga.explorer(torch.sin, x3.float())",
  "r.jacobian.dtype == D and close(r.jacobian, torch.diag(torch.cos(x3.float().double())), rtol=1e-6)",
  "float64 matrix, diag(cos x)", group="dtype")
P("ex_lambda_name", T, "ga.explorer(lambda t: t * 2, x3)", "r.name == 'fn'", "docstring: 'fn' for a lambda")
P("ex_html_escape", T, "ga.explorer(lambda t: t * 2, x3, name='<script>alert(1)</script>')._repr_html_()",
  "'<script>alert(1)</script>' not in r", "the name is escaped in the HTML", group="misuse")
P("ex_noncontig", T, "ga.explorer(lambda t: t.sum(0), XB.t())", "close(r.jacobian, jr(lambda t: t.sum(0), XB.t().contiguous()).reshape(4, 12))",
  "jacrev as a matrix", group="layout")
E("ex_too_many_outputs", T, "ga.explorer(lambda t: t.repeat(6), x3)", ("16", "y", "entries"))
E("ex_J_too_big", T, "ga.explorer(lambda t: t.sum(), torch.ones(300))", ("256", "J", "entries"))
E("ex_nan_J", T, "ga.explorer(torch.sqrt, torch.tensor([0.0, 1.0]))", ("NaN", "Inf", "J"), group="values")
E("ex_v_complex", T, "ga.explorer(lambda t: t * 2, x3, v=torch.ones(3, dtype=C))", ("v", "complex"), group="dtype")
E("ex_v_nan", T, "ga.explorer(lambda t: t * 2, x3, v=[NAN, 1.0, 1.0])", ("v", "NaN"), group="values")
E("ex_v_shape", T, "ga.explorer(lambda t: t * 2, x3, v=[1.0, 1.0])", ("v", "shape"))
E("ex_digits18", T, "ga.explorer(lambda t: t * 2, x3, digits=18)", ("digits",), group="options")
E("ex_name_int", T, "ga.explorer(lambda t: t * 2, x3, name=3)", ("name",), group="options")
E("ex_x_int", T, "ga.explorer(lambda t: t * 2, torch.arange(3))", ("x", "float", "dtype"), group="dtype")
E("ex_x_empty", T, "ga.explorer(lambda t: t.sum(), torch.empty(0))", ("x", "empty"), group="layout")
E("ex_x_meta", T, "ga.explorer(lambda t: t * 2, torch.empty(3, device='meta'))", ("meta",), group="device")
E("ex_vjp_shape", "VJPExplorer.vjp", "explorer_doc().vjp([1.0, 2.0, 3.0])", ("v", "shape"))
P("ex_data", "VJPExplorer.data", "explorer_doc().data()", "isinstance(r, dict) and len(r) > 0",
  "a dict of data-* attributes")
T = "plot.jacobian_heatmap"
P("hm_basic", T, "heat(jr(mix, x3), (2,))", "'Axes' in r", "an Axes")
P("hm_nan", T, "heat(torch.tensor([[NAN, 1.0], [INF, -1.0]]), (2,))", "'Axes' in r",
  "NaN/Inf entries still drawn", group="values")
P("hm_zero", T, "heat(torch.zeros(3, 3), (3,))", "'Axes' in r", "an all-zero Jacobian drawn", group="values")
P("hm_f16", T, "heat(torch.eye(3, dtype=torch.float16), (3,))", "'Axes' in r", "a real float16 J",
  group="dtype")
P("hm_annotate", T, "heat(torch.eye(3), (3,), annotate=True, title='t')", "'Axes' in r", "options")
E("hm_complex", T, "heat(torch.eye(2, dtype=C), (2,))", ("complex",), group="dtype")
E("hm_meta", T, "heat(torch.empty(2, 2, device='meta'), (2,))", ("meta",), group="device")
E("hm_out_shape_bad", T, "heat(torch.eye(2), (3,))", ("out_shape", "shape"))
E("hm_not_tensor", T, "heat([[1.0]], (1,))", ("jac", "tensor"))

# ---------------------------------------------------------------- trace_backward & drawings
T = "trace_backward"
P("tb_doc", T, "tb_doc()",
  "r['arrived'] == [('d = log(c)', 1.0), ('c = 8 * b', 0.005), ('b = a * a', 0.04), ('a', 0.4)] and abs(float(r['agrad']) - 0.4) < 1e-6",
  "docstring example")
P("tb_cotangent_sent", T, "(lambda t: (float(t.cotangent('c')), float(t.sent('b', 'a'))))(tb_doc()['t'])",
  "abs(r[0] - 0.005) < 1e-7 and abs(r[1] - 0.4) < 1e-6",
  "dd/dc = 1/c = 0.005; b = a·a sends 0.04·2a = 0.4 to a")
P("tb_use_grad", T, "tb_use_grad()",
  "r['agrad'] is None and any(abs(float(g) - 0.4) < 1e-6 for g in r['leaves'].values())",
  "docstring: no .grad touched, the leaf's gradient recorded", group="side-effects")
P("tb_inputs", T, "tb_inputs()", "torch.equal(r['agrad'], torch.tensor([3.0, 4.0])) and r['bgrad'] is None",
  "as backward(inputs=[a])", group="side-effects")
P("tb_existing_grad", T, "tb_existing_grad()", "torch.equal(r['agrad'], torch.tensor([3.0, 5.0])) and not r['hooks']",
  "accumulates as backward does, no hooks left (docstring Notes)", group="side-effects")
P("tb_retain", T, "tb_retain()", "abs(float(r) - 0.8) < 1e-6", "two passes accumulate 2 × 0.4",
  group="options")
E("tb_twice", T, "tb_twice()", ("retain_graph", "second time", "freed"), allow=(RuntimeError,),
  oracle="docstring: RuntimeError, the graph was freed")
P("tb_sqrt0", T, "tb_sqrt0().first_nonfinite", "r is not None and 'sqrt' in (r.label + r.op + r.grad_fn).lower()",
  "sqrt at 0 received 1 and sent inf", group="values")
P("tb_nan_v", T, "tb_nan_v().first_nonfinite", "r is not None and r.key == 0",
  "docstring: v itself holds NaN: the output's node", group="values")
P("tb_complex", T, "tb_complex()", "close(r['got'], r['ref'])", "same .grad as a plain backward",
  group="dtype")
P("tb_embedding_sparse", T, "tb_embedding()", "r['grad'] is not None and r['grad'].is_sparse",
  "docstring: sparse gradients recorded as sparse; .grad as backward", group="layout")
P("tb_to_dot", T, "tb_simple().to_dot()", "'digraph' in r", "Graphviz DOT text")
P("tb_to_svg", T, "tb_simple().to_svg()", "r.startswith('<svg') and xml_ok(r)", "well-formed SVG")
P("tb_names_escape", T, "tb_names_escape().to_svg()", "xml_ok(r)",
  "names with < & ' \" must keep the SVG well-formed", group="misuse")
P("tb_title_escape", "trace_svg", "ga.trace_svg(tb_simple(), title='a < b & \"c\"', source='<v>')",
  "xml_ok(r)", "title and source escaped", group="misuse")
P("tb_player", "BackwardTrace.player", "(lambda a, b, c, d: ga.trace_backward(d, names={'a': a, 'b': b, 'c': c, 'd': d}).player())(*chain())",
  "[s.local for s in r.steps[:3]] == ['local derivative × 0.005', 'local derivative × 8', 'local derivative × 5'] and r.steps[-1].sent == ('a.grad = 0.4',)",
  "docstring example")
P("tb_player_save", "BackwardPlayer.save", "pathlib.Path(tb_simple().player().save(tmpfile('p.html'))).read_text()",
  "'<' in r and 'html' in r.lower()", "a standalone HTML page")
P("tb_drawing_save_svg", "Drawing.save", "pathlib.Path(tb_simple().draw().save(tmpfile('t.svg'))).read_text()",
  "r.startswith('<svg')", "docstring example")
P("tb_drawing_save_html", "Drawing.save", "pathlib.Path(tb_simple().draw().save(tmpfile('t.html'))).read_text()",
  "'<svg' in r and 'html' in r.lower()", "a .html name writes a page")
E("tb_node_missing", "BackwardTrace.node", "tb_simple().node('nope')", ("nope",), allow=(KeyError,),
  oracle="KeyError naming the name")
E("tb_gradient_missing", T, "ga.trace_backward(torch.ones(2, requires_grad=True) * 2)", ("gradient",))
E("tb_gradient_shape", T, "ga.trace_backward(torch.ones(2, requires_grad=True) * 2, torch.ones(3))",
  ("gradient", "shape"))
E("tb_no_grad_output", T, "ga.trace_backward(torch.ones(2).sum())", ("output", "grad"))
E("tb_output_not_tensor", T, "ga.trace_backward(3.0)", ("output", "tensor"))
E("tb_names_not_tensor", T, "(lambda a: ga.trace_backward((a * 2).sum(), names={'a': 3.0}))(torch.ones(2, requires_grad=True))",
  ("names", "a", "tensor"))
E("tb_inputs_no_grad", T, "(lambda a: ga.trace_backward((a * 2).sum(), inputs=[torch.ones(2)]))(torch.ones(2, requires_grad=True))",
  ("inputs", "require"))
E("tb_meta", T, "tb_meta()", ("meta",), group="device")
E("tb_inference_output", T, "tb_inference_output()", ("output", "grad"), group="misuse")
P("tb_checkpoint_warns", T, "tb_checkpoint()", "any('checkpoint' in w.lower() for w in W)",
  "docstring: reentrant checkpoint regions warn", group="misuse")
T = "side_by_side"
P("sbs_two", T, "ga.side_by_side([tb_simple(), tb_simple()], titles=['a', 'b'])",
  "r.svg.count('<svg') >= 2", "two drawings")
E("sbs_titles_str", T, "ga.side_by_side([tb_simple()], titles='a')", ("titles",))
E("sbs_titles_len", T, "ga.side_by_side([tb_simple(), tb_simple()], titles=['a'])", ("titles",))
E("sbs_not_traces", T, "ga.side_by_side([1, 2])", ("traces", "trace"))
E("ts_not_trace", "trace_svg", "ga.trace_svg('x')", ("trace",))

# ---------------------------------------------------------------- why_no_grad
T = "why_no_grad"
P("wng_nonleaf", T, "wng_nonleaf().case", "r == 'non-leaf'", "docstring example")
P("wng_requires_grad_false", T, "(lambda w: ga.why_no_grad((w * 2).sum(), w.detach() * 0 + 1).case)(torch.tensor([1.0, 2.0], requires_grad=True))",
  "r == 'requires-grad-false'", "docstring example")
P("wng_nonfinite", T, "wng_nonfinite()", "r.case == 'nonfinite' and 'sqrt' in r.message",
  "docstring example")
P("wng_newleaf", T, "wng_newleaf().case", "r == 'new-leaf'", "docstring example")
P("wng_integer", T, "wng_integer().case", "r == 'integer-dtype'", "checked first", group="dtype")
P("wng_inference", T, "wng_inference().case", "r == 'inference-mode'", "created in inference mode")
P("wng_output_no_grad", T, "wng_output_no_grad().case", "r == 'output-no-grad'", "output without a graph")
P("wng_not_reachable", T, "wng_not_reachable().case", "r == 'not-reachable'", "w2 not in the graph")
P("wng_dead_relu", T, "wng_dead_relu().case", "r == 'zero'", "relu below 0 everywhere: zero")
P("wng_ok", T, "wng_ok()", "r['d'].case == 'not-run' and r['wgrad'] is None and close(r['d'].gradient, torch.tensor([2.0, 4.0]))",
  "before any backward(): 'not-run' (.grad not filled, docstring's order), gradient 2w, and "
  "nothing accumulated (Notes: nothing is changed) [oracle fixed after the run: it said 'ok']",
  group="side-effects")
P("wng_accumulated", T, "wng_accumulated().case", "r == 'accumulated'", "two passes summed")
P("wng_inplace", T, "wng_inplace().case", "r == 'modified-in-place'", "h edited after pow saved it")
P("wng_random", T, "wng_random()", "r['d'].case == 'random-forward' and r['rng_same']",
  "dropout: the two recomputations differ; the random state left as it was", group="misuse")
P("wng_unused_param", T, "wng_unused_param().case", "r == 'unused-parameter'",
  "no parameter of net[1] is in the graph")
P("wng_self", T, "wng_self().case", "r == 'ok'", "docstring: the output itself is ok")
E("wng_names_list", T, "wng_names_list()", ("names", "mapping"))
E("wng_module_str", T, "wng_module_str()", ("module",))
E("wng_tensor_float", T, "(lambda w: ga.why_no_grad((w * 2).sum(), 3.0))(torch.ones(2, requires_grad=True))",
  ("tensor",))
E("wng_output_str", T, "ga.why_no_grad('loss', torch.ones(2))", ("output",))

# ---------------------------------------------------------------- watch, draw_modules
T = "watch"
P("w_doc", T, "watch_basic()", "r['rows'] == ['0', '1', '2'] and r['summary'].startswith(('ok', 'gradients ok'))",
  "docstring example")
P("w_no_hooks_left", T, "watch_basic()['left']", "r is False", "docstring: no hook left behind",
  group="side-effects")
P("w_layers", "GradWatch.layers", "watch_basic()['layers']", "r == ['Linear', 'ReLU', 'Linear']",
  "innermost modules in forward order")
P("w_table", "GradWatch.table", "watch_basic()['table']", "isinstance(r, str) and 'Linear' in r",
  "aligned text")
P("w_dead_relu", "GradWatch.problems", "watch_dead()",
  "not r['summary'].startswith(('ok', 'gradients ok')) and any('dead' in p.lower() for p in r['problems'])",
  "bias -100: every ReLU unit dead")
P("w_sqrt_nonfinite", "GradWatch.first_nonfinite", "watch_sqrt()",
  "not r['summary'].startswith(('ok', 'gradients ok')) and r['first'] is not None and r['first'].kind == 'SqrtMod'",
  "sqrt at 0 receives a finite gradient and sends inf", group="values")
P("w_unused", "GradWatch.why_no_grad", "watch_unused()", "'never called' in r", "docstring example")
E("w_why_keyerror", "GradWatch.why_no_grad", "watch_keyerror()", ("nope",), allow=(KeyError,),
  oracle="KeyError naming the parameter")
P("w_no_params", T, "watch_no_params()", "not r.startswith(('ok', 'gradients ok'))",
  "docstring: a model without parameters gets no ok", group="misuse")
P("w_zero_before_step", T, "watch_zero_before_step()", "not r.startswith(('ok', 'gradients ok'))",
  "zero_grad between backward and step: the step read no gradient", group="misuse")
P("w_twice_same_graph", T, "watch_twice_same_graph()", "not r.startswith(('ok', 'gradients ok'))",
  "docstring: the same graph twice is a problem", group="misuse")
P("w_frozen", T, "watch_frozen()", "'0.weight' in r", "docstring: frozen parameters are named",
  group="misuse")
P("w_plot", "GradWatch.plot", "watch_plot()", "r == 'Figure'", "a matplotlib Figure")
P("w_draw", "draw_modules", "watch_draw()", "r.count('<rect class=\"ga-box\"') == 3", "docstring example")
E("w_full_steps_0", T, "ga.watch(net3(), full_steps=0)", ("full_steps",), group="options")
E("w_full_steps_str", T, "ga.watch(net3(), full_steps='3')", ("full_steps",), group="options")
E("w_model_not_module", T, "ga.watch(lambda t: t)", ("model", "Module"))
E("dm_not_record", "draw_modules", "ga.draw_modules(nn.Linear(2, 2))", ("record",))
E("dm_nothing", "draw_modules", "draw_nothing()", ("record", "ran", "run", "nothing"))
E("dm_expand_bad", "draw_modules", "draw_expand_bad()", ("nope",), allow=(KeyError,),
  oracle="KeyError naming the module")
