"""Blind corpus for ``gradarg.compare_vjp``: backward passes compared with a reference.

Each situation rebuilds, in new code and names, a thread (``source``) where somebody
compared what autograd's backward gives with a derivative obtained another way: a
Jacobian or VJP derived by hand (right or wrong as posted), a Jacobian assembled in a
transposed layout, a missing ``1/n``, a dropped minus sign, or a custom
``autograd.Function`` whose backward is checked against finite differences.

The ground truth of every situation was established with torch alone
(/work/s41/verify_compare.py): autograd's VJP ``torch.autograd.grad(fn(x), x, v)``,
the true VJP from ``torch.func.jacrev`` of a plain-torch version (central differences
where jacrev cannot run), and the asker's reference (``v`` contracted with the given
Jacobian, or ``ref(v)``).  ``right`` is true iff autograd's VJP equals the asker's
reference within 1e-7 relative.  Nothing here imports gradarg.

Each entry of ``SITUATIONS``:
    name, source, build -> (fn, x, v, kwargs), truth, right, must, never
``must`` is a list of groups (tuples of regexes); every group needs at least one match
in ``str(result)``.  ``never`` is a tuple of regexes that must not match.
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd import Function

f64 = torch.float64
c128 = torch.complex128

# Regex building blocks, only from what the docstrings promise: the status words
# "agree" / "DISAGREE", and the relations ``note`` names on a disagreement (NaN or inf,
# all zeros on one side, a flipped sign, a constant factor, a transpose).
AGREE = (r"\bagree\b", r"(?i)\bagree(s|d)?\b")
DISAGREE = (r"DISAGREE", r"(?i)\bdisagree")
NEVER_RIGHT = (r"DISAGREE",)
TRANSPOSED = (r"(?i)transpos", r"(?i)\bJ\s*v\b", r"(?i)\bJv\b")
FACTOR = (r"(?i)constant factor", r"(?i)\bfactor\b", r"(?i)\bscal(ed|ing|e)\b",
          r"(?i)\btimes\b", r"×")
SIGN = (r"(?i)\bsign\b", r"(?i)flipped", r"(?i)\bnegat(ed|ive|ion)\b", r"(?i)opposite",
        r"(?i)factor\W+-\s*1\b")
NO_TRANSPOSE = r"(?i)transpos"
NO_FACTOR = r"(?i)\bfactor\b"
NO_SIGN = r"(?i)(flipped|\bsign\b)"

RIGHT_MUST = [AGREE]
WRONG_MUST = [DISAGREE]
NO_RELATION = (NO_TRANSPOSE, NO_FACTOR, NO_SIGN)

ISSUES = "https://github.com/"


def _t(data, dtype=f64):
    return torch.tensor(data, dtype=dtype)


def _randn(*shape, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=f64)


def _rand(*shape, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=gen, dtype=f64)


def _diag_jacobian(d, shape):
    """Jacobian (shape + shape) of an elementwise map with derivative ``d``."""
    n = d.numel()
    return torch.diag(d.reshape(n)).reshape(tuple(shape) + tuple(shape))


# ----------------------------------------------------------------------------------
# Pages
# ----------------------------------------------------------------------------------
def build_detached_step_analytic():
    # A step taken with a detached gradient (grad.data): autograd treats it as a
    # constant, the asker's expansion differentiates through it (3.027 instead of 3).
    x = _t([1.0, 0.5, 2.0])
    target = 4.0

    def fn(t):
        first = 3 * t
        step = (-6 * (target - 3 * t)).detach()
        second = 3 * (t + 0.001 * step)
        return ((first + second) / 2 - target) ** 2

    def asker(v):
        final = 3.027 * x - 0.009 * target
        return v * 2 * (final - target) * 3.027

    return fn, x, torch.ones(3, dtype=f64), {"reference": asker}


def build_vjp_matrix_doubling():
    x = _t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    jac = 2 * torch.eye(6, dtype=f64).reshape(2, 3, 2, 3)
    return (lambda t: 2 * t), x, x.clone(), {"reference": jac}


def build_vjp_matrix_contracted_on_input_side():
    a = _randn(3, 3, seed=3)
    x = _randn(2, 3, seed=31)
    jac = torch.einsum("ik,lj->ijkl", torch.eye(2, dtype=f64), a)   # d(x@a)[i,j]/dx[k,l]
    v = _randn(2, 3, seed=32)

    def contracted(g):          # sums the Jacobian's input indices against g: J v
        return torch.einsum("ijkl,kl->ij", jac, g)

    return (lambda t: t @ a), x, v, {"reference": contracted}


def build_two_output_jacobian():
    x = _t([1.5, -2.0])

    def fn(t):
        return torch.stack([t[0] * t[1], t[0] + t[1] ** 2])

    jac = np.array([[-2.0, 1.5], [1.0, -4.0]])
    return fn, x, _t([0.7, -1.3]), {"reference": jac}


def build_single_grad_call_jacobian():
    # All outputs fed to one grad call: every row of the asker's "Jacobian" is the
    # column sum of the true one.
    q = _t([1.0, 2.0])

    def fn(t):
        return torch.cat([2 * t, 4 * t * t])

    j_summed = torch.tensor([[10.0, 18.0]] * 4, dtype=f64)
    return fn, q, _t([0.5, -1.0, 2.0, 0.25]), {"reference": j_summed}


def _rowvec_fn(t):
    return torch.stack([t[0, 0] ** 2 + 3 * t[0, 1], t[0, 1] ** 2 + 2 * t[0, 0]]).reshape(1, 2)


def build_row_vector_jacobian():
    x = _t([[2.0, 3.0]])
    jac = _t([[4.0, 3.0], [2.0, 6.0]]).reshape(1, 2, 1, 2)
    return _rowvec_fn, x, torch.ones(1, 2, dtype=f64), {"reference": jac}


def build_row_vector_jacobian_transposed():
    x = _t([[2.0, 3.0]])
    jac_t = _t([[4.0, 2.0], [3.0, 6.0]]).reshape(1, 2, 1, 2)   # J.T used as J
    return _rowvec_fn, x, torch.ones(1, 2, dtype=f64), {"reference": jac_t}


def build_one_hot_columns_doubling():
    x = _randn(3, seed=8)
    j = torch.zeros(3, 3, dtype=f64)
    for i in range(3):           # J[:, i] = the one-hot backward's x.grad (2I: symmetric)
        j[:, i] = 2 * torch.eye(3, dtype=f64)[i]
    return (lambda t: 2 * t), x, _randn(3, seed=81), {"reference": j}


def build_one_hot_columns_general():
    m = _randn(3, 3, seed=9)
    x = _randn(3, seed=91)
    j = torch.zeros(3, 3, dtype=f64)
    for i in range(3):           # x.grad for one-hot v_i is row i of M, stored as column i
        j[:, i] = m[i, :]
    return (lambda t: m @ t), x, _randn(3, seed=92), {"reference": j}


def build_square_with_weighted_vector():
    x = torch.arange(1.0, 11.0, dtype=f64).reshape(2, 5)
    v = torch.ones(2, 5, dtype=f64)
    v[0, 0] = 100.0
    return (lambda t: t ** 2), x, v, {"reference": _diag_jacobian(2 * x, x.shape)}


def build_square_at_several_points():
    x = torch.linspace(-2, 2, 5, dtype=f64)
    return (lambda t: t ** 2), x, torch.ones(5, dtype=f64), {
        "reference": _diag_jacobian(2 * x, x.shape).numpy()}


_A_QUAD = _t([[2.0, 0.5], [1.5, 3.0]])          # A + A.T = [[4, 2], [2, 6]]


def build_quadratic_gradient_check():
    x = _t([0.8, -1.1])
    return (lambda t: t @ _A_QUAD @ t), x, _t(1.0), {
        "reference": lambda v: v * (_A_QUAD + _A_QUAD.T) @ x}


def build_quadratic_gradient_off_by_half():
    x = _t([0.8, -1.1])
    return (lambda t: t @ _A_QUAD @ t), x, _t(1.0), {
        "reference": lambda v: 1.5 * v * (_A_QUAD + _A_QUAD.T) @ x}


def build_softmax_jacobian_loops():
    z = _t([1.0, 2.0, 3.0])
    s = torch.softmax(z, 0).numpy()
    jac = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            jac[i, j] = s[i] * (1 - s[i]) if i == j else -s[i] * s[j]
    return (lambda t: torch.softmax(t, 0)), z, _t([0.3, -1.0, 2.0]), {"reference": jac}


def build_softmax_row_jacobian():
    x = _t([[3.0, -3.0, 4.0, -1.5, -4.5]])

    def fn(t):
        e = torch.exp(t)
        return e / e.sum(-1, keepdim=True)

    s = fn(x)[0]
    jac = (torch.diag(s) - torch.outer(s, s)).reshape(1, 5, 1, 5)
    return fn, x, _randn(1, 5, seed=15), {"reference": jac}


def build_vector_matrix_weight_gradient():
    xin = _randn(1, 2, seed=16)
    w = _randn(2, 3, seed=161)
    return (lambda t: xin @ t), w, _randn(1, 3, seed=162), {
        "reference": lambda v: xin.T @ v}


def build_matmul_input_gradient():
    w = _randn(2, 3, seed=17)
    x = _randn(3, 4, seed=171)
    return (lambda t: w @ t), x, _randn(2, 4, seed=172), {"reference": lambda v: w.T @ v}


def build_matvec_column_gradient():
    w = _t([[10.0, 20.0], [30.0, 40.0]])
    x = _t([[5.0], [6.0]])
    return (lambda t: w @ t), x, _t([[4.0], [5.0]]), {"reference": lambda v: w.T @ v}


def build_matmul_rule_without_transpose():
    xr = _t([[1.0, 2.0], [3.0, 4.0]])
    w = _t([[10.0, 20.0], [30.0, 40.0]])
    return (lambda t: t @ xr), w, _t([[1.0, 2.0], [2.0, 3.0]]), {
        "reference": lambda v: v @ xr}      # "d(AB)/dA = B", no transpose


def build_weight_gradient_dl_dd_xt():
    xs = _randn(4, 5, seed=19)
    w = _randn(3, 4, seed=191)
    return (lambda t: t @ xs), w, _randn(3, 5, seed=192), {"reference": lambda v: v @ xs.T}


def build_exp_of_matmul_chain():
    x = _t([[2.0, 1.0, -3.0], [-3.0, 4.0, 2.0]]) / 4
    w = _t([[3.0, 2.0, 1.0, -1.0], [2.0, 1.0, 3.0, 2.0], [3.0, 2.0, 1.0, -2.0]]) / 4
    v = _t([[2.0, 3.0, -3.0, 9.0], [-8.0, 1.0, 4.0, 6.0]])
    return (lambda t: torch.exp(t @ w)), x, v, {
        "reference": lambda g: (g * torch.exp(x @ w)) @ w.T}


def build_matmul_ones_rows_equal_bt():
    b = _randn(3, 1, seed=21)
    a = _randn(2, 3, seed=211)
    return (lambda t: t @ b), a, torch.ones(2, 1, dtype=f64), {
        "reference": lambda v: v @ b.T}


def _ln_plain(t, eps=1e-5):
    mu = t.mean(-1, keepdim=True)
    var = ((t - mu) ** 2).mean(-1, keepdim=True)
    return (t - mu) / torch.sqrt(var + eps)


def build_layernorm_elementwise_formula():
    x = _randn(2, 4, seed=23)
    eps = 1e-5

    def posted(g):              # the posted dL/dX, read elementwise (no mean terms)
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        xhat = (x - mu) / torch.sqrt(var + eps)
        return (g / torch.sqrt(var + eps) - xhat / (var + eps) * g * xhat) / x.shape[-1]

    return _ln_plain, x, _randn(2, 4, seed=231), {"reference": posted}


def build_layernorm_full_input_gradient():
    x = _randn(2, 5, seed=24)
    gamma = _randn(5, seed=241)
    beta = _randn(5, seed=242)
    eps = 1e-5

    def fn(t):
        return F.layer_norm(t, (5,), gamma, beta, eps)

    def derived(g):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        rstd = 1 / torch.sqrt(var + eps)
        xhat = (x - mu) * rstd
        gh = g * gamma
        d = x.shape[-1]
        return rstd / d * (d * gh - gh.sum(-1, keepdim=True)
                           - xhat * (gh * xhat).sum(-1, keepdim=True))

    return fn, x, _randn(2, 5, seed=243), {"reference": derived}


def build_layernorm_std_plus_eps_jacobian():
    x = _randn(6, seed=25)
    eps = 1e-3
    n = 6

    def fn(t):
        mu = t.mean()
        sd = torch.sqrt(((t - mu) ** 2).mean())
        return (t - mu) / (sd + eps)

    mu = x.mean()
    sd = torch.sqrt(((x - mu) ** 2).mean())
    c = x - mu
    # written as dz_j/dx_i (rows: inputs), symmetric here, so the layout does not matter
    jac = (torch.eye(n, dtype=f64) - 1 / n) / (sd + eps) - torch.outer(c, c) / (n * sd * (sd + eps) ** 2)
    return fn, x, _randn(6, seed=251), {"reference": jac}


def build_layernorm_gamma_gradient():
    xs = _randn(3, 4, seed=26)
    beta = _randn(4, seed=261)
    xhat = _ln_plain(xs)
    return (lambda g: xhat * g + beta), _randn(4, seed=262), _randn(3, 4, seed=263), {
        "reference": lambda v: (v * xhat).sum(0)}


def _bn_plain(t, eps=1e-5):
    mu = t.mean(0, keepdim=True)
    var = ((t - mu) ** 2).mean(0, keepdim=True)
    return (t - mu) / torch.sqrt(var + eps)


def build_batchnorm_three_term():
    x = _randn(5, 3, seed=27)
    eps = 1e-5

    def three_term(g):
        mu = x.mean(0, keepdim=True)
        var = ((x - mu) ** 2).mean(0, keepdim=True)
        rstd = 1 / torch.sqrt(var + eps)
        xhat = (x - mu) * rstd
        n = x.shape[0]
        return rstd / n * (n * g - g.sum(0, keepdim=True) - xhat * (g * xhat).sum(0, keepdim=True))

    return _bn_plain, x, _randn(5, 3, seed=271), {"reference": three_term}


def build_batchnorm_with_gamma():
    x = _randn(6, 4, seed=28)
    gamma = _randn(4, seed=281)
    beta = _randn(4, seed=282)
    eps = 1e-5

    def fn(t):
        return F.batch_norm(t, None, None, gamma, beta, training=True, eps=eps)

    def derived(g):
        mu = x.mean(0)
        var = ((x - mu) ** 2).mean(0)
        rstd = 1 / torch.sqrt(var + eps)
        xhat = (x - mu) * rstd
        n = x.shape[0]
        return gamma * rstd / n * (n * g - g.sum(0) - xhat * (g * xhat).sum(0))

    return fn, x, _randn(6, 4, seed=283), {"reference": derived}


def build_softmax_loss_single_sample():
    x = _randn(5, seed=29)
    label = torch.tensor([2])

    def fn(t):
        return F.cross_entropy(t.unsqueeze(0), label, reduction="sum")

    onehot = F.one_hot(label[0], 5).to(f64)
    return fn, x, _t(1.0), {"reference": lambda v: v * (torch.softmax(x, 0) - onehot)}


def build_softmax_loss_unnormalised_diff():
    x = _randn(3, 4, seed=30)
    labels = torch.tensor([2, 0, 3])
    onehot = F.one_hot(labels, 4).to(f64)
    return (lambda t: F.cross_entropy(t, labels)), x, _t(1.0), {
        "reference": lambda v: v * (torch.softmax(x, 1) - onehot)}   # no 1/batch


def build_mean_softmax_cross_entropy():
    x = _t([[1.0, 2.0, 3.0]] * 3)
    label = _t([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])

    def fn(t):
        return torch.mean(-torch.sum(label * torch.log(F.softmax(t, dim=1)), dim=1))

    return fn, x, _t(1.0), {"reference": lambda v: v * (torch.softmax(x, 1) - label) / 3}


def build_cross_entropy_upstream_scalar():
    x = _randn(6, seed=32)
    target = torch.tensor([4])
    onehot = F.one_hot(target[0], 6).to(f64)
    return (lambda t: F.cross_entropy(t[None], target)), x, _t(2.5), {
        "reference": lambda v: v * (torch.softmax(x, 0) - onehot)}


def build_mean_square_expected_sum_gradient():
    w = _t([2.0, 6.0])
    return (lambda t: (t ** 2).mean()), w, _t(1.0), {"reference": lambda v: v * 2 * w}


def build_mean_expected_ones():
    k = _t([2.0, 6.0, 8.0, 9.0])
    return (lambda t: t.mean()), k, _t(1.0), {"reference": lambda v: v * torch.ones(4, dtype=f64)}


_MSE_X = _t([1.0, 2.0, 3.0, 4.0, 5.0])
_MSE_T = _t([5.0, 4.0, 3.0, 2.0, 1.0])


def build_mse_none_with_mean_backward_formula():
    return (lambda t: F.mse_loss(t, _MSE_T, reduction="none")), _MSE_X, _t([2.0, 3.0, 4.0, 5.0, 6.0]), {
        "reference": lambda v: 2 * (_MSE_X - _MSE_T) * v / 5}


def build_mse_mean_upstream_two():
    return (lambda t: F.mse_loss(t, _MSE_T)), _MSE_X, _t(2.0), {
        "reference": lambda v: 2 * (_MSE_X - _MSE_T) * v / 5}


def build_mse_backward_with_one_over_n():
    x = _randn(4, seed=37)
    target = _randn(4, seed=371)
    return (lambda t: F.mse_loss(t, target)), x, _t(1.0 / 4), {
        "reference": lambda v: 2 * (x - target) / 4}      # the mean's gradient, v ignored


def build_average_square_two_by_two():
    x = _randn(2, 2, seed=38)
    return (lambda t: (t ** 2).mean()), x, _t(1.0), {"reference": lambda v: v * x / 2}


def build_average_square_three_by_three():
    x = _randn(3, 3, seed=39)
    return (lambda t: (t ** 2).mean()), x, _t(1.0), {"reference": lambda v: v * x / 2}


def build_l2_mean_with_sum_gradient():
    x = _t([4.0, 1.0, 3.0, 7.0])
    target = _t([4.0, 2.0, 5.0, 4.0])
    return (lambda t: ((t - target) ** 2).mean()), x, _t(1.0), {
        "reference": lambda v: v * 2 * (x - target)}


def build_sigmoid_quotient_rule_sign():
    x = _randn(5, seed=41)

    def hand(v):
        e = torch.exp(-x)
        return v * (-e / (1 + e) ** 2)

    return (lambda t: 1 / (1 + torch.exp(-t))), x, _randn(5, seed=411), {"reference": hand}


def build_sigmoid_identity():
    x = torch.arange(-2.0, 2.0, 0.1, dtype=f64)

    def hand(v):
        s = 1 / (1 + torch.exp(-x))
        return v * s * (1 - s)

    return (lambda t: 1 / (1 + torch.exp(-t))), x, torch.ones_like(x), {"reference": hand}


class SigmoidNoUpstream(Function):
    @staticmethod
    def forward(ctx, t):
        y = 1 / (1 + torch.exp(-t))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return y * (1 - y)                  # dy never used


def build_sigmoid_function_without_dy():
    x = _t([1.0, 2.0, 3.0])
    return (lambda t: SigmoidNoUpstream.apply(t) ** 2), x, torch.ones(3, dtype=f64), {
        "reference": "finite-difference"}


def build_sigmoid_squared_chain():
    x = _t([2.0, -0.5, 1.0])

    def hand(v):
        s = torch.sigmoid(x)
        return v * 2 * s * s * (1 - s)

    return (lambda t: torch.sigmoid(t) * torch.sigmoid(t)), x, _randn(3, seed=44), {"reference": hand}


_A_FORM = _t([[1.0, 3.0], [0.0, 2.0]])
_X_FORM = _t([[1.0, 2.0], [0.0, 3.0], [4.0, 1.0], [2.0, 2.0], [3.0, 0.0]])


def build_quadratic_form_summed_matrix():
    return (lambda t: t @ _A_FORM @ t.T), _X_FORM, torch.ones(5, 5, dtype=f64), {
        "reference": lambda v: _X_FORM @ (_A_FORM + _A_FORM.T)}


def build_quadratic_form_per_sample():
    return (lambda t: torch.einsum("ni,ij,nj->n", t, _A_FORM, t)), _X_FORM, _randn(5, seed=46), {
        "reference": lambda v: v[:, None] * (_X_FORM @ (_A_FORM + _A_FORM.T))}


def build_theta_quadratic_form():
    a = _rand(4, 4, seed=47)
    theta = _rand(4, seed=471)
    return (lambda t: (t @ a) @ t), theta, _t(1.0), {"reference": lambda v: v * (a + a.T) @ theta}


def build_half_quadratic_minus_linear():
    a = _randn(5, 5, seed=48)
    b = _randn(5, seed=481)
    x = _randn(5, seed=482)
    return (lambda t: 0.5 * t @ a @ t - b @ t), x, _t(1.0), {
        "reference": lambda v: v * (0.5 * (a + a.T) @ x - b)}


def build_half_quadratic_matrix_gradient():
    a = _randn(5, 5, seed=49)
    b = _randn(5, seed=491)
    x = _randn(5, seed=492)
    return (lambda m: 0.5 * x @ m @ x - b @ x), a, _t(1.0), {
        "reference": lambda v: v * 0.5 * torch.outer(x, x)}


def build_two_x_dot_x():
    x = torch.arange(4.0, dtype=f64)
    return (lambda t: 2 * torch.dot(t, t)), x, _t(1.0), {"reference": lambda v: v * 4 * x}


# ----------------------------------------------------------------------------------
# Issues
# ----------------------------------------------------------------------------------
class IsrluForgetsUpstream(Function):
    @staticmethod
    def forward(ctx, t):
        neg = torch.clamp(t, max=0.0)
        ctx.nisr = torch.rsqrt(1.0 + neg ** 2)
        return t * ctx.nisr

    @staticmethod
    def backward(ctx, grad_out):
        return ctx.nisr ** 3


def build_isrlu_backward_without_upstream():
    x = _t([-1.3, 0.4, -0.6, 2.1, -0.25, 0.9, -2.2, 1.4])
    return IsrluForgetsUpstream.apply, x, _randn(8, seed=51), {"reference": "finite-difference"}


class TanhAttention(Function):
    @staticmethod
    def forward(ctx, q, k, w):
        a = torch.tanh(q @ k.T)
        ctx.save_for_backward(q, k, w, a)
        return a @ w, a

    @staticmethod
    def backward(ctx, grad_o, grad_a):
        q, k, w, a = ctx.saved_tensors
        grad_s = (grad_o @ w.T + grad_a) * (1 - a ** 2)
        return grad_s @ k, grad_s.T @ q, a.T @ grad_o


def build_attention_lab_function():
    k = _randn(3, 2, seed=521)
    w = _randn(3, 4, seed=522)
    q = _randn(3, 2, seed=52)
    return (lambda t: TanhAttention.apply(t, k, w)[0]), q, _randn(3, 4, seed=523), {
        "reference": "finite-difference"}


def build_binary_cross_entropy_sum():
    x = 0.1 + 0.8 * _rand(3, 3, seed=53)
    y = _rand(3, 3, seed=531)
    return (lambda t: F.binary_cross_entropy(t, y, reduction="sum")), x, _t(1.0), {
        "reference": "finite-difference"}


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, inp, weight, bias):
        ctx.save_for_backward(inp, weight)
        return inp @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        inp, weight = ctx.saved_tensors
        return grad_output @ weight, grad_output.T @ inp, grad_output.sum(0)


def build_linear_function_doc_example():
    weight = _randn(3, 4, seed=541)
    bias = _randn(3, seed=542)
    return (lambda t: LinearFunction.apply(t, weight, bias)), _randn(5, 4, seed=54), \
        _randn(5, 3, seed=543), {"reference": "finite-difference"}


def _three_fn(t):
    return torch.stack([t[0] * t[1], torch.sin(t[0]) + t[2], t[1] ** 2 * t[2]])


def _three_jac(x):
    return torch.stack([
        torch.stack([x[1], x[0], torch.zeros((), dtype=f64)]),
        torch.stack([torch.cos(x[0]), torch.zeros((), dtype=f64), torch.ones((), dtype=f64)]),
        torch.stack([torch.zeros((), dtype=f64), 2 * x[1] * x[2], x[1] ** 2]),
    ])


def build_tutorial_jacobian_transposed():
    x = _t([0.7, -1.2, 2.0])
    return _three_fn, x, _randn(3, seed=55), {"reference": _three_jac(x).T}


def build_jacobian_columns_from_vjps():
    m = _randn(3, 3, seed=56)
    x = _randn(3, seed=561)

    def fn(t):
        return torch.tanh(m @ t)

    jrows = (1 - torch.tanh(m @ x) ** 2)[:, None] * m      # true dy_i/dx_j
    j_built = torch.zeros(3, 3, dtype=f64)
    for i in range(3):                                      # "JVP" of e_i put in column i
        j_built[:, i] = jrows[i, :]
    return fn, x, _randn(3, seed=562), {"reference": j_built}


def build_jacobian_rows_from_grad_loop():
    x0 = _t([0.5, -1.0, 1.5])

    def fn(t):
        return torch.stack([t[0] ** 2 * t[1], torch.exp(t[1]) - t[2], t[0] * t[2]])

    xr = x0.clone().requires_grad_()
    out = fn(xr)
    rows = [torch.autograd.grad(out[i], xr, retain_graph=True)[0] for i in range(3)]
    return fn, x0, _randn(3, seed=57), {"reference": torch.stack(rows)}


def build_row_sum_reducer_jacobian():
    x = _rand(4, 4, seed=58)
    jac = torch.zeros(4, 4, 4, dtype=f64)
    for i in range(4):
        jac[i, i, :] = 1.0
    return (lambda t: t.sum(dim=1)), x, torch.ones(4, dtype=f64), {"reference": jac}


def _poly3(t):
    return torch.stack([t[0, 0] ** 2 + 2 * t[0, 1] + t[0, 2],
                        t[0, 0] + t[0, 1] ** 3 + t[0, 2] ** 2,
                        2 * t[0, 0] + t[0, 1] ** 2 + t[0, 2] ** 3])


_J_POLY3 = _t([[2.0, 2.0, 1.0], [1.0, 12.0, 6.0], [2.0, 4.0, 27.0]])   # at (1, 2, 3)


def build_hand_jacobian_three_functions():
    x = _t([[1.0, 2.0, 3.0]])
    return _poly3, x, torch.ones(3, dtype=f64), {"reference": _J_POLY3.reshape(3, 1, 3)}


def build_jacobian_times_ones_as_gradient():
    x = _t([[1.0, 2.0, 3.0]])
    return _poly3, x, _t([1.0, -0.5, 2.0]), {
        "reference": lambda v: (_J_POLY3 @ v).reshape(1, 3)}


def build_diagonal_copy_vjp():
    def fn(gy):
        res = torch.zeros(3, 5, dtype=f64)
        res.diagonal(2).copy_(gy)
        return res

    v = torch.arange(15, dtype=f64).view(3, 5)
    return fn, _randn(3, seed=61), v, {"reference": lambda g: torch.diagonal(g, 2)}


_Z = _t([3 + 4j, 1 - 2j, -0.5 + 0.25j], dtype=c128)


def build_complex_modulus_jax_convention():
    return (lambda t: torch.real(t) ** 2 + torch.imag(t) ** 2), _Z, _t([1.0, 0.5, -2.0]), {
        "reference": lambda v: v * 2 * _Z.conj()}


def build_complex_modulus_torch_convention():
    return (lambda t: torch.real(t) ** 2 + torch.imag(t) ** 2), _Z, _t([1.0, 0.5, -2.0]), {
        "reference": lambda v: v * 2 * _Z}


def build_norm_at_zero():
    x = torch.zeros(3, dtype=f64)
    return (lambda t: t.norm()), x, _t(1.0), {"reference": torch.zeros(3, dtype=f64)}


def build_squared_norm_at_zero():
    x = torch.zeros(3, dtype=f64)
    return (lambda t: t.norm() ** 2), x, _t(1.0), {"reference": (2 * x).numpy()}


class AdderHardTanh(Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return -(x[:, None, :] - w[None, :, :]).abs().sum(-1)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        diff = w[None, :, :] - x[:, None, :]
        grad_x = (g[:, :, None] * F.hardtanh(diff)).sum(1)
        grad_w = (g[:, :, None] * -diff).sum(0)
        return grad_x, grad_w


def build_adder_hardtanh_gradient():
    x = _t([[0.3, -1.2, 2.0], [1.1, 0.2, -0.4]])
    w = _t([[0.8, -1.0, 0.5], [-1.5, 1.9, 0.1], [2.6, 0.0, -2.0], [0.1, -0.7, 1.2]])
    return (lambda t: AdderHardTanh.apply(t, w)), x, _randn(2, 4, seed=66), {
        "reference": "finite-difference"}


def build_one_hot_product_sum_vs_elementwise():
    x = _randn(3, 4, seed=67)
    onehot = F.one_hot(torch.tensor([1, 3, 0]), 4).to(f64)
    return (lambda t: t * onehot), x, x * onehot, {
        "reference": lambda v: onehot * (x * onehot).sum()}


def build_linear_input_grad_added_twice():
    x = _randn(4, seed=68)
    w = _randn(4, 3, seed=681)
    lr = 0.1

    def hand(v):
        updated = w - lr * torch.outer(x, v)
        return v @ w.T + v @ updated.T

    return (lambda t: t @ w), x, _randn(3, seed=682), {"reference": hand}


# ----------------------------------------------------------------------------------
DISCUSS = "https://discuss.pytorch.org/t/"
NEMOTRON = "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1"


def _s(name, source, build, truth, right, relation=None, never=None):
    if right:
        must, nev = list(RIGHT_MUST), NEVER_RIGHT
    else:
        must = list(WRONG_MUST)
        if relation == "transposed":
            must.append(TRANSPOSED)
            nev = (NO_FACTOR, NO_SIGN)
        elif relation == "factor":
            must.append(FACTOR)
            nev = (NO_TRANSPOSE, NO_SIGN)
        elif relation == "sign":
            must.append(SIGN)
            nev = (NO_TRANSPOSE,)
        else:
            nev = NO_RELATION
        if never is not None:
            nev = never
    return {"name": name, "source": source, "build": build, "truth": truth,
            "right": right, "must": must, "never": nev}


SITUATIONS = [
    _s("detached_step_analytic", NEMOTRON + "#why-backward-differs-analytic-retain-graph",
       build_detached_step_analytic,
       "the asker differentiates through a step built from grad.data; autograd treats it as a "
       "constant, so x.grad is 3/3.027 of the asker's VJP (a constant factor)", False, "factor"),
    _s("vjp_matrix_doubling", DISCUSS + "equivalent-multiplication-for-vjp-of-matrix-valued-function/175203",
       build_vjp_matrix_doubling, "the (2,3,2,3) Jacobian 2I contracted with v is x.grad", True),
    _s("vjp_matrix_contracted_on_input_side",
       DISCUSS + "equivalent-multiplication-for-vjp-of-matrix-valued-function/175203",
       build_vjp_matrix_contracted_on_input_side,
       "the reference contracts v with the Jacobian's input indices (J v): transposed", False,
       "transposed"),
    _s("two_output_jacobian", "https://crackedaicode.com/problems/compute-jacobian",
       build_two_output_jacobian, "the hand Jacobian [[x2, x1], [1, 2 x2]] is right", True),
    _s("single_grad_call_jacobian", DISCUSS + "jacobian-computation-with-a-single-call-to-grad/83134",
       build_single_grad_call_jacobian,
       "every row of the asker's Jacobian is the column sum of the true one; wrong", False),
    _s("row_vector_jacobian",
       DISCUSS + "how-the-gradient-of-a-row-vector-w-r-t-another-row-vector-is-calculated-via-jacobian-vector-product/120076",
       build_row_vector_jacobian, "the (1,2,1,2) hand Jacobian gives x.grad = [6, 9]", True),
    _s("row_vector_jacobian_transposed",
       DISCUSS + "how-the-gradient-of-a-row-vector-w-r-t-another-row-vector-is-calculated-via-jacobian-vector-product/120076",
       build_row_vector_jacobian_transposed,
       "the reference Jacobian is transposed ([7, 8] instead of [6, 9])", False, "transposed"),
    _s("one_hot_columns_doubling",
       "https://kiwix.lema.org/stackoverflow.com_en_all_2023-11/questions/63816321/why-pytorch-autograd-need-another-vector-to-backward-instead-of-computing-jaco",
       build_one_hot_columns_doubling,
       "J[:, i] filled from one-hot backwards is 2I for y = 2x; symmetric, so right", True),
    _s("one_hot_columns_general",
       "https://kiwix.lema.org/stackoverflow.com_en_all_2023-11/questions/63816321/why-pytorch-autograd-need-another-vector-to-backward-instead-of-computing-jaco",
       build_one_hot_columns_general,
       "columns filled with one-hot VJPs give M.T for y = M x: the reference is transposed",
       False, "transposed"),
    _s("square_with_weighted_vector", NEMOTRON + "#aim-of-grad-tensor-in-backward",
       build_square_with_weighted_vector, "diag(2x) contracted with v gives x.grad", True),
    _s("square_at_several_points", "https://github.com/antoinechoffrut/fastai-companion",
       build_square_at_several_points, "diag(2x) with v = ones gives 2x", True),
    _s("quadratic_gradient_check", "https://torchedup.dev/problems/gradient-check-numerical",
       build_quadratic_gradient_check, "(A + A.T) x is the gradient of x.T A x", True),
    _s("quadratic_gradient_off_by_half", "https://torchedup.dev/problems/gradient-check-numerical",
       build_quadratic_gradient_off_by_half,
       "the analytic gradient is 1.5 x the true one (constant factor)", False, "factor"),
    _s("softmax_jacobian_loops", "https://github.com/dsplog/dsplog.com",
       build_softmax_jacobian_loops, "s_i (delta_ij - s_j) is the softmax Jacobian", True),
    _s("softmax_row_jacobian", "https://github.com/PilotLeoYan/Deep-learning-from-Scratch",
       build_softmax_row_jacobian, "diag(s) - s s.T, shaped (1,5,1,5), is right", True),
    _s("vector_matrix_weight_gradient", "https://github.com/ngandlau/fun",
       build_vector_matrix_weight_gradient, "dL/dW = x.T g for h = x W", True),
    _s("matmul_input_gradient", "https://pchen7e2.github.io/2026/04/12/matmul-backward.html",
       build_matmul_input_gradient, "dX = W.T dY for Y = W X", True),
    _s("matvec_column_gradient", "http://coloradmin.cn/o/416978.html",
       build_matvec_column_gradient, "x.grad = w.T g = [[190], [280]]", True),
    _s("matmul_rule_without_transpose", "http://coloradmin.cn/o/416978.html",
       build_matmul_rule_without_transpose,
       "the rule 'd(AB)/dA = B' gives g B instead of g B.T: the reference is transposed",
       False, "transposed"),
    _s("weight_gradient_dl_dd_xt", "http://edwardshu.com/posts/matrix-matrix-gradient",
       build_weight_gradient_dl_dd_xt, "dL/dW = dL/dD X.T for D = W X", True),
    _s("exp_of_matmul_chain", "https://newbetuts.com/70679434-torch-backward-do-not-return-a-tensor",
       build_exp_of_matmul_chain, "X.grad = (g * exp(X W)) W.T", True),
    _s("matmul_ones_rows_equal_bt",
       "https://wiki.gubat.org/content/stackoverflow.com_en_all_2023-11/questions/59924410/pytorch-gradient-computation",
       build_matmul_ones_rows_equal_bt, "each row of A.grad is B.T", True),
    _s("layernorm_elementwise_formula", NEMOTRON + "#layernormbackward",
       build_layernorm_elementwise_formula,
       "the posted dL/dX drops the mean terms and divides by F: wrong, no simple relation",
       False),
    _s("layernorm_full_input_gradient", "https://yueyiming2009.github.io/ai-learning/layernorm-gradient.html",
       build_layernorm_full_input_gradient, "the full three-path layer-norm input gradient is right",
       True),
    _s("layernorm_std_plus_eps_jacobian", "https://liorsinai.github.io/mathematics/2022/05/18/layernorm.html",
       build_layernorm_std_plus_eps_jacobian,
       "the (sigma + eps) layer-norm Jacobian is symmetric, so its dz_j/dx_i layout is right",
       True),
    _s("layernorm_gamma_gradient", "https://shreyansh26.github.io/post/2025-06-04_layernorm-gradients",
       build_layernorm_gamma_gradient, "dL/dgamma = sum over rows of dy * xhat", True),
    _s("batchnorm_three_term", "https://brettkoonce.github.io/lean4-mlir/blueprint/chap-bn.html",
       build_batchnorm_three_term, "the consolidated three-term batch-norm backward is right",
       True),
    _s("batchnorm_with_gamma", "https://github.com/hingma/cs182fa25_public",
       build_batchnorm_with_gamma, "gamma rstd / N (N g - sum g - xhat sum(g xhat)) is right",
       True),
    _s("softmax_loss_single_sample", "https://iceory.github.io/page/2",
       build_softmax_loss_single_sample, "softmax minus one-hot is the gradient of summed CE",
       True),
    _s("softmax_loss_unnormalised_diff", "https://hwhale.com/article/58315",
       build_softmax_loss_unnormalised_diff,
       "prob minus one-hot without the 1/batch normalisation: 3 x autograd's mean-CE gradient",
       False, "factor"),
    _s("mean_softmax_cross_entropy", "https://www.it610.com/article/1217656475455950848.htm",
       build_mean_softmax_cross_entropy, "(softmax - label) / N for the batch-mean loss", True),
    _s("cross_entropy_upstream_scalar", "https://robotchinwag.com/posts/crossentropy-loss-gradient/",
       build_cross_entropy_upstream_scalar, "dL * (softmax - onehot) is right", True),
    _s("mean_square_expected_sum_gradient", NEMOTRON + "#mnist-basics-help-me-understand-backward",
       build_mean_square_expected_sum_gradient,
       "the asker expects the sum's gradient [4, 12] from a mean: 2 x autograd's", False,
       "factor"),
    _s("mean_expected_ones", NEMOTRON + "#mnist-basics-help-me-understand-backward",
       build_mean_expected_ones, "the mean's gradient is 1/4 each, not 1: a factor 4", False,
       "factor"),
    _s("mse_none_with_mean_backward_formula",
       DISCUSS + "when-i-want-to-get-the-input-grad-in-mse-loss-whats-the-difference-between-mse-loss-backward-and-torch-ops-aten-mse-loss-backward/190902",
       build_mse_none_with_mean_backward_formula,
       "the mean-reduction backward formula divides by 5; with reduction='none' x.grad is 5 x it",
       False, "factor"),
    _s("mse_mean_upstream_two",
       DISCUSS + "when-i-want-to-get-the-input-grad-in-mse-loss-whats-the-difference-between-mse-loss-backward-and-torch-ops-aten-mse-loss-backward/190902",
       build_mse_mean_upstream_two, "2 (x - t) v / n with v = 2 gives [-3.2, -1.6, 0, 1.6, 3.2]",
       True),
    _s("mse_backward_with_one_over_n", "https://grindskills.com/mean-or-sum-of-gradients-for-weight-updates-in-sgd/",
       build_mse_backward_with_one_over_n,
       "backward(1/n) on a mean loss scales the mean's gradient again: the reference is 4 x x.grad",
       False, "factor"),
    _s("average_square_two_by_two", "https://stats.stackexchange.com/questions/410620/backpropagation-gradient-of-the-average",
       build_average_square_two_by_two, "2x/n with n = 4 is x/2: right by coincidence", True),
    _s("average_square_three_by_three", "https://stats.stackexchange.com/questions/410620/backpropagation-gradient-of-the-average",
       build_average_square_three_by_three,
       "x/2 is not 2x/9 for nine elements: the reference is 9/4 x x.grad", False, "factor"),
    _s("l2_mean_with_sum_gradient", "http://pullrequest.ru/9124144/poterya-pikselyam",
       build_l2_mean_with_sum_gradient, "the sum's gradient is 4 x the mean's", False, "factor"),
    _s("sigmoid_quotient_rule_sign", "https://extraproxies.com/missing-sign-in-derivative-of-sigmoid-function/",
       build_sigmoid_quotient_rule_sign,
       "the quotient rule without the inner derivative's minus gives -sigma'(x): sign flipped",
       False, "sign"),
    _s("sigmoid_identity", "https://github.com/karlstroetmann/Artificial-Intelligence",
       build_sigmoid_identity, "S'(x) = S(x)(1 - S(x)) is right", True),
    _s("sigmoid_function_without_dy",
       "https://discuss.mxnet.apache.org/t/implementation-of-sigmoid-extending-mx-autograd-function/647",
       build_sigmoid_function_without_dy,
       "the custom backward returns y(1-y) without dy; x.grad misses the factor 2y of z = y*y",
       False),
    _s("sigmoid_squared_chain",
       "https://git.blackhao.com/bilibili_vlogs_from_zch.git/plain/learn_torch/grad/01_sigmoid.ipynb?id=cdb361b10631a3ab222d783c491b29dd523d61d0",
       build_sigmoid_squared_chain, "d sigma^2 = 2 sigma sigma (1 - sigma) is right", True),
    _s("quadratic_form_summed_matrix", DISCUSS + "computing-gradient-of-quadratic-form-using-autograd/192220",
       build_quadratic_form_summed_matrix,
       "x A x.T is (n, n); its ones-VJP puts the column sums in every row, not x (A + A.T)",
       False),
    _s("quadratic_form_per_sample", DISCUSS + "computing-gradient-of-quadratic-form-using-autograd/192220",
       build_quadratic_form_per_sample, "per-sample x_i A x_i has gradient x_i (A + A.T)", True),
    _s("theta_quadratic_form", "https://github.com/p1xckha/python-snippets",
       build_theta_quadratic_form, "(A + A.T) theta is right", True),
    _s("half_quadratic_minus_linear", "https://nla.skoltech.ru/archive/2020/after_lectures/4/pytorch_intro.html",
       build_half_quadratic_minus_linear, "0.5 (A + A.T) x - b is right", True),
    _s("half_quadratic_matrix_gradient", "https://nla.skoltech.ru/archive/2020/after_lectures/4/pytorch_intro.html",
       build_half_quadratic_matrix_gradient, "dL/dA = 0.5 x x.T is right", True),
    _s("two_x_dot_x", "https://github.com/Dr-andai/hopfield_is_all_you_need",
       build_two_x_dot_x, "the gradient of 2 x.x is 4x", True),
    _s("isrlu_backward_without_upstream", ISSUES + "pytorch/pytorch/issues/4355",
       build_isrlu_backward_without_upstream,
       "the custom backward returns nisr**3 and never multiplies by grad_out", False),
    _s("attention_lab_function", ISSUES + "pytorch/pytorch/pull/67916",
       build_attention_lab_function, "the onboarding-lab tanh attention backward is right", True),
    _s("binary_cross_entropy_sum", ISSUES + "pytorch/pytorch/issues/59477",
       build_binary_cross_entropy_sum, "BCE with reduction='sum' has a right first backward", True),
    _s("linear_function_doc_example", ISSUES + "pytorch/pytorch/pull/933",
       build_linear_function_doc_example, "the documented LinearFunction backward is right", True),
    _s("tutorial_jacobian_transposed", ISSUES + "pytorch/pytorch/issues/16352",
       build_tutorial_jacobian_transposed,
       "the tutorial's Jacobian was written transposed; used as J it gives J v", False,
       "transposed"),
    _s("jacobian_columns_from_vjps", ISSUES + "vccimaging/DiffDeflectometry/issues/1",
       build_jacobian_columns_from_vjps,
       "grad calls are VJPs, so filling columns with them builds J.T", False, "transposed"),
    _s("jacobian_rows_from_grad_loop", ISSUES + "pytorch/pytorch/issues/8304",
       build_jacobian_rows_from_grad_loop, "rows from grad(F[i], x) stack into the Jacobian", True),
    _s("row_sum_reducer_jacobian", ISSUES + "pytorch/pytorch/issues/30632",
       build_row_sum_reducer_jacobian, "the Jacobian of x.sum(dim=1) contracted with ones", True),
    _s("hand_jacobian_three_functions", ISSUES + "pytorch/pytorch/issues/69070",
       build_hand_jacobian_three_functions, "the hand J contracted with ones is [5, 18, 34]", True),
    _s("jacobian_times_ones_as_gradient", ISSUES + "pytorch/pytorch/issues/69070",
       build_jacobian_times_ones_as_gradient,
       "the asker's 'J * [1;1;1]' reading is J v, the transposed product", False, "transposed"),
    _s("diagonal_copy_vjp", ISSUES + "pytorch/functorch/issues/44",
       build_diagonal_copy_vjp, "the VJP of copying into diagonal 2 is diag(v, 2)", True),
    _s("complex_modulus_jax_convention", ISSUES + "jax-ml/jax/issues/9110",
       build_complex_modulus_jax_convention,
       "JAX's 2 conj(z) is the conjugate of torch's 2 z (imaginary parts flipped)", False,
       None, (NO_FACTOR, NO_SIGN)),
    _s("complex_modulus_torch_convention", ISSUES + "jax-ml/jax/issues/9110",
       build_complex_modulus_torch_convention, "torch gives 2 v z for |z|^2", True),
    _s("norm_at_zero", ISSUES + "pytorch/pytorch/issues/2421",
       build_norm_at_zero, "torch now returns the zero subgradient of the norm at 0", True),
    _s("squared_norm_at_zero", ISSUES + "jax-ml/jax/issues/4177",
       build_squared_norm_at_zero, "the squared norm's gradient 2x is 0 at 0, as torch gives",
       True),
    _s("adder_hardtanh_gradient", ISSUES + "huawei-noah/AdderNet/issues/21",
       build_adder_hardtanh_gradient,
       "the adder backward uses hardtanh(w - x) instead of sign(w - x): wrong where |w - x| < 1",
       False),
    _s("one_hot_product_sum_vs_elementwise", ISSUES + "ngxbac/GAIN/issues/2",
       build_one_hot_product_sum_vs_elementwise,
       "the summed version's gradient puts the total in every one-hot slot; elementwise gives x_i",
       False),
    _s("linear_input_grad_added_twice", ISSUES + "itskonrad/miniMNIST-c/issues/7",
       build_linear_input_grad_added_twice,
       "input_grad adds v W.T twice (once with updated weights): wrong, not a clean factor",
       False),
]
