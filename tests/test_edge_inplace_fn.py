"""A function that writes into its inputs (issue 44, a blind edge case: ``jacobian(lambda t:
t.mul_(2), x, method="finite-difference")`` gave an all-NaN Jacobian and a warning quoting
``4·x`` as the point, where ``jacrev`` gives ``2·I``).

Invariant: every evaluation of ``fn`` by the finite differences sees the point it asked for,
whatever ``fn`` did to the tensors of an earlier call, and the caller's tensors are left as
they were (the docstring: "fn receives private copies").  The oracle is ``torch.func.jacrev``
of the same function written out of place (a function of the same values that writes into
nothing).
"""

from __future__ import annotations

import warnings

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.func import jacrev

import gradarg

F64 = torch.float64
# (in place, out of place): the same values
OPS = {
    "mul_": (lambda t: t.mul_(2.0), lambda t: t * 2.0),
    "add_": (lambda t: t.add_(0.5), lambda t: t + 0.5),
    "sin_": (lambda t: t.sin_(), torch.sin),
    "tanh_": (lambda t: t.tanh_(), torch.tanh),
    "mul_self_": (lambda t: t.mul_(t.detach() * 0 + t), lambda t: t * t),
}


def chain(names: list[str], inplace: bool):
    def fn(t):
        for name in names:
            t = OPS[name][0 if inplace else 1](t)
        return t

    return fn


@settings(max_examples=25, deadline=None)
@given(names=st.lists(st.sampled_from(sorted(OPS)), min_size=1, max_size=3),
       n=st.integers(1, 5), seed=st.integers(0, 2**16), two=st.booleans())
def test_finite_differences_of_an_inplace_fn_are_taken_at_the_asked_point(names, n, seed, two):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(n, generator=gen, dtype=F64) * 2 - 1
    y = torch.rand(n, generator=gen, dtype=F64) * 2 - 1
    before = (x.clone(), y.clone())
    inplace, plain = chain(names, True), chain(names, False)
    if two:  # the second input is written into too and is not the one moved by some rows
        def f_in(a, b):
            return inplace(a) + b.mul_(3.0)

        def f_out(a, b):
            return plain(a) + b * 3.0

        args = (x, y)
    else:
        f_in, f_out, args = inplace, plain, (x,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no "could not resolve" warning about a moved point
        got = gradarg.jacobian(f_in, args if two else x, method="finite-difference")
    want = jacrev(f_out, argnums=tuple(range(len(args))))(*args)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        assert torch.allclose(g, w, rtol=1e-6, atol=1e-8), (names, g, w)
    assert torch.equal(x, before[0]) and torch.equal(y, before[1])
