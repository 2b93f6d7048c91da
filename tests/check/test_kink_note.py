"""Class: ``check_backward`` says "agree" at a kink only with a note saying what it checked
there (blind edge cases, round 2: at relu's kink the central difference is 0.5 and any value
between the one-sided slopes 0 and 1 agrees).  Generated: a custom ``autograd.Function`` for
relu, abs or a clamp, whose backward takes torch's subgradient at the kink, at points some of
which sit exactly on a kink.  The truth is by hand: a point is on a kink when it equals the
kink's location (0 for relu and abs, the bounds for the clamp).  The note is there exactly
when some point is, with that many entries; the verdict is never "wrong"; a backward that
gives 7 at the kink (outside every subgradient) is wrong.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg

KINKS = {"relu": (0.0,), "abs": (0.0,), "clamp": (-0.5, 0.5)}
FORWARD = {"relu": torch.relu, "abs": torch.abs, "clamp": lambda t: t.clamp(-0.5, 0.5)}


def custom(name: str, at_kink: float):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return FORWARD[name](x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            with torch.enable_grad():
                t = x.detach().requires_grad_()
                (d,) = torch.autograd.grad(FORWARD[name](t).sum(), t)  # torch's subgradient
            kink = torch.zeros_like(x, dtype=torch.bool)
            for k in KINKS[name]:
                kink |= x == k
            return g * torch.where(kink, torch.full_like(d, at_kink), d) if at_kink else g * d

    return F.apply


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(KINKS)),
       points=st.lists(st.sampled_from([-1.5, -0.5, -0.25, 0.0, 0.25, 0.5, 1.5]), min_size=1,
                       max_size=4, unique=True))
def test_a_kink_is_said_where_the_check_accepts_a_subgradient(name, points):
    x = torch.tensor(points, dtype=torch.float64, requires_grad=True)
    on = sum(p in KINKS[name] for p in points)  # the truth, by hand
    r = gradarg.check_backward(custom(name, 0.0), x)
    assert r.status != "wrong", str(r)
    said = [n for n in r.notes if "at a kink" in n]
    assert bool(said) == bool(on), (on, r.notes)
    if on:
        assert said[0].startswith(f"{on} Jacobian entr"), said
        assert gradarg.check_backward(custom(name, 7.0), x).status == "wrong"
