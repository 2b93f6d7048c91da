"""check_backward's forward-mode reference holds for a custom Function with a ``jvp`` in either
style: the classic ``forward(ctx, ...)`` (which ``torch.func`` refuses: dual tensors run it) and
``setup_context``.  Invariant: the reference is forward mode exactly when the Function gives a
forward-mode derivative, and the verdict follows the backward (right iff its factor is 1)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg

F64 = torch.float64
OPS = {  # f, f'
    "cube": (lambda x: x**3, lambda x: 3 * x**2),
    "sin": (torch.sin, torch.cos),
    "exp": (torch.exp, torch.exp),
    "tanh": (torch.tanh, lambda x: 1 - torch.tanh(x) ** 2),
}


def classic(op: str, factor: float, with_jvp: bool = True) -> type[torch.autograd.Function]:
    """A classic-style Function computing ``OPS[op]`` whose backward is ``factor`` × the
    derivative (its jvp is the derivative)."""
    f, df = OPS[op]

    class Classic(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return f(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return factor * df(x) * g

    if with_jvp:
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return df(x) * t
        Classic.jvp = staticmethod(jvp)
    return Classic


def modern(op: str, factor: float) -> type[torch.autograd.Function]:
    """The same Function in the ``setup_context`` style."""
    f, df = OPS[op]

    class Modern(torch.autograd.Function):
        generate_vmap_rule = True  # for jacfwd

        @staticmethod
        def forward(x):
            return f(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.save_for_forward(*inputs)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return factor * df(x) * g

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return df(x) * t

    return Modern


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(sorted(OPS)), factor=st.sampled_from([1.0, 1.0, 0.5, -1.0, 2.0]),
       n=st.integers(1, 6), style=st.sampled_from(["classic", "modern"]))
def test_a_function_with_a_jvp_is_checked_in_forward_mode_in_either_style(op, factor, n, style):
    x = (torch.rand(n, dtype=F64) + 0.2).requires_grad_()
    fn = (classic if style == "classic" else modern)(op, factor).apply
    r = gradarg.check_backward(fn, x)
    assert r.reference.startswith("forward mode"), r.reference
    assert bool(r) == (factor == 1.0)
    assert x.grad is None  # the caller's tensor is left as it was
    forced = gradarg.check_backward(fn, x, reference="forward")
    assert bool(forced) == (factor == 1.0)


def test_dual_tensor_products_equal_torch_func_on_the_twin():
    """The classic Function's reference Jacobian is torch.func.jacfwd's on its modern twin."""
    from gradarg.check.references import dual_jvp

    x = torch.tensor([0.3, -1.2, 2.0], dtype=F64)
    for op in OPS:
        want = torch.func.jacfwd(modern(op, 1.0).apply)(x)
        apply = classic(op, 1.0).apply
        got = torch.stack([dual_jvp(lambda t, f=apply: (f(t),), [x], [e])[0]
                           for e in torch.eye(3, dtype=F64)], dim=1)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-15)


def test_a_classic_function_without_a_jvp_is_still_refused_for_forward():
    x = torch.ones(2, dtype=F64, requires_grad=True)
    fn = classic("sin", 1.0, with_jvp=False).apply
    assert gradarg.check_backward(fn, x).reference.startswith("finite differences (central")
    with pytest.raises(ValueError, match="does not support forward mode"):
        gradarg.check_backward(fn, x, reference="forward")
