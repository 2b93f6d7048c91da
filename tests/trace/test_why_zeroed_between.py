"""why_no_grad on a gradient that is exactly zero although no operation sent zeros.

Two causes the traced pass shows on its edges: a hook on a tensor (``register_hook``, a
module's full backward hook) that replaced its gradient with zeros (the gradients sent to the
tensor are nonzero, what arrived is zero), and uses of a tensor that cancel exactly (``a - a``:
each gradient reaching it nonzero, their sum zero).  Before, the answer stopped at "its gradient
is exactly zero".  The truth comes from torch: the gradient with and without the hook.
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

HOOKED = "a hook on that tensor"
CANCEL = "sum to exactly zero"


@given(n=st.integers(1, 5), where=st.sampled_from(["leaf", "intermediate", "module"]),
       zeroing=st.booleans(), seed=st.integers(0, 999))
def test_a_hook_that_zeroes_the_gradient_is_named(n, where, zeroing, seed):
    torch.manual_seed(seed)
    w = torch.randn(n, dtype=torch.float64, requires_grad=True)
    factor = 0.0 if zeroing else 2.0
    layer = torch.nn.Linear(n, n, dtype=torch.float64)
    handles = []
    active = [True]

    def loss():
        t = w
        if where == "leaf" and not handles:
            handles.append(w.register_hook(lambda g: g * factor))
        if where == "intermediate":
            t = w * 3
            if active[0]:
                t.register_hook(lambda g: g * factor)
        if where == "module":
            t = layer(w)
        return (t ** 2).sum()

    if where == "module":
        def hook(module, grad_input, grad_output):
            return tuple(None if g is None else g * factor for g in grad_input)
        handles.append(layer.register_full_backward_hook(hook))
    (g,) = torch.autograd.grad(loss(), w)
    d = why_no_grad(loss(), w, names={"w": w})
    for h in handles:
        h.remove()
    active[0] = False
    (free,) = torch.autograd.grad(loss(), w)  # the truth without the hook: nonzero
    assert bool((free != 0).any())
    if zeroing:
        assert bool((g == 0).all())
        assert d.case == "zero", d.message
        assert (HOOKED if where != "module" else "full backward hook") in d.message, d.message
    else:
        assert d.case != "zero" and HOOKED not in d.message, d.message


@given(n=st.integers(1, 5), uses=st.integers(2, 4), intermediate=st.booleans(),
       seed=st.integers(0, 999))
def test_uses_that_cancel_are_named(n, uses, intermediate, seed):
    torch.manual_seed(seed)
    w = torch.randn(n, dtype=torch.float64, requires_grad=True)

    def loss(cancel=True):
        t = w * 3 if intermediate else w
        total = (uses - 1) * t  # (k - 1) t - t - ... : exactly zero in the uses' gradients
        for _ in range(uses - 1):
            total = total - t
        return (total if cancel else total + t).sum()

    (g,) = torch.autograd.grad(loss(), w)
    assert bool((g == 0).all())  # the truth: exactly zero in float64 (integer coefficients)
    d = why_no_grad(loss(), w, names={"w": w})
    assert d.case == "zero" and CANCEL in d.message, d.message
    assert HOOKED not in d.message
    control = why_no_grad(loss(cancel=False), w, names={"w": w})
    assert control.case != "zero" and CANCEL not in control.message
