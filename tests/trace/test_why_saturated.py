"""why_no_grad on a gradient that is exactly zero because a sigmoid or tanh saturated.

Far from 0 the output of ``sigmoid`` rounds to exactly 0 or 1 (``tanh``: -1 or 1), and the
derivative torch computes from the output, ``σ(1 − σ)`` or ``1 − tanh²``, is exactly 0: the
forum's "sigmoid gradient is zero".  The answer names the saturation only when the output the
node saved shows it at every entry the cotangent reached; the truth comes from torch (the
gradient, and the function's output in the same dtype).
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

FUNCTIONS = {"sigmoid": (torch.sigmoid, (0.0, 1.0)), "tanh": (torch.tanh, (-1.0, 1.0))}


@given(op=st.sampled_from(sorted(FUNCTIONS)), dtype=st.sampled_from([torch.float32, torch.float64]),
       scale=st.sampled_from([0.5, 3.0, 30.0, 1e3, 1e5]), n=st.integers(1, 6),
       weighted=st.booleans(), seed=st.integers(0, 999))
def test_a_saturated_squashing_function_is_named(op, dtype, scale, n, weighted, seed):
    torch.manual_seed(seed)
    f, limits = FUNCTIONS[op]
    w = (torch.rand(n, dtype=dtype) + 0.5).requires_grad_()  # in [0.5, 1.5)
    u = torch.randn(n, dtype=dtype)  # a weight per entry downstream (zeros for some)
    u = torch.where(u.abs() < 0.3, torch.zeros_like(u), u) if weighted else torch.ones_like(u)

    def loss():
        return (f(w * scale) * u).sum()

    (g,) = torch.autograd.grad(loss(), w)
    d = why_no_grad(loss(), w, names={"w": w})
    said = f"a saturated {op}" in d.message
    # the truth, from torch: zero gradient; the output at a limit where u (the cotangent) is not 0
    out = f(w.detach() * scale)
    at_limit = torch.zeros_like(out, dtype=torch.bool)
    for limit in limits:
        at_limit |= out == limit
    reached = u != 0
    saturated = bool(reached.any()) and bool(at_limit[reached].all())
    if bool((g == 0).all()) and saturated:
        assert d.case == "zero" and said, d.message
        assert f"{int(reached.sum())} entries" in d.message or int(reached.sum()) == 1
    elif bool((g == 0).all()):  # every cotangent zero (u all 0): zero, not the function's doing
        assert d.case == "zero" and not said, d.message
    else:
        assert d.case != "zero" and not said, d.message
