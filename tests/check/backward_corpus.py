"""Custom ``autograd.Function``s with wrong and with right backwards, as people write them.

Each entry says what its backward gets wrong (``kind``: the pattern a checker should name, or
``None`` when the bug has no simple pattern), and builds its inputs for a dtype.  The right ones
include tricky cases: kinks evaluated exactly at the kink, in-place operations inside the
forward, several outputs, ``once_differentiable``, integer inputs, unreduced broadcast
gradients that autograd reduces, and a backward that sums in a random order (atomic adds).

Used by ``tests/check/test_check_corpus.py`` and ``benchmarks/gradcheck_corpus.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch.autograd.function import once_differentiable

F64 = torch.float64
F32 = torch.float32


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable
    make: Callable[[torch.dtype, torch.Generator], tuple]
    wrong: bool
    kind: str | None = None  # "factor", "sign", "transposed", "zero", "offset", "region", ...
    only_some_inputs: bool = False
    wrong_in: frozenset = field(default_factory=lambda: frozenset({F64, F32}))
    bug: str = ""


def _randn(*shape):
    def make(dtype, g):
        return (torch.randn(*shape, generator=g, dtype=F64).to(dtype).requires_grad_(),)
    return make


def _positive(*shape):
    def make(dtype, g):
        return ((torch.rand(*shape, generator=g, dtype=F64) + 0.5).to(dtype).requires_grad_(),)
    return make


def _two(shape_a, shape_b):
    def make(dtype, g):
        a = torch.randn(*shape_a, generator=g, dtype=F64).to(dtype).requires_grad_()
        b = torch.randn(*shape_b, generator=g, dtype=F64).to(dtype).requires_grad_()
        return a, b
    return make


def _three(sa, sb, sc):
    def make(dtype, g):
        return tuple(torch.randn(*s, generator=g, dtype=F64).to(dtype).requires_grad_()
                     for s in (sa, sb, sc))
    return make


def _with_kinks(dtype, g):
    x = torch.randn(7, generator=g, dtype=F64)
    x[2] = 0.0  # exactly at the kink
    return (x.to(dtype).requires_grad_(),)


# =========================================================================== wrong backwards


class SquareMissingFactor(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # d(x²)/dx = 2x


class CubeMissingFactor(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x**2  # 3x²


class SqrtMissingHalf(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g / y  # 1 / (2 sqrt x)


class SoftplusBetaExtraFactor(torch.autograd.Function):
    """softplus(βx)/β; its derivative is sigmoid(βx), not β·sigmoid(βx)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(3.0 * x) / 3.0

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3.0 * torch.sigmoid(3.0 * x)


class SinWrongSign(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return -g * torch.cos(x)


class ExpNegForgotMinus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.exp(-x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y  # d exp(-x) = -exp(-x)


class TanhWrongSign(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (y * y - 1)


class MatmulGradXTransposed(torch.autograd.Function):
    """y = x @ w; grad_x must be g @ wᵀ."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, x.T @ g


class MatmulGradWTransposed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.T, g.T @ x  # (xᵀ g)ᵀ


class LeftMatmulTransposed(torch.autograd.Function):
    """y = a @ x with a constant square a; grad_x must be aᵀ g."""

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a)
        return a @ x

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return None, a @ g


class LinearForgotBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w.T + b

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, g.T @ x, None


class MulGradOnlyFirst(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        _, b = ctx.saved_tensors
        return g * b, None


class MulGradsSwapped(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * a, g * b


class SinOfSquareForgotChain(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x * x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x * x)  # times 2x forgotten


class SoftmaxForgotTerm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.softmax(x, -1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * g  # y * (g - (g * y).sum(-1, keepdim=True))


class CenterForgotMean(torch.autograd.Function):
    """y = x - mean(x); the backward forgets that the mean depends on x."""

    @staticmethod
    def forward(ctx, x):
        return x - x.mean()

    @staticmethod
    def backward(ctx, g):
        return g


class NormalizeForgotProjection(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        n = x.norm()
        ctx.save_for_backward(x, n)
        return x / n

    @staticmethod
    def backward(ctx, g):
        _, n = ctx.saved_tensors
        return g / n


class SumAsMean(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.n = x.numel()
        ctx.shape = x.shape
        return x.sum()

    @staticmethod
    def backward(ctx, g):
        return g.expand(ctx.shape) / ctx.n  # the gradient of mean, not of sum


class BiasMeanOverBatch(torch.autograd.Function):
    """y = x + b, b broadcast over the batch dim; grad_b must sum over it."""

    @staticmethod
    def forward(ctx, x, b):
        return x + b

    @staticmethod
    def backward(ctx, g):
        return g, g.mean(0)


class RowScaleWrongDim(torch.autograd.Function):
    """y = x * s[:, None]; grad_s must sum over dim 1, not 0."""

    @staticmethod
    def forward(ctx, x, s):
        ctx.save_for_backward(x, s)
        return x * s[:, None]

    @staticmethod
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * s[:, None], (g * x).sum(0)


class SigmoidKeepdimBroadcast(torch.autograd.Function):
    """The derivative kept an extra dim: g * d[:, None] is (n, n), autograd sums it silently."""

    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        d = (y * (1 - y))[:, None]  # meant for a batch of rows
        return g * d


class LeakyReluWrongNegativeSlope(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x > 0, x, 0.1 * x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.where(x > 0, torch.ones_like(x), torch.full_like(x, -0.1))


class EluWrongNegativeBranch(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.where(x > 0, x, torch.expm1(x))
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * torch.where(x > 0, torch.ones_like(y), y)  # y + 1 for x < 0


class SquareAbsForNegatives(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x.abs()


class QuadraticForgotLinearTerm(torch.autograd.Function):
    """y = x² + 3x; the backward has 2x only."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x + 3 * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x


class ScaleAddsConstant(torch.autograd.Function):
    """y = 3x; the backward adds 1 whatever the upstream gradient."""

    @staticmethod
    def forward(ctx, x):
        return 3 * x

    @staticmethod
    def backward(ctx, g):
        return 3 * g + 1


class SinCosIgnoresSecondOutput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        return g1 * torch.cos(x)  # + g2 * (-sin x) forgotten


class SinCosWrongSignSecond(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        return g1 * torch.cos(x) + g2 * torch.sin(x)


class OnceDiffMissingFactor(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.exp(2 * x)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.exp(2 * x)  # 2 exp(2x)


class LogGradTimesX(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # 1/x


class TanhBackwardInBfloat16(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        gb, yb = g.bfloat16(), y.bfloat16()
        return (gb * (1 - yb * yb)).to(g.dtype)


class SinBackwardInFloat32(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return (g.float() * torch.cos(x.float())).to(g.dtype)


def _left_matmul(dtype, g):
    a = torch.randn(4, 4, generator=g, dtype=F64).to(dtype)
    x = torch.randn(4, 3, generator=g, dtype=F64).to(dtype).requires_grad_()
    return a, x


WRONG = [
    Case("square: missing factor 2", SquareMissingFactor.apply, _randn(6), True, "factor",
         bug="g * x for d(x²)/dx = 2x"),
    Case("cube: missing factor 3", CubeMissingFactor.apply, _randn(6), True, "factor"),
    Case("sqrt: missing 1/2", SqrtMissingHalf.apply, _positive(6), True, "factor"),
    Case("softplus(βx)/β: extra β", SoftplusBetaExtraFactor.apply, _randn(6), True, "factor"),
    Case("sin: wrong sign", SinWrongSign.apply, _randn(6), True, "sign"),
    Case("exp(-x): forgot the minus", ExpNegForgotMinus.apply, _randn(6), True, "sign"),
    Case("tanh: wrong sign", TanhWrongSign.apply, _randn(6), True, "sign"),
    Case("x @ w: grad_x uses w, not wᵀ", MatmulGradXTransposed.apply, _two((3, 4), (4, 4)),
         True, "transposed", only_some_inputs=True),
    Case("x @ w: grad_w transposed", MatmulGradWTransposed.apply, _two((3, 4), (4, 4)), True,
         "transposed", only_some_inputs=True),
    Case("a @ x: grad_x uses a, not aᵀ", LeftMatmulTransposed.apply, _left_matmul, True,
         "transposed"),
    Case("linear: bias gradient None", LinearForgotBias.apply, _three((3, 4), (2, 4), (2,)),
         True, "zero", only_some_inputs=True),
    Case("a * b: gradient for a only", MulGradOnlyFirst.apply, _two((5,), (5,)), True, "zero",
         only_some_inputs=True),
    Case("a * b: gradients swapped", MulGradsSwapped.apply, _two((5,), (5,)), True, None),
    Case("sin(x²): forgot the 2x", SinOfSquareForgotChain.apply, _randn(6), True, None),
    Case("softmax: forgot the -Σ g·y term", SoftmaxForgotTerm.apply, _randn(2, 4), True, None),
    Case("x - mean(x): forgot the mean", CenterForgotMean.apply, _randn(6), True, "offset"),
    Case("x / |x|: forgot the projection", NormalizeForgotProjection.apply, _randn(5), True,
         None),
    Case("sum: gradient of mean", SumAsMean.apply, _randn(2, 3), True, "factor"),
    Case("x + b: mean over the broadcast dim", BiasMeanOverBatch.apply, _two((4, 3), (3,)),
         True, "factor", only_some_inputs=True),
    Case("x * s[:, None]: sum over the wrong dim", RowScaleWrongDim.apply, _two((4, 4), (4,)),
         True, None, only_some_inputs=True),
    Case("sigmoid: (n, 1) derivative broadcast to (n, n)", SigmoidKeepdimBroadcast.apply,
         _randn(5), True, None),
    Case("leaky relu: wrong slope sign for x < 0", LeakyReluWrongNegativeSlope.apply,
         _randn(8), True, "region"),
    Case("elu: y instead of y + 1 for x < 0", EluWrongNegativeBranch.apply, _randn(8), True,
         "region"),
    Case("x²: 2|x| instead of 2x", SquareAbsForNegatives.apply, _randn(8), True, "region"),
    Case("x² + 3x: forgot the 3", QuadraticForgotLinearTerm.apply, _randn(6), True, "offset"),
    Case("3x: backward adds 1", ScaleAddsConstant.apply, _randn(5), True, "offset"),
    Case("(sin, cos): second output ignored", SinCosIgnoresSecondOutput.apply, _randn(5), True,
         "zero"),
    Case("(sin, cos): wrong sign for cos", SinCosWrongSignSecond.apply, _randn(5), True, "sign"),
    Case("once_differentiable exp(2x): missing 2", OnceDiffMissingFactor.apply, _randn(5), True,
         "factor"),
    Case("log: g * x instead of g / x", LogGradTimesX.apply, _positive(6), True, None),
    Case("tanh: backward in bfloat16", TanhBackwardInBfloat16.apply, _randn(6), True,
         "precision"),
    Case("sin (float64): backward in float32", SinBackwardInFloat32.apply, _randn(6), True,
         "precision", wrong_in=frozenset({F64})),
]


# =========================================================================== right backwards


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


class ReluAtKink(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp_min(0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > 0).to(g.dtype)


class AbsAtKink(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.abs()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.sign(x)


class ExpInPlace(torch.autograd.Function):
    """In-place inside the forward (on a clone), the output saved for the backward."""

    @staticmethod
    def forward(ctx, x):
        y = x.clone()
        y.mul_(0.5).exp_()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return 0.5 * g * y


class SinCos(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        return g1 * torch.cos(x) - g2 * torch.sin(x)


class Matmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.T, x.T @ g


class LinearUnreducedBias(torch.autograd.Function):
    """The bias gradient returned with the batch dim: autograd sums it to b's shape."""

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w.T + b

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, g.T @ x, g


class OnceDiffExp2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.exp(2 * x)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * torch.exp(2 * x)


class Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.softmax(x, -1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * (g - (g * y).sum(-1, keepdim=True))


class SinPlusLargeOffset(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x) + 1e4

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x)


class GatherScale(torch.autograd.Function):
    """y = x * table[idx]; idx is an integer input (no gradient)."""

    @staticmethod
    def forward(ctx, x, idx):
        scale = torch.arange(1, 5, dtype=x.dtype)[idx]
        ctx.save_for_backward(scale)
        return x * scale

    @staticmethod
    def backward(ctx, g):
        (scale,) = ctx.saved_tensors
        return g * scale, None


class Normalize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        n = x.norm()
        y = x / n
        ctx.save_for_backward(y, n)
        return y

    @staticmethod
    def backward(ctx, g):
        y, n = ctx.saved_tensors
        return (g - y * (g * y).sum()) / n


class SumAtomicOrder(torch.autograd.Function):
    """y = A x; the backward adds its terms in a random order, as atomic adds do."""

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a)
        return a @ x

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        terms = a.T * g  # terms[j, i] = a[i, j] g[i]
        order = torch.randperm(terms.shape[1])
        return None, terms[:, order].sum(1)


class LogNearZero(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / x


def _gather(dtype, g):
    x = torch.randn(6, generator=g, dtype=F64).to(dtype).requires_grad_()
    idx = torch.tensor([0, 3, 1, 2, 3, 0])
    return x, idx


def _atomic(dtype, g):
    a = torch.randn(6, 6, generator=g, dtype=F64).to(dtype)
    x = torch.randn(6, generator=g, dtype=F64).to(dtype).requires_grad_()
    return a, x


def _near_zero(dtype, g):
    return ((0.01 + 1e-3 * torch.rand(6, generator=g, dtype=F64)).to(dtype).requires_grad_(),)


RIGHT = [
    Case("square", Square.apply, _randn(6), False),
    Case("relu, one input exactly 0", ReluAtKink.apply, _with_kinks, False),
    Case("abs, one input exactly 0", AbsAtKink.apply, _with_kinks, False),
    Case("exp(x/2) with in-place ops in forward", ExpInPlace.apply, _randn(6), False),
    Case("(sin, cos): two outputs", SinCos.apply, _randn(5), False),
    Case("x @ w", Matmul.apply, _two((3, 4), (4, 2)), False),
    Case("linear, unreduced bias gradient", LinearUnreducedBias.apply,
         _three((3, 4), (2, 4), (2,)), False),
    Case("once_differentiable exp(2x)", OnceDiffExp2.apply, _randn(5), False),
    Case("softmax", Softmax.apply, _randn(2, 4), False),
    Case("sin(x) + 1e4", SinPlusLargeOffset.apply, _randn(6), False),
    Case("x * table[idx], integer idx", GatherScale.apply, _gather, False),
    Case("x / |x|", Normalize.apply, _randn(5), False),
    Case("a @ x, backward sums in random order", SumAtomicOrder.apply, _atomic, False),
    Case("log(p), p ≈ 0.01", LogNearZero.apply, _near_zero, False),
]

CASES = WRONG + RIGHT


def inputs(case: Case, dtype: torch.dtype, seed: int = 0) -> tuple:
    return case.make(dtype, torch.Generator().manual_seed(seed))
