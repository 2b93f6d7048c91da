"""Blind cases, seventh set: situations taken from the world, written before any was run.

Each case restates, in new code and names, a PyTorch gradient situation somebody posted: a
Jacobian of a network or of softmax, a Hessian-vector product, ``torch.func`` transforms,
complex gradients, float16 / bfloat16 models, custom ``torch.autograd.Function``s (right ones,
ones with a ``jvp``, ones returning the wrong number of gradients), ``retain_grad`` and hooks, a
gradient penalty, ``topk`` / ``cumprod`` / ``norm`` / ``det`` / ``eigvalsh`` at their awkward
points, implicit (fixed-point) layers, saliency and integrated gradients, embeddings, in-place
errors.  The situations were found with a fixed list of 30 queries (``README_blind7.md``);
``# source:`` above each case names the thread, issue or page.

Oracles come from torch alone (``torch.func.jacrev`` / ``jacfwd`` / ``hessian`` / ``vjp``,
``torch.autograd.functional``, ``torch.autograd.grad``, ``gradcheck`` in float64, math by hand)
and from gradarg's public docstrings for what a call returns or refuses.  No gradarg function
was called while writing them; each call was run once against a torch-only stub kept outside
the repository.

Run by hand::

    PYTHONPATH=src OMP_NUM_THREADS=1 python tests/fuzz/run.py --cases cases_blind7 \\
        --out tests/fuzz/results_blind7.json
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from casekit import D, Registry, S, close, close_notnan, jr, taj, vjp_ref  # noqa: F401  (close: in predicates)
from torch import nn
from torch.func import functional_call, hessian, jacfwd, jacrev, vmap

import gradarg as ga

# used inside the cases' call and predicate strings
_IN_STRINGS = (math, np, F, close_notnan, jr, taj, vjp_ref, hessian, jacfwd, jacrev, vmap,
               functional_call, S)

REG = Registry(globals())
E, P = REG.E, REG.P


# ------------------------------------------------------------------ small helpers
def T(*v, dtype=D):
    """A 1-D tensor of the given values (float64 unless told)."""
    return torch.tensor(v, dtype=dtype)


def rnd(*shape, seed=0, dtype=D):
    """Gaussian values from a private generator: the global random state is not touched."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=dtype)


def leaf(t):
    """A fresh leaf copy that requires grad."""
    return t.detach().clone().requires_grad_()


def seeded(make, seed=0):
    """Build something (a module) under its own seed, leaving the caller's random state alone."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return make()


def catch(f):
    """The value of ``f()``, or the exception it raised."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001
        return e


def tgrad(f, x, v=None):
    """``x.grad`` of ``f(x).backward(v)`` on a private leaf (torch alone)."""
    t = leaf(x)
    y = f(t)
    y.backward(torch.ones_like(y) if v is None else v)
    return t.grad


def grad_of(f):
    """``t -> ∇f(t)``, built with ``create_graph=True`` so that it can be differentiated again."""
    def g(t):
        with torch.enable_grad():
            if not t.requires_grad:
                t = t.detach().requires_grad_()
            return torch.autograd.grad(f(t), t, create_graph=True)[0]
    return g


def softmax_jac_hand(s):
    """``diag(s) - s sᵀ`` for a softmax output ``s`` (last dimension)."""
    return torch.diag_embed(s) - s.unsqueeze(-1) * s.unsqueeze(-2)


def cofactor3(A):
    """The cofactor matrix of a 3 × 3 matrix, by hand (the gradient of det: adj(A)ᵀ)."""
    C = torch.zeros_like(A)
    for i in range(3):
        for j in range(3):
            rows = [r for r in range(3) if r != i]
            cols = [c for c in range(3) if c != j]
            m = A[rows][:, cols]
            C[i, j] = (-1) ** (i + j) * (m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0])
    return C


# ------------------------------------------------------------------ networks
def mlp(n_in, n_hidden, n_out, seed=0, act=nn.Tanh):
    return seeded(lambda: nn.Sequential(nn.Linear(n_in, n_hidden), act(),
                                        nn.Linear(n_hidden, n_out)).double(), seed)


NET_3_4_2 = mlp(3, 4, 2, seed=1)
X3 = rnd(3, seed=2)

# flat-parameter MLP (a Jacobian "N × W": each sample's output against every weight)
XB = rnd(5, 3, seed=3)
N_W = 3 * 4 + 4 + 4 + 1


def mlp_flat(w, X=XB):
    W1, b1 = w[:12].reshape(4, 3), w[12:16]
    w2, b2 = w[16:20], w[20]
    return torch.tanh(X @ W1.T + b1) @ w2 + b2


W_FLAT = rnd(N_W, seed=4)
YB = rnd(5, seed=5)


def mlp_flat_loss(w):
    return ((mlp_flat(w) - YB) ** 2).mean()


# softmax classifier on one input (medium: "Computing the Jacobian matrix of a neural network")
W_SM, B_SM = rnd(3, 4, seed=6), rnd(3, seed=7)


def softmax_net(x):
    return torch.softmax(W_SM @ x + B_SM, dim=0)


X4 = rnd(4, seed=8)


# Hessian-vector products (docs of torch.autograd.functional.hvp / vhp)
def pow_reducer(x):
    return x.pow(3).sum()


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


def grads_pow_adder(x, y):
    with torch.enable_grad():
        x = x if x.requires_grad else x.detach().requires_grad_()
        y = y if y.requires_grad else y.detach().requires_grad_()
        return torch.autograd.grad(pow_adder_reducer(x, y), (x, y), create_graph=True)


X22 = rnd(2, 2, seed=9).abs() + 0.1
V22 = torch.ones(2, 2, dtype=D)
PX, PY = rnd(2, seed=10), rnd(2, seed=11)


def sin_sq(x):
    return (torch.sin(x) * x ** 2).sum()


X5 = rnd(5, seed=12)
V5x3 = rnd(5, 3, seed=13)

LIN33 = seeded(lambda: nn.Linear(3, 3).double(), seed=14)


def x_plus_ysq(x, y):
    return x + y ** 2


def sin_twice(x):
    return torch.sin(x), torch.sin(x)


def three_sums(x):
    return torch.stack([x.sum(), (2 * x).sum(), (x ** 2).sum()])


# per-example gradients (jax "vmap with grad"): loss of one sample (w·x - y)²
W2 = T(0.5, -0.3)
XS = T(1.0, 2.0, 3.0, 1.0, 2.0, 0.5).reshape(3, 2)
YS = T(1.0, 2.0, 0.5)


def per_example_losses(w):
    return (XS @ w - YS) ** 2


def one_sample_loss(xy):  # xy = [x0, x1, y]
    return (W2 @ xy[:2] - xy[2]) ** 2


XY = torch.cat([XS, YS[:, None]], dim=1)

POINT23 = T(1., 2., 3., 4., 5., 6.).reshape(2, 3)
VPOINT = T(1., 2., 3., 4., 5., 6.).reshape(2, 3)

# complex
ZC2 = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex128)
ZC22 = torch.tensor([[1 + 2j, 3 + 4j], [5 + 6j, 7 + 8j]], dtype=torch.complex128)
WREAL = rnd(3, seed=15)
ZCONST = torch.tensor([1 + 1j, 2 - 1j, 0.5j], dtype=torch.complex128)


def real_times_complex(w):
    return (w * ZCONST).sum()


def loop_copy_into_buffer(mu):
    buf = torch.empty(1, dtype=mu.dtype)
    total = 0
    for i in range(3):
        buf.detach_()
        buf.copy_(mu + i)
        total = total + (buf * torch.tensor([float(i)], dtype=mu.dtype)).sum()
    return total


# ------------------------------------------------------------------ custom Functions
class LinearFn(torch.autograd.Function):  # the docs' LinearFunction: right
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w.T + b

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, g.T @ x, g.sum(0)


class ExpJvp(torch.autograd.Function):  # exp with backward and a right jvp (classic style)
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        ctx.y = y
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y

    @staticmethod
    def jvp(ctx, t):
        return t * ctx.y


class ExpBadJvp(torch.autograd.Function):  # right backward, jvp off by a factor 2
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        ctx.y = y
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y

    @staticmethod
    def jvp(ctx, t):
        return 2 * t * ctx.y


SEEN_GRAD_OUTPUTS = []


class ExpSpy(torch.autograd.Function):  # discuss 190094: saves grad_output in backward
    @staticmethod
    def forward(ctx, i):
        result = torch.exp(i)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        SEEN_GRAD_OUTPUTS.append(grad_output.detach())
        return grad_output * result


class CubeNoJvp(torch.autograd.Function):  # right backward, no jvp (finufft issue)
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


class SpreadNoJvp(torch.autograd.Function):  # R^2 -> R^4, right backward, no jvp
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.stack([x[0] * x[1], x[0] ** 2, x[1] ** 2, x[0] + x[1]])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return torch.stack([g[0] * x[1] + 2 * x[0] * g[1] + g[3],
                            g[0] * x[0] + 2 * x[1] * g[2] + g[3]])


def spread_ref(x):
    return torch.stack([x[0] * x[1], x[0] ** 2, x[1] ** 2, x[0] + x[1]])


W_FP = rnd(3, 3, seed=16) * 0.2  # contractive: ‖W‖ well below 1


class FixedPointTanh(torch.autograd.Function):  # z* = tanh(W z* + x), backward by the IFT
    @staticmethod
    def forward(ctx, x):
        z = torch.zeros_like(x)
        for _ in range(200):
            z = torch.tanh(W_FP @ z + x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        d = 1 - z * z                       # tanh' at the fixed point
        A = torch.eye(len(z), dtype=z.dtype) - d[:, None] * W_FP   # I - ∂f/∂z
        u = torch.linalg.solve(A.T, g)      # uᵀ = gᵀ (I - ∂f/∂z)⁻¹
        return u * d                        # uᵀ ∂f/∂x


def fixed_point_unrolled(x):
    z = torch.zeros_like(x)
    for _ in range(200):
        z = torch.tanh(W_FP @ z + x)
    return z


class NewtonSqrt(torch.autograd.Function):  # jax custom_vjp of the thread, in torch: right
    @staticmethod
    def forward(ctx, x):
        y = torch.ones_like(x)
        for _ in range(40):
            y = 0.5 * (y + x / y)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * 0.5 / y


class NewtonSqrtWrongResidual(torch.autograd.Function):  # the pitfall: saves x, not y
    @staticmethod
    def forward(ctx, x):
        y = torch.ones_like(x)
        for _ in range(40):
            y = 0.5 * (y + x / y)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 0.5 / x


class AdderOneGrad(torch.autograd.Function):  # AdderNet issue: backward returns one gradient
    @staticmethod
    def forward(ctx, W, X):
        ctx.save_for_backward(W, X)
        return -(W.unsqueeze(1) - X.unsqueeze(0)).abs().sum(-1)

    @staticmethod
    def backward(ctx, g):
        W, X = ctx.saved_tensors
        diff = X.unsqueeze(0) - W.unsqueeze(1)
        return (diff * g.unsqueeze(-1)).sum(1)


class PreNormExtraNone(torch.autograd.Function):  # TileKernels PR: 5 inputs, 6 gradients
    @staticmethod
    def forward(ctx, x, fn, norm_eps, fuse_grad_acc, n_splits):
        ctx.save_for_backward(x, fn)
        return x * fn

    @staticmethod
    def backward(ctx, g):
        x, fn = ctx.saved_tensors
        return g * fn, g * x, None, None, None, None


class PoseTransformMissingNones(torch.autograd.Function):  # curobo: 4 inputs, 2 gradients
    @staticmethod
    def forward(ctx, pose, points, buf_a, buf_b):
        ctx.save_for_backward(pose, points)
        return points * pose

    @staticmethod
    def backward(ctx, g):
        pose, points = ctx.saved_tensors
        return g * points, g * pose


class KernelConvMissingNone(torch.autograd.Function):  # STFAN: (input, kernel, size) -> 2
    @staticmethod
    def forward(ctx, inp, kernel, kernel_size):
        ctx.save_for_backward(inp, kernel)
        return inp * kernel

    @staticmethod
    def backward(ctx, g):
        inp, kernel = ctx.saved_tensors
        return g * kernel, g * inp


A_SOLVE = T(3.0, 1.0, 0.0, 1.0, 4.0, 1.0, 0.0, 1.0, 5.0).reshape(3, 3)


class NumpySolve(torch.autograd.Function):  # backward leaves torch (scipy-style solver)
    @staticmethod
    def forward(ctx, b):
        return torch.from_numpy(np.linalg.solve(A_SOLVE.numpy(), b.detach().numpy()))

    @staticmethod
    def backward(ctx, g):
        return torch.from_numpy(np.linalg.solve(A_SOLVE.numpy().T, g.detach().numpy()))


# ------------------------------------------------------------------ more functions
def with_retained_inplace(a):
    y = torch.zeros(10, dtype=a.dtype)
    y[0] = a[0]
    y[1] = y[0] * 2
    return ((y - torch.zeros(10, dtype=a.dtype)) ** 2).sum()


def fill_first_two(a):
    y = torch.zeros(10, dtype=a.dtype)
    y[0] = a[0]
    y[1] = y[0] * 2
    return y


CRITIC = mlp(4, 8, 1, seed=17)


def critic_penalty(x):
    """WGAN-GP penalty mean((‖∇ₓD(x)‖ - 1)²), the gradient built with create_graph=True."""
    with torch.enable_grad():
        x = x if x.requires_grad else x.detach().requires_grad_()
        f = CRITIC(x)
        (g,) = torch.autograd.grad(f, x, grad_outputs=torch.ones_like(f), create_graph=True)
        return ((g.reshape(x.shape[0], -1).norm(2, dim=-1) - 1) ** 2).mean()


def critic_penalty_func(x):
    per = vmap(torch.func.grad(lambda s: CRITIC(s).squeeze(-1)))(x)
    return ((per.norm(2, dim=-1) - 1) ** 2).mean()


XCRIT = rnd(3, 4, seed=18)


def run_penalty_watch():
    critic = mlp(4, 8, 1, seed=19)
    x = leaf(rnd(6, 4, seed=20))
    with ga.watch(critic) as w:
        f = critic(x)
        (g,) = torch.autograd.grad(f, x, torch.ones_like(f), create_graph=True)
        penalty = ((g.norm(2, dim=-1) - 1) ** 2).mean()
        penalty.backward()
    return w, critic


def topk_mask_scene():
    inp = leaf(rnd(5, 5, seed=21))
    mask = leaf(rnd(5, 5, seed=22))
    idx = torch.topk(mask, 2, dim=0).indices
    masked = torch.gather(inp, 0, idx)
    loss = torch.mean((masked - rnd(2, 5, seed=23)) ** 2)
    return loss, inp, mask


def gather_topk_of_mask(inp):
    idx = torch.topk(rnd(5, 5, seed=22), 2, dim=0).indices
    return torch.gather(inp, 0, idx)


X_TOPK = T(10., 5., 8., 2., 1., 4., 3., 9.).reshape(2, 4)
W_TK = rnd(6, 6, seed=24).abs()
X_TK = rnd(6, seed=25).abs()


def topk_of_Wx(W):
    return torch.topk(W @ X_TK, 3).values ** 2


# float32 finite-difference threads
X32 = rnd(14, 12, seed=26, dtype=S)
T32 = rnd(14, 12, seed=27, dtype=S)


def half_plus_one_mse(x):
    return F.mse_loss((x + 1) / 2, T32.to(x.dtype), reduction="sum")


Y200 = rnd(200, 1, seed=28, dtype=S)
X200 = rnd(1, 200, seed=29, dtype=S)

# determinants
A_NEG = T(0., 1., 1., 0.).reshape(2, 2)          # det = -1
A_SL = rnd(3, 3, seed=30)
B_SING = T(1., 2., 3., 4., 5., 6., 7., 8., 9.).reshape(3, 3)    # rank 2, det exactly 0 in LU
B_RANK1 = T(1., 2., 3., 2., 4., 6., 3., 6., 9.).reshape(3, 3)   # rank 1: adjugate 0
A_DETJ = T(1., 0., -1., 1.).reshape(2, 2)


def det_of_product(x):
    return torch.det(x @ A_DETJ)


X_DETJ = T(1., 0., 1., 1.).reshape(2, 2)

# autograd tutorial
A_LIN = torch.linspace(0.0, 2.0 * math.pi, steps=25, dtype=D)


def tutorial_chain(a):
    return (2 * torch.sin(a) + 1).sum()


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


def exp_reducer(x):
    return x.exp().sum(dim=1)


X44 = rnd(4, 4, seed=31).abs() * 0.5

# implicit / scalar equation y² + x y - 1 = 0
def implicit_root(x):
    return (-x + torch.sqrt(x * x + 4)) / 2


X_IMPL = T(0.5, 1.0, -2.0)


def self_attention(K, Q, V):
    A = torch.exp(K @ Q.T) / math.sqrt(K.shape[1])
    return (A / A.sum(1, keepdim=True)) @ V


KQV = rnd(3, 5, 4, seed=32) * 0.5

# eigenvalues
ROT = torch.linalg.qr(rnd(3, 3, seed=33))[0]
A_REP = ROT @ torch.diag(T(1., 1., 2.)) @ ROT.T
M_TF = T(1.50776616, 0.33370629, 0.37226308,
         0.33370629, 1.21931333, 0.24465303,
         0.37226308, 0.24465303, 1.27292051).reshape(3, 3)
M_TF = (M_TF + M_TF.T) / 2
A_22 = T(2., 1., 1., 3.).reshape(2, 2)


def top_eigvec_projector_plus(M):
    _, V = torch.linalg.eigh(M)
    q = V[:, 2]
    return torch.eye(3, dtype=M.dtype) + 2 * torch.outer(q, q)


# saliency / integrated gradients
CLF = mlp(6, 5, 3, seed=34)
X_SAL = rnd(4, 6, seed=35)
TARGET = torch.tensor([0, 2, 1, 2])
ONEHOT_T = F.one_hot(TARGET, 3).to(D)


def class1_score(x):  # one sample -> its class-1 score
    return CLF(x)[1]


BASELINE = torch.zeros(6, dtype=D)
X_IG = rnd(6, seed=36)
IG_STEPS = 16
IG_PATH = torch.stack([BASELINE + (k / IG_STEPS) * (X_IG - BASELINE)
                       for k in range(1, IG_STEPS + 1)])

# embeddings
EMB = seeded(lambda: nn.Embedding(10, 4).double(), seed=37)
IDX = torch.tensor([1, 3, 3, 7, 1, 1])
W_EMB = rnd(10, 4, seed=38)


def emb_lookup(W):
    return F.embedding(IDX, W)


COUNTS = torch.bincount(IDX, minlength=10).to(D)
ONEHOT_IN = F.one_hot(torch.tensor([2, 0, 3]), 4).to(D).reshape(-1)
NET_12 = mlp(12, 5, 2, seed=39)


def emb_scene():
    idx = torch.tensor([[1, 2], [3, 1]])
    out = EMB(idx)
    return out.mean(), idx


def run_embedding_watch():
    model = seeded(lambda: nn.Sequential(nn.Embedding(10, 4), nn.Flatten(),
                                         nn.Linear(12, 1)).double(), seed=40)
    with ga.watch(model) as w:
        loss = model(torch.tensor([[1, 2, 3], [4, 5, 6]])).pow(2).mean()
        loss.backward()
    return w


# multi-input multi-output (PR 50915's test function)
def two_outputs(x, y):
    return (x * x) @ y, x @ (x.sum(1) * y)


XM, YM = rnd(5, 3, seed=41), rnd(3, 5, seed=42)
X_TANH = rnd(2, 3, 2, seed=43)

# hessian threads
def rbf_sq(x1, x2):
    d = x1 - x2
    return torch.exp(-(d * d).sum())


def rbf_norm(x1, x2):
    d = x1 - x2
    dist = torch.linalg.norm(d)
    return torch.exp(-dist * dist)


A_RBF = rnd(4, seed=44)
V_RBF = rnd(4, seed=45)


def mixed_grad(kernel):
    def g(x2):
        with torch.enable_grad():
            x2 = x2 if x2.requires_grad else x2.detach().requires_grad_()
            x1 = A_RBF.clone().requires_grad_()
            return torch.autograd.grad(kernel(x1, x2), x1, create_graph=True)[0]
    return g


LIN22 = seeded(lambda: nn.Linear(2, 2).double(), seed=46)
INP12 = rnd(1, 2, seed=47)


def lin22_of_weight(W):
    return functional_call(LIN22, {"weight": W, "bias": LIN22.bias.detach()}, (INP12,))


Z_PL = rnd(2, 200, seed=48)


def max_of_max_pow(x):
    return torch.mean(torch.max(torch.max((x ** 1).reshape(2, 1) * torch.exp(Z_PL), dim=0)[0],
                                torch.tensor(0.1, dtype=x.dtype)))


def max_of_max_plain(x):
    return torch.mean(torch.max(torch.max(x.reshape(2, 1) * torch.exp(Z_PL), dim=0)[0],
                                torch.tensor(0.1, dtype=x.dtype)))


# forward-mode threads
W_HV = rnd(N_W, seed=49)
Q_ATT, K_ATT, V_ATT = rnd(1, 1, 3, 2, seed=50), rnd(1, 1, 3, 2, seed=51), rnd(1, 1, 3, 2, seed=52)


def sdpa_q(q):
    return F.scaled_dot_product_attention(q, K_ATT, V_ATT)


def sum_x_xt(x):
    return (x @ x.T).sum()


def f_inner(x):
    return (x ** 4).sum() / 12 + x[0] * x[1] * x[2]


def trace_of_hessian_func(x):
    return torch.linalg.eigvalsh(hessian(f_inner)(x)).sum()


X_EIGH = T(0.5, -1.0, 2.0)

# norms
X_TINY = torch.tensor([[1.0], [0.0], [1e-16], [1e-19]], dtype=S)


def sqrt_sum_sq(x):
    return x.pow(2).sum().sqrt()


def norm_scene(sqrt_form):
    x = leaf(torch.zeros(3, dtype=D))
    y = sqrt_sum_sq(x) if sqrt_form else x.norm()
    return y, x


def pow_saved_modified_scene():
    a = leaf(torch.ones(4, 2, dtype=D))
    b = a ** 2
    c = b ** 2
    b[1:2] = 3.3
    return torch.relu(c).sum(), a


FLOW = rnd(1, 4, 2, seed=53)
U_SCALE, V_SCALE = 2.0, -3.0


def chunk_scale_inplace(flow):
    u, v = flow.chunk(2, dim=1)
    u *= U_SCALE
    v *= V_SCALE
    return torch.cat([u, v], dim=1)


def chunk_scale_fixed(flow):
    u, v = flow.chunk(2, dim=1)
    u = (U_SCALE * u).clone()
    v = (V_SCALE * v).clone()
    return torch.cat([u, v], dim=1)


# scenes for why_no_grad / trace_backward / watch
def accumulated_scene():
    x = leaf(T(1.0, -2.0, 3.0))
    y = (x ** 2).sum()
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    return y, x


def run_accumulate_watch():
    model = seeded(lambda: nn.Linear(3, 1).double(), seed=54)
    xb = rnd(4, 3, seed=55)
    with ga.watch(model) as w:
        loss = model(xb).pow(2).mean()
        loss.backward(retain_graph=True)
        loss.backward()
    return w


def retain_scene():
    x = leaf(rnd(1, 10, seed=56))
    y = x * 2
    z = y.relu()
    out = z.sum()
    return out, y


def loss_grad_scene():
    model = seeded(lambda: nn.Linear(1, 1).double(), seed=57)
    x = rnd(1, 1, seed=58)
    loss = model(x) ** 2
    return loss, x


def hooked_leaf_trace():
    x = torch.ones(5, dtype=D, requires_grad=True)
    x.register_hook(lambda g: g * 2)
    y = x * 2
    t = ga.trace_backward(y.sum(), names={"x": x})
    return t, x


def node_hook_trace():
    a = torch.zeros(3, dtype=D, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_hook(lambda gI, gO: (gO[0] * 2,))
    t = ga.trace_backward(b.sum(), names={"a": a, "b": b})
    return t, a


def exp_spy_trace():
    x = torch.tensor([3.0, 4.0], dtype=D, requires_grad=True)
    y = ExpSpy.apply(x)
    t = ga.trace_backward(y.sum(), names={"x": x, "y": y})
    return t, x


def leaf_of(t, name):
    return [n for n in t.nodes if n.is_leaf and n.name == name]


def adder_scene():
    W = leaf(rnd(2, 3, seed=59))
    X = leaf(rnd(4, 3, seed=60))
    return AdderOneGrad.apply(W, X).sum(), W


def kernel_conv_scene():
    inp = leaf(rnd(2, 3, seed=61))
    ker = leaf(rnd(2, 3, seed=62))
    return KernelConvMissingNone.apply(inp, ker, 3).sum(), inp


def run_autocast_watch():
    model = seeded(lambda: nn.Linear(10, 5), seed=63)
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(0)
    X = torch.rand(3, 10, generator=torch.Generator().manual_seed(64))
    with ga.watch(model) as w:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(X).mean()
        loss.backward()
    return w, model


LIN_HALF = seeded(lambda: nn.Linear(8, 1), seed=65).half()
X_HALF = rnd(8, seed=66, dtype=torch.float16)


def topk_mask_watch():
    class Masker(nn.Module):
        def __init__(self):
            super().__init__()
            self.mask = nn.Parameter(rnd(5, 5, seed=22))
            self.inp = nn.Parameter(rnd(5, 5, seed=21))

        def forward(self):
            idx = torch.topk(self.mask, 2, dim=0).indices
            return torch.gather(self.inp, 0, idx)

    m = Masker()
    with ga.watch(m) as w:
        loss = torch.mean((m() - rnd(2, 5, seed=23)) ** 2)
        loss.backward()
    return w


def complex_loss_scene():
    w = leaf(WREAL)
    return (w * ZCONST).sum(), w


def nan_cumprod_scene():
    x = leaf(T(1.0, 2.0, float("nan"), 4.0, 5.0))
    return x.cumprod(0).sum(), x


# divergence / trace of a Jacobian (bayesflow, Hutchinson)
NET_TR = mlp(3, 5, 3, seed=84)
X_TR = rnd(4, 3, seed=85)
SIGNS3 = [T(a, b, c) for a in (1., -1.) for b in (1., -1.) for c in (1., -1.)]


# =================================================================== Q2: Jacobians of networks
# source: https://stats.stackexchange.com/questions/279841/what-is-the-jacobian-for-a-neural-network
P("jac_net_wrt_input", "jacobian", "ga.jacobian(NET_3_4_2, X3)",
  "close(r, jr(NET_3_4_2, X3))",
  "∂ŷ/∂x of a one-hidden-layer net, 2 × 3 (torch.func.jacrev)", group="jacobian")
# source: https://intellipaat.com/community/15856/jacobian-matrix-computation-for-artificial-neural-networks
P("jac_net_samples_by_weights", "jacobian", "ga.jacobian(mlp_flat, W_FLAT)",
  "close(r, jr(mlp_flat, W_FLAT)) and r.shape == (5, N_W)",
  "the N × W Jacobian: each sample's output against every weight (jacrev)", group="jacobian")
# source: https://medium.com/unit8-machine-learning-publication/computing-the-jacobian-matrix-of-a-neural-network-in-python-4f162e5db180
P("jac_softmax_classifier", "jacobian", "ga.jacobian(softmax_net, X4)",
  "close(r, softmax_jac_hand(softmax_net(X4)) @ W_SM)",
  "(diag(s) - ssᵀ) W by hand", group="jacobian")
# source: https://medium.com/unit8-machine-learning-publication/computing-the-jacobian-matrix-of-a-neural-network-in-python-4f162e5db180
P("jac_softmax_classifier_forward", "jacobian", "ga.jacobian(softmax_net, X4, method='forward')",
  "close(r, softmax_jac_hand(softmax_net(X4)) @ W_SM)",
  "the same Jacobian by forward mode", group="jacobian")

# =================================================================== Q3: Hessian-vector products
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum: HVP for multiple vectors in grad_outputs)
P("hvp_many_vectors_nested", "jacobian",
  "ga.jacobian(lambda t: ga.jacobian(sin_sq, t, create_graph=True), X5) @ V5x3",
  "close(r, hessian(sin_sq)(X5) @ V5x3)",
  "H v₁ … H v₃ from the Hessian (Jacobian of a create_graph gradient; torch.func.hessian)",
  group="hessian")
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum: HVP for multiple vectors in grad_outputs)
P("hvp_one_vector_backward", "backward_vjp", "ga.backward_vjp(grad_of(sin_sq), X5, V5x3[:, 0])",
  "close(r, hessian(sin_sq)(X5) @ V5x3[:, 0])",
  "backward of the gradient with v gives vᵀH = Hv (H symmetric)", group="hessian")
# source: http://pytorch.org/docs/stable/generated/torch.autograd.functional.hvp.html
P("hvp_pow_reducer", "backward_vjp", "ga.backward_vjp(grad_of(pow_reducer), X22, V22)",
  "close(r, 6 * X22)", "H v of Σx³ with v = 1 is 6x (the docs' example)", group="hessian")
# source: http://pytorch.org/docs/stable/generated/torch.autograd.functional.hvp.html
P("hess_pow_adder_blocks", "jacobian", "ga.jacobian(grads_pow_adder, (PX, PY))",
  "close(r[0][0], 4 * torch.eye(2, dtype=D)) and close(r[0][1], torch.zeros(2, 2, dtype=D)) "
  "and close(r[1][0], torch.zeros(2, 2, dtype=D)) and close(r[1][1], 6 * torch.eye(2, dtype=D))",
  "blocks of the Hessian of Σ 2x² + 3y²: 4I, 0, 0, 6I (nested tuples as autograd.functional)",
  group="hessian")
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum: computing HVP efficiently, net params)
P("hvp_network_params", "backward_vjp", "ga.backward_vjp(grad_of(mlp_flat_loss), W_FLAT, W_HV)",
  "close(r, torch.func.jvp(torch.func.grad(mlp_flat_loss), (W_FLAT,), (W_HV,))[1], rtol=1e-6, atol=1e-9)",
  "H v over the weights of an MLP loss (forward-over-reverse, torch.func)", group="hessian")
# source: https://mdsite.deno.dev/https:/docs.pytorch.org/docs/stable/generated/torch.autograd.functional.vhp.html
P("vhp_against_hessian_reference", "compare_vjp",
  "ga.compare_vjp(grad_of(pow_reducer), X22, V22, reference=hessian(pow_reducer)(X22))",
  "r.agree and r.status == 'agree' and close(r.backward, 6 * X22)",
  "vᵀH of Σx³ agrees with the Hessian given as reference (6x)", group="hessian")

# =================================================================== Q4: torch.func / functional_call
# source: https://pytorch.org/functorch/0.0.1/functorch.html
P("jac_linear_model_is_weight", "jacobian", "ga.jacobian(LIN33, X3)",
  "close(r, LIN33.weight.detach())", "the Jacobian of Linear(3, 3) is its weight", group="jacobian")
# source: https://pytorch.org/functorch/0.0.1/generated/functorch.jacrev.html
P("jac_sin_diag_cos", "jacobian", "ga.jacobian(torch.sin, X5)",
  "close(r, torch.diag(torch.cos(X5)))", "diag(cos x) (the jacrev docs' example)", group="jacobian")
# source: https://pytorch.org/functorch/0.0.1/generated/functorch.jacrev.html
P("hess_sin_sum_nested", "jacobian",
  "ga.jacobian(lambda t: ga.jacobian(lambda s: s.sin().sum(), t, create_graph=True), X5)",
  "close(r, torch.diag(-torch.sin(X5)))", "Hessian of Σ sin x: diag(-sin x)", group="hessian")
# source: https://pytorch.org/functorch/0.0.1/generated/functorch.jacrev.html
P("jac_two_args_second_block", "jacobian", "ga.jacobian(x_plus_ysq, (PX, PY))[1]",
  "close(r, torch.diag(2 * PY))", "∂(x + y²)/∂y = diag(2y) (argnums=1 of the docs)", group="jacobian")
# source: https://mdsite.deno.dev/https:/docs.pytorch.org/docs/stable/generated/torch.func.jacrev.html
P("jac_tuple_output_aux", "jacobian", "ga.jacobian(sin_twice, X5)",
  "close(r, (torch.diag(torch.cos(X5)), torch.diag(torch.cos(X5))))",
  "a function returning (result, result): a tuple of two Jacobians", group="jacobian")

# =================================================================== Q5: per-example Jacobians
# source: https://crackedaicode.com/problems/jax-vjp-for-batched-jacobian
P("jac_three_sums", "jacobian", "ga.jacobian(three_sums, X5)",
  "close(r, torch.stack([torch.ones(5, dtype=D), 2 * torch.ones(5, dtype=D), 2 * X5]))",
  "rows [1…], [2…], 2x by hand", group="jacobian")
# source: https://crackedaicode.com/problems/jax-vjp-for-batched-jacobian
P("vjp_three_sums_row", "backward_vjp", "ga.backward_vjp(three_sums, X5, T(0., 0., 1.))",
  "close(r, 2 * X5)", "the one-hot cotangent e₂ gives row 2: 2x", group="grad-outputs")
# source: https://theneuralbase.com/jax/learn/beginner/vmap-with-grad-combination/
P("per_example_grads_rows", "jacobian", "ga.jacobian(per_example_losses, W2)",
  "close(r, vmap(torch.func.grad(lambda w, x, y: (w @ x - y) ** 2), in_dims=(None, 0, 0))(W2, XS, YS))",
  "row i: ∇_w (w·xᵢ - yᵢ)² (vmap(grad))", group="per-sample")
# source: https://theneuralbase.com/jax/learn/beginner/vmap-with-grad-combination/
P("per_sample_batch_dim", "jacobian", "ga.jacobian(one_sample_loss, XY, batch_dim=0)",
  "close(r, vmap(jacrev(one_sample_loss))(XY))",
  "per-sample gradients with batch_dim=0 (vmap(jacrev))", group="per-sample")
# source: https://discuss.pytorch.org/t/equivalent-multiplication-for-vjp-of-matrix-valued-function/175203
P("vjp_matrix_function", "backward_vjp", "ga.backward_vjp(lambda t: 2 * t, POINT23, VPOINT)",
  "close(r, 2 * VPOINT)", "vjp of 2x with v is 2v (the thread's printout)", group="grad-outputs")
# source: https://discuss.pytorch.org/t/equivalent-multiplication-for-vjp-of-matrix-valued-function/175203
P("vjp_equals_tensordot_of_jacobian", "jacobian", "ga.jacobian(lambda t: 2 * t, POINT23)",
  "r.shape == (2, 3, 2, 3) and close(torch.tensordot(VPOINT, r, dims=2), 2 * VPOINT)",
  "the (2,3,2,3) Jacobian contracted with v over the output dims is the vjp", group="jacobian")
# source: https://discuss.pytorch.org/t/equivalent-multiplication-for-vjp-of-matrix-valued-function/175203
E("vjp_cotangent_transposed", "backward_vjp", "ga.backward_vjp(lambda t: 2 * t, POINT23, VPOINT.T)",
  ("shape",), oracle="ValueError: v.shape != y.shape (backward_vjp's Raises)")

# =================================================================== Q6: complex gradients
# source: https://commit-web.commit.tu-berlin.de/en/book/sci-python/chapter/ch12/section/s03
# The page says z.grad equals z for L = |z|²; torch 2.13 gives 2z (∂L/∂x + i ∂L/∂y = 2z).
P("complex_abs_sq_grad", "backward_vjp",
  "ga.backward_vjp(lambda z: (z * z.conj()).real.sum(), ZC2, torch.tensor(1.0, dtype=D))",
  "close(r, 2 * ZC2)", "2z: what torch 2.13 puts in z.grad (the page's 'z' is wrong)",
  group="complex")
# source: https://discuss.pytorch.org/t/autograd-on-complex-numbers/144687
P("complex_2x2_conj", "backward_vjp",
  "ga.backward_vjp(lambda t: 2.0 * t ** 2, ZC22, torch.ones_like(ZC22))",
  "close(r, (4 * ZC22).conj())", "conj(4x): conjugate Wirtinger convention", group="complex")
# source: https://discuss.pytorch.org/t/autograd-on-complex-numbers/144687
P("complex_2x2_jacobian_conj", "jacobian", "ga.jacobian(lambda t: 2.0 * t ** 2, ZC22)",
  "close(r.reshape(4, 4), torch.diag((4 * ZC22).conj().reshape(-1)))",
  "docstring: for a holomorphic f the entries are conj(f'(z))", group="complex")
# source: https://discuss.pytorch.org/t/differentiating-a-complex-valued-function/165209
P("complex_loss_real_weight_no_gradient", "why_no_grad",
  "ga.why_no_grad(*complex_loss_scene()).case", "r == 'backward-raises'",
  "docstring: a complex output without `gradient` answers 'backward-raises', as backward() does",
  group="complex")
# source: https://discuss.pytorch.org/t/differentiating-a-complex-valued-function/165209
P("complex_loss_real_weight_vjp", "backward_vjp",
  "ga.backward_vjp(real_times_complex, WREAL, torch.tensor(1 + 0j, dtype=torch.complex128))",
  "close(r, ZCONST.real)", "a real input keeps the real part: Re(conj(v)·c)… = Re(c) for v = 1",
  group="complex")
# source: https://discuss.pytorch.org/t/differentiating-a-complex-valued-function/165209
E("complex_output_real_input_jacobian", "jacobian", "ga.jacobian(lambda t: t * ZCONST, WREAL)",
  ("complex",), oracle="ValueError: a complex output of a real input is refused (jacobian's Raises)")
# source: https://discuss.pytorch.org/t/differentiating-a-complex-valued-function/165209
P("complex_output_real_input_forward", "jacobian",
  "ga.jacobian(lambda t: t * ZCONST, WREAL, method='forward')",
  "close(r, torch.diag(ZCONST))", "method='forward' gives ∂y/∂x = diag(c) (docstring)",
  group="complex")
# source: https://app.semanticdiff.com/gh/strisunshinewentingwang/pytorch/commit/9a9570433acac37db790acc9af5b6e2a80c681d0
# The PR warns the loop would raise once mul saves its inputs; in torch 2.13 it runs (mul by a
# constant saves only the constant) and gives 0 + 1 + 2 = 3.
P("copy_into_buffer_loop", "backward_vjp", "ga.backward_vjp(loop_copy_into_buffer, T(1.0), 1.0)",
  "close(r, T(3.0))", "d/dmu Σᵢ i·(mu + i) = 3 (torch 2.13 runs the loop)", group="grad-outputs")

# =================================================================== Q7: low precision
# source: https://discuss.pytorch.org/t/torch-autocasts-gradient/169003
P("autocast_cpu_grads_float32", "watch", "run_autocast_watch()",
  "r[0].summary().startswith('gradients ok') and r[1].weight.grad.dtype == torch.float32",
  "zero weights, autocast bfloat16: every parameter gets a finite nonzero float32 gradient",
  group="training-step")
# source: https://discuss.pytorch.org/t/is-autocast-failing-to-cast-gradients/197299
P("half_model_jacobian", "jacobian", "ga.jacobian(LIN_HALF, X_HALF)",
  "r.dtype == torch.float16 and close(r, LIN_HALF.weight.detach().double(), rtol=1e-3, atol=1e-3)",
  "docstring: float16 x gives the Jacobian in float16; here it is the weight", group="jacobian")

# =================================================================== Q8/Q9: custom Functions
# source: https://torch.mlverse.org/docs/articles/extending-autograd.html
P("linear_function_right", "check_backward",
  "bool(ga.check_backward(LinearFn.apply, leaf(rnd(4, 3, seed=70)), leaf(rnd(2, 3, seed=71)), leaf(rnd(2, seed=72))))",
  "r is True", "gradcheck in float64 passes: the backward is right", group="custom-function")
# source: https://docs.pytorch.org/docs/2.5/generated/torch.autograd.Function.jvp.html
P("function_with_right_jvp", "check_backward", "ga.check_backward(ExpJvp.apply, leaf(rnd(4, seed=73)))",
  "bool(r) and r.status == 'agree' and 'forward' in r.reference.lower()",
  "docstring: 'auto' uses forward mode when the Function has a jvp that agrees with central differences",
  group="custom-function")
# source: https://docs.pytorch.org/docs/2.5/generated/torch.autograd.Function.jvp.html
P("function_with_wrong_jvp", "check_backward", "ga.check_backward(ExpBadJvp.apply, leaf(rnd(4, seed=74)))",
  "bool(r) and 'finite' in r.reference.lower()",
  "docstring: a jvp that is not the derivative sends 'auto' to finite differences; the backward is right",
  group="custom-function")

# =================================================================== Q10: accumulation
# source: https://docs.pytorch.ac.cn/docs/stable/generated/torch.Tensor.grad.html
P("grad_accumulated_twice", "why_no_grad", "ga.why_no_grad(*accumulated_scene()).case",
  "r == 'accumulated'", "docstring: .grad exactly k passes → 'accumulated' (here 2 × 2x)",
  group="none-grad")
# source: https://docs.pytorch.ac.cn/docs/stable/generated/torch.Tensor.grad.html
P("watch_same_graph_twice", "watch", "run_accumulate_watch()",
  "not r.summary().startswith('gradients ok')",
  "docstring: .grad summing the same graph twice is a problem, not 'ok'", group="training-step")

# =================================================================== Q11: intermediate gradients
# source: https://discuss.pytorch.org/t/save-the-gradient-of-the-intermediate-tensor/190094
P("exp_spy_function_right", "check_backward", "bool(ga.check_backward(ExpSpy.apply, leaf(T(3.0, 4.0))))",
  "r is True", "grad_output · exp(x): right", group="custom-function")
# source: https://discuss.pytorch.org/t/save-the-gradient-of-the-intermediate-tensor/190094
P("exp_spy_trace_leaf", "trace_backward", "exp_spy_trace()",
  "close(leaf_of(r[0], 'x')[0].grad, torch.exp(T(3.0, 4.0))) and close(r[1].grad, torch.exp(T(3.0, 4.0)))",
  "the leaf receives exp(x); x.grad as after a plain backward (docstring)", group="hooks")
# source: https://discuss.pytorch.org/t/save-the-gradient-of-the-intermediate-tensor/190094
E("check_backward_given_tensor", "check_backward", "ga.check_backward(ExpSpy.apply(leaf(T(3.0))), leaf(T(3.0)))",
  ("fn", "callable"), oracle="TypeError: fn is not callable (a tensor fn(x) passed instead of fn)")
# source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.retain_grad
P("retain_grad_nonleaf", "why_no_grad", "ga.why_no_grad(*retain_scene()).case",
  "r == 'non-leaf'", "y = 2x is a non-leaf without retain_grad()", group="none-grad")
# source: https://discuss.pytorch.org/t/loss-grad-is-constant-1/130964
P("input_without_requires_grad", "why_no_grad", "ga.why_no_grad(*loss_grad_scene()).case",
  "r == 'requires-grad-false'", "x = randn(1, 1) never asked for a gradient", group="none-grad")
# source: https://discuss.pytorch.org/t/loss-grad-is-constant-1/130964
P("one_element_output_default_one", "trace_backward",
  "ga.trace_backward(loss_grad_scene()[0]).nodes[0].grad_outputs[0]",
  "close(r.reshape(-1), T(1.0))", "docstring: gradient optional for a one-element output (then 1)",
  group="grad-outputs")
# source: https://openillumi.com/en/en-pytorch-retain-grad-inplace-error-fix
P("inplace_fill_then_loss", "backward_vjp", "ga.backward_vjp(with_retained_inplace, T(1.0), 1.0)",
  "close(r, T(10.0))", "y₀ = a, y₁ = 2a: d(a² + 4a²)/da = 10 at a = 1", group="grad-outputs")
# source: https://openillumi.com/en/en-pytorch-retain-grad-inplace-error-fix
P("inplace_fill_jacobian", "jacobian", "ga.jacobian(fill_first_two, T(1.0))",
  "close(r, torch.cat([T(1.0, 2.0), torch.zeros(8, dtype=D)]).reshape(10, 1))",
  "∂y/∂a = [1, 2, 0, …] through the in-place writes", group="jacobian")

# =================================================================== Q12: hooks
# source: https://oneflow.readthedocs.io/en/master/generated/oneflow.Tensor.register_hook.html
P("leaf_hook_doubles", "trace_backward", "hooked_leaf_trace()",
  "close(r[1].grad, 4 * torch.ones(5, dtype=D)) and close(leaf_of(r[0], 'x')[0].grad, 4 * torch.ones(5, dtype=D))",
  "hook ×2 on x, y = 2x: x.grad = 4 (and the trace records it)", group="hooks")
# source: https://docs.pytorch.ac.cn/docs/2.9/generated/torch.Tensor.register_hook.html
E("trace_from_a_leaf", "trace_backward",
  "ga.trace_backward(torch.zeros(3, dtype=D, requires_grad=True), T(1., 2., 3.))",
  ("grad_fn", "leaf"), oracle="ValueError: output has no grad_fn (trace_backward's Raises)")
# source: https://pytorch.org/docs/main/generated/torch.autograd.graph.Node.register_hook.html
P("node_hook_doubles", "trace_backward", "node_hook_trace()",
  "close(r[1].grad, 2 * torch.ones(3, dtype=D)) and close(leaf_of(r[0], 'a')[0].grad, 2 * torch.ones(3, dtype=D))",
  "a Node hook doubling grad_inputs: a.grad = 2 (the docs' example)", group="hooks")

# =================================================================== Q13: gradient penalty
# source: https://nn.labml.ai/gan/wasserstein/gradient_penalty/index.html
P("gradient_penalty_wrt_input", "jacobian", "ga.jacobian(critic_penalty, XCRIT)",
  "close(r, torch.func.grad(critic_penalty_func)(XCRIT), rtol=1e-6, atol=1e-10)",
  "∇ₓ of mean((‖∇ₓD‖ - 1)²): double backward (torch.func.grad of a torch.func penalty)",
  group="hessian")
# source: https://nn.labml.ai/gan/wasserstein/gradient_penalty/index.html
# The penalty alone does not depend on the critic's last bias (∇ₓD ignores it): no gradient.
P("gradient_penalty_watch", "watch", "run_penalty_watch()[0].summary()",
  "not r.startswith('gradients ok') and '2.bias' in r",
  "the double backward reaches every critic weight but the output bias '2.bias', which gets none",
  group="training-step")
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum: calculating the gradients for WGAN-GP)
P("critic_grad_outputs_ones", "backward_vjp", "ga.backward_vjp(CRITIC, XCRIT, torch.ones(3, 1, dtype=D))",
  "close(r, vmap(torch.func.grad(lambda s: CRITIC(s).squeeze(-1)))(XCRIT))",
  "grad_outputs = ones gives each sample's ∇ₓD (samples independent)", group="grad-outputs")

# =================================================================== Q14: topk
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum: differentiable top k masking)
P("topk_mask_not_reachable", "why_no_grad", "ga.why_no_grad(*topk_mask_scene()[::2]).case",
  "r == 'not-reachable'",
  "the mask reaches the loss only through integer indices: not in the loss's graph",
  group="none-grad")
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum: differentiable top k masking)
P("topk_mask_gather_grad", "backward_vjp",
  "ga.backward_vjp(gather_topk_of_mask, rnd(5, 5, seed=21), torch.ones(2, 5, dtype=D))",
  "close(r, tgrad(gather_topk_of_mask, rnd(5, 5, seed=21)))",
  "the gathered entries get 1, the others 0 (torch autograd)", group="kinks")
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum: differentiable top k masking)
P("watch_topk_mask_param", "watch", "topk_mask_watch().summary()",
  "not r.startswith('gradients ok') and 'mask' in r",
  "the parameter used only through argmax-like indices gets no gradient: named", group="training-step")
# source: https://chanlumerico.github.io/lucid/build/html/tensor/utilities/topk.html
P("topk_values_grad_mask", "backward_vjp",
  "ga.backward_vjp(lambda t: t.topk(2, dim=1).values, X_TOPK, torch.ones(2, 2, dtype=D))",
  "close(r, T(1., 0., 1., 0., 0., 1., 0., 1.).reshape(2, 4))", "[[1,0,1,0],[0,1,0,1]] by hand",
  group="kinks")
# source: https://wiki.gubat.org/content/stackoverflow.com_en_all_2023-11/questions/67570529/derive-the-gradient-through-torch-topk
P("topk_of_linear_wrt_W", "backward_vjp", "ga.backward_vjp(topk_of_Wx, W_TK, torch.ones(3, dtype=D))",
  "close(r, tgrad(topk_of_Wx, W_TK)) and int((r.abs().sum(1) == 0).sum()) == 3",
  "rows of W for the 3 dropped outputs are zero (torch autograd)", group="kinks")
# source: https://wiki.gubat.org/content/stackoverflow.com_en_all_2023-11/questions/67570529/derive-the-gradient-through-torch-topk
P("topk_of_linear_check", "check_backward", "ga.check_backward(topk_of_Wx, leaf(W_TK)).status",
  "r == 'agree'", "topk is locally a selection: the backward is right away from ties", group="kinks")

# =================================================================== Q15: softmax Jacobian
# source: https://mc.ai/demystifying-derivatives-of-softmax-2/
P("softmax_jacobian_loop_post", "jacobian", "ga.jacobian(lambda a: torch.softmax(a, 0), T(0.5, 1.2, 0.9))",
  "close(r, softmax_jac_hand(torch.softmax(T(0.5, 1.2, 0.9), 0)))",
  "diag(s) - ssᵀ (symmetric)", group="jacobian")
# source: https://github.com/dsplog/dsplog.com
P("softmax_jacobian_123_float32", "jacobian",
  "ga.jacobian(lambda z: torch.softmax(z, 0), T(1., 2., 3., dtype=S))",
  "r.dtype == torch.float32 and close(r, T(0.08192507, -0.02203304, -0.05989202, -0.02203304, 0.18483645, -0.1628034, -0.05989202, -0.1628034, 0.22269543).reshape(3, 3), rtol=1e-5, atol=1e-7)",
  "the page's manual Jacobian at z = [1, 2, 3], in float32", group="jacobian")
# source: https://discuss.pytorch.org/t/efficient-implementation-of-jacobian-of-softmax/125369
P("softmax_jacobian_batched", "jacobian",
  "ga.jacobian(lambda o: torch.softmax(o, -1), torch.arange(6, dtype=D).reshape(2, 3), batch_dim=0)",
  "close(r, softmax_jac_hand(torch.softmax(torch.arange(6, dtype=D).reshape(2, 3), -1)))",
  "per-row diag_embed(S) - einsum('ij,ik->ijk', S, S)", group="per-sample")

# =================================================================== Q16: float32 checks
# source: https://discuss.pytorch.org/t/gradients-are-different-on-single-and-double-precision/154957
P("float32_mse_compare_fd", "compare_vjp", "ga.compare_vjp(half_plus_one_mse, X32, 1.0)",
  "r.agree", "the backward of ((x+1)/2 - t)² summed is right; float32 rounding is not a disagreement",
  group="values")
# source: https://discuss.pytorch.org/t/gradients-are-different-on-single-and-double-precision/154957
P("float32_mse_check", "check_backward", "ga.check_backward(half_plus_one_mse, leaf(X32)).status",
  "r == 'agree'", "right backward in float32 (rounding allowance from float64 copies)", group="values")
# source: https://gitblind.noratr.app/PaddlePaddle/Paddle/issues/4283
P("float32_dot_compare_fd", "compare_vjp", "ga.compare_vjp(lambda a: a @ Y200, X200, T(1.0, dtype=S).reshape(1, 1))",
  "r.agree and close(r.backward, Y200.T, rtol=1e-6)", "xᵀy in float32: vjp = yᵀ, agrees", group="values")

# =================================================================== Q17: determinants
# source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (torch.logdet docs copy)
P("logdet_negative_det_grad", "backward_vjp", "ga.backward_vjp(torch.logdet, A_NEG, 1.0)",
  "close(r, torch.zeros(2, 2, dtype=D))",
  "torch 2.13: logdet is NaN for det < 0 and its backward gives zeros (where-masked)", group="nan-grad")
# source: https://glaringlee.github.io/generated/torch.slogdet.html
P("slogdet_logabsdet_grad", "jacobian", "ga.jacobian(lambda A: torch.linalg.slogdet(A).logabsdet, A_SL)",
  "close(r, torch.linalg.inv(A_SL).T)", "∂ log|det A| / ∂A = A⁻ᵀ", group="jacobian")
# source: http://tensor4all.org/tenferro-rs/design/AD/det.html
# torch 2.13: eager backward of det at this exactly singular matrix gives zeros, while
# torch.func.vjp / jacrev and central differences give the cofactor matrix.
P("det_singular_jacobian_cofactor", "jacobian", "ga.jacobian(torch.linalg.det, B_SING)",
  "close(r, cofactor3(B_SING), rtol=1e-6, atol=1e-8)",
  "adj(A)ᵀ: [[-3,6,-3],[6,-12,6],[-3,6,-3]] by hand (jacrev and differences agree)", group="jacobian")
# source: http://tensor4all.org/tenferro-rs/design/AD/det.html
P("det_singular_compare_fd", "compare_vjp", "ga.compare_vjp(torch.linalg.det, B_SING, 1.0)",
  "close(r.backward, torch.zeros(3, 3, dtype=D)) and not r.agree",
  "torch 2.13's eager backward gives 0; the differences give the cofactors: DISAGREE", group="values")
# source: http://tensor4all.org/tensor-ad-oracles/math/det.html
P("det_rank1_grad_zero", "backward_vjp", "ga.backward_vjp(torch.linalg.det, B_RANK1, 1.0)",
  "close(r, torch.zeros(3, 3, dtype=D))", "rank ≤ N-2: the adjugate vanishes", group="values")
# source: http://tensor4all.org/tensor-ad-oracles/math/det.html
P("det_regular_grad", "backward_vjp", "ga.backward_vjp(torch.linalg.det, A_SL, 1.0)",
  "close(r, torch.linalg.det(A_SL) * torch.linalg.inv(A_SL).T)", "det(A) A⁻ᵀ (Jacobi)", group="values")

# =================================================================== Q18: autograd tutorial / functional
# source: https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html
P("tutorial_sin_chain", "backward_vjp", "ga.backward_vjp(tutorial_chain, A_LIN, 1.0)",
  "close(r, 2 * torch.cos(A_LIN))", "d/da Σ(2 sin a + 1) = 2 cos a", group="grad-outputs")
# source: https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html
P("tutorial_exp_adder", "jacobian", "ga.jacobian(exp_adder, (PX, PY))",
  "close(r, (torch.diag(2 * PX.exp()), 3 * torch.eye(2, dtype=D)))",
  "(diag(2eˣ), 3I) as in the tutorial", group="jacobian")
# source: https://docs.pytorch.org/docs/2.8/generated/torch.autograd.functional.jvp.html
P("exp_reducer_jvp_forward", "jacobian", "ga.jacobian(exp_reducer, X44, method='forward')",
  "close(torch.einsum('ijk,jk->i', r, torch.ones(4, 4, dtype=D)), X44.exp().sum(1))",
  "J·1 of row sums of exp is Σ exp per row (the docs' jvp)", group="jacobian")

# =================================================================== Q19: cumprod / cumsum
# source: https://runebook.dev/en/docs/pytorch/generated/torch.cumprod
P("cumprod_one_zero", "backward_vjp", "ga.backward_vjp(lambda t: t.cumprod(0), T(2., 3., 0., 5., 6.), torch.ones(5, dtype=D))",
  "close(r, T(4., 2., 216., 0., 0.))", "by hand: 1+3, 2, 6+30+180, 0, 0", group="kinks")
# source: https://runebook.dev/en/docs/pytorch/generated/torch.cumprod
P("cumprod_one_zero_check", "check_backward", "ga.check_backward(lambda t: t.cumprod(0), leaf(T(2., 3., 0., 5., 6.))).status",
  "r == 'agree'", "cumprod's backward is right with a zero entry (gradcheck float64)", group="kinks")
# source: https://runebook.dev/en/docs/pytorch/generated/torch.cumprod
P("cumprod_two_zeros_compare", "compare_vjp", "ga.compare_vjp(lambda t: t.cumprod(0), T(2., 0., 0., 5.), torch.ones(4, dtype=D))",
  "r.agree and close(r.backward, T(1., 2., 0., 0.))", "[1, 2, 0, 0] by hand; agrees", group="kinks")
# source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.cumprod
P("cumprod_nan_nonfinite", "why_no_grad", "ga.why_no_grad(*nan_cumprod_scene()).case",
  "r == 'nonfinite'", "a NaN entry makes every gradient NaN", group="nan-grad")
# source: https://code.seto.ovh/44149187-5127-445d-a67a-9eba77e8db51?page=7
P("cumsum_reverse_cumsum", "backward_vjp", "ga.backward_vjp(lambda t: t.cumsum(0), X5, V5x3[:, 1])",
  "close(r, V5x3[:, 1].flip(0).cumsum(0).flip(0))", "vjp of cumsum is the reverse cumsum", group="grad-outputs")

# =================================================================== Q20: trace of the Jacobian
# source: https://bayesflow.org/main/api/bayesflow.utils.jacobian_trace.html
P("jacobian_trace_per_sample", "jacobian",
  "ga.jacobian(lambda s: NET_TR(s), X_TR, batch_dim=0).diagonal(dim1=1, dim2=2).sum(-1)",
  "close(r, vmap(lambda s: torch.trace(jacrev(NET_TR)(s)))(X_TR))",
  "exact per-sample divergence (trace of each sample's Jacobian)", group="per-sample")
# source: https://mathurinm.github.io/blog/hutchinson
P("hutchinson_all_sign_vectors", "backward_vjp",
  "sum(float(ga.backward_vjp(NET_TR, X_TR[0], z) @ z) for z in SIGNS3) / 8",
  "abs(r - float(torch.trace(jacrev(NET_TR)(X_TR[0])))) < 1e-10",
  "mean of zᵀJz over all 8 sign vectors is exactly tr J", group="grad-outputs")

# =================================================================== Q21: implicit differentiation
# source: https://theorashid.github.io/notes/fixed-point-iteration
P("fixed_point_ift_check", "check_backward", "ga.check_backward(FixedPointTanh.apply, leaf(rnd(3, seed=75))).status",
  "r == 'agree'", "the IFT backward is the derivative of the converged forward", group="custom-function")
# source: https://theorashid.github.io/notes/fixed-point-iteration
P("fixed_point_ift_jacobian", "jacobian", "ga.jacobian(FixedPointTanh.apply, rnd(3, seed=75))",
  "close(r, jr(fixed_point_unrolled, rnd(3, seed=75)), rtol=1e-8, atol=1e-10)",
  "equals the Jacobian of the unrolled 200 iterations (jacrev)", group="custom-function")
# source: https://crackedaicode.com/problems/jax-custom-vjp-implicit-function
P("newton_sqrt_right", "check_backward", "bool(ga.check_backward(NewtonSqrt.apply, leaf(T(4.0, 9.0, 2.0))))",
  "r is True", "g · 0.5 / y with the converged y = √x: right", group="custom-function")
# source: https://crackedaicode.com/problems/jax-custom-vjp-implicit-function
P("newton_sqrt_wrong_residual", "check_backward", "ga.check_backward(NewtonSqrtWrongResidual.apply, leaf(T(4.0, 9.0, 2.0))).status",
  "r == 'wrong'", "0.5 / x instead of 0.5 / √x: wrong (the thread's pitfall)", group="custom-function")
# source: https://brain.tamnd.com/write/book/autodiff/18/1.md
P("implicit_scalar_root", "jacobian", "ga.jacobian(implicit_root, X_IMPL)",
  "close(r, torch.diag(-implicit_root(X_IMPL) / (2 * implicit_root(X_IMPL) + X_IMPL)))",
  "dy/dx = -y / (2y + x) for y² + xy - 1 = 0", group="jacobian")
# source: https://implicit-layers-tutorial.org/introduction/?utm_source=towardsai.net&utm_medium=referral&utm_campaign=newsletter
P("attention_layer_jacobian_q", "jacobian", "ga.jacobian(lambda q: self_attention(KQV[0], q, KQV[2]), KQV[1])",
  "close(r, jacrev(lambda q: self_attention(KQV[0], q, KQV[2]))(KQV[1]))",
  "Jacobian of the tutorial's attention layer wrt Q (jacrev)", group="jacobian")

# =================================================================== Q22: eigenvalues
# source: https://discuss.pytorch.org/t/why-gradients-of-eigvalsh-always-numerically-stable/137491
P("eigvalsh_repeated_sum", "backward_vjp", "ga.backward_vjp(torch.linalg.eigvalsh, A_REP, torch.ones(3, dtype=D))",
  "close(r, torch.eye(3, dtype=D), rtol=1e-8, atol=1e-10)",
  "Σλ = trace: gradient I even with a repeated eigenvalue", group="values")
# source: http://fatal001.com/tensorflow/40834852885954094614.html
P("eigvalsh_degenerate_equal_weights", "backward_vjp",
  "ga.backward_vjp(torch.linalg.eigvalsh, M_TF, T(1., 1., 3.))",
  "close(r, top_eigvec_projector_plus(M_TF), rtol=1e-6, atol=1e-8)",
  "equal weights on the double eigenvalue: P₁ + 3P₂ = I + 2qqᵀ, well defined", group="values")
# source: http://tensor4all.org/tensor-ad-oracles/math/eig.html
E("eigvals_complex_of_real", "jacobian", "ga.jacobian(torch.linalg.eigvals, rnd(3, 3, seed=76))",
  ("complex",), oracle="ValueError: a complex output of a real input (jacobian's Raises)")
# source: https://chanlumerico.github.io/lucid/api/lucid.linalg/eigvalsh
P("eigvalsh_2x2_jacobian", "jacobian", "ga.jacobian(torch.linalg.eigvalsh, A_22)",
  "close(r, jr(torch.linalg.eigvalsh, A_22))", "row k: v_k v_kᵀ (jacrev)", group="jacobian")

# =================================================================== Q23: saliency / IG
# source: https://captum.ai/api/saliency.html
P("saliency_target_class", "backward_vjp", "ga.backward_vjp(CLF, X_SAL, ONEHOT_T).abs()",
  "close(r, tgrad(CLF, X_SAL, ONEHOT_T).abs())",
  "|∂ score_target / ∂x| per sample (one backward with one-hot grad_outputs)", group="grad-outputs")
# source: https://www.tensorflow.org/tutorials/interpretability/integrated_gradients?hl=zh-cn
P("integrated_gradients_path", "jacobian",
  "(X_IG - BASELINE) * ga.jacobian(class1_score, IG_PATH, batch_dim=0).mean(0)",
  "close(r, (X_IG - BASELINE) * vmap(torch.func.grad(class1_score))(IG_PATH).mean(0))",
  "IG attributions from per-point gradients along the path", group="per-sample")

# =================================================================== Q24: embeddings
# source: https://discuss.mxnet.io/t/gradients-for-embedding-layers-in-gluon/1886
P("embedding_indices_integer", "why_no_grad", "ga.why_no_grad(*emb_scene()).case",
  "r == 'integer-dtype'", "indices are integers: no gradient with respect to them", group="none-grad")
# source: https://discuss.mxnet.io/t/gradients-for-embedding-layers-in-gluon/1886
E("embedding_jacobian_integer_x", "jacobian", "ga.jacobian(EMB, IDX)",
  ("dtype", "integer", "floating"), oracle="TypeError: x has an integer dtype (jacobian's Raises)")
# source: https://discuss.mxnet.io/t/gradients-for-embedding-layers-in-gluon/1886
P("embedding_model_watch", "watch", "run_embedding_watch().summary()",
  "r.startswith('gradients ok')", "embedding and linear weights all get gradients", group="training-step")
# source: https://torchedup.dev/problems/backprop-embedding?from=learn%3Abackpropagation
P("embedding_duplicate_rows", "backward_vjp", "ga.backward_vjp(emb_lookup, W_EMB, torch.ones(6, 4, dtype=D))",
  "close(r, COUNTS[:, None] * torch.ones(10, 4, dtype=D))", "dL/dW[i] = count(i)·1 (scatter-add)",
  group="grad-outputs")
# source: https://torchedup.dev/problems/backprop-embedding?from=learn%3Abackpropagation
P("embedding_lookup_check", "check_backward", "ga.check_backward(emb_lookup, leaf(W_EMB)).status",
  "r == 'agree'", "the gather backward accumulates duplicates: right", group="values")
# source: https://stats.stackexchange.com/questions/494456/the-gradient-of-neural-networks-w-r-t-one-hot-encoded-inputs
P("one_hot_input_jacobian", "jacobian", "ga.jacobian(NET_12, ONEHOT_IN)",
  "close(r, jr(NET_12, ONEHOT_IN))", "∂f/∂x at a one-hot float input is an ordinary Jacobian",
  group="jacobian")

# =================================================================== Q25: autograd.functional.jacobian
# source: https://github.com/pytorch/pytorch/pull/50915
P("multi_input_multi_output", "jacobian", "ga.jacobian(two_outputs, (XM, YM))",
  "close(r, taj(two_outputs, (XM, YM)))", "nested tuple J[k][j] as torch.autograd.functional",
  group="jacobian")
# source: https://github.com/pytorch/pytorch/issues/184842
P("forward_mode_without_vectorize", "jacobian",
  "ga.jacobian(torch.tanh, X_TANH, strategy='forward-mode', vectorize=False)",
  "close(r, jr(torch.tanh, X_TANH))",
  "docstring: where torch refuses forward mode without vectorize=True, gradarg computes it",
  group="jacobian")
# source: https://github.com/flaport/torch_sparse_solve/issues/18
P("numpy_backward_falls_back", "jacobian", "ga.jacobian(NumpySolve.apply, T(1., 2., 3.))",
  "close(r, torch.linalg.inv(A_SOLVE))",
  "vectorize=None falls back to a loop when the backward cannot be batched: A⁻¹", group="jacobian")
# source: https://github.com/flaport/torch_sparse_solve/issues/18
P("numpy_backward_vectorize_true", "jacobian",
  "catch(lambda: ga.jacobian(NumpySolve.apply, T(1., 2., 3.), vectorize=True))",
  "isinstance(r, ga.VectorizationError) or (isinstance(r, torch.Tensor) and close(r, torch.linalg.inv(A_SOLVE)))",
  "docstring: vectorize=True raises VectorizationError instead of falling back (or is right)",
  group="jacobian")

# =================================================================== Q26: Hessians
# source: https://github.com/pytorch/pytorch/issues/92075
P("rbf_norm_mixed_disagrees", "compare_vjp", "ga.compare_vjp(mixed_grad(rbf_norm), A_RBF, V_RBF)",
  "not r.agree",
  "torch's double backward through linalg.norm at 0 gives NaN (jacfwd: 0); the differences give 2v",
  group="hessian")
# source: https://github.com/pytorch/pytorch/issues/92075
P("rbf_sq_mixed_agrees", "compare_vjp", "ga.compare_vjp(mixed_grad(rbf_sq), A_RBF, V_RBF)",
  "r.agree and close(r.backward, 2 * V_RBF, rtol=1e-6)", "with a sum of squares: 2I v = 2v", group="hessian")
# source: https://github.com/pytorch/pytorch/issues/149694
# torch 2.13 still gives an all-NaN torch.func.hessian here; torch.autograd.functional.hessian is right.
P("det_hessian_not_nan", "jacobian",
  "ga.jacobian(lambda t: ga.jacobian(det_of_product, t, create_graph=True), X_DETJ)",
  "close(r, torch.autograd.functional.hessian(det_of_product, X_DETJ))",
  "the Hessian of det(xA): constant, no NaN (autograd.functional.hessian, by hand)", group="hessian")
# source: https://github.com/pytorch/pytorch/issues/49171
P("functional_call_weight_jacobian", "jacobian", "ga.jacobian(lin22_of_weight, LIN22.weight.detach())",
  "close(r, jr(lin22_of_weight, LIN22.weight.detach()))",
  "∂ output / ∂ weight through functional_call: (1,2,2,2)", group="jacobian")
# source: https://github.com/pytorch/pytorch/issues/49171
P("functional_call_weight_second", "jacobian",
  "ga.jacobian(lambda W: ga.jacobian(lin22_of_weight, W, create_graph=True), LIN22.weight.detach())",
  "close(r, torch.zeros(1, 2, 2, 2, 2, 2, dtype=D))", "linear in the weight: second derivative 0",
  group="hessian")
# source: https://github.com/pytorch/pytorch/issues/16015
P("piecewise_linear_hessian_zero", "jacobian",
  "ga.jacobian(lambda t: ga.jacobian(max_of_max_pow, t, create_graph=True), T(1.0, 2.0))",
  "close(r, torch.zeros(2, 2, dtype=D))", "piecewise linear in x: the Hessian is 0 (torch.func.hessian)",
  group="hessian")
# source: https://github.com/pytorch/pytorch/issues/16015
P("piecewise_linear_hessian_plain_x", "jacobian",
  "ga.jacobian(lambda t: ga.jacobian(max_of_max_plain, t, create_graph=True), T(1.0, 2.0))",
  "close(r, torch.zeros(2, 2, dtype=D))",
  "docstring: an output that does not depend on the input gives a zero block", group="hessian")

# =================================================================== Q27: wrong number of gradients
# source: https://github.com/huawei-noah/AdderNet/issues/21
P("adder_one_gradient_for_two", "why_no_grad", "ga.why_no_grad(*adder_scene()).case",
  "r == 'backward-raises'", "backward returns 1 gradient for 2 inputs: torch raises", group="custom-function")
# source: https://github.com/deepseek-ai/TileKernels/pull/10
# The PR says 6 returns for 5 inputs raise; torch 2.13 accepts trailing extra Nones.
P("prenorm_extra_none_ok", "check_backward",
  "ga.check_backward(PreNormExtraNone.apply, leaf(rnd(3, seed=77)), leaf(rnd(3, seed=78)), 1e-6, False, 2).status",
  "r == 'agree'", "torch 2.13 ignores a trailing extra None; the gradients are right", group="custom-function")
# source: https://github.com/NVlabs/curobo/issues/382
P("pose_missing_nones_raises", "compare_vjp",
  "catch(lambda: ga.compare_vjp(lambda p: PoseTransformMissingNones.apply(p, rnd(3, seed=79), rnd(3, seed=80), rnd(3, seed=81)), rnd(3, seed=82), torch.ones(3, dtype=D)))",
  "isinstance(r, RuntimeError)", "docstring: RuntimeError for errors fn or its backward raise (2 of 4)",
  group="custom-function")
# source: https://github.com/sczhou/STFAN/issues/8
P("kernel_conv_missing_none", "why_no_grad", "ga.why_no_grad(*kernel_conv_scene()).case",
  "r == 'backward-raises'", "backward returns 2 gradients for 3 arguments: torch raises",
  group="custom-function")

# =================================================================== Q28: forward mode
# source: https://github.com/pytorch/pytorch/issues/10223
P("hvp_forward_over_reverse", "jacobian",
  "ga.jacobian(torch.func.grad(mlp_flat_loss), W_FLAT, method='forward') @ W_HV",
  "close(r, hessian(mlp_flat_loss)(W_FLAT) @ W_HV, rtol=1e-6, atol=1e-9)",
  "columns of the Hessian by forward mode over the gradient", group="hessian")
# source: https://github.com/pytorch/functorch/issues/776
P("logsigmoid_forward_mode", "jacobian", "ga.jacobian(F.logsigmoid, T(0.5, -1.0, 3.0), method='forward')",
  "close(r, torch.diag(torch.sigmoid(-T(0.5, -1.0, 3.0))))", "d logσ(x)/dx = σ(-x)", group="jacobian")
# source: https://github.com/flatironinstitute/pytorch-finufft/issues/110
P("function_without_jvp_check", "check_backward", "ga.check_backward(CubeNoJvp.apply, leaf(rnd(4, seed=83)))",
  "bool(r) and 'finite' in r.reference.lower()",
  "docstring: no jvp → finite differences, and the backward is right", group="custom-function")
# source: https://github.com/flatironinstitute/pytorch-finufft/issues/110
P("function_without_jvp_wide_jacobian", "jacobian", "ga.jacobian(SpreadNoJvp.apply, T(0.7, -1.3))",
  "close(r, jr(spread_ref, T(0.7, -1.3)))",
  "R² → R⁴ through a Function with no jvp: the Jacobian all the same", group="custom-function")
# source: https://github.com/jax-ml/jax/issues/2736
P("eigvalsh_of_hessian_grad", "jacobian",
  "ga.jacobian(lambda t: torch.linalg.eigvalsh(ga.jacobian(lambda s: ga.jacobian(f_inner, s, create_graph=True), t, create_graph=True)).sum(), X_EIGH)",
  "close(r, jacrev(trace_of_hessian_func)(X_EIGH), rtol=1e-6, atol=1e-9)",
  "∇ Σ eig(H(x)) = ∇ tr H(x) = 2x (torch.func)", group="hessian")
# source: https://github.com/pytorch/pytorch/issues/154226
P("sdpa_cpu_jacobian_auto", "jacobian", "ga.jacobian(sdpa_q, Q_ATT)",
  "close(r, jr(sdpa_q, Q_ATT))", "reverse mode works where the CPU kernel has no forward AD",
  group="jacobian")
# source: https://github.com/pytorch/pytorch/issues/154226
P("sdpa_cpu_check_backward", "check_backward", "ga.check_backward(sdpa_q, leaf(Q_ATT)).status",
  "r == 'agree'", "docstring: no forward mode → finite differences; the backward is right",
  group="values")
# source: https://github.com/raven-ml/raven/issues/153
P("matmul_forward_equals_reverse", "jacobian", "ga.jacobian(sum_x_xt, XM, method='forward')",
  "close(r, jr(sum_x_xt, XM))", "∂Σ(xxᵀ)/∂x by forward mode equals reverse (2·1 1ᵀx)", group="jacobian")

# =================================================================== Q29: norms at zero
# source: https://github.com/pytorch/pytorch/issues/2421
# The 2017 report gives NaN; torch 2.13 returns the subgradient 0 (PR 2775).
P("norm_at_zero_subgradient", "backward_vjp", "ga.backward_vjp(lambda t: t.norm(), torch.zeros(3, dtype=D), 1.0)",
  "close(r, torch.zeros(3, dtype=D))", "torch 2.13: 0, not NaN", group="nan-grad")
# source: https://github.com/pytorch/pytorch/issues/3264
# torch 2.13 gives finite values (the report's NaN is outdated): 1/‖a‖₁ where a is 0, 0 at the last.
P("normalize_p1_with_zeros", "backward_vjp",
  "ga.backward_vjp(lambda t: F.normalize(t, p=1, dim=1), T(0., 0., 0., 0., 0.1996).reshape(1, 5), torch.ones(1, 5, dtype=D))",
  "close(r, T(1 / 0.1996, 1 / 0.1996, 1 / 0.1996, 1 / 0.1996, 0.).reshape(1, 5))",
  "sign(0) = 0 subgradient: [5.01, …, 0] (torch 2.13)", group="nan-grad")
# source: https://github.com/pytorch/pytorch/issues/184575
# The issue says the forward is NaN at 0; in torch 2.13 it is 0 and the Jacobian is I / eps.
P("normalize_zero_vector_jacobian", "jacobian", "ga.jacobian(lambda t: F.normalize(t, dim=0), torch.zeros(3, dtype=D))",
  "close(r, 1e12 * torch.eye(3, dtype=D))", "x / max(‖x‖, 1e-12) near 0 is x / 1e-12", group="nan-grad")
# source: https://github.com/pytorch/pytorch/issues/44452
P("norm_p_half_with_zero", "backward_vjp", "ga.backward_vjp(lambda t: t.norm(p=0.5), T(0., 1., 2.), 1.0)",
  "close(r, tgrad(lambda t: t.norm(p=0.5), T(0., 1., 2.))) and bool(torch.isfinite(r).all())",
  "torch 2.13: finite, 0 at the zero entry (the report's NaN is outdated)", group="nan-grad")
# source: https://github.com/pytorch/pytorch/pull/2775
P("sqrt_of_sum_sq_nonfinite", "why_no_grad", "ga.why_no_grad(*norm_scene(True)).case",
  "r == 'nonfinite'", "pow(2).sum().sqrt() at 0: NaN gradient", group="nan-grad")
# source: https://github.com/pytorch/pytorch/pull/2775
P("norm_at_zero_zero_case", "why_no_grad", "ga.why_no_grad(*norm_scene(False)).case",
  "r == 'zero'", ".norm() at 0: gradient exactly 0", group="nan-grad")
# source: https://github.com/tensorflow/tensorflow/issues/12071
P("tiny_rows_norm_float32", "backward_vjp",
  "ga.backward_vjp(lambda t: t.norm(dim=1), X_TINY, torch.ones(4, dtype=S))",
  "close(r, T(1., 0., 1., 1., dtype=S).reshape(4, 1))",
  "torch 2.13 float32: 1, 0, 1, 1 (no inf at 1e-19, unlike the TF report)", group="nan-grad")
# source: https://github.com/pytorch/pytorch/issues/4320
P("std_of_constant", "backward_vjp", "ga.backward_vjp(lambda t: t.std(), torch.ones(4, dtype=D), 1.0)",
  "close(r, torch.zeros(4, dtype=D))", "torch 2.13: 0 at a constant input (the report's NaN is outdated)",
  group="nan-grad")

# =================================================================== Q30: in-place errors
# source: https://github.com/PaddlePaddle/Paddle/pull/27901
P("pow_saved_then_modified", "why_no_grad", "ga.why_no_grad(*pow_saved_modified_scene()).case",
  "r == 'modified-in-place'", "b saved by c = b² and then written into", group="none-grad")
# source: https://github.com/pytorch/pytorch/issues/46820
P("chunk_views_scaled_inplace", "backward_vjp",
  "catch(lambda: ga.backward_vjp(chunk_scale_inplace, FLOW, torch.ones(1, 4, 2, dtype=D)))",
  "isinstance(r, Exception)", "torch 2.13 forbids in-place on an output of chunk: the call raises",
  group="misuse")
# source: https://github.com/pytorch/pytorch/issues/46820
P("chunk_views_scaled_fixed", "backward_vjp",
  "ga.backward_vjp(chunk_scale_fixed, FLOW, torch.ones(1, 4, 2, dtype=D))",
  "close(r, torch.cat([torch.full((1, 2, 2), U_SCALE, dtype=D), torch.full((1, 2, 2), V_SCALE, dtype=D)], 1))",
  "u_scale on the first half, v_scale on the second", group="grad-outputs")

CASES = REG.cases
