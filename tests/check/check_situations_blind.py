"""Blind corpus of custom backwards for ``gradarg.check_backward``.

Each situation is a real custom backward somebody wrote, posted or asked about
(the address is in ``source``), rebuilt here with our own names and small inputs.
The ground truth of every situation was established with torch alone (float64
central differences, ``torch.autograd.gradcheck``, ``torch.func.jacrev`` of a plain
reference, math by hand); see the ``# checked:`` comment above each builder and
check_situations_blind.md.  Nothing here imports gradarg.

Each entry of ``SITUATIONS``:
    name, source, build -> (fn, args, kwargs), truth, right, must, never
``must`` is a list of groups (tuples of regexes); every group needs at least one
match in ``str(result)``.  ``never`` is a tuple of regexes that must not match.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function
from torch.autograd.function import once_differentiable

f64 = torch.float64

# Regex building blocks, from the words the docstrings promise ("WRONG:" summary,
# status "agree", the pattern names) and from the input names.
WRONG = (r"WRONG", r"(?i)\bwrong\b")
RIGHT = (r"(?i)\bagree", r"(?i)\bright\b", r"(?i)\bcorrect\b", r"(?i)\bok\b")
NOT_WRONG = r"WRONG:"
TRANSPOSED = r"(?i)transpos"
FACTOR = r"(?i)constant factor"


def name(n):
    """Regexes that name input ``n`` in a report (pair label, entry index or word)."""
    return (rf"∂\w+/∂{n}\b", rf"\b{n}\[", rf"'{n}'", rf"\binput {n}\b", rf"`{n}`")


def _g(seed):
    gen = torch.Generator().manual_seed(seed)
    return gen


def _randn(*shape, seed=0, dtype=f64, grad=True, scale=1.0, shift=0.0):
    t = torch.randn(*shape, generator=_g(seed), dtype=dtype) * scale + shift
    return t.requires_grad_(grad)


def _away_from(t, points, gap=0.15):
    """Push entries of ``t`` that lie within ``gap`` of any of ``points`` away from it."""
    t = t.detach().clone()
    for p in points:
        close = (t - p).abs() < gap
        t[close] = p + torch.where(t[close] >= p, gap, -gap).to(t.dtype) * 1.5
    return t


# ----------------------------------------------------------------------------------
# 1. ISRLU whose backward forgets grad_output (pytorch/pytorch#4355)
# ----------------------------------------------------------------------------------
class IsrluNoUpstream(Function):
    @staticmethod
    def forward(ctx, x, alpha=1.0):
        neg = torch.clamp(x, max=0.0)
        ctx.nisr = torch.rsqrt(1.0 + alpha * neg ** 2)
        return x * ctx.nisr

    @staticmethod
    def backward(ctx, grad_out):
        return ctx.nisr ** 3, None          # the local derivative, never times grad_out


# checked: float64 FD Jacobian of x*rsqrt(1+a*min(x,0)^2) is diagonal (1 for x>0,
# (1+a x^2)^-1.5 for x<0); one-hot vjp rows of this backward are all the same vector
# nisr**3 (off-diagonal entries nonzero), and backward(v=0) != 0; gradcheck fails.
def build_isrlu():
    x = _away_from(_randn(6, seed=1), [0.0]).requires_grad_()
    return IsrluNoUpstream.apply, (x, 1.0), {}


# ----------------------------------------------------------------------------------
# 2. Attention onboarding lab: o = tanh(q k^T) v, a = tanh(q k^T) (PR #60877)
# ----------------------------------------------------------------------------------
class TanhAttention(Function):
    @staticmethod
    def forward(ctx, q, k, v):
        a = torch.tanh(q @ k.T)
        o = a @ v
        ctx.save_for_backward(q, k, v, a)
        return o, a

    @staticmethod
    def backward(ctx, grad_o, grad_a):
        q, k, v, a = ctx.saved_tensors
        grad_a_total = grad_o @ v.T + grad_a
        grad_s = grad_a_total * (1 - a ** 2)
        return grad_s @ k, grad_s.T @ q, a.T @ grad_o


# checked: gradcheck (float64) passes for q, k, v over both outputs; jacrev of the
# plain expression matches the one-hot vjp rows to 1e-12.
def build_attention():
    q, k, v = _randn(3, 2, seed=2), _randn(3, 2, seed=3), _randn(3, 4, seed=4)
    return TanhAttention.apply, (q, k, v), {}


# ----------------------------------------------------------------------------------
# 3./4. Gradient reversal layers (mo4tech GRL; mlkatas kata 80 with alpha)
# ----------------------------------------------------------------------------------
class NegGrad(Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg()


class ScaledReversal(Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.alpha * grad_output, None


# checked: identity forward, Jacobian I (FD); backward Jacobian is -I: every diagonal
# entry off by a factor -1, off-diagonal right.
def build_grl_neg():
    x = _randn(5, seed=5)
    return NegGrad.apply, (x,), {}


# checked: Jacobian I; backward Jacobian -0.3 I (factor -0.3 on the diagonal).
def build_grl_alpha():
    x = _randn(2, 3, seed=6)
    return ScaledReversal.apply, (x, 0.3), {}


# ----------------------------------------------------------------------------------
# 5. nn.Module with a backward method that autograd never calls (pitchtron#3)
# ----------------------------------------------------------------------------------
class ModuleWithUnusedBackward(nn.Module):
    def forward(self, x):
        return x * 1.0

    def backward(self, grad):               # never called by autograd
        return -grad


# checked: torch.autograd.grad through the module gives grad_output unchanged (the
# method is dead code); gradcheck passes: the module's backward (autograd's) is right.
def build_module_unused_backward():
    x = _randn(4, seed=7)
    return ModuleWithUnusedBackward(), (x,), {}


# ----------------------------------------------------------------------------------
# 6. Clipped ReLU as nn.Module with an (unused) backward method (taourl)
# ----------------------------------------------------------------------------------
class ClippedReLUModule(nn.Module):
    def __init__(self, lo=0.0, hi=1.0):
        super().__init__()
        self.lo, self.hi = lo, hi

    def forward(self, x):
        self.input = x
        return torch.clamp(x, self.lo, self.hi)

    def backward(self, grad_output):        # never called
        grad_input = grad_output.clone()
        grad_input[self.input < self.lo] = 0
        grad_input[self.input > self.hi] = 0
        return grad_input


# checked: inputs kept 0.15+ away from 0 and 1; gradcheck passes (autograd's clamp
# backward: 1 inside, 0 outside).
def build_clipped_relu_module():
    x = _away_from(_randn(8, seed=8, scale=1.2, shift=0.4), [0.0, 1.0]).requires_grad_()
    return ClippedReLUModule(), (x,), {}


# ----------------------------------------------------------------------------------
# 7. MyReLU with grad_output.clone() and a mask (adhdecode; discuss 52209)
# ----------------------------------------------------------------------------------
class MaskedReLU(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[x < 0] = 0
        return grad_input


# checked: inputs 0.15+ away from 0; gradcheck passes.
def build_myrelu():
    x = _away_from(_randn(3, 4, seed=9), [0.0]).requires_grad_()
    return MaskedReLU.apply, (x,), {}


# ----------------------------------------------------------------------------------
# 8. Clipped ReLU Function min(max(0, x), C) (apxml)
# ----------------------------------------------------------------------------------
class ClippedReLU(Function):
    @staticmethod
    def forward(ctx, x, cap):
        ctx.save_for_backward(x)
        ctx.cap = cap
        return x.clamp(min=0, max=cap)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        inside = (x > 0) & (x < ctx.cap)
        return grad_output * inside.to(grad_output.dtype), None


# checked: inputs 0.15+ away from 0 and 2; gradcheck passes.
def build_clipped_relu_fn():
    x = _away_from(_randn(10, seed=10, scale=1.5, shift=1.0), [0.0, 2.0]).requires_grad_()
    return ClippedReLU.apply, (x, 2.0), {}


# ----------------------------------------------------------------------------------
# 9. ReLU forward, leaky-ReLU backward by the detach trick (discuss 32818)
# ----------------------------------------------------------------------------------
def relu_with_leaky_grad(x):
    fwd = F.relu(x)
    bwd = F.leaky_relu(x, 0.1)
    return bwd + (fwd - bwd).detach()


# checked: forward equals relu; FD Jacobian diagonal 1 (x>0) / 0 (x<0); autograd gives
# 0.1 at the 4 negative elements (FD at eps 1e-3..1e-7 shows 0 there: flat forward);
# positives right.
def build_leaky_detach():
    x = torch.tensor([-1.3, 0.7, -0.4, 1.9, -2.2, 0.35, -0.8, 1.1], dtype=f64,
                     requires_grad=True)
    return relu_with_leaky_grad, (x,), {}


# ----------------------------------------------------------------------------------
# 10. Identity forward, backward * 666 (pytorch/pytorch#4714)
# ----------------------------------------------------------------------------------
class Times666Grad(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out.clone() * 666


# checked: Jacobian I (FD); backward Jacobian 666 I.
def build_666():
    x = _randn(4, seed=11)
    return Times666Grad.apply, (x,), {}


# ----------------------------------------------------------------------------------
# 11. DoubleIt with @once_differentiable (runebook)
# ----------------------------------------------------------------------------------
class DoubleIt(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        return grad_output * 2


# checked: gradcheck passes (2 I).
def build_doubleit():
    x = _randn(2, 2, seed=12)
    return DoubleIt.apply, (x,), {}


# ----------------------------------------------------------------------------------
# 12. Two tanh outputs, backward returns None for the second input (Paddle PR 32494)
# ----------------------------------------------------------------------------------
class TwoTanhNoneForSecond(Function):
    @staticmethod
    def forward(ctx, x1, x2):
        y1, y2 = torch.tanh(x1), torch.tanh(x2)
        ctx.save_for_backward(y1, y2)
        return y1, y2

    @staticmethod
    def backward(ctx, dy1, dy2):
        y1, y2 = ctx.saved_tensors
        return dy1 * (1 - y1.square()), None


# checked: Jacobians: dy1/dx1 = diag(1-tanh^2), dy2/dx2 = diag(1-tanh^2), cross
# blocks 0 (FD). Backward: x1 right, x2 gets None -> zero gradient: dy2/dx2 wrong
# (all diagonal entries 0 instead of 1-tanh^2(x2) in (0,1]).
def build_two_tanh_none():
    x1, x2 = _randn(3, seed=13), _randn(3, seed=14)
    return TwoTanhNoneForSecond.apply, (x1, x2), {}


# ----------------------------------------------------------------------------------
# 13. LinearFunction with needs_input_grad (extending docs; discuss 139574;
#     torchsparsegradutils#31)
# ----------------------------------------------------------------------------------
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output = output + bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


# checked: gradcheck passes for input, weight, bias.
def build_linear_fn():
    inp, w, b = _randn(3, 4, seed=15), _randn(2, 4, seed=16), _randn(2, seed=17)
    return LinearFunction.apply, (inp, w, b), {}


class DenseMatmulNeeds(Function):
    @staticmethod
    def forward(ctx, A, B):
        ctx.save_for_backward(A, B)
        return A @ B

    @staticmethod
    def backward(ctx, grad):
        A, B = ctx.saved_tensors
        gA = grad @ B.T if ctx.needs_input_grad[0] else None
        gB = A.T @ grad if ctx.needs_input_grad[1] else None
        return gA, gB


# checked: only A requires grad (B is a constant, skipped); gradcheck passes for A;
# needs_input_grad[1] is False so gB is None.
def build_matmul_needs_partial():
    A = _randn(3, 2, seed=18)
    B = torch.randn(2, 4, generator=_g(19), dtype=f64)
    return DenseMatmulNeeds.apply, (A, B), {}


# ----------------------------------------------------------------------------------
# 15. Checkpoint-style Function that recomputes in backward (consistency_models)
# ----------------------------------------------------------------------------------
def _block(x, w):
    return torch.tanh(x @ w)


class RecomputeCheckpoint(Function):
    @staticmethod
    def forward(ctx, run_function, x, w):
        ctx.run_function = run_function
        ctx.save_for_backward(x, w)
        with torch.no_grad():
            return run_function(x, w)

    @staticmethod
    def backward(ctx, *output_grads):
        x, w = ctx.saved_tensors
        x, w = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
        with torch.enable_grad():
            out = ctx.run_function(x.view_as(x), w.view_as(w))
        grads = torch.autograd.grad(out, (x, w), output_grads, allow_unused=True)
        return (None,) + grads


# checked: gradcheck passes for x and w (the recomputed autograd graph of tanh(x@w)).
def build_checkpoint():
    x, w = _randn(2, 3, seed=20), _randn(3, 2, seed=21)

    def checkpointed(x, w):
        return RecomputeCheckpoint.apply(_block, x, w)

    return checkpointed, (x, w), {}


# ----------------------------------------------------------------------------------
# 16. sort with mark_non_differentiable on the indices (torch docs)
# ----------------------------------------------------------------------------------
class SortWithIndices(Function):
    @staticmethod
    def forward(ctx, x):
        sorted_, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x, idx)
        return sorted_, idx

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        x, idx = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        grad_input.index_add_(0, idx, g1)
        return grad_input


# checked: distinct entries (gaps > 0.1); FD Jacobian of sort values is the
# permutation matrix; backward matches (gradcheck on the first output passes).
def build_sort():
    x = torch.tensor([0.9, -1.2, 0.3, 2.1, -0.4], dtype=f64, requires_grad=True)
    return SortWithIndices.apply, (x,), {}


# ----------------------------------------------------------------------------------
# 17./18. set_materialize_grads (torch docs: SimpleFunc and Func)
# ----------------------------------------------------------------------------------
class TwoClones(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone(), x.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        return g1 + g2


class TwoClonesNoMaterialize(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x.clone(), x.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        if g1 is not None:
            grad_input += g1
        if g2 is not None:
            grad_input += g2
        return grad_input


# checked: both outputs have Jacobian I w.r.t. x; backward gives I for each output
# (and None-handling right when one output is unused); gradcheck passes.
def build_simplefunc():
    return TwoClones.apply, (_randn(4, seed=22),), {}


def build_no_materialize():
    return TwoClonesNoMaterialize.apply, (_randn(4, seed=23),), {}


# ----------------------------------------------------------------------------------
# 19./20. Broadcast add: unreduced gradient (autograd sums it) vs mean instead of sum
# ----------------------------------------------------------------------------------
class BroadcastAddUnreduced(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, g          # g has a's shape (4, 3); b is (3,): autograd sums to (3,)


class BroadcastAddMean(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, g.mean(0)  # reduce over the broadcast dim by mean instead of sum


# checked: torch's engine sum_to's an expandable gradient (validate_outputs); the
# resulting b.grad equals g.sum(0); gradcheck passes for a and b.
def build_broadcast_unreduced():
    a, b = _randn(4, 3, seed=24), _randn(3, seed=25)
    return BroadcastAddUnreduced.apply, (a, b), {}


# checked: Jacobian d(a+b)/db[j] is 1 at each of 4 rows; backward gives 1/4 there:
# b's block off by a constant factor 1/4; a right.
def build_broadcast_mean():
    a, b = _randn(4, 3, seed=26), _randn(3, seed=27)
    return BroadcastAddMean.apply, (a, b), {}


# ----------------------------------------------------------------------------------
# 21. dot with transpose_a: backward misses the transpose (apache/mxnet PR 4498)
# ----------------------------------------------------------------------------------
class DotTransA(Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x.T @ y

    @staticmethod
    def backward(ctx, dz):
        x, y = ctx.saved_tensors
        dx = dz @ y.T          # should be (dz @ y.T).T = y @ dz.T
        dy = x @ dz
        return dx, dy


# checked: x, y square 3x3; jacrev of x.T@y vs one-hot rows: y's block equal; x's
# block differs (it is neither the true 9x9 block nor its transpose: for every v the
# returned matrix is the transpose of the right gradient matrix).
def build_dot_transa():
    x, y = _randn(3, 3, seed=28), _randn(3, 3, seed=29)
    return DotTransA.apply, (x, y), {}


# ----------------------------------------------------------------------------------
# 22. matmul backward without the transposes (tile-ai/TileOPs PR 54)
# ----------------------------------------------------------------------------------
class MatmulNoTranspose(Function):
    @staticmethod
    def forward(ctx, A, B):
        ctx.save_for_backward(A, B)
        return A @ B

    @staticmethod
    def backward(ctx, dC):
        A, B = ctx.saved_tensors
        return dC @ B, A @ dC   # should be dC @ B.T, A.T @ dC


# checked: square 3x3; for both A and B the backward's 9x9 block equals the true block
# transposed (torch.allclose against jacrev(...).T); both inputs wrong.
def build_matmul_no_transpose():
    A, B = _randn(3, 3, seed=30), _randn(3, 3, seed=31)
    return MatmulNoTranspose.apply, (A, B), {}


# ----------------------------------------------------------------------------------
# 23. matmul backward that uses the forward output instead of the upstream gradient
#     (Odyssey#2136; coderabbit review in Shubham-cyber-prog PR 1378)
# ----------------------------------------------------------------------------------
class MatmulUsesOutput(Function):
    @staticmethod
    def forward(ctx, A, B):
        C = A @ B
        ctx.save_for_backward(A, B, C)
        return C

    @staticmethod
    def backward(ctx, dC):
        A, B, C = ctx.saved_tensors
        return C @ B.T, A.T @ C    # dC never used


# checked: backward independent of v (backward(0) != 0); every one-hot row the same;
# both A and B wrong vs jacrev.
def build_matmul_uses_output():
    A, B = _randn(2, 3, seed=32), _randn(3, 2, seed=33)
    return MatmulUsesOutput.apply, (A, B), {}


# ----------------------------------------------------------------------------------
# 24. AdderNet: -L1 distance forward, surrogate backward (huawei-noah/AdderNet#21)
# ----------------------------------------------------------------------------------
class AdderFn(Function):
    @staticmethod
    def forward(ctx, X, W):
        ctx.save_for_backward(X, W)
        return -(X.unsqueeze(1) - W.unsqueeze(0)).abs().sum(-1)     # (n, m)

    @staticmethod
    def backward(ctx, g):
        X, W = ctx.saved_tensors
        diff = X.unsqueeze(1) - W.unsqueeze(0)                       # (n, m, k)
        gW = (diff * g.unsqueeze(-1)).sum(0)                        # full-precision grad
        gW = gW / gW.norm(p=2).clamp(min=1e-12) * math.sqrt(W.numel()) / 5
        gX = ((-diff).clamp(-1, 1) * g.unsqueeze(-1)).sum(1)         # HardTanh grad
        return gX, gW


# checked: true dY[i,j]/dX[i,k] = -sign(X[i,k]-W[j,k]), dY[i,j]/dW[j,k] =
# sign(X[i,k]-W[j,k]) (FD; |X-W| > 0.1 everywhere). Backward: X uses clamp(W-X,-1,1)
# (differs where |X-W| < 1), W uses X-W normalised by its norm (not linear in v).
def build_adder():
    X = torch.tensor([[0.2, -1.5], [1.7, 0.4], [-0.6, 2.3]], dtype=f64, requires_grad=True)
    W = torch.tensor([[0.9, 0.1], [-1.2, 1.1]], dtype=f64, requires_grad=True)
    return AdderFn.apply, (X, W), {}


# ----------------------------------------------------------------------------------
# 25. sign with straight-through backward and an extra non-tensor argument
#     (1zb/pytorch-image-comp-rnn#4)
# ----------------------------------------------------------------------------------
class SignSTE(Function):
    @staticmethod
    def forward(ctx, x, is_training=True):
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


# checked: FD of sign at |x| >= 0.2 is 0 at every step size (flat); backward gives I.
def build_sign_ste():
    x = _away_from(_randn(6, seed=34), [0.0], gap=0.2).requires_grad_()
    return SignSTE.apply, (x, True), {}


# ----------------------------------------------------------------------------------
# 26. e = a*b + (a + b) with a backward that overwrites instead of accumulating
#     (cognoria lesson 2.5)
# ----------------------------------------------------------------------------------
class MulPlusAddOverwrite(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b + (a + b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        grad_a = b * g           # contribution through a*b ...
        grad_a = 1 * g           # ... overwritten by the one through a+b
        grad_b = a * g
        grad_b = 1 * g
        return grad_a, grad_b


# checked: true diag(b+1) and diag(a+1); backward gives I for both: a and b wrong
# (missing the b*g and a*g terms).
def build_overwrite():
    a, b = _randn(4, seed=35), _randn(4, seed=36)
    return MulPlusAddOverwrite.apply, (a, b), {}


# ----------------------------------------------------------------------------------
# 27. Slice add (pytorch/pytorch#5871, adapted to work on a copy)
# ----------------------------------------------------------------------------------
class SliceAdd(Function):
    @staticmethod
    def forward(ctx, a, b):
        out = a.clone()
        out[1:2] += b
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output[1:2].clone()


# checked: gradcheck passes for a (I) and b (one-hot column at index 1).
def build_slice_add():
    a, b = _randn(3, seed=37), _randn(1, seed=38)
    return SliceAdd.apply, (a, b), {}


# ----------------------------------------------------------------------------------
# 28./29. Intermediates on ctx: first order right (pytorch#58509, #76185)
# ----------------------------------------------------------------------------------
class SquareOfDoubleCtx(Function):
    @staticmethod
    def forward(ctx, inp):
        interm = inp * 2
        ctx.foo = interm
        return interm ** 2

    @staticmethod
    def backward(ctx, gres):
        return 2 * 2 * ctx.foo * gres


class TimesSixViaCtx(Function):
    @staticmethod
    def forward(ctx, inp):
        temp = inp * 2
        ctx.temp, ctx.inp = temp, inp
        return temp * 3

    @staticmethod
    def backward(ctx, gO):
        return gO * torch.full_like(gO, 3) * ctx.temp / ctx.inp


# checked: gradcheck passes for both (first order); gradgradcheck fails for both
# (the ctx tensors are constants to double backward) -- not what check_backward checks.
def build_ctx_square():
    return SquareOfDoubleCtx.apply, (_randn(4, seed=39),), {}


def build_ctx_times_six():
    inp = (0.5 + torch.rand(5, generator=_g(40), dtype=f64)).requires_grad_()
    return TimesSixViaCtx.apply, (inp,), {}


# ----------------------------------------------------------------------------------
# 30./31. Square saving its input; Exp saving its output (double-backward tutorial;
#         discuss 190094)
# ----------------------------------------------------------------------------------
class SquareSaved(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


class ExpSavedOutput(Function):
    @staticmethod
    def forward(ctx, i):
        result = torch.exp(i)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


# checked: gradcheck and gradgradcheck pass for both.
def build_square_saved():
    return SquareSaved.apply, (_randn(3, 3, seed=41),), {}


def build_exp_saved():
    return ExpSavedOutput.apply, (_randn(2, seed=42),), {}


# ----------------------------------------------------------------------------------
# 32./33. float32 built-ins that gradcheck rejects in float32 (pytorch#5351, #44662)
# ----------------------------------------------------------------------------------
# checked: gradcheck on float32 (eps 1e-6) fails on nn.Linear(2, 1) (numerical
# -0.3576 vs analytical -0.3512 in the issue); gradcheck on a float64 copy of the
# module passes for input, weight and bias: autograd's backward is right.
def build_linear_f32():
    with torch.random.fork_rng():           # the global RNG state is left as it was
        layer = nn.Linear(2, 3)
    with torch.no_grad():
        layer.weight.copy_(torch.randn(3, 2, generator=_g(123)) * 0.5)
        layer.bias.copy_(torch.randn(3, generator=_g(124)) * 0.5)
    x = torch.rand(4, 2, generator=_g(43)).requires_grad_()
    return layer, (x,), {}


def pool_sum(x):
    return F.adaptive_avg_pool2d(x, (1, 2)).sum()


# checked: float32 gradcheck fails (the numerical column 0.4768 vs 0.1667);
# float64 gradcheck passes; jacrev equals 1/6 on the 12 pooled entries... (every
# element belongs to exactly one of the two 3x2 windows -> 1/6 each).
def build_pool_f32():
    x = torch.tensor([[[[1., 0., -1., 0.], [2., 1., 1., -2.], [-1., -2., -3., -4.]],
                       [[3., 1., 1., 7.], [6., 5., 21., 3.], [1., 2., 3., 4.]]]],
                     requires_grad=True)
    return pool_sum, (x,), {}


# ----------------------------------------------------------------------------------
# 34. save_for_backward docs example Func(x, y, z) with an int z
# ----------------------------------------------------------------------------------
class DocsFunc(Function):
    @staticmethod
    def forward(ctx, x, y, z):
        w = x * z
        out = x * y + y * z + w * y
        ctx.save_for_backward(x, y, w, out)
        ctx.z = z
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        x, y, w, out = ctx.saved_tensors
        z = ctx.z
        gx = grad_out * (y + y * z)
        gy = grad_out * (x + z + w)
        return gx, gy, None


# checked: by hand d/dx = y(1+z), d/dy = x + z + xz; gradcheck passes for x and y.
def build_docs_func():
    x, y = _randn(3, seed=44), _randn(3, seed=45)
    return DocsFunc.apply, (x, y, 4), {}


# ----------------------------------------------------------------------------------
# 35. MyCube returning (x^3, 3x^2) (pytorch/pytorch#191648, extending docs)
# ----------------------------------------------------------------------------------
class MyCube(Function):
    @staticmethod
    def forward(x):
        dx = 3 * x ** 2
        result = x ** 3
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        return grad_output * dx + grad_dx * 6 * x


# checked: gradcheck passes over both outputs (3x^2 and 6x on the diagonals).
def build_mycube():
    return MyCube.apply, (_randn(4, seed=46),), {}


# ----------------------------------------------------------------------------------
# 36. sin of two inputs, two outputs (pytorch PR 115573 test)
# ----------------------------------------------------------------------------------
class TwoSines(Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return torch.sin(x), torch.sin(y)

    @staticmethod
    def backward(ctx, gO_x, gO_y):
        x, y = ctx.saved_tensors
        return gO_x * torch.cos(x), gO_y * torch.cos(y)


# checked: gradcheck passes; cross blocks zero and backward gives zero there.
def build_two_sines():
    return TwoSines.apply, (_randn(3, seed=47), _randn(2, seed=48)), {}


# ----------------------------------------------------------------------------------
# 37. Gradient kept through a clamp by the detach trick (ai2cm/ace PR 1322)
# ----------------------------------------------------------------------------------
def clamp_keep_gradient(x):
    new_value = torch.clamp(x, -1.0, 1.0)
    return x + (new_value - x).detach()


# checked: forward = clamp(x,-1,1); FD Jacobian 1 inside, 0 outside (flat there; no
# input within 0.2 of +-1); autograd gives 1 everywhere: wrong at the 4 clamped
# elements, right at the 4 inside.
def build_clamp_detach():
    x = torch.tensor([-2.1, -0.5, 0.3, 1.6, -1.4, 0.8, 2.7, -0.1], dtype=f64,
                     requires_grad=True)
    return clamp_keep_gradient, (x,), {}


# ----------------------------------------------------------------------------------
# 38.-40. Rounding straight-through estimators (CalibTIP/DCLS STEFunction, nni#3159,
#         qkeras _round_through)
# ----------------------------------------------------------------------------------
class RoundSTE(Function):
    @staticmethod
    def forward(ctx, input):
        return torch.round(input)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class QuantizeSTE(Function):
    @staticmethod
    def forward(ctx, w, scale, wmin, wmax):
        return torch.round(torch.clamp(w, wmin, wmax) / scale) * scale

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None, None, None


def round_through(x):
    return x + (torch.round(x) - x).detach()


# checked: inputs >= 0.1 away from the rounding jumps (k + 0.5); FD is 0 at every
# step size (flat); backward gives I.
def build_round_ste():
    x = torch.tensor([0.2, 1.3, -0.8, 2.9, -1.75, 0.6], dtype=f64, requires_grad=True)
    return RoundSTE.apply, (x,), {}


# checked: scale 0.25, clamp to [-1, 1]; inputs away from jumps and from +-1: FD 0
# everywhere (flat); backward gives I.
def build_quantize_ste():
    w = torch.tensor([0.07, -0.33, 0.6, 1.4, -1.8, 0.91], dtype=f64, requires_grad=True)
    return QuantizeSTE.apply, (w, 0.25, -1.0, 1.0), {}


# checked: same as RoundSTE, written with detach.
def build_round_through():
    x = torch.tensor([[0.2, 1.3], [-0.8, 2.9], [-1.75, 0.6]], dtype=f64,
                     requires_grad=True)
    return round_through, (x,), {}


# ----------------------------------------------------------------------------------
# 41. Heaviside forward, hardtanh applied to grad_output (aras-ai/DCLS helpers.py)
# ----------------------------------------------------------------------------------
class HeavisideHardtanhGrad(Function):
    @staticmethod
    def forward(ctx, input):
        return (input > 0).to(input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        return F.hardtanh(grad_output)


# checked: forward flat (FD 0, |x| >= 0.2); backward hardtanh(v): not the derivative
# and not linear in v (g(2e_i) = e_i != 2 g(e_i)... = 2 e_i).
def build_heaviside_hardtanh():
    x = _away_from(_randn(5, seed=49), [0.0], gap=0.2).requires_grad_()
    return HeavisideHardtanhGrad.apply, (x,), {}


# ----------------------------------------------------------------------------------
# 42. sign(clamp(x)) with identity backward (kyegomez/BitNet)
# ----------------------------------------------------------------------------------
class SignClampSTE(Function):
    @staticmethod
    def forward(ctx, input):
        return torch.sign(torch.clamp(input, min=-1.0, max=1.0))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


# checked: FD 0 (flat, |x| >= 0.2); backward I.
def build_bitnet_ste():
    x = _away_from(_randn(2, 3, seed=50), [0.0], gap=0.2).requires_grad_()
    return SignClampSTE.apply, (x,), {}


# ----------------------------------------------------------------------------------
# 43. LayerNorm with the llm.c-style backward (veitner.bearblog)
# ----------------------------------------------------------------------------------
class LayerNormLLMC(Function):
    @staticmethod
    def forward(ctx, x, w, b):
        eps = 1e-5
        mean = x.mean(-1, keepdim=True)
        rstd = ((x - mean).pow(2).mean(-1, keepdim=True) + eps).rsqrt()
        norm = (x - mean) * rstd
        ctx.save_for_backward(x, w, mean, rstd)
        return norm * w + b

    @staticmethod
    def backward(ctx, dout):
        x, w, mean, rstd = ctx.saved_tensors
        norm = (x - mean) * rstd
        db = dout.sum((0, 1))
        dw = (dout * norm).sum((0, 1))
        dnorm = dout * w
        dx = dnorm - dnorm.mean(-1, keepdim=True) - norm * (dnorm * norm).mean(-1, keepdim=True)
        dx = dx * rstd
        return dx, dw, db


# checked: gradcheck passes for x (B=2, T=2, C=4), w and b; matches jacrev of
# F.layer_norm(x, (4,), w, b, 1e-5).
def build_layernorm_right():
    x = _randn(2, 2, 4, seed=51)
    w = (1 + 0.2 * torch.randn(4, generator=_g(52), dtype=f64)).requires_grad_()
    b = _randn(4, seed=53, scale=0.1)
    return LayerNormLLMC.apply, (x, w, b), {}


# ----------------------------------------------------------------------------------
# 44. LayerNorm with the backward formula of a worked page (Nemotron-CC-Math)
# ----------------------------------------------------------------------------------
class LayerNormPageFormula(Function):
    @staticmethod
    def forward(ctx, x, gamma, beta):
        eps = 1e-5
        mu = x.mean(-1, keepdim=True)
        var = (x - mu).pow(2).mean(-1, keepdim=True)
        xhat = (x - mu) / torch.sqrt(var + eps)
        ctx.save_for_backward(xhat, var, gamma)
        ctx.eps = eps
        return gamma * xhat + beta

    @staticmethod
    def backward(ctx, dy):
        xhat, var, gamma = ctx.saved_tensors
        F_ = xhat.shape[-1]
        dxhat = gamma * dy
        dx = (dxhat / torch.sqrt(var + ctx.eps) - xhat / (var + ctx.eps) * dxhat * xhat) / F_
        dgamma = (dy * xhat).sum(0)
        dbeta = dy.sum(0)
        return dx, dgamma, dbeta


# checked: gamma and beta gradients match jacrev of F.layer_norm; x's block does not
# (the formula is elementwise, has no mean terms and an extra 1/F): wrong for x.
def build_layernorm_wrong():
    x = _randn(3, 4, seed=54)
    gamma = (1 + 0.2 * torch.randn(4, generator=_g(55), dtype=f64)).requires_grad_()
    beta = _randn(4, seed=56, scale=0.1)
    return LayerNormPageFormula.apply, (x, gamma, beta), {}


# ----------------------------------------------------------------------------------
# 45. Softmax whose backward copies the gradient (pjreddie/darknet PR 96)
# ----------------------------------------------------------------------------------
class SoftmaxCopyGrad(Function):
    @staticmethod
    def forward(ctx, x):
        return torch.softmax(x, -1)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.clone()


# checked: jacrev of softmax is diag(s) - s s^T per row; backward gives I: x wrong
# (diagonal and off-diagonal entries of each row block).
def build_softmax_copy():
    return SoftmaxCopyGrad.apply, (_randn(2, 4, seed=57),), {}


# ----------------------------------------------------------------------------------
# 46./47. Local derivative without the upstream gradient (mxnet sigmoid thread;
#         OpenMined/UnityWorker PR 250 relu_backprop)
# ----------------------------------------------------------------------------------
class SigmoidNoDy(Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return y * (1 - y)


class ReluMaskNoUpstream(Function):
    @staticmethod
    def forward(ctx, x):
        out = x.clamp(min=0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return (out > 0).to(out.dtype)


# checked: one-hot rows all equal y(1-y) (off-diagonal nonzero), backward(0) != 0.
def build_sigmoid_no_dy():
    return SigmoidNoDy.apply, (_randn(3, seed=58),), {}


# checked: one-hot rows all equal the mask; off-diagonal entries 1 where x>0; x away
# from 0.
def build_relu_no_upstream():
    x = torch.tensor([0.8, -0.6, 1.4, -1.1, 0.3], dtype=f64, requires_grad=True)
    return ReluMaskNoUpstream.apply, (x,), {}


# ----------------------------------------------------------------------------------
# 48. backward returns None for a used input (pytorch PR 41490 test)
# ----------------------------------------------------------------------------------
class DoubleButNoGrad(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return None


# checked: Jacobian 2 I; backward None -> zero gradient: x wrong (zero).
def build_return_none():
    return DoubleButNoGrad.apply, (_randn(3, seed=59),), {}


# ----------------------------------------------------------------------------------
# 49. Custom loss with an unused label input returning None (pytorch/pytorch#959)
# ----------------------------------------------------------------------------------
class NegSumLoss(Function):
    @staticmethod
    def forward(ctx, i, label):
        ctx.save_for_backward(i, label)
        return -i.sum(0).sum(0).view(1)

    @staticmethod
    def backward(ctx, grad_output):
        i, label = ctx.saved_tensors
        return -grad_output.expand_as(i), None


# checked: dL/di = -1 everywhere (FD), label unused (Jacobian 0, None gradient is
# right); gradcheck with both requiring grad passes.
def build_negsum_loss():
    i = _randn(1, 10, seed=60)
    label = torch.tensor([1.0], dtype=f64, requires_grad=True)
    return NegSumLoss.apply, (i, label), {}


# ----------------------------------------------------------------------------------
# 50. Constant forward, backward returns a (4, 3) block that autograd sums
#     (pytorch/pytorch#65244)
# ----------------------------------------------------------------------------------
class ConstantWithBatchGrad(Function):
    @staticmethod
    def forward(ctx, y):
        return torch.tensor(1.0, dtype=y.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        return torch.ones(4, 3, dtype=grad_output.dtype)


# checked: forward does not depend on y (FD 0); y.grad after backward is [4, 4, 4]
# (engine sums the (4, 3) gradient); wrong: a gradient where the Jacobian is 0, and
# independent of grad_output.
def build_constant_batch_grad():
    return ConstantWithBatchGrad.apply, (_randn(3, seed=61),), {}


# ----------------------------------------------------------------------------------
# 51. Fused softmax cross-entropy, gradient p - onehot (notesoncomputing; lexailabs)
# ----------------------------------------------------------------------------------
class SoftmaxCrossEntropy(Function):
    @staticmethod
    def forward(ctx, logits, target):
        logp = logits - torch.logsumexp(logits, -1, keepdim=True)
        ctx.save_for_backward(logp, target)
        return -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1).mean()

    @staticmethod
    def backward(ctx, g):
        logp, target = ctx.saved_tensors
        grad = logp.exp()
        grad[torch.arange(grad.shape[0]), target] -= 1
        return g * grad / grad.shape[0], None


# checked: matches jacrev of F.cross_entropy(logits, target) (mean); target is int64
# (not checked).
def build_softmax_ce():
    logits = _randn(3, 5, seed=62)
    target = torch.tensor([1, 4, 0])
    return SoftmaxCrossEntropy.apply, (logits, target), {}


# ----------------------------------------------------------------------------------
# 52. ReplaceGrad / _STE: forward returns x_forward, gradient goes to x_backward
#     (kevmurr/simplified_clip_vqgan_backend ReplaceGrad.py; moskomule/dda)
# ----------------------------------------------------------------------------------
class ReplaceGrad(Function):
    @staticmethod
    def forward(ctx, x_forward, x_backward):
        ctx.shape = x_backward.shape
        return x_forward.clone()

    @staticmethod
    def backward(ctx, grad_in):
        return None, grad_in.sum_to_size(ctx.shape)


# checked: only x_backward requires grad; the output does not depend on it (FD 0,
# x_forward is a constant); backward gives I: wrong for x_backward.
def build_replace_grad():
    x_backward = _randn(4, seed=63)
    x_forward = torch.round(x_backward.detach() * 2) / 2
    return ReplaceGrad.apply, (x_forward, x_backward), {}


# ----------------------------------------------------------------------------------
# 53. In-place relu on a clone inside the function (discuss 89031)
# ----------------------------------------------------------------------------------
def relu_inplace_on_clone(x):
    x2 = x.clone()
    return F.relu_(x2)


# checked: autograd.grad w.r.t. the original x gives the relu mask (0 at -1.0), as
# the thread's answer says; x away from 0; gradcheck passes.
def build_relu_inplace_clone():
    x = torch.tensor([-1.0, 0.5, 2.0, -0.3], dtype=f64, requires_grad=True)
    return relu_inplace_on_clone, (x,), {}


# ----------------------------------------------------------------------------------
# 54. Sigmoid backward from the saved output (prof.lexailabs)
# ----------------------------------------------------------------------------------
class SigmoidSavedOutput(Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        return grad_out * s * (1 - s)


# checked: gradcheck passes.
def build_sigmoid_saved():
    return SigmoidSavedOutput.apply, (_randn(2, 3, seed=64),), {}


# ==================================================================================
SITUATIONS = [
    dict(name="isrlu_backward_ignores_grad_out",
         source="https://github.com/pytorch/pytorch/issues/4355",
         build=build_isrlu,
         truth="Wrong for x: backward returns the local derivative nisr**3 without "
               "multiplying by grad_out, so every row of its Jacobian is the same vector "
               "(off-diagonal entries nonzero) and it is not linear in v.",
         right=False,
         must=[WRONG, name("x")],
         never=(TRANSPOSED,)),
    dict(name="tanh_attention_two_outputs",
         source="https://github.com/pytorch/pytorch/pull/60877",
         build=build_attention,
         truth="Right: the hand-written backward of o = tanh(q k^T) v and a = tanh(q k^T) "
               "matches the Jacobian for q, k and v over both outputs.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="gradient_reversal_neg",
         source="https://www.mo4tech.com/pytorch-implements-the-grl-gradient-reversal-layer.html",
         build=build_grl_neg,
         truth="Wrong for x against the derivative, on purpose: identity forward, backward "
               "-grad_output, i.e. -1 times the Jacobian.",
         right=False,
         must=[WRONG, name("x"), (r"(?i)sign", r"(?i)factor", r"-1\b", r"−1\b")],
         never=(TRANSPOSED,)),
    dict(name="gradient_reversal_alpha",
         source="https://mlkatas.com/kata/80",
         build=build_grl_alpha,
         truth="Wrong for x against the derivative, on purpose: backward is -0.3 times the "
               "identity Jacobian (constant factor -0.3).",
         right=False,
         must=[WRONG, name("x"), (r"(?i)factor", r"-0\.3", r"−0\.3", r"-3/10", r"−3/10")],
         never=(TRANSPOSED,)),
    dict(name="module_backward_method_never_called",
         source="https://github.com/hash2430/pitchtron/issues/3",
         build=build_module_unused_backward,
         truth="Right: an nn.Module's backward method is never called, autograd "
               "differentiates x * 1.0 correctly.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="clipped_relu_module_unused_backward",
         source="https://taourl.com/read-2283712.html",
         build=build_clipped_relu_module,
         truth="Right: the module's backward method is dead code; autograd's clamp "
               "gradient (1 inside, 0 outside; inputs away from the bounds) is right.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="myrelu_clone_mask",
         source="https://discuss.pytorch.org/t/custom-autograd/52209",
         build=build_myrelu,
         truth="Right: grad_output.clone() with the entries where x < 0 zeroed is ReLU's "
               "gradient (inputs away from 0).",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="clipped_relu_function",
         source="https://apxml.com/courses/advanced-pytorch/chapter-1-pytorch-internals-autograd/practice-custom-autograd",
         build=build_clipped_relu_fn,
         truth="Right: gradient passes where 0 < x < C, zero elsewhere; inputs away from "
               "0 and C; the float cap gets None.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="relu_forward_leaky_backward_detach",
         source="https://discuss.pytorch.org/t/relu-with-leaky-derivative/32818",
         build=build_leaky_detach,
         truth="Wrong for x where x < 0 (4 of 8 elements): the gradient is 0.1 where the "
               "forward (relu) is flat and the Jacobian is 0; right where x > 0.",
         right=False,
         must=[WRONG, name("x"), (r"x\s*<", r"x\s*≤", r"(?i)negative",
                                   r"x\[0\]|x\[2\]|x\[4\]|x\[6\]")],
         never=(TRANSPOSED, FACTOR)),
    dict(name="identity_grad_times_666",
         source="https://github.com/pytorch/pytorch/issues/4714",
         build=build_666,
         truth="Wrong for x: identity forward, backward 666 * grad_out (constant factor "
               "666 on the diagonal).",
         right=False,
         must=[WRONG, name("x"), (r"(?i)factor", r"666")],
         never=(TRANSPOSED,)),
    dict(name="doubleit_once_differentiable",
         source="https://runebook.dev/en/docs/pytorch/generated/torch.autograd.function.once_differentiable",
         build=build_doubleit,
         truth="Right: 2 * grad_output for 2 * x; once_differentiable only forbids double "
               "backward.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="two_tanh_none_for_second_input",
         source="https://github.com/PaddlePaddle/Paddle/pull/32494",
         build=build_two_tanh_none,
         truth="Wrong for x2: backward returns None (zero gradient) although x2 requires "
               "grad and dy2/dx2 = 1 - tanh(x2)^2; x1's gradient is right.",
         right=False,
         must=[WRONG, name("x2")],
         never=(TRANSPOSED, FACTOR)),
    dict(name="linear_function_needs_input_grad",
         source="https://discuss.pytorch.org/t/why-is-the-gradient-multiplied-by-grad-output-in-this/139574",
         build=build_linear_fn,
         truth="Right: the extending-docs LinearFunction backward is right for input, "
               "weight and bias.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="matmul_needs_input_grad_one_input",
         source="https://github.com/cai4cai/torchsparsegradutils/issues/31",
         build=build_matmul_needs_partial,
         truth="Right: only A requires grad; grad @ B.T is right and B (a constant) gets "
               "None.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="checkpoint_recompute_backward",
         source="https://d3axxy9bcycpv7.cloudfront.net/openai/consistency_models/src/fragments/most_complex_unit/most_complex_unit_40.py.html",
         build=build_checkpoint,
         truth="Right: backward recomputes tanh(x @ w) under enable_grad and returns "
               "autograd.grad of it, right for x and w.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="sort_mark_non_differentiable",
         source="https://pytorch.org/docs/stable/generated/torch.autograd.function.FunctionCtx.mark_non_differentiable.html",
         build=build_sort,
         truth="Right: index_add_ of g1 at the sort indices is the transpose of the "
               "permutation Jacobian; the integer index output is not differentiable.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="set_materialize_grads_default",
         source="https://pytorch.org/docs/stable/generated/torch.autograd.function.FunctionCtx.set_materialize_grads.html",
         build=build_simplefunc,
         truth="Right: two clones of x, backward g1 + g2.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="set_materialize_grads_false",
         source="https://pytorch.com.tw/docs/stable/generated/torch.autograd.function.FunctionCtx.set_materialize_grads.html",
         build=build_no_materialize,
         truth="Right: with set_materialize_grads(False) the backward handles None "
               "upstream gradients and sums the others.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="broadcast_add_unreduced_grad",
         source="https://lynx-cortex.pages.dev/phase-08-tensor-autograd/theory/02-tensor-op-derivatives/",
         build=build_broadcast_unreduced,
         truth="Right: b's gradient is returned with a's (4, 3) shape, and torch sums it "
               "to b's (3,) shape, which is the correct reduction.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="broadcast_add_mean_instead_of_sum",
         source="https://cyberzhg.github.io/toy-auto-diff/manuals/op/element.html",
         build=build_broadcast_mean,
         truth="Wrong for b: the broadcast dimension (4 rows) is reduced by mean instead "
               "of sum, a constant factor 1/4; a is right.",
         right=False,
         must=[WRONG, name("b"), (r"(?i)factor", r"1/4", r"0\.25")],
         never=(TRANSPOSED,)),
    dict(name="dot_transpose_a_missing_T",
         source="https://github.com/apache/mxnet/pull/4498",
         build=build_dot_transa,
         truth="Wrong for x: z = x^T y, the backward returns dz @ y^T, the transpose of "
               "the right gradient matrix y @ dz^T (x is square); y is right.",
         right=False,
         must=[WRONG, name("x")],
         never=(FACTOR,)),
    dict(name="matmul_backward_without_transposes",
         source="https://github.com/tile-ai/TileOPs/pull/54",
         build=build_matmul_no_transpose,
         truth="Wrong for A and B: dC @ B and A @ dC instead of dC @ B^T and A^T @ dC; "
               "each Jacobian block is the true block transposed (square 3x3 inputs).",
         right=False,
         must=[WRONG, name("A"), name("B"), (TRANSPOSED,)],
         never=(FACTOR,)),
    dict(name="matmul_backward_uses_output_not_grad",
         source="https://github.com/HomericIntelligence/Odyssey/issues/2136",
         build=build_matmul_uses_output,
         truth="Wrong for A and B: the backward uses the forward output C in place of the "
               "upstream gradient, so it does not depend on v at all.",
         right=False,
         must=[WRONG, name("A"), name("B")],
         never=()),
    dict(name="addernet_surrogate_backward",
         source="https://github.com/huawei-noah/AdderNet/issues/21",
         build=build_adder,
         truth="Wrong for X and W against the derivative (by design): X gets "
               "clamp(W - X, -1, 1) instead of sign(W - X), W gets (X - W) normalised by "
               "its norm instead of sign(X - W), which is not even linear in v.",
         right=False,
         must=[WRONG, name("X"), name("W")],
         never=()),
    dict(name="sign_ste_extra_none",
         source="https://github.com/1zb/pytorch-image-comp-rnn/issues/4",
         build=build_sign_ste,
         truth="Wrong for x against the derivative (straight-through on purpose): sign is "
               "flat away from 0 (Jacobian 0) and the backward passes grad_output.",
         right=False,
         must=[WRONG, name("x"),
               (r"(?i)not.derivative", r"(?i)not the derivative", r"(?i)flat",
                r"(?i)straight.through")],
         never=(TRANSPOSED, FACTOR)),
    dict(name="overwrite_instead_of_accumulate",
         source="https://www.cognoria.com/from-atomic-ops-to-gpt/chapter-2/lesson-2-5",
         build=build_overwrite,
         truth="Wrong for a and b: e = a*b + a + b, but the backward overwrites the "
               "product-branch contribution and returns g alone (missing b*g and a*g).",
         right=False,
         must=[WRONG, name("a"), name("b")],
         never=(TRANSPOSED,)),
    dict(name="slice_add_on_copy",
         source="https://github.com/pytorch/pytorch/issues/5871",
         build=build_slice_add,
         truth="Right: out = a with b added at index 1; gradients grad_output and "
               "grad_output[1:2] are right.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="ctx_intermediate_square_first_order",
         source="https://github.com/pytorch/pytorch/issues/58509",
         build=build_ctx_square,
         truth="Right at first order: 8 * inp * gres for (2 inp)^2 (only double backward "
               "is wrong, which is not checked).",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="ctx_intermediate_times_six_first_order",
         source="https://github.com/pytorch/pytorch/issues/76185",
         build=build_ctx_times_six,
         truth="Right at first order: 3 * temp / inp = 6, the derivative of 6 * inp "
               "(double backward is wrong, not checked).",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="square_saves_input",
         source="https://pytorch.org/tutorials/intermediate/custom_function_double_backward_tutorial.html",
         build=build_square_saved,
         truth="Right: 2 x grad_out.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="exp_saves_output",
         source="https://discuss.pytorch.org/t/save-the-gradient-of-the-intermediate-tensor/190094",
         build=build_exp_saved,
         truth="Right: grad_output * exp(i).",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="nn_linear_float32",
         source="https://github.com/pytorch/pytorch/issues/5351",
         build=build_linear_f32,
         truth="Right: autograd's backward of nn.Linear in float32 is right for the input, "
               "weight and bias; only float32 gradcheck rejects it.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="adaptive_avg_pool_float32",
         source="https://github.com/pytorch/pytorch/issues/44662",
         build=build_pool_f32,
         truth="Right: adaptive_avg_pool2d's backward (1/6 per element) in float32 is "
               "right; gradcheck failed only because of float32 finite differences.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="save_for_backward_docs_func",
         source="https://pytorch.org/docs/2.5/generated/torch.autograd.function.FunctionCtx.save_for_backward.html",
         build=build_docs_func,
         truth="Right: d/dx = y(1+z), d/dy = x + z + xz; the int z gets None.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="mycube_two_outputs_setup_context",
         source="https://github.com/pytorch/pytorch/issues/191648",
         build=build_mycube,
         truth="Right: grad_output * 3x^2 + grad_dx * 6x over the outputs (x^3, 3x^2).",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="two_sines_two_outputs",
         source="https://github.com/pytorch/pytorch/pull/115573",
         build=build_two_sines,
         truth="Right: cos(x) and cos(y) on the diagonal blocks, zero cross blocks.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="clamp_keep_gradient_detach",
         source="https://github.com/ai2cm/ace/pull/1322",
         build=build_clamp_detach,
         truth="Wrong for x at the 4 clamped elements (|x| > 1: forward flat, Jacobian 0, "
               "gradient 1), right at the 4 inside.",
         right=False,
         must=[WRONG, name("x")],
         never=(TRANSPOSED, FACTOR)),
    dict(name="round_ste_identity",
         source="https://github.com/papers-submission/CalibTIP/issues/1",
         build=build_round_ste,
         truth="Wrong for x against the derivative (straight-through on purpose): round is "
               "flat away from its jumps, backward passes grad_output.",
         right=False,
         must=[WRONG, name("x"),
               (r"(?i)not.derivative", r"(?i)not the derivative", r"(?i)flat",
                r"(?i)straight.through")],
         never=(TRANSPOSED, FACTOR)),
    dict(name="quantize_clamp_round_ste",
         source="https://github.com/microsoft/nni/issues/3159",
         build=build_quantize_ste,
         truth="Wrong for w against the derivative (straight-through on purpose): "
               "clamp+round quantisation is flat at every input used, backward passes "
               "grad_output unchanged.",
         right=False,
         must=[WRONG, name("w"),
               (r"(?i)not.derivative", r"(?i)not the derivative", r"(?i)flat",
                r"(?i)straight.through")],
         never=(TRANSPOSED, FACTOR)),
    dict(name="round_through_detach",
         source="https://example-a.com/answer/64801610",
         build=build_round_through,
         truth="Wrong for x against the derivative: x + (round(x) - x).detach() is flat "
               "(Jacobian 0) but autograd returns the identity.",
         right=False,
         must=[WRONG, name("x"),
               (r"(?i)not.derivative", r"(?i)not the derivative", r"(?i)flat",
                r"(?i)straight.through")],
         never=(TRANSPOSED, FACTOR)),
    dict(name="heaviside_hardtanh_of_grad",
         source="https://github.com/aras-ai/Dilated-Convolution-with-Learnable-Spacings-PyTorch",
         build=build_heaviside_hardtanh,
         truth="Wrong for x: the step forward is flat (Jacobian 0) and the backward is "
               "hardtanh(grad_output), which is not linear in v.",
         right=False,
         must=[WRONG, name("x")],
         never=(TRANSPOSED,)),
    dict(name="bitnet_sign_clamp_ste",
         source="https://github.com/kyegomez/BitNet",
         build=build_bitnet_ste,
         truth="Wrong for input against the derivative (straight-through on purpose): "
               "sign(clamp(x)) is flat away from 0, backward passes grad_output.",
         right=False,
         must=[WRONG, name("input"),
               (r"(?i)not.derivative", r"(?i)not the derivative", r"(?i)flat",
                r"(?i)straight.through")],
         never=(TRANSPOSED, FACTOR)),
    dict(name="layernorm_llmc_backward",
         source="https://veitner.bearblog.dev/backprob-through-layernorm",
         build=build_layernorm_right,
         truth="Right: the llm.c LayerNorm backward (dnorm - mean(dnorm) - norm * "
               "mean(dnorm * norm)) * rstd, dw and db are right.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="layernorm_page_formula",
         source="https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1",
         build=build_layernorm_wrong,
         truth="Wrong for x: the page's elementwise formula misses the mean terms and "
               "divides by F; gamma's and beta's gradients are right.",
         right=False,
         must=[WRONG, name("x")],
         never=()),
    dict(name="softmax_backward_copies_grad",
         source="https://github.com/pjreddie/darknet/pull/96",
         build=build_softmax_copy,
         truth="Wrong for x: softmax's backward returns grad_output unchanged (identity) "
               "instead of s * (v - <v, s>).",
         right=False,
         must=[WRONG, name("x")],
         never=(TRANSPOSED,)),
    dict(name="sigmoid_backward_without_dy",
         source="https://discuss.mxnet.apache.org/t/implementation-of-sigmoid-extending-mx-autograd-function/647",
         build=build_sigmoid_no_dy,
         truth="Wrong for x: returns y(1 - y) without multiplying by dy (chain rule "
               "forgotten); not linear in v.",
         right=False,
         must=[WRONG, name("x")],
         never=(TRANSPOSED,)),
    dict(name="relu_mask_without_upstream",
         source="https://github.com/OpenMined/UnityWorker/pull/250",
         build=build_relu_no_upstream,
         truth="Wrong for x: returns the 0/1 mask without multiplying by grad_output.",
         right=False,
         must=[WRONG, name("x")],
         never=(TRANSPOSED,)),
    dict(name="backward_returns_none",
         source="https://github.com/pytorch/pytorch/pull/41490",
         build=build_return_none,
         truth="Wrong for x: forward 2x, backward returns None (zero gradient instead of 2).",
         right=False,
         must=[WRONG, name("x")],
         never=(TRANSPOSED,)),
    dict(name="neg_sum_loss_unused_label",
         source="https://github.com/pytorch/pytorch/issues/959",
         build=build_negsum_loss,
         truth="Right: -1 for every element of i; label is unused (Jacobian 0) and its None "
               "gradient is right.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="constant_forward_summed_ones_grad",
         source="https://github.com/pytorch/pytorch/issues/65244",
         build=build_constant_batch_grad,
         truth="Wrong for y: the forward is a constant (Jacobian 0) but the backward's "
               "(4, 3) ones are summed to 4 per element, whatever grad_output is.",
         right=False,
         must=[WRONG, name("y")],
         never=(TRANSPOSED,)),
    dict(name="softmax_cross_entropy_fused",
         source="https://notesoncomputing.com/coding_interview/cross_entropy_softmax_grad",
         build=build_softmax_ce,
         truth="Right: (softmax - onehot) / N times g for the mean cross-entropy; the "
               "integer target is not checked.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="replace_grad_sum_to_size",
         source="https://github.com/kevmurr/simplified_clip_vqgan_backend",
         build=build_replace_grad,
         truth="Wrong for x_backward against the derivative (on purpose): the output is "
               "x_forward, which does not depend on x_backward, yet it receives "
               "grad_output.",
         right=False,
         must=[WRONG, name("x_backward")],
         never=(TRANSPOSED, FACTOR)),
    dict(name="relu_inplace_on_clone",
         source="https://discuss.pytorch.org/t/understanding-autograd-relu-inplace-true/89031",
         build=build_relu_inplace_clone,
         truth="Right: relu_ applied in place to a clone inside the function; autograd "
               "gives the relu mask w.r.t. x.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
    dict(name="sigmoid_saved_output",
         source="https://prof.lexailabs.com/practice/build-nn-03-sigmoid-and-backward",
         build=build_sigmoid_saved,
         truth="Right: grad_out * s * (1 - s) from the saved output.",
         right=True,
         must=[RIGHT],
         never=(NOT_WRONG,)),
]
