"""Blind cases, sixth set: situations taken from the world, written before any was run.

Every case restates, in new code and names, a situation somebody posted: a custom
``torch.autograd.Function`` (right ones and the buggy ones people reported), a
``y.backward(gradient=v)`` / ``autograd.grad(..., grad_outputs=v)`` question, a Jacobian, Hessian,
VJP or JVP computation, per-sample gradients, gradients that came back None / zero / NaN,
in-place errors, hooks, a training step.  The situations were found with a fixed list of 34
queries (``README_blind6.md``); ``# source:`` above each case names the thread, issue or page.

Oracles come from torch alone (``torch.func.jacrev`` / ``jacfwd`` / ``hessian`` / ``vjp``,
``torch.autograd.functional.jacobian``, ``torch.autograd.grad``, ``gradcheck`` in float64, math
by hand) and from gradarg's public docstrings and ``docs/`` for what a call returns or refuses.
No gradarg function was called while writing them; each call was run once against a
torch-only stub kept outside the repository.

Run by hand::

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/fuzz/run.py --cases cases_blind6 \\
        --out tests/fuzz/results_blind6.json
"""

from __future__ import annotations

import math

import torch
from casekit import D, Registry, S, close, close_notnan, jr, taj, vjp_ref  # noqa: F401  (close: in predicates)
from torch import nn
from torch.func import hessian, jacfwd, jacrev, vmap

import gradarg as ga

# used inside the cases' call and predicate strings
_IN_STRINGS = (math, close_notnan, jr, taj, vjp_ref, hessian, jacfwd, jacrev, vmap, S)

REG = Registry(globals())
E, P = REG.E, REG.P


def T(*v, dtype=D):
    return torch.tensor(v, dtype=dtype)


def rnd(*shape, seed=0, dtype=D):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype)


def leaf(t):
    return t.detach().clone().requires_grad_()


def seeded(make, seed=0):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return make()


def catch(f):
    try:
        return f()
    except Exception as e:  # noqa: BLE001
        return e


def isnan_at(t, i):
    return bool(torch.isnan(t.reshape(-1)[i]))


# ------------------------------------------------------------ custom Functions from threads
class PassAdd(torch.autograd.Function):  # a + b with (g, g): right
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, g


class IsrluNoUpstream(torch.autograd.Function):  # backward forgets grad_output (issue 4355)
    @staticmethod
    def forward(ctx, x):
        neg = torch.minimum(x, torch.zeros_like(x))
        r = torch.rsqrt(1.0 + neg * neg)
        ctx.save_for_backward(r)
        return x * r

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return r ** 3


class IsrluFixed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        neg = torch.minimum(x, torch.zeros_like(x))
        r = torch.rsqrt(1.0 + neg * neg)
        ctx.save_for_backward(r)
        return x * r

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r ** 3


class TanhAttn(torch.autograd.Function):  # (tanh(q kᵀ) v, tanh(q kᵀ)) with a hand backward
    @staticmethod
    def forward(ctx, q, k, v):
        a = torch.tanh(q @ k.T)
        ctx.save_for_backward(q, k, v, a)
        return a @ v, a

    @staticmethod
    def backward(ctx, go, ga_):
        q, k, v, a = ctx.saved_tensors
        gA = go @ v.T + ga_
        gS = gA * (1 - a * a)
        return gS @ k, gS.T @ q, a.T @ go


class TanhAttnBadV(TanhAttn):  # grad of v transposed the wrong way round: a @ go
    @staticmethod
    def backward(ctx, go, ga_):
        q, k, v, a = ctx.saved_tensors
        gA = go @ v.T + ga_
        gS = gA * (1 - a * a)
        return gS @ k, gS.T @ q, a @ go


class WithFlatSide(torch.autograd.Function):  # (x², zeros_like(x)) second output not differentiable
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        z = torch.zeros_like(x)
        ctx.mark_non_differentiable(z)
        return x * x, z

    @staticmethod
    def backward(ctx, g, gz):
        (x,) = ctx.saved_tensors
        return 2 * x * g


class ReluAlpha(torch.autograd.Function):  # functorch 207: setup_context, jvp ignores tangent
    generate_vmap_rule = True

    @staticmethod
    def forward(x, alpha):
        return x.clamp(min=0)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, alpha = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        ctx.alpha = alpha

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        gi = g.clone()
        gi[x < 0] = 0
        gi[x == 0] = ctx.alpha
        return gi, None

    @staticmethod
    def jvp(ctx, tx, talpha):
        (x,) = ctx.saved_tensors
        out = x.clone()
        out[x < 0] = 0
        out[x > 0] = 1
        out[x == 0] = ctx.alpha
        return out


class Square(torch.autograd.Function):  # LinkedIn notebook: right
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x


class ExpSaveOut(torch.autograd.Function):  # discuss 190094: saves its output, right
    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class LinearFn(torch.autograd.Function):  # docs' LinearFunction with needs_input_grad
    @staticmethod
    def forward(ctx, x, w, b=None):
        ctx.save_for_backward(x, w, b)
        out = x.mm(w.t())
        if b is not None:
            out = out + b.unsqueeze(0).expand_as(out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, w, b = ctx.saved_tensors
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = g.mm(w)
        if ctx.needs_input_grad[1]:
            gw = g.t().mm(x)
        if b is not None and ctx.needs_input_grad[2]:
            gb = g.sum(0)
        return gx, gw, gb


class LinearFnBadBias(LinearFn):  # bias grad as a mean instead of a sum
    @staticmethod
    def backward(ctx, g):
        x, w, b = ctx.saved_tensors  # noqa: RUF059  (as the source wrote it)
        return g.mm(w), g.t().mm(x), g.mean(0)


class SignSTE(torch.autograd.Function):  # bitorch STE: sign forward, identity backward
    @staticmethod
    def forward(ctx, x):
        return torch.sign(x)

    @staticmethod
    def backward(ctx, g):
        return g


class SignCancel(torch.autograd.Function):  # bitorch GradientCancellation
    @staticmethod
    def forward(ctx, x, thr):
        ctx.save_for_backward(x)
        ctx.thr = thr
        return torch.sign(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= ctx.thr).to(g.dtype), None


class SoftRound(torch.autograd.Function):  # shok SoftRound: backward scales by x / round(x)
    @staticmethod
    def forward(ctx, x):
        r = torch.round(x)
        ratio = torch.where(r != 0, x / torch.where(r != 0, r, torch.ones_like(r)),
                            torch.zeros_like(x))
        ctx.save_for_backward(ratio)
        return r

    @staticmethod
    def backward(ctx, g):
        (ratio,) = ctx.saved_tensors
        return g * ratio


class ClampWithGrad(torch.autograd.Function):  # CLIP-art clamp_with_grad
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.lo, ctx.hi = lo, hi
        ctx.save_for_backward(x)
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (g * (x - x.clamp(ctx.lo, ctx.hi)) >= 0), None, None


class ClippedRelu(torch.autograd.Function):  # apxml clipped ReLU, right away from 0 and C
    @staticmethod
    def forward(ctx, x, c):
        ctx.save_for_backward(x)
        ctx.c = c
        return x.clamp(0, c)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ((x > 0) & (x < ctx.c)).to(g.dtype), None


class ClippedReluBad(ClippedRelu):  # forgets the upper clip in backward
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > 0).to(g.dtype), None


class CubeOnce(torch.autograd.Function):  # backward made of detached math: no double backward
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x.detach() ** 2


class CapsuleNorm(torch.autograd.Function):  # capsule projection ‖W (WᵀW)⁻¹ Wᵀ x‖, hand backward
    @staticmethod
    def forward(ctx, x, w):
        P = w @ torch.linalg.inv(w.T @ w) @ w.T
        v = P @ x
        n = v.norm()
        ctx.save_for_backward(P, v, n)
        return n

    @staticmethod
    def backward(ctx, g):
        P, v, n = ctx.saved_tensors
        return g * (P @ v) / n, None


class HalfGradSquare(Square):  # a Square whose backward forgot the 2
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


# ------------------------------------------------------------ shared inputs and functions
X4 = T(-1.5, -0.3, 0.4, 2.0)
QKV = (leaf(rnd(3, 2, seed=1)), leaf(rnd(3, 2, seed=2)), leaf(rnd(3, 2, seed=3)))
LX, LW, LB = leaf(rnd(4, 3, seed=4)), leaf(rnd(2, 3, seed=5)), leaf(rnd(2, seed=6))
A10, B20 = T(10., 10.), T(20., 20.)
X123 = T(1., 2., 3.)
TMP = leaf(rnd(10, 5, seed=7))


def doubling_loop(t):  # tutorial: double until the norm reaches 1000
    y = t * 2
    while y.detach().norm() < 1000:
        y = y * 2
    return y


def decoder(t):
    return t ** 2


def metric(bp):
    J = ga.jacobian(decoder, bp, create_graph=True)
    return J.T @ J


def metric_ref(bp):
    J = jacrev(decoder)(bp)
    return J.T @ J


def gp_diag(gy):  # functorch 44
    res = torch.zeros(3, 5, dtype=gy.dtype)
    res.diagonal(2).copy_(gy)
    return res


def in_inference(f):
    with torch.inference_mode():
        return f()


def nograd_model():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(3, 4)
            self.l2 = nn.Linear(3, 4)

        def forward(self, t):
            with torch.no_grad():
                y = self.l1(t)
            return self.l2(t) + y
    return seeded(M, 3)


NGM = nograd_model()


def bce_grad(t):
    return ga.jacobian(lambda s: nn.functional.binary_cross_entropy(s, BCE_Y, reduction="sum"),
                       t, create_graph=True)


BCE_Y = T(0.2, 0.7, 1.0)


def rbf_sq(a, b):
    d = a - b
    return torch.exp(-(d * d).sum())


def rbf_norm(a, b):
    d = torch.linalg.norm(a - b)
    return torch.exp(-d * d)


RBF_A = rnd(4, seed=8)


def rbf_mixed_grad_norm(b):  # ∂/∂x1 of the norm form, as a function of x2 (create_graph)
    with torch.enable_grad():
        a = RBF_A.clone().requires_grad_()
        g, = torch.autograd.grad(rbf_norm(a, b), a, create_graph=True)
    return g


MLP = seeded(lambda: nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1)).double(), 9)


def mlp_out(t):
    return MLP(t).sum()


def resid(A, x1, x2):
    return ((x2 - (A @ x1.T).T) ** 2).sum()


QA = T(2., 1., 1., 3.).reshape(2, 2)


def cube_once_grad(t):  # gradient of Σ CubeOnce(t) with create_graph: cut by .detach()
    with torch.enable_grad():
        s = t if t.requires_grad else t.detach().requires_grad_()
        g, = torch.autograd.grad(CubeOnce.apply(s).sum(), s, create_graph=True)
    return g + 0 * t


def ce_penalty(t):  # issue 2210: l + Σ (∂l/∂x) x
    with torch.enable_grad():
        s = t if t.requires_grad else t.detach().requires_grad_()
        l = nn.functional.cross_entropy(s, CE_T)
        g, = torch.autograd.grad(l, s, create_graph=True)
        out = l + (g * s).sum()
    return out if t.requires_grad else out.detach()


CE_T = torch.tensor([1, 0, 1])


def stack_pows(X):
    return torch.stack((X.pow(2).sum(1), X.pow(3).sum(1), X.pow(4).sum(1)), 1)


PW, PB = rnd(4, 3, seed=10), rnd(4, seed=11)


def predict_one(x):
    return nn.functional.linear(x, PW, PB).tanh()


def tri_stencil(u):
    up = nn.functional.pad(u, (1, 1))
    return up[:-2] - 2 * u + up[2:] + torch.sin(u)


def tri(n):
    return torch.ones(n, n).triu(-1).tril(1).bool()


def arrow(n):
    a = torch.eye(n, dtype=torch.bool)
    a[0] = True
    a[:, 0] = True
    return a


def arrow_energy(u):
    return ((u[1:] - u[0]) ** 4).sum() + torch.exp(u).sum()


def chain_energy(u):
    return ((u[1:] - u[:-1]) ** 4).sum() + torch.exp(u).sum()


def cat_scaled(g):  # discuss 160635
    return torch.cat((g[:2] * 0, g[2:4] * 2, g[4:6] * 4))


# -------------------------- why_no_grad situations (each builds its own graph)
def nonleaf_after_backward():
    a = T(1., 2.).requires_grad_()
    b = a * 2
    c = b.sum()
    c.backward()
    return ga.why_no_grad(c, b, names={"b": b})


def nonleaf_before():
    a = T(1., 2.).requires_grad_()
    b = a * 2
    return ga.why_no_grad((b ** 2).sum(), b)


def output_itself():
    a, b = torch.tensor(1.0, requires_grad=True), torch.tensor(2.0, requires_grad=True)
    c = a * b
    c.backward(retain_graph=True)
    return ga.why_no_grad(c, c)


def cast_nonleaf():
    b = torch.rand(10, requires_grad=True).double()
    return ga.why_no_grad((b * b).sum(), b)


def dead_relu_diag():
    x = rnd(6, 3, seed=12).abs()
    W = leaf(rnd(3, 2, seed=13).abs() * -1)
    b = torch.full((2,), -5.0, dtype=D, requires_grad=True)
    loss = torch.relu(x @ W + b).sum()
    return ga.why_no_grad(loss, W, names={"W": W})


def tiny_net_diag(which):
    xs = T(0.5, 1.0, 2.0)
    ys = T(1.0, 2.0, 3.0)
    w1 = torch.tensor(-1.0, dtype=D, requires_grad=True)
    b1 = torch.tensor(-0.5, dtype=D, requires_grad=True)
    w2 = torch.tensor(0.7, dtype=D, requires_grad=True)
    b2 = torch.tensor(0.1, dtype=D, requires_grad=True)
    loss = ((w2 * torch.relu(w1 * xs + b1) + b2 - ys) ** 2).mean()
    return ga.why_no_grad(loss, {"w1": w1, "b1": b1, "w2": w2, "b2": b2}[which])


def magnitude_diag(after):
    gx = torch.zeros(3, dtype=D, requires_grad=True)
    gy = T(0., 1., 2.)
    mag = torch.sqrt(gx ** 2 + gy ** 2).sum()
    if after:
        mag.backward(retain_graph=False)
    return ga.why_no_grad(mag, gx, names={"gx": gx})


def where_log2_diag():
    x = T(0., 2., 3.).requires_grad_()
    y = torch.where(x > 2, torch.log2(x), 2 * x).sum()
    return ga.why_no_grad(y, x)


def rebuilt_loss():
    w = T(1., 2.).requires_grad_()
    loss = (w ** 3).sum()
    new = torch.tensor(loss.item(), requires_grad=True)
    return ga.why_no_grad(new, w)


def detached_input():
    x = T(1., 2.).requires_grad_()
    w = T(3., 4.).requires_grad_()
    y = (x.detach() * w).sum()
    return ga.why_no_grad(y, x)


def frozen_tensor():
    w = T(1., 2.)
    x = T(3., 4.).requires_grad_()
    return ga.why_no_grad((w * x).sum(), w)


def nograd_output():
    x = T(1., 2.).requires_grad_()
    with torch.no_grad():
        y = (x * 2).sum()
    return ga.why_no_grad(y, x)


def exp_output_edited():
    t = torch.arange(3.0, dtype=D, requires_grad=True)
    u = 2 * t
    uexp = u.exp()
    loss = uexp.sum()
    uexp[0] = 666
    return ga.why_no_grad(loss, t)


def exp_input_edited():
    t = torch.arange(3.0, dtype=D, requires_grad=True)
    u = 2 * t
    uexp = u.exp()
    loss = uexp.sum()
    u[0] = 666
    return ga.why_no_grad(loss, t)


def pow_input_edited():
    t = T(1., 2.).requires_grad_()
    u = t * 1
    y = (u ** 2).sum()
    u.add_(1)
    return ga.why_no_grad(y, t)


def trace_after_edit():
    t = torch.arange(3.0, dtype=D, requires_grad=True)
    uexp = (2 * t).exp()
    loss = uexp.sum()
    uexp[0] = 666
    return catch(lambda: ga.trace_backward(loss))


def accumulated_twice():
    w = T(1., -2.).requires_grad_()
    loss = (w ** 2).sum()
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    return ga.why_no_grad(loss, w)


def unused_param():
    m = seeded(lambda: nn.ModuleDict({"used": nn.Linear(2, 1), "spare": nn.Linear(2, 1)}), 14)
    loss = m["used"](torch.ones(3, 2)).sum()
    return ga.why_no_grad(loss, m["spare"].weight, module=m)


def int_tensor():
    x = T(1., 2.).requires_grad_()
    return ga.why_no_grad((x * 2).sum(), torch.tensor([1, 2]))


def eigvec_degenerate():
    A = torch.diag(T(1., 1., 2.)).requires_grad_()
    loss = torch.linalg.eigh(A)[1][:, 2].abs().sum()
    return ga.why_no_grad(loss, A)


def svd_rank_deficient():
    y = torch.zeros(6, 6, dtype=D)
    y[:, :3] = 1.0
    y[:, 3:] = 2.0
    y.requires_grad_()
    U, S, Vh = torch.linalg.svd(y)
    z = (U @ torch.diag_embed(S) @ Vh).sum()
    return ga.why_no_grad(z, y)


# -------------------------- hooks
def hooked_double(t):
    u = t * 1
    u.register_hook(lambda g: g * 2)
    return u


def node_hook_trace():
    a = torch.zeros(3, dtype=D, requires_grad=True)
    b = a.clone()
    h = b.grad_fn.register_hook(lambda gi, go: (go[0] * 2,))
    ga.trace_backward(b.sum(), names={"a": a})
    h.remove()
    return a.grad


def print_hook_trace():
    x = torch.tensor([2.0], dtype=D, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.clone()))
    y = (x ** 2 + 3 * x).sum()
    ga.trace_backward(y, names={"x": x})
    return x.grad, len(seen)


class Ident(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_full_backward_hook(lambda *a: None)

    def forward(self, t):
        return t


class ReluLinear(nn.Module):  # Captum issue 57157, fixed weights
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 1, bias=False)
        self.l2 = nn.Linear(3, 1, bias=False)
        self.l3 = nn.Linear(2, 1, bias=False)
        with torch.no_grad():
            self.l1.weight.copy_(torch.tensor([[3.0, 1.0, 0.0]]))
            self.l2.weight.copy_(torch.tensor([[2.0, 3.0, 0.0]]))
            self.l3.weight.copy_(torch.tensor([[1.0, 1.0]]))

    def forward(self, a, b):
        return self.l3(torch.cat((torch.relu(self.l1(a)), torch.relu(self.l2(b))), 1))


RLM = ReluLinear()
MSE_T = rnd(1, 5, seed=15, dtype=S)


def sum3_loss(a, b, c):
    return nn.functional.mse_loss(a + b + c, MSE_T)


# -------------------------- watch steps
def mlp_step(dead=False, frozen=False, zero_grad=True, steps=1):
    net = seeded(lambda: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)), 16)
    if dead:
        with torch.no_grad():
            net[0].bias.fill_(-100.0)
    if frozen:
        net[0].weight.requires_grad_(False)
    opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.01)
    xb = rnd(16, 4, seed=17, dtype=S)
    with ga.watch(net) as w:
        for _ in range(steps):
            if zero_grad:
                opt.zero_grad()
            loss = net(xb).pow(2).mean()
            loss.backward()
            opt.step()
    return w, net


def nobias_step():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 8, bias=False)

        def forward(self, t):
            return self.fc(t)
    m = seeded(M, 18)
    with ga.watch(m) as w:
        out = m(rnd(1, 4, seed=19, dtype=S))
        out.backward(rnd(1, 8, seed=20, dtype=S))
    return w, m


class ScaleParam(nn.Module):  # issue 117925
    def __init__(self):
        super().__init__()
        self.some_param = nn.Parameter(torch.tensor(1.0))

    def forward(self, t):
        return self.some_param * t


def scale_step():
    m = ScaleParam()
    with ga.watch(m) as w:
        m(torch.tensor(5.0)).backward()
    return w, m


def decay_step():
    model = seeded(lambda: nn.Linear(5, 2), 21)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, weight_decay=0.5)
    with ga.watch(model) as w:
        out = model(rnd(5, seed=22, dtype=S))
        loss = nn.functional.mse_loss(out, torch.tensor([1.0, 2.0]))
        opt.zero_grad()
        loss.backward()
        g = float(model.weight.grad.norm())
        opt.step()
    return w, g


def user_hook_step():
    net = seeded(lambda: nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1)), 23)
    calls = []
    net[0].register_full_backward_hook(lambda m, gi, go: calls.append(1))
    with ga.watch(net):
        net(rnd(2, 3, seed=24, dtype=S)).sum().backward()
    return len(calls), len(net[0]._backward_hooks)


# -------------------------- per-sample / saliency
PX, PY = rnd(5, 3, seed=25), rnd(5, seed=26)
TNX = T(1., 2., 3., 1., 2., .5).reshape(3, 2)
TNY = T(1., 2., .5)
SAL = seeded(lambda: nn.Sequential(nn.Flatten(), nn.Linear(18, 4)).double(), 27)
IMG = rnd(1, 2, 3, 3, seed=28)


def class_score(t):
    return SAL(t)[:, 2].sum()


PSNET = seeded(lambda: nn.Linear(3, 4).double(), 29)
PS_X, PS_T = rnd(6, 3, seed=30), torch.tensor([0, 1, 2, 3, 0, 1])


def per_sample_losses(Wt):
    out = torch.func.functional_call(PSNET, {"weight": Wt, "bias": PSNET.bias.detach()}, (PS_X,))
    return nn.functional.cross_entropy(out, PS_T, reduction="none")


def ref_per_sample(Wt):
    def one(x, t):
        o = torch.func.functional_call(PSNET, {"weight": Wt, "bias": PSNET.bias.detach()},
                                       (x[None],))
        return nn.functional.cross_entropy(o, t[None])
    return vmap(torch.func.grad(lambda W, x, t: nn.functional.cross_entropy(
        torch.func.functional_call(PSNET, {"weight": W, "bias": PSNET.bias.detach()},
                                   (x[None],)), t[None])), in_dims=(None, 0, 0))(Wt, PS_X, PS_T)


# =============================================================== custom-function
G = "custom-function"
# source: https://git.waymay.us/zhongwei/gh-tachyon-beep-skillpacks-plugins-yzmir-pytorch-engineering/raw/commit/52ec22cfac8965cbbd6156131aed5c4b0b893ba3/skills/using-pytorch-engineering/custom-autograd-functions.md
P("cf_passadd_right", "check_backward", "ga.check_backward(PassAdd.apply, leaf(rnd(3, seed=1)), leaf(rnd(3, seed=2)))",
  "r.status == 'agree'", "a + b with backward (g, g) is right (gradcheck passes)", G)
# source: https://github.com/pytorch/pytorch/issues/4355
P("cf_isrlu_no_upstream", "check_backward", "ga.check_backward(IsrluNoUpstream.apply, leaf(X4))",
  "r.status == 'wrong'", "backward ignores grad_output: gradcheck in float64 fails", G)
# source: https://github.com/pytorch/pytorch/issues/4355
P("cf_isrlu_fixed", "check_backward", "ga.check_backward(IsrluFixed.apply, leaf(X4))",
  "r.status == 'agree'", "g * r³ is the derivative of x (1+min(x,0)²)^(-1/2)", G)
# source: https://github.com/pytorch/pytorch/issues/4355
P("cf_isrlu_compare_v2", "compare_vjp", "ga.compare_vjp(IsrluNoUpstream.apply, X4, 2.0 * torch.ones(4, dtype=D))",
  "(not r.agree) and close(r.backward, torch.rsqrt(1 + X4.clamp(max=0) ** 2) ** 3, 1e-9) and close(r.reference, 2 * torch.rsqrt(1 + X4.clamp(max=0) ** 2) ** 3, 1e-5)",
  "backward gives r³ whatever v; vᵀJ = 2 r³", G)
# source: https://github.com/pytorch/pytorch/pull/67916
P("cf_attn_right", "check_backward", "ga.check_backward(TanhAttn.apply, *QKV)",
  "r.status == 'agree'", "hand backward of (tanh(qkᵀ)v, tanh(qkᵀ)) is right (gradcheck)", G)
# source: https://github.com/pytorch/pytorch/pull/60877
P("cf_attn_bad_v", "check_backward", "ga.check_backward(TanhAttnBadV.apply, *QKV)",
  "r.status == 'wrong' and len({p.input for p in r.pairs if not p.agree}) == 1 and len([p for p in r.pairs if not p.agree]) == 1",
  "only the block (first output, v) is wrong: a @ go instead of aᵀ @ go", G)
# source: https://github.com/pytorch/pytorch/issues/194869
P("cf_flat_side_output", "check_backward", "ga.check_backward(WithFlatSide.apply, leaf(rnd(3, seed=3)))",
  "r.status == 'agree'", "the differentiable output's backward is right; the other is marked non-differentiable", G)
# source: https://github.com/pytorch/functorch/issues/207
P("cf_relu_alpha_fd", "check_backward", "ga.check_backward(ReluAlpha.apply, leaf(T(-1.0, 2.0, 3.0)), 0.5, reference='finite-difference')",
  "r.status == 'agree'", "away from 0 the backward masks negatives: right", G)
# source: https://github.com/pytorch/functorch/issues/207
P("cf_relu_alpha_reverse", "jacobian", "ga.jacobian(lambda t: ReluAlpha.apply(t, 0.5), T(-1.0, 2.0, 3.0), method='reverse')",
  "close(r, torch.diag(T(0., 1., 1.)))", "rows from the hand backward: diag(0,1,1)", G)
# source: https://github.com/pytorch/functorch/issues/207
P("cf_relu_alpha_forward", "jacobian", "ga.jacobian(lambda t: ReluAlpha.apply(t, 0.5), T(-1.0, 2.0, 3.0), method='forward')",
  "close(r, jacfwd(lambda t: ReluAlpha.apply(t, 0.5))(T(-1.0, 2.0, 3.0)))",
  "columns from the Function's own jvp (which ignores the tangent), as torch.func.jacfwd gives", G)
# source: https://github.com/LinkedInLearning/hands-on-ai-pytorch-machine-learning-4007017
P("cf_square_right", "check_backward", "ga.check_backward(Square.apply, leaf(T(3.0, -1.0)))",
  "r.status == 'agree'", "g·2x is right", G)
# source: https://github.com/LinkedInLearning/hands-on-ai-pytorch-machine-learning-4007017
P("cf_square_half", "check_backward", "ga.check_backward(HalfGradSquare.apply, leaf(T(1.0, -2.0, 3.0)))",
  "r.status == 'wrong' and r.pairs[0].pattern == 'factor'", "backward g·x is 1/2 of the derivative (docstring's pattern 'factor')", G)
# source: https://discuss.pytorch.org/t/save-the-gradient-of-the-intermediate-tensor/190094
P("cf_exp_saved_output", "check_backward", "ga.check_backward(ExpSaveOut.apply, leaf(T(3.0, 4.0)))",
  "r.status == 'agree'", "g·exp(x) from the saved output is right", G)
# source: https://discuss.pytorch.org/t/why-input-is-tensor-in-the-forward-function-when-extending-torch-autograd/9039
P("cf_linear_right", "check_backward", "ga.check_backward(LinearFn.apply, LX, LW, LB)",
  "r.status == 'agree'", "the docs' LinearFunction is right (gradcheck)", G)
# source: https://discuss.pytorch.org/t/why-input-is-tensor-in-the-forward-function-when-extending-torch-autograd/9039
P("cf_linear_bad_bias", "check_backward", "ga.check_backward(LinearFnBadBias.apply, LX, LW, LB)",
  "r.status == 'wrong' and len({p.input for p in r.pairs if not p.agree}) == 1",
  "bias gradient averaged over 4 rows: only the bias block is wrong", G)
# source: https://discuss.pytorch.org/t/why-input-is-tensor-in-the-forward-function-when-extending-torch-autograd/9039
P("cf_linear_bias_nograd", "check_backward", "ga.check_backward(LinearFn.apply, LX, LW, rnd(2, seed=6))",
  "r.status == 'agree' and len(r.skipped) >= 1", "a bias without requires_grad is passed through and listed in skipped", G)
# source: https://bitorch.readthedocs.io/en/latest/_autosummary/bitorch.quantizations.base.STE.html
P("cf_ste_sign_plain", "check_backward", "ga.check_backward(SignSTE.apply, leaf(T(-1.3, -0.4, 0.6, 1.7)))",
  "r.status == 'wrong' and r.pairs[0].pattern == 'not-derivative'",
  "sign is flat, backward passes g: a gradient where J is zero and the forward flat", G)
# source: https://bitorch.readthedocs.io/en/latest/_autosummary/bitorch.quantizations.base.STE.html
P("cf_ste_sign_expected", "check_backward", "ga.check_backward(SignSTE.apply, leaf(T(-1.3, -0.4, 0.6, 1.7)), expected=lambda g, x: g)",
  "r.status == 'agree'", "expected = identity: the backward does what it is meant to", G)
# source: https://bitorch.readthedocs.io/en/latest/_autosummary/bitorch.layers.qactivation.GradientCancellation.html
P("cf_sign_cancel_expected", "check_backward", "ga.check_backward(SignCancel.apply, leaf(T(-1.5, -0.4, 0.6, 2.0)), 1.0, expected=lambda g, x, thr: (g * (x.abs() <= thr).to(g.dtype), None))",
  "r.status == 'agree'", "masked identity as intended", G)
# source: https://bitorch.readthedocs.io/en/latest/_autosummary/bitorch.layers.qactivation.GradientCancellation.html
P("cf_sign_cancel_wrong_intent", "check_backward", "ga.check_backward(SignCancel.apply, leaf(T(-1.5, -0.4, 0.6, 2.0)), 1.0, expected=lambda g, x, thr: (g, None))",
  "r.status == 'wrong'", "against a plain identity the cancelled entries (|x|>1) differ", G)
# source: https://shok.readthedocs.io/en/stable/_modules/shok/utils/functions/soft_round.html
P("cf_softround_expected", "check_backward", "ga.check_backward(SoftRound.apply, leaf(T(0.7, 1.4, 2.6, -1.8)), expected=lambda g, x: g * x / torch.round(x))",
  "r.status == 'agree'", "backward g·x/round(x) as written", G)
# source: https://shok.readthedocs.io/en/stable/_modules/shok/utils/functions/soft_round.html
P("cf_softround_plain", "check_backward", "ga.check_backward(SoftRound.apply, leaf(T(0.7, 1.4, 2.6, -1.8)))",
  "r.status == 'wrong'", "round is flat between integers: the surrogate is not its derivative", G)
# source: https://github.com/joehalliwell/blog
P("cf_clampgrad_inside", "check_backward", "ga.check_backward(ClampWithGrad.apply, leaf(T(-0.5, 0.1, 0.8)), -1.0, 1.0)",
  "r.status == 'agree'", "inside [-1,1] clamp_with_grad passes g: the derivative", G)
# source: https://github.com/joehalliwell/blog
P("cf_clampgrad_outside", "check_backward", "ga.check_backward(ClampWithGrad.apply, leaf(T(-1.6, 0.1, 1.7)), -1.0, 1.0)",
  "r.status == 'wrong'", "outside the range it passes some g where clamp is flat", G)
# source: https://github.com/joehalliwell/blog
P("cf_clampgrad_expected", "check_backward", "ga.check_backward(ClampWithGrad.apply, leaf(T(-1.6, 0.1, 1.7)), -1.0, 1.0, expected=lambda g, x, lo, hi: (g * (g * (x - x.clamp(lo, hi)) >= 0), None, None))",
  "r.status == 'agree'", "the intended pseudo-gradient as expected", G)
# source: https://apxml.com/courses/advanced-pytorch/chapter-1-pytorch-internals-autograd/practice-custom-autograd
P("cf_clipped_relu", "check_backward", "ga.check_backward(ClippedRelu.apply, leaf(T(-1.0, 0.5, 2.0, 7.0)), 6.0)",
  "r.status == 'agree'", "mask 0<x<C is the derivative away from the kinks", G)
# source: https://apxml.com/courses/advanced-pytorch/chapter-1-pytorch-internals-autograd/practice-custom-autograd
P("cf_clipped_relu_bad", "check_backward", "ga.check_backward(ClippedReluBad.apply, leaf(T(-1.0, 0.5, 2.0, 7.0)), 6.0)",
  "r.status == 'wrong'", "x=7 > C gets a gradient the clipped forward does not have", G)
# source: https://github.com/pytorch/pytorch/issues/122198
P("cf_once_diff_hessian", "check_backward", "ga.check_backward(cube_once_grad, leaf(T(0.5, -1.0, 2.0)))",
  "r.status == 'wrong'", "gradient of Σx³ built through a detached backward: its backward is 0, the derivative 6x", G)
# source: https://github.com/pytorch/pytorch/issues/122198
P("cf_once_diff_compare", "compare_vjp", "ga.compare_vjp(cube_once_grad, T(0.5, -1.0, 2.0), torch.ones(3, dtype=D))",
  "(not r.agree) and close(r.reference, 6 * T(0.5, -1.0, 2.0), 1e-5) and close(r.backward, torch.zeros(3, dtype=D))",
  "reference 6x, backward 0", G)
# source: https://discuss.pytorch.org/t/how-gradcheck-works/25946
P("cf_capsule_norm", "check_backward", "ga.check_backward(CapsuleNorm.apply, leaf(rnd(4, seed=31)), rnd(4, 2, seed=32))",
  "r.status == 'agree'", "d‖Px‖/dx = P v/‖v‖ with P a symmetric projection (gradcheck)", G)
# source: https://github.com/KeKsBoTer/torch-dwt/issues/2
P("cf_dwt_float32", "check_backward", "ga.check_backward(lambda s: nn.functional.conv1d(s, torch.tensor([[[0.7071, 0.7071]], [[-0.7071, 0.7071]]]), stride=2), leaf(rnd(1, 1, 12, seed=33, dtype=S)))",
  "r.status == 'agree'", "a Haar DWT as a strided conv1d in float32 is right; gradcheck's float32 failure is rounding", G)

# =============================================================== grad-outputs
G = "grad-outputs"
# source: https://discuss.pytorch.org/t/why-do-we-need-to-pass-the-gradient-parameter-to-the-backward-function-in-pytorch/116079
P("go_mul_ones", "backward_vjp", "ga.backward_vjp(lambda t: t * B20, A10, T(1., 1.))",
  "close(r, T(20., 20.))", "F=a*b, gradient [1,1]: a.grad = b", G)
# source: https://discuss.pytorch.org/t/why-do-we-need-to-pass-the-gradient-parameter-to-the-backward-function-in-pytorch/116079
P("go_mul_twos", "backward_vjp", "ga.backward_vjp(lambda t: t * B20, A10, T(2., 2.))",
  "close(r, T(40., 40.))", "gradient [2,2] scales it: 2b", G)
# source: https://discuss.pytorch.org/t/why-use-a-different-tensor-for-computing-gradients-of-another-tensor/36210
P("go_tutorial_doubling", "backward_vjp", "ga.backward_vjp(doubling_loop, rnd(3, seed=34), T(0.1, 1.0, 0.0001))",
  "close(r, vjp_ref(doubling_loop, rnd(3, seed=34), T(0.1, 1.0, 0.0001)))", "v · 2^k, k from the data-dependent loop", G)
# source: https://discuss.pytorch.org/t/why-use-a-different-tensor-for-computing-gradients-of-another-tensor/36210
P("go_equals_weighted_sum", "backward_vjp", "ga.backward_vjp(lambda t: t.sin() * t, X123, T(0.5, -1.0, 2.0))",
  "close(r, jr(lambda t: (t.sin() * t * T(0.5, -1.0, 2.0)).sum(), X123))", "y.backward(v) = ∇(v·y)", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("go_scalar_square", "backward_vjp", "ga.backward_vjp(lambda t: t ** 2, torch.tensor(1.0, dtype=D), 1.0)",
  "close(r, torch.tensor(2.0, dtype=D))", "x=1, y=x²: 2", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("go_vector_numpy", "backward_vjp", "ga.backward_vjp(lambda t: t ** 2 + t.sum(), X123, T(1.0, 0.1, 0.01))",
  "close(r, T(1.0, 0.1, 0.01) @ (torch.diag(2 * X123) + torch.ones(3, 3, dtype=D)))", "vᵀJ with J = diag(2x) + 1", G)
# source: https://www.pythonclear.com/errors/runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/
P("go_ones_fix", "backward_vjp", "ga.backward_vjp(lambda t: t * T(8., 8.), T(5., 5.), torch.ones(2, dtype=D))",
  "close(r, T(8., 8.))", "A=x*y with gradient ones: y", G)
# source: https://www.pythonclear.com/errors/runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/
E("go_trace_no_gradient", "trace_backward", "ga.trace_backward(leaf(T(5., 5.)) * T(8., 8.))", ("gradient", "scalar"), group=G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("go_plus_two_ones", "backward_vjp", "ga.backward_vjp(lambda t: t + 2, torch.ones(2, 2, dtype=D), torch.ones(2, 2, dtype=D))",
  "close(r, torch.ones(2, 2, dtype=D))", "y=x+2: ones", G)
# source: https://stackoverflow.com/questions/54754153/autograd-grad-for-tensor-in-pytorch/54757383
P("go_mse_chain", "jacobian", "ga.jacobian(lambda t: nn.functional.mse_loss((t + 2) ** 2, torch.full((2, 2), 15.5, dtype=D)), torch.ones(2, 2, dtype=D))",
  "close(r, torch.full((2, 2), -19.5, dtype=D))", "dloss/dx = -19.5 everywhere (by hand)", G)
# source: https://stackoverflow.com/questions/54754153/autograd-grad-for-tensor-in-pytorch/54757383
P("go_mse_jacobian_rows", "jacobian", "ga.jacobian(lambda t: (t + 2) ** 2, torch.ones(2, 2, dtype=D))",
  "close(r, jr(lambda t: (t + 2) ** 2, torch.ones(2, 2, dtype=D))) and r.shape == (2, 2, 2, 2)", "Jacobian of the non-scalar y: shape y + x", G)
# source: https://wiki.gubat.org/content/stackoverflow.com_en_all_2023-11/questions/68778401/meaning-of-grad-outputs-in-pytorch-s-torch-autograd-grad
P("go_outer_ones", "backward_vjp", "ga.backward_vjp(lambda t: torch.outer(t, t), T(1., 2., 3., 4.), torch.ones(4, 4, dtype=D))",
  "close(r, T(20., 20., 20., 20.))", "2·Σx = 20 per entry", G)
# source: https://wiki.gubat.org/content/stackoverflow.com_en_all_2023-11/questions/68778401/meaning-of-grad-outputs-in-pytorch-s-torch-autograd-grad
E("go_outer_wrong_shape", "backward_vjp", "ga.backward_vjp(lambda t: torch.outer(t, t), T(1., 2., 3., 4.), torch.ones(4, dtype=D))", ("shape",), group=G)
# source: https://wiki.gubat.org/content/stackoverflow.com_en_all_2023-11/questions/68778401/meaning-of-grad-outputs-in-pytorch-s-torch-autograd-grad
P("go_outer_compare", "compare_vjp", "ga.compare_vjp(lambda t: torch.outer(t, t), T(1., 2., 3., 4.), torch.ones(4, 4, dtype=D))",
  "r.agree and close(r.backward, T(20., 20., 20., 20.))", "outer's backward is right", G)
# source: https://wiki.gubat.org/content/stackoverflow.com_en_all_2023-11/questions/68778401/meaning-of-grad-outputs-in-pytorch-s-torch-autograd-grad
P("go_outer_handJ", "compare_vjp", "ga.compare_vjp(lambda t: torch.outer(t, t), T(1., 2., 3., 4.), torch.ones(4, 4, dtype=D), reference=jr(lambda t: torch.outer(t, t), T(1., 2., 3., 4.)))",
  "r.agree", "with a Jacobian as the reference", G)
# source: https://github.com/pytorch/functorch/issues/44
P("go_copy_into_diagonal", "backward_vjp", "ga.backward_vjp(gp_diag, rnd(3, seed=35), torch.arange(15, dtype=D).view(3, 5))",
  "close(r, torch.diag(torch.arange(15, dtype=D).view(3, 5), 2))", "VJP of a copy_ into diagonal(2): diag(ggx, 2) = [2, 8, 14]", G)
# source: https://taourl.com/read-2445510.html
P("go_scalar_mul_then_inplace", "backward_vjp", "ga.backward_vjp(lambda t: (t * 2).add_(1), T(1., 2.), torch.ones(2, dtype=D))",
  "close(r, T(2., 2.))", "x*2 saves nothing, add_ after it is fine: 2", G)
# source: https://github.com/baihuaxie/dl-initial
P("go_sum_backward_self", "backward_vjp", "ga.backward_vjp(lambda t: t + T(1., -1.), T(0.5, 2.), T(1.5, 1.))",
  "close(r, T(1.5, 1.))", "y.backward(y) on x1+x2: x1.grad = y", G)
# source: https://github.com/baihuaxie/dl-initial
P("go_linear_out_out", "backward_vjp", "ga.backward_vjp(lambda t: t @ LW.detach().T, rnd(2, 3, seed=36), rnd(2, 3, seed=36) @ LW.detach().T)",
  "close(r, (rnd(2, 3, seed=36) @ LW.detach().T) @ LW.detach())", "out.backward(out) for a linear map: out W", G)
# source: https://github.com/pytorch/pytorch/issues/971
P("go_bool_mask_sum", "backward_vjp", "ga.backward_vjp(lambda t: t[torch.tensor([True, False, True])].sum(), X123, 1.0)",
  "close(r, T(1., 0., 1.))", "gradient through a boolean mask: [1,0,1]", G)
# source: https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html
P("go_tutorial_sin_chain", "backward_vjp", "ga.backward_vjp(lambda a: (2 * torch.sin(a) + 1).sum(), torch.linspace(0., 2 * math.pi, 25, dtype=D), 1.0)",
  "close(r, 2 * torch.cos(torch.linspace(0., 2 * math.pi, 25, dtype=D)))", "out = Σ(2 sin a + 1): a.grad = 2 cos a", G)
# source: https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html
P("go_tutorial_trace", "trace_backward", "(lambda a: (ga.trace_backward((2 * torch.sin(a) + 1).sum(), names={'a': a}), a.grad)[1])(torch.linspace(0., 2 * math.pi, 25, dtype=D).requires_grad_())",
  "close(r, 2 * torch.cos(torch.linspace(0., 2 * math.pi, 25, dtype=D)))", "after the traced backward a.grad is as after a plain backward", G)
# source: https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html
P("go_tutorial_trace_leaf_order", "trace_backward", "(lambda a: ga.trace_backward((2 * torch.sin(a) + 1).sum(), names={'a': a}))(torch.linspace(0., 2 * math.pi, 25, dtype=D).requires_grad_())",
  "len(r.executed) >= 4 and r.executed[0].key == 0", "every node runs; the output's node first", G)

# =============================================================== jacobian
G = "jacobian"
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("jac_cubic_three", "jacobian", "ga.jacobian(lambda t: t ** 3 + 4 * t - 10, T(2., 3., 4.))",
  "close(r, torch.diag(T(16., 31., 52.)))", "3x²+4 on the diagonal", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("jac_cubic_one", "jacobian", "ga.jacobian(lambda t: t ** 3 + 4 * t - 10, T(2.))",
  "close(r, T(16.).reshape(1, 1))", "one element: [[16]]", G)
# source: https://mdsite.deno.dev/https:/docs.pytorch.org/docs/stable/generated/torch.autograd.functional.jacobian.html
P("jac_exp_reducer", "jacobian", "ga.jacobian(lambda t: t.exp().sum(dim=1), rnd(2, 2, seed=37))",
  "close(r, taj(lambda t: t.exp().sum(dim=1), rnd(2, 2, seed=37))) and r.shape == (2, 2, 2)", "shape y + x, zero cross blocks", G)
# source: https://mdsite.deno.dev/https:/docs.pytorch.org/docs/stable/generated/torch.autograd.functional.jacobian.html
P("jac_exp_adder_tuple", "jacobian", "ga.jacobian(lambda a, b: 2 * a.exp() + 3 * b, (rnd(2, seed=38), rnd(2, seed=39)))",
  "close(r, (torch.diag(2 * rnd(2, seed=38).exp()), 3 * torch.eye(2, dtype=D)))", "tuple inputs: one block each", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("jac_two_outputs_stack", "jacobian", "ga.jacobian(lambda t: torch.stack([t[0] ** 2 + t[1] ** 2, t[0] * t[1]]), T(3., 4.))",
  "close(r, T(6., 8., 4., 3.).reshape(2, 2))", "[[2x1, 2x2], [x2, x1]] at (3,4)", G)
# source: https://discuss.pytorch.org/t/note-computing-jacobian-with-vmap-and-grad-for-multiple-outputs/204567
P("jac_tuple_outputs", "jacobian", "ga.jacobian(lambda t: (t ** 2, t.sum()), X123)",
  "close(r, (torch.diag(2 * X123), torch.ones(3, dtype=D)))", "tuple outputs: (diag 2x, ones)", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("jac_square_forward", "jacobian", "ga.jacobian(lambda t: t ** 2, X123, method='forward')",
  "close(r, torch.diag(2 * X123))", "columns by forward mode", G)
# source: https://github.com/pytorch/pytorch/issues/77015
P("jac_metric_derivative", "jacobian", "ga.jacobian(metric, T(1.5, -0.5))",
  "close(r, jacrev(metric_ref)(T(1.5, -0.5)))", "d(JᵀJ)/dx with J from a create_graph Jacobian: 8x on [i,i,i]", G)
# source: https://github.com/pytorch/pytorch/issues/77015
P("jac_metric_entry", "jacobian", "ga.jacobian(metric, T(1.5, -0.5))",
  "abs(float(r[0, 0, 0]) - 12.0) < 1e-9 and abs(float(r[1, 1, 1]) + 4.0) < 1e-9", "8·x_i on the diagonal: 12 and -4 (by hand)", G)
# source: https://github.com/pytorch/pytorch/issues/49830
P("jac_captured_only", "jacobian", "ga.jacobian(lambda t: TMP.sum(), rnd(10, 5, seed=7))",
  "close(r, torch.zeros(10, 5, dtype=D))", "output independent of the input: a zero block (docs)", G)
# source: https://github.com/pytorch/pytorch/issues/49830
P("jac_captured_strict", "jacobian", "catch(lambda: ga.jacobian(lambda t: TMP.sum(), rnd(10, 5, seed=7), strict=True))",
  "isinstance(r, RuntimeError)", "strict=True raises RuntimeError when the output is independent of the input", G)
# source: https://github.com/pytorch/functorch/issues/847
P("jac_under_vmap_norm", "jacobian", "vmap(lambda xi: ga.jacobian(lambda s: torch.linalg.norm(s, dim=0, keepdim=True), xi))(rnd(5, 3, seed=40))",
  "close(r, torch.stack([jr(lambda s: torch.linalg.norm(s, dim=0, keepdim=True), rnd(5, 3, seed=40)[n]) for n in range(5)]))",
  "under vmap every row gets its own Jacobian", G)
# source: https://github.com/pytorch/tutorials/pull/426
P("jac_row_convention", "jacobian", "ga.jacobian(lambda t: torch.stack([t[0] * t[1], t[2]]), T(2., 5., 7.))",
  "close(r, T(5., 2., 0., 0., 0., 1.).reshape(2, 3))", "J[i,j] = ∂y_i/∂x_j: 2×3, not its transpose", G)
# source: https://github.com/pytorch/pytorch/pull/130307
P("jac_inference_mode", "jacobian", "in_inference(lambda: ga.jacobian(torch.sin, X123))",
  "close(r, torch.diag(torch.cos(X123)))", "computed under inference_mode (docs)", G)
# source: https://github.com/pytorch/pytorch/issues/128600
P("jac_nograd_block_reverse", "jacobian", "ga.jacobian(NGM, torch.ones(1, 3), method='reverse')",
  "close(r, NGM.l2.weight.detach().reshape(1, 4, 1, 3), 1e-6, 1e-7)", "the no_grad branch is a constant: only l2's weight", G)
# source: https://github.com/pytorch/functorch/issues/292
P("jac_mse_three_args", "jacobian", "ga.jacobian(lambda W, b, d: ((d @ W.T + b - PY[:2, None]) ** 2).mean(), (rnd(3, 3, seed=41), rnd(3, seed=42), rnd(2, 3, seed=43)))",
  "close(r, taj(lambda W, b, d: ((d @ W.T + b - PY[:2, None]) ** 2).mean(), (rnd(3, 3, seed=41), rnd(3, seed=42), rnd(2, 3, seed=43))))",
  "Jacobian of a loss w.r.t. (params, data)", G)
# source: https://github.com/pytorch/pytorch/issues/94925
P("jac_roll_scalar", "jacobian", "ga.jacobian(lambda t: torch.roll(t, 1), torch.tensor(0.0, dtype=D))",
  "close(r, torch.tensor(1.0, dtype=D))", "0-d roll: 1, shape ()", G)
# source: https://github.com/pytorch/functorch/issues/67
P("jac_forward_vs_reverse", "jacobian", "ga.jacobian(lambda t: torch.sin(t) * t, rnd(4, seed=44), method='forward')",
  "close(r, jr(lambda t: torch.sin(t) * t, rnd(4, seed=44)))", "JVP columns equal the VJP rows", G)
# source: https://github.com/pytorch/pytorch/pull/50915
P("jac_multi_in_out", "jacobian", "ga.jacobian(lambda a, b: ((a * a) @ b, a @ (a.sum(1) * b)), (rnd(5, 3, seed=45), rnd(3, 5, seed=46)))",
  "close(r, taj(lambda a, b: ((a * a) @ b, a @ (a.sum(1) * b)), (rnd(5, 3, seed=45), rnd(3, 5, seed=46))))",
  "nested tuple J[k][j]", G)
# source: https://github.com/pytorch/pytorch/issues/50584
P("jac_vectorize_true", "jacobian", "ga.jacobian(lambda t: t ** 2, rnd(5, seed=47), vectorize=True)",
  "close(r, torch.diag(2 * rnd(5, seed=47)))", "vectorize=True: same Jacobian", G)
# source: https://github.com/pytorch/pytorch/pull/184898
P("jac_forward_no_vectorize", "jacobian", "ga.jacobian(lambda t: t.exp(), rnd(3, seed=48), strategy='forward-mode')",
  "close(r, torch.diag(rnd(3, seed=48).exp()))", "forward mode without vectorize: torch refuses, gradarg computes it (docs)", G)
# source: https://github.com/pytorch/functorch/pull/234
P("jac_argnums_pair", "jacobian", "ga.jacobian(lambda a, b: a + b ** 2, (rnd(5, seed=49), rnd(5, seed=50)))",
  "close(r, (torch.eye(5, dtype=D), torch.diag(2 * rnd(5, seed=50))))", "(I, diag 2y)", G)
# source: https://github.com/pytorch/pytorch/pull/91319
P("jac_sin_diag", "jacobian", "ga.jacobian(torch.sin, rnd(5, seed=51))",
  "close(r, torch.diag(torch.cos(rnd(5, seed=51))))", "diag(cos x)", G)
# source: https://brain.tamnd.com/write/book/autodiff/05/4.md
P("jac_two_scalars", "jacobian", "ga.jacobian(lambda a, b: a ** 2 * b + torch.sin(b), (torch.tensor(1.5, dtype=D), torch.tensor(0.3, dtype=D)))",
  "close(r, (torch.tensor(2 * 1.5 * 0.3, dtype=D), torch.tensor(1.5 ** 2 + math.cos(0.3), dtype=D)))", "[2xy, x² + cos y]", G)
# source: https://chanlumerico.github.io/lucid/api/lucid.func/jvp
P("jac_jvp_ones", "jacobian", "ga.jacobian(lambda t: t ** 2, X123, method='forward') @ torch.ones(3, dtype=D)",
  "close(r, 2 * X123)", "J·1 = 2x", G)
# source: https://github.com/pytorch/pytorch/issues/57157
P("jac_captum_relu_linear", "jacobian", "ga.jacobian(RLM, (torch.ones(1, 3), torch.ones(1, 3)))",
  "close(r, (torch.tensor([[[[3., 1., 0.]]]]), torch.tensor([[[[2., 3., 0.]]]])), 1e-6)", "both ReLUs open: the first-layer weights", G)
# source: https://github.com/pytorch/pytorch/issues/598
P("jac_three_input_module", "jacobian", "ga.jacobian(sum3_loss, (rnd(1, 5, seed=52, dtype=S), rnd(1, 5, seed=53, dtype=S), rnd(1, 5, seed=54, dtype=S)))",
  "all(close(b, 2 * (rnd(1, 5, seed=52, dtype=S) + rnd(1, 5, seed=53, dtype=S) + rnd(1, 5, seed=54, dtype=S) - MSE_T) / 5, 1e-5, 1e-6) for b in r)",
  "each input gets 2(out - t)/5", G)
# source: https://github.com/pytorch/pytorch/issues/61446
P("jac_identity_full_hook", "jacobian", "ga.jacobian(Ident(), rnd(3, seed=55))",
  "close(r, torch.eye(3, dtype=D))", "a no-op full backward hook leaves the identity", G)
# source: https://www.codegenes.net/blog/pytorch-derivative-_cdist_backward
P("jac_cdist", "jacobian", "ga.jacobian(lambda a: torch.cdist(a, rnd(4, 3, seed=56)), rnd(5, 3, seed=57))",
  "close(r, taj(lambda a: torch.cdist(a, rnd(4, 3, seed=56)), rnd(5, 3, seed=57)), 1e-9)", "cdist Jacobian equals the looped row-by-row one (torch's batched cdist backward is wrong in 2.13, docs)", G)
# source: https://runebook.dev/ru/docs/pytorch/generated/torch.nn.functional.pairwise_distance
P("jac_pairwise_identical", "jacobian", "ga.jacobian(lambda a: nn.functional.pairwise_distance(a, rnd(2, 3, seed=58)), rnd(2, 3, seed=58))",
  "bool(torch.isfinite(r).all()) and close(r, jr(lambda a: nn.functional.pairwise_distance(a, rnd(2, 3, seed=58)), rnd(2, 3, seed=58)))",
  "identical points: eps keeps the Jacobian finite", G)
# source: https://iceory.github.io/page/2
P("jac_softmax", "jacobian", "ga.jacobian(lambda t: torch.softmax(t, 0), T(1., 2., 0.5))",
  "close(r, torch.diag(torch.softmax(T(1., 2., 0.5), 0)) - torch.outer(torch.softmax(T(1., 2., 0.5), 0), torch.softmax(T(1., 2., 0.5), 0)))",
  "y_i(δ_ij - y_j)", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("jac_log_softmax", "jacobian", "ga.jacobian(lambda t: torch.log_softmax(t, 0), T(1., 2., 0.5))",
  "close(r, torch.eye(3, dtype=D) - torch.softmax(T(1., 2., 0.5), 0).expand(3, 3))", "rows 1 - E(x_i), -E(x_k)", G)
# source: https://notesoncomputing.com/coding_interview/cross_entropy_softmax_grad
P("jac_ce_grad", "jacobian", "ga.jacobian(lambda z: nn.functional.cross_entropy(z[None], torch.tensor([1])), T(0.3, 1.2, -0.7))",
  "close(r, torch.softmax(T(0.3, 1.2, -0.7), 0) - T(0., 1., 0.))", "softmax(z) - onehot(y)", G)
# source: https://torchedup.dev/problems/backprop-softmax-cross-entropy?from=learn%3Abackpropagation
P("jac_ce_batch_sum", "backward_vjp", "ga.backward_vjp(lambda z: -(torch.log_softmax(z, 1) * torch.eye(3, dtype=D)[[0, 2]]).sum(1), rnd(2, 3, seed=59), torch.ones(2, dtype=D))",
  "close(r, torch.softmax(rnd(2, 3, seed=59), 1) - torch.eye(3, dtype=D)[[0, 2]])", "summed per-sample losses: y - target", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("jac_bmm", "jacobian", "ga.jacobian(lambda a: torch.bmm(a, T(1., 0., 0., 1., 1., 2., 3., 4.).reshape(2, 2, 2)), T(1., 2., 3., 4., 5., 6., 7., 8.).reshape(2, 2, 2))",
  "close(r, jr(lambda a: torch.bmm(a, T(1., 0., 0., 1., 1., 2., 3., 4.).reshape(2, 2, 2)), T(1., 2., 3., 4., 5., 6., 7., 8.).reshape(2, 2, 2))) and r.shape == (2, 2, 2, 2, 2, 2)",
  "batched products: block diagonal over the batch", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("jac_stack_pows", "jacobian", "ga.jacobian(stack_pows, torch.full((1, 5), 2.00094, dtype=D))",
  "close(r[0, :, 0, :], torch.stack([2 * torch.full((5,), 2.00094, dtype=D), 3 * torch.full((5,), 2.00094, dtype=D) ** 2, 4 * torch.full((5,), 2.00094, dtype=D) ** 3]))",
  "rows 2x, 3x², 4x³", G)

# =============================================================== hessian
G = "hessian"
# source: https://github.com/pytorch/pytorch/issues/59477
P("hes_bce_sum", "jacobian", "ga.jacobian(bce_grad, T(0.3, 0.6, 0.8))",
  "close(r, hessian(lambda s: nn.functional.binary_cross_entropy(s, BCE_Y, reduction='sum'))(T(0.3, 0.6, 0.8)), 1e-9)",
  "Hessian of BCE(sum) as the Jacobian of its gradient", G)
# source: https://github.com/LinkedInLearning/hands-on-ai-pytorch-machine-learning-4007017
P("hes_x0sq_x1cube", "jacobian", "ga.jacobian(lambda t: ga.jacobian(lambda s: s[0] ** 2 + s[1] ** 3, t, create_graph=True), T(1., 2.))",
  "close(r, torch.diag(T(2., 12.)))", "diag(2, 6·x1) = diag(2, 12)", G)
# source: https://github.com/LinkedInLearning/hands-on-ai-pytorch-machine-learning-4007017
P("hes_cube_second", "jacobian", "ga.jacobian(lambda t: ga.jacobian(lambda s: (s ** 3).sum(), t, create_graph=True), T(2.))",
  "close(r, T(12.).reshape(1, 1))", "d²x³/dx² at 2 = 12", G)
# source: https://github.com/pytorch/functorch/issues/1097
P("hes_rbf_squares", "jacobian", "ga.jacobian(lambda b: ga.jacobian(lambda a: rbf_sq(a, b), RBF_A, create_graph=True), RBF_A)",
  "close(r, 2 * torch.eye(4, dtype=D))", "∂²/∂x1∂x2 exp(-‖x1-x2‖²) at x1 = x2: 2I (by hand)", G)
# source: https://github.com/pytorch/pytorch/issues/92075
P("hes_rbf_norm_compare", "compare_vjp", "ga.compare_vjp(rbf_mixed_grad_norm, RBF_A.clone(), torch.ones(4, dtype=D))",
  "not r.agree", "the norm at 0 breaks the double backward; finite differences give 2·v", G)
# source: https://github.com/pytorch/functorch/issues/977
P("hes_mlp_inputs", "jacobian", "ga.jacobian(lambda t: ga.jacobian(mlp_out, t, create_graph=True), rnd(3, seed=60))",
  "close(r, hessian(mlp_out)(rnd(3, seed=60)), 1e-9)", "Hessian of a network output w.r.t. its input", G)
# source: https://github.com/pytorch/functorch/issues/597
P("hes_resid_vmapped", "jacobian", "vmap(lambda A, a, b: ga.jacobian(lambda M: ga.jacobian(lambda N: resid(N, a, b), M, create_graph=True), A))(rnd(3, 2, 2, seed=61), rnd(3, 4, 2, seed=62), rnd(3, 4, 2, seed=63))",
  "close(r, vmap(hessian(resid))(rnd(3, 2, 2, seed=61), rnd(3, 4, 2, seed=62), rnd(3, 4, 2, seed=63)), 1e-9)", "batched Hessians under vmap", G)
# source: https://torch-secorder.readthedocs.io/en/latest/api/core/hessian_diagonal.html
P("hes_quadratic_diag", "jacobian", "torch.diagonal(ga.jacobian(lambda t: ga.jacobian(lambda s: s @ QA @ s, t, create_graph=True), T(1., 2.)))",
  "close(r, T(4., 6.))", "diag of 2A = [4, 6]", G)
# source: https://github.com/pytorch/pytorch/issues/53903
P("hes_laplacian_trace", "jacobian", "torch.trace(ga.jacobian(lambda t: ga.jacobian(lambda s: torch.exp(-(s * s).sum()), t, create_graph=True), T(0.3, -0.2, 0.5)))",
  "abs(float(r) - float(torch.trace(hessian(lambda s: torch.exp(-(s * s).sum()))(T(0.3, -0.2, 0.5))))) < 1e-10", "Laplacian = trace of the input Hessian", G)
# source: https://github.com/pytorch/pytorch/issues/10223
P("hes_hvp_params", "backward_vjp", "ga.backward_vjp(lambda w: torch.func.grad(lambda u: ((PX @ u - PY) ** 2).mean() + (u ** 4).sum())(w), rnd(3, seed=64), T(1., -1., 0.5))",
  "close(r, hessian(lambda u: ((PX @ u - PY) ** 2).mean() + (u ** 4).sum())(rnd(3, seed=64)) @ T(1., -1., 0.5), 1e-9)", "HVP = VJP of the gradient (H symmetric)", G)
# source: https://github.com/pytorch/pytorch/issues/2210
P("hes_ce_double_backward", "jacobian", "ga.jacobian(ce_penalty, rnd(3, 2, seed=65))",
  "close(r, taj(ce_penalty, rnd(3, 2, seed=65)), 1e-9)", "gradient of l + Σ(∇l)·x through log_softmax's double backward", G)
# source: https://github.com/pytorch/pytorch/pull/91319
P("hes_sin_sum", "jacobian", "ga.jacobian(lambda t: ga.jacobian(lambda s: s.sin().sum(), t, create_graph=True), rnd(5, seed=66))",
  "close(r, torch.diag(-torch.sin(rnd(5, seed=66))))", "Hessian of Σ sin: diag(-sin x)", G)

# =============================================================== per-sample
G = "per-sample"
# source: https://crackedaicode.com/problems/parallel-map-vmap
P("ps_linear_sq", "jacobian", "ga.jacobian(lambda w: (PX @ w - PY) ** 2, rnd(3, seed=67))",
  "close(r, 2 * (PX @ rnd(3, seed=67) - PY)[:, None] * PX)", "row i = 2(w·X_i - y_i) X_i", G)
# source: https://crackedaicode.com/problems/jax-per-example-grad-via-vmap
P("ps_jax_mini", "jacobian", "ga.jacobian(lambda w: (w * T(1., 2.) - T(0., 0.)) ** 2, torch.tensor(1.0, dtype=D))",
  "close(r, T(2., 8.))", "[2, 8] per example", G)
# source: https://theneuralbase.com/jax/learn/beginner/vmap-with-grad-combination/
P("ps_three_pairs", "jacobian", "ga.jacobian(lambda w: (TNX @ w - TNY) ** 2, T(0.5, -0.3))",
  "close(r, 2 * (TNX @ T(0.5, -0.3) - TNY)[:, None] * TNX)", "per-example squared-loss gradients", G)
# source: https://pytorch.org/functorch/nightly/notebooks/per_sample_grads.html
P("ps_functional_call", "jacobian", "ga.jacobian(per_sample_losses, PSNET.weight.detach().clone())",
  "close(r, ref_per_sample(PSNET.weight.detach().clone()), 1e-9)", "Jacobian of per-sample losses = vmap(grad(functional_call))", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("ps_batch_dim_predict", "jacobian", "ga.jacobian(predict_one, rnd(6, 3, seed=68), batch_dim=0)",
  "close(r, vmap(jacrev(predict_one))(rnd(6, 3, seed=68))) and r.shape == (6, 4, 3)", "batch_dim=0: (B, Dout, Din)", G)
# source: https://deepxde.readthedocs.io/en/latest/modules/deepxde.gradients.html
P("ps_batch_dim_tanh", "jacobian", "ga.jacobian(lambda xi: torch.tanh(xi @ PW.T[:, :2]), rnd(4, 3, seed=69), batch_dim=0)",
  "close(r, vmap(jacrev(lambda xi: torch.tanh(xi @ PW.T[:, :2])))(rnd(4, 3, seed=69)))", "J[i,j] per sample", G)
# source: https://brain.tamnd.com/write/book/dl-pytorch/09/30/3/
P("ps_vanilla_saliency", "jacobian", "ga.jacobian(class_score, IMG)",
  "close(r, jr(class_score, IMG)) and r.shape == IMG.shape", "∂score/∂pixels, image-shaped", G)
# source: https://adataodyssey.com/input-x-gradients/
P("ps_input_times_grad", "backward_vjp", "ga.backward_vjp(SAL, IMG, torch.tensor([[0., 0., 1., 0.]], dtype=D)) * IMG",
  "close(r, jr(class_score, IMG) * IMG)", "input × gradient", G)

# =============================================================== sparse
G = "sparse"
# source: https://discuss.pytorch.org/t/sparse-jacobian-computation/160635
P("sp_cat_pattern", "jacobian_sparsity", "ga.jacobian_sparsity(cat_scaled, torch.rand(6), layout=torch.strided)",
  "r.dtype == torch.bool and torch.equal(r, torch.eye(6, dtype=torch.bool))", "x*0 keeps its entries (docs): the identity pattern", G)
# source: https://discuss.pytorch.org/t/sparse-jacobian-computation/160635
P("sp_cat_compressed", "jacobian", "ga.jacobian(cat_scaled, rnd(6, seed=70), sparsity=torch.eye(6, dtype=torch.bool))",
  "r.layout == torch.sparse_coo and close(r.to_dense(), torch.diag(T(0., 0., 2., 2., 4., 4.)))", "compressed with a diagonal pattern", G)
# source: https://arxiv.org/html/2501.17737v1
P("sp_tridiag_jacobian", "SparseJacobian", "(lambda sj: (sj.passes, sj(tri_stencil, torch.linspace(0, 1, 12, dtype=D))))(ga.SparseJacobian(tri(12)))",
  "r[0] == 3 and close(r[1].to_dense(), jr(tri_stencil, torch.linspace(0, 1, 12, dtype=D)))", "banded: 3 passes, exact", G)
# source: https://arxiv.org/html/2501.17737v1
P("sp_arrow_hessian", "SparseHessian", "(lambda sh: (sh.passes, sh(arrow_energy, torch.linspace(0, 1, 10, dtype=D))))(ga.SparseHessian(arrow(10)))",
  "r[0] == 2 and close(r[1].to_dense(), hessian(arrow_energy)(torch.linspace(0, 1, 10, dtype=D)))", "arrowhead: 2 products, exact", G)
# source: https://arxiv.org/html/2501.17737v1
P("sp_chain_hessian_pattern", "hessian_sparsity", "ga.hessian_sparsity(chain_energy, torch.zeros(6), layout=torch.strided)",
  "torch.equal(r, tri(6))", "local couplings: tridiagonal pattern", G)
# source: https://torch-secorder.readthedocs.io/en/latest/api/core/hessian_diagonal.html
P("sp_quadratic_pattern_full", "hessian_sparsity", "ga.hessian_sparsity(lambda s: s @ QA @ s, torch.zeros(2, dtype=D), layout=torch.strided)",
  "bool(r.all())", "xᵀAx with dense A couples every pair", G)
# source: https://torch-secorder.readthedocs.io/en/latest/api/core/hessian_diagonal.html
P("sp_quadratic_diag_pattern_certify", "jacobian", "catch(lambda: ga.jacobian(lambda t: 2 * QA @ t, T(1., 2.), sparsity=torch.eye(2, dtype=torch.bool), certify=3))",
  "isinstance(r, ValueError)", "a diagonal pattern misses 2A's off-diagonal: certify raises CertificateError (a ValueError)", G)
# source: https://iceory.github.io/page/2
P("sp_softmax_dense_pattern", "jacobian_sparsity", "ga.jacobian_sparsity(lambda t: torch.softmax(t, 0), torch.zeros(4), layout=torch.strided)",
  "bool(r.all())", "softmax couples every pair", G)

# =============================================================== none-grad
G = "none-grad"
# source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.is_leaf
P("ng_nonleaf_after", "why_no_grad", "nonleaf_after_backward()", "r.case == 'non-leaf'", "b = a*2 is not a leaf", G)
# source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.is_leaf
P("ng_nonleaf_before", "why_no_grad", "nonleaf_before()", "r.case == 'non-leaf'", "before backward too", G)
# source: https://github.com/baihuaxie/dl-initial
P("ng_output_itself", "why_no_grad", "output_itself()", "r.case == 'ok'", "the output itself: 'ok' (docs' order)", G)
# source: https://discuss.pytorch.org/t/what-is-the-purpose-of-is-leaf/87000
P("ng_cast_nonleaf", "why_no_grad", "cast_nonleaf()", "r.case == 'non-leaf'", "a dtype cast of a leaf is not a leaf", G)
# source: https://ai.stackexchange.com/questions/39853/how-does-gradient-descent-work-with-relu-if-weights-are-negative
P("ng_dead_relu", "why_no_grad", "dead_relu_diag()", "r.case == 'zero'", "every unit's pre-activation < 0: exactly zero", G)
# source: https://datascience.stackexchange.com/questions/123289/finding-parameter-combinations-for-zero-gradients-in-an-artificial-neural-networ
P("ng_tiny_net_w1", "why_no_grad", "tiny_net_diag('w1')", "r.case == 'zero'", "w1 x + b1 < 0 on all data", G)
# source: https://datascience.stackexchange.com/questions/123289/finding-parameter-combinations-for-zero-gradients-in-an-artificial-neural-networ
P("ng_tiny_net_w2", "why_no_grad", "tiny_net_diag('w2')", "r.case == 'zero'", "w2 multiplies an all-zero activation", G)
# source: https://datascience.stackexchange.com/questions/123289/finding-parameter-combinations-for-zero-gradients-in-an-artificial-neural-networ
P("ng_tiny_net_b2", "why_no_grad", "tiny_net_diag('b2')", "r.case == 'ok'", "only b2 gets a nonzero gradient", G)
# source: https://www.book-ai.org/books/neural-networks/chapter-08/section-03
P("ng_tiny_net_b1", "why_no_grad", "tiny_net_diag('b1')", "r.case == 'zero'", "the dead unit's bias too", G)
# source: https://openillumi.com/en/en-fix-pytorch-cpu-nan-powbackward0
P("ng_magnitude_before", "why_no_grad", "magnitude_diag(False)", "r.case == 'nonfinite'", "sqrt at 0 times 0: NaN", G)
# source: https://openillumi.com/en/en-fix-pytorch-cpu-nan-powbackward0
P("ng_magnitude_after", "why_no_grad", "magnitude_diag(True)", "r.case == 'nonfinite'", "after backward, read from .grad", G)
# source: https://github.com/pytorch/pytorch/issues/108618
P("ng_where_log2", "why_no_grad", "where_log2_diag()", "r.case == 'nonfinite'", "log2 at 0 in the unselected branch", G)
# source: https://github.com/pytorch/pytorch/issues/108618
P("ng_where_log2_values", "backward_vjp", "ga.backward_vjp(lambda t: torch.where(t > 2, torch.log2(t), 2 * t), T(0., 2., 3.), torch.ones(3, dtype=D))",
  "isnan_at(r, 0) and close(r[1:], T(2.0, 1 / (3 * math.log(2))))", "[nan, 2, 0.4809] as torch gives", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("ng_rebuilt_loss", "why_no_grad", "rebuilt_loss()", "r.case == 'new-leaf'", "loss rebuilt from .item()", G)
# source: https://deadends.dev/pytorch/runtime-error-inplace/pt2-linux
P("ng_detached_input", "why_no_grad", "detached_input()", "r.case == 'not-reachable'", "x entered through .detach()", G)
# source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.is_leaf
P("ng_frozen_tensor", "why_no_grad", "frozen_tensor()", "r.case == 'requires-grad-false'", "requires_grad=False", G)
# source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.optimizer.step
P("ng_nograd_output", "why_no_grad", "nograd_output()", "r.case == 'output-no-grad'", "loss built under no_grad", G)
# source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
P("ng_exp_output_edited", "why_no_grad", "exp_output_edited()", "r.case == 'modified-in-place'", "exp saves its output, which was edited", G)
# source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
P("ng_exp_input_edited", "why_no_grad", "exp_input_edited()", "r.case == 'ok'", "exp does not save its input: editing u is harmless", G)
# source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
P("ng_pow_input_edited", "why_no_grad", "pow_input_edited()", "r.case == 'modified-in-place'", "x**2 saves its input", G)
# source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
P("ng_trace_after_edit", "trace_backward", "trace_after_edit()", "isinstance(r, RuntimeError)", "the backward fails: torch's RuntimeError (docs)", G)
# source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.optimizer.step
P("ng_accumulated", "why_no_grad", "accumulated_twice()", "r.case == 'accumulated'", "two backward passes without zero_grad", G)
# source: https://github.com/pytorch/pytorch/issues/54405
P("ng_unused_module", "why_no_grad", "unused_param()", "r.case == 'unused-parameter'", "a submodule never called", G)
# source: https://github.com/pytorch/pytorch/issues/971
P("ng_int_tensor", "why_no_grad", "int_tensor()", "r.case == 'integer-dtype'", "integer tensors cannot have gradients", G)
# source: https://github.com/pytorch/pytorch/issues/49886
P("ng_svd_rank_deficient", "why_no_grad", "svd_rank_deficient()", "r.case == 'ok'", "U diag(S) Vh of a rank-2 matrix: torch 2.13 gives a finite gradient (the report's NaN is gone)", G)
# source: https://github.com/pytorch/pytorch/issues/76531
P("ng_eigh_degenerate", "why_no_grad", "eigvec_degenerate()", "r.case == 'nonfinite'", "eigenvector of a matrix with a repeated eigenvalue", G)
# source: https://github.com/pytorch/pytorch/issues/47599
P("ng_eigvalsh_sum", "jacobian", "ga.jacobian(lambda A: torch.linalg.eigvalsh(A).sum(), torch.diag(T(1., 1., 2.)))",
  "close(r, torch.eye(3, dtype=D), 1e-9)", "Σλ = trace: gradient I even with degenerate λ", G)

# =============================================================== nan-grad
G = "nan-grad"
# source: https://github.com/pytorch/pytorch/issues/68425
P("nan_where_exp_f32", "backward_vjp", "ga.backward_vjp(lambda a: torch.where(a <= 0, torch.exp(a), 1 + a), torch.tensor([100.0]), torch.ones(1))",
  "bool(torch.isnan(r).all()) and r.dtype == torch.float32", "exp(100) overflows float32: 0·inf = NaN, as torch gives", G)
# source: https://github.com/pytorch/pytorch/issues/68425
P("nan_where_exp_f32_compare", "compare_vjp", "ga.compare_vjp(lambda a: torch.where(a <= 0, torch.exp(a), 1 + a), torch.tensor([100.0]), torch.ones(1))",
  "r.agree and r.note != ''", "NaN only in float32, float64 run finite and equal to the reference: an overflow of the dtype (docs)", G)
# source: https://github.com/pytorch/pytorch/issues/68425
P("nan_where_exp_f64_compare", "compare_vjp", "ga.compare_vjp(lambda a: torch.where(a <= 0, torch.exp(a), 1 + a), T(1000.0), torch.ones(1, dtype=D))",
  "r.status == 'DISAGREE'", "NaN in float64 too: disagrees (docs)", G)
# source: https://github.com/pytorch/pytorch/issues/18287
P("nan_where_cos_inf", "jacobian", "ga.jacobian(lambda t: torch.where(t < 1.0, torch.cos(t), torch.zeros_like(t)), T(0.0, math.inf))",
  "any('RuntimeWarning' in w for w in W) and float(r[0, 0]) == 0.0", "x holds inf: a RuntimeWarning; ∂y0/∂x0 = -sin 0", G, keys=("inf", "nan"))
# source: https://github.com/pytorch/pytorch/issues/156212
P("nan_where_exp_nan_input", "backward_vjp", "ga.backward_vjp(lambda t: torch.where(t <= 10, torch.exp(t), torch.ones_like(t)), T(1.0, math.nan, 1e10), torch.ones(3, dtype=D))",
  "close(r, vjp_ref(lambda t: torch.where(t <= 10, torch.exp(t), torch.ones_like(t)), T(1.0, math.nan, 1e10), torch.ones(3, dtype=D)))",
  "[e, nan, nan] as torch gives", G)
# source: https://github.com/pytorch/pytorch/issues/36923
P("nan_where_zero_div", "backward_vjp", "ga.backward_vjp(lambda t: torch.where(t >= 0.0, t, 0.0 * (t / 0.0)), torch.ones((), dtype=D), 1.0)",
  "bool(torch.isnan(r))", "0/0 in the unselected branch leaks NaN", G)
# source: https://github.com/pytorch/pytorch/issues/89543
P("nan_masked_mse_before", "backward_vjp", "ga.backward_vjp(lambda t: (torch.where(T(1., 0., 1.) > 0, t - T(1., math.nan, 2.), 0.0) ** 2).sum(), T(0.5, 0.5, 0.5), 1.0)",
  "close(r, T(-1.0, 0.0, -3.0))", "mask before squaring: finite", G)
# source: https://github.com/pytorch/pytorch/issues/89543
P("nan_masked_mse_after", "backward_vjp", "ga.backward_vjp(lambda t: torch.where(T(1., 0., 1.) > 0, (t - T(1., math.nan, 2.)) ** 2, 0.0).sum(), T(0.5, 0.5, 0.5), 1.0)",
  "isnan_at(r, 1) and close(r[[0, 2]], T(-1.0, -3.0))", "mask after squaring: 0·NaN at the masked entry", G)
# source: https://discuss.pytorch.org/t/nan-gradient-for-torch-cos-torch-acos/9617
P("nan_acos_parallel", "compare_vjp", "ga.compare_vjp(lambda x: x.norm() * torch.cos(2 * torch.acos((x @ T(1., 0.) / x.norm()).clamp(-1, 1))), T(2., 0.), 1.0)",
  "r.status == 'DISAGREE'", "acos' at 1 is inf, times 0: NaN in float64; the true gradient is [1, 0]", G)
# source: https://discuss.pytorch.org/t/nan-gradient-for-torch-cos-torch-acos/9617
P("nan_acos_identity_form", "backward_vjp", "ga.backward_vjp(lambda x: x.norm() * (2 * ((x @ T(1., 0.) / x.norm()).clamp(-1, 1)) ** 2 - 1), T(2., 0.), 1.0)",
  "close(r, vjp_ref(lambda x: x.norm() * (2 * ((x @ T(1., 0.) / x.norm()).clamp(-1, 1)) ** 2 - 1), T(2., 0.), torch.tensor(1.0, dtype=D)))",
  "cos 2θ = 2c² - 1: finite, as torch gives", G)
# source: https://samliu.github.io/2019/03/27/tf-norm.html
P("nan_norm_sq_point1", "jacobian", "ga.jacobian(lambda t: torch.linalg.vector_norm(t * t), torch.tensor(0.1, dtype=D))",
  "close(r, torch.tensor(0.2, dtype=D))", "d|x²|/dx = 2x = 0.2", G)
# source: https://samliu.github.io/2019/03/27/tf-norm.html
P("nan_norm_sq_zero", "jacobian", "ga.jacobian(lambda t: torch.linalg.vector_norm(t * t), torch.tensor(0.0, dtype=D))",
  "close(r, jr(lambda t: torch.linalg.vector_norm(t * t), torch.tensor(0.0, dtype=D)))", "torch's norm-at-0 convention (0), no NaN", G)
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1
P("nan_softplus_margin_zero", "why_no_grad", "(lambda m: ga.why_no_grad(nn.functional.softplus(1.0 - 1.0 / (m + torch.sign(m) * 1e-10)) * torch.abs(m + torch.sign(m) * 1e-10), m))(torch.tensor(0.0, dtype=D, requires_grad=True))",
  "r.case == 'nonfinite'", "sign(0) = 0: division by zero in the forward, NaN gradient", G)

# =============================================================== kinks
G = "kinks"
# source: https://www.stepcodex.com/en/issue/torch-maximum-torch-clamp-min-gradients
P("kk_relu_at_zero", "jacobian", "ga.jacobian(torch.relu, torch.tensor(0.0, dtype=D))",
  "close(r, jr(torch.relu, torch.tensor(0.0, dtype=D)))", "torch's convention at 0", G)
# source: https://www.stepcodex.com/en/issue/torch-maximum-torch-clamp-min-gradients
P("kk_maximum_at_zero", "jacobian", "ga.jacobian(lambda t: torch.maximum(t, torch.tensor(0.0, dtype=D)), torch.tensor(0.0, dtype=D))",
  "close(r, jr(lambda t: torch.maximum(t, torch.tensor(0.0, dtype=D)), torch.tensor(0.0, dtype=D)))", "maximum's tie rule", G)
# source: https://www.stepcodex.com/en/issue/torch-maximum-torch-clamp-min-gradients
P("kk_clamp_min_at_zero", "jacobian", "ga.jacobian(lambda t: torch.clamp_min(t, 0.0), torch.tensor(0.0, dtype=D))",
  "close(r, jr(lambda t: torch.clamp_min(t, 0.0), torch.tensor(0.0, dtype=D)))", "clamp_min's rule at its bound", G)
# source: https://www.stepcodex.com/en/issue/torch-maximum-torch-clamp-min-gradients
P("kk_relu_fd_resolves", "jacobian", "ga.jacobian(torch.relu, T(0.0), method='finite-difference')",
  "r.shape == (1, 1) and (bool(torch.isnan(r).all()) or abs(float(r) - 0.5) < 1e-6)", "central difference of relu at 0 is 0.5 (or flagged NaN)", G)
# source: https://www.gitmemories.com/JuliaDiff/DiffRules.jl/issues/68
P("kk_max_tie", "jacobian", "ga.jacobian(lambda t: t.max(), T(1., 1.))",
  "close(r, T(0.5, 0.5))", "max with a tie splits the gradient", G)
# source: https://www.gitmemories.com/JuliaDiff/DiffRules.jl/issues/68
P("kk_clamp_bounds", "jacobian", "ga.jacobian(lambda t: torch.clamp(t, 1.0, 2.0), T(1., 2.))",
  "close(r, jr(lambda t: torch.clamp(t, 1.0, 2.0), T(1., 2.)))", "clamp at both bounds as torch", G)
# source: https://taourl.com/read-1944901.html
P("kk_min_unique", "jacobian", "ga.jacobian(lambda t: torch.min(t), T(3., 1., 2.))",
  "close(r, T(0., 1., 0.))", "[0,1,0]", G)
# source: https://taourl.com/read-1944901.html
P("kk_min_tie", "jacobian", "ga.jacobian(lambda t: torch.min(t), T(1., 1., 2.))",
  "close(r, T(0.5, 0.5, 0.))", "[0.5, 0.5, 0]", G)
# source: https://fizzez.github.io/2020/11/23/pytorch-differentiable
P("kk_abs_neg_and_zero", "jacobian", "ga.jacobian(torch.abs, T(-1., 0.))",
  "close(r, torch.diag(T(-1., 0.)))", "sign(x), 0 at 0", G)
# source: https://ai.stackexchange.com/questions/26426/why-is-tf-abs-non-differentiable-in-tensorflow
P("kk_relu_pair_abs", "jacobian", "ga.jacobian(lambda t: torch.relu(t) + torch.relu(-t), T(0.))",
  "close(r, T(0.).reshape(1, 1))", "relu(x)+relu(-x) at 0: 0", G)
# source: https://gitmemories.com/stan-dev/math/issues/3249
P("kk_max_via_abs", "jacobian", "ga.jacobian(lambda a, b: (a + b + torch.abs(a - b)) / 2, (torch.tensor(1.0, dtype=D), torch.tensor(1.0, dtype=D)))",
  "close(r, (torch.tensor(0.5, dtype=D), torch.tensor(0.5, dtype=D)))", "a=b: 1/2 each", G)
# source: https://discuss.pytorch.org/t/how-does-autograd-deal-with-non-differentiable-opponents-such-as-abs-and-max/34538/2
P("kk_abs_compare", "compare_vjp", "ga.compare_vjp(torch.abs, T(-2., 0.5, 3.), torch.ones(3, dtype=D))",
  "r.agree", "away from 0 abs' backward is right", G)
# source: https://www.zhenglinblog.top/2026/03/22/ai_infra/torch/pytorch_clamp
P("kk_clamp_product", "jacobian", "ga.jacobian(lambda a, b: torch.clamp(a * b, 1, 5).sum(), (T(1., 2., 3., 4.), T(1., 2., 1., 2.)))",
  "close(r[0], jr(lambda a: torch.clamp(a * T(1., 2., 1., 2.), 1, 5).sum(), T(1., 2., 3., 4.))) and close(r[1], jr(lambda b: torch.clamp(T(1., 2., 3., 4.) * b, 1, 5).sum(), T(1., 2., 1., 2.)))",
  "torch's clamp at 1 and 5 (a.grad [1,2,1,0] per the page at the clipped end)", G)
# source: https://reintech.io/blog/leveraging-pytorch-autograd-custom-gradients
P("kk_square_affine", "jacobian", "ga.jacobian(lambda x, w, b: (w * x + b) ** 2, (torch.tensor(2.0, dtype=D), torch.tensor(3.0, dtype=D), torch.tensor(1.0, dtype=D)))",
  "close(r, (torch.tensor(42.0, dtype=D), torch.tensor(28.0, dtype=D), torch.tensor(14.0, dtype=D)))", "(42, 28, 14); the page's 84 is wrong", G)

# =============================================================== hooks
G = "hooks"
# source: https://docs.pytorch.ac.cn/docs/2.9/generated/torch.Tensor.register_hook.html
P("hk_doubling_hook_vjp", "backward_vjp", "ga.backward_vjp(hooked_double, torch.zeros(3, dtype=D), T(1., 2., 3.))",
  "close(r, T(2., 4., 6.))", "a hook on fn's tensor doubles what backward gives", G)
# source: https://pytorch.org/docs/main/generated/torch.autograd.graph.Node.register_hook.html
P("hk_node_hook_trace", "trace_backward", "node_hook_trace()", "close(r, 2 * torch.ones(3, dtype=D))", "the node hook still doubles: a.grad = 2", G)
# source: https://github.com/LinkedInLearning/hands-on-ai-pytorch-machine-learning-4007017
P("hk_print_hook_trace", "trace_backward", "print_hook_trace()", "close(r[0], T(7.)) and r[1] == 1", "x²+3x at 2: 7; the user's hook ran once", G)
# source: https://github.com/pytorch/pytorch/issues/54405
P("hk_user_full_hook_watch", "watch", "user_hook_step()", "r == (1, 1)", "the user's full backward hook fires once and stays registered", G)

# =============================================================== training-step
G = "training-step"
# source: https://github.com/LinkedInLearning/hands-on-ai-pytorch-machine-learning-4007017
P("ts_healthy_summary", "watch", "mlp_step()[0].summary()", "r.startswith('gradients ok')", "a plain step: ok", G)
# source: https://github.com/pytorch/pytorch/issues/149938
P("ts_nobias_norm", "watch", "(lambda wm: (wm[0].parameters['fc.weight'].grad, float(wm[1].fc.weight.grad.norm())))(nobias_step())",
  "abs(r[0] - r[1]) <= 1e-5 * r[1]", "recorded norm = ‖.grad‖ after one pass", G)
# source: https://github.com/pytorch/pytorch/issues/117925
P("ts_scale_param", "watch", "scale_step()[0].parameters['some_param'].grad", "abs(r - 5.0) < 1e-5", "d(p·5)/dp = 5", G)
# source: https://androidkt.com/what-does-optimizer-step-and-scheduler-step-do/
P("ts_weight_decay_grad", "watch", "(lambda wg: (wg[0].parameters['weight'].grad, wg[1]))(decay_step())",
  "abs(r[0] - r[1]) <= 1e-5 * r[1]", "the pass gradient, before SGD's weight decay", G)
# source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.optimizer.step
P("ts_no_zero_grad_passes", "watch", "mlp_step(zero_grad=False, steps=2)[0].parameters['0.weight'].passes",
  "r == 2", "without zero_grad the last step's .grad sums two passes", G)
# source: https://www.book-ai.org/books/neural-networks/chapter-08/section-03
P("ts_dead_layer", "watch", "(lambda wn: (wn[0].summary(), wn[0].parameters['0.weight'].grad))(mlp_step(dead=True))",
  "not r[0].startswith('gradients ok') and r[1] == 0.0", "first layer dead: zero gradient, not ok", G)
# source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.optimizer.step
P("ts_frozen_layer", "watch", "mlp_step(frozen=True)[0].parameters['0.weight']",
  "r.grad is None and r.requires_grad is False", "a frozen weight gets no gradient", G)
# source: https://github.com/pytorch/pytorch/issues/149938
E("ts_watch_full_steps_zero", "watch", "ga.watch(nn.Linear(2, 2), full_steps=0)", ("full_steps",), group=G)
# source: https://github.com/pytorch/pytorch/issues/117925
E("ts_watch_not_module", "watch", "ga.watch(lambda t: t)", ("model", "Module"), group=G)

# =============================================================== misuse
G = "misuse"
# source: https://github.com/pytorch/pytorch/issues/4355
E("mu_check_tensor_not_fn", "check_backward", "ga.check_backward(Square.apply(leaf(X4)), leaf(X4))", ("fn", "callable"), group=G)
# source: https://github.com/pytorch/pytorch/issues/4355
E("mu_check_no_grad_input", "check_backward", "ga.check_backward(Square.apply, X4.clone())", ("requires grad", "requires_grad"), group=G)
# source: https://github.com/pytorch/pytorch/issues/49830
E("mu_vjp_independent", "backward_vjp", "ga.backward_vjp(lambda t: rnd(3, seed=72).sum() * 1.0, rnd(3, seed=71), 1.0)", ("require", "depend"), group=G)
# source: https://github.com/pytorch/pytorch/issues/971
E("mu_jacobian_int_input", "jacobian", "ga.jacobian(lambda t: t * 2.0, torch.tensor([1, 0, 1]))", ("dtype", "integer", "int64"), group=G)
# source: https://github.com/pytorch/pytorch/pull/184898
E("mu_jacobian_bad_strategy", "jacobian", "ga.jacobian(torch.sin, X123, strategy='sideways')", ("strategy",), group=G)

CASES = REG.cases
