"""A graph cut inside ``fn`` is warned about whatever route evaluates it: forward mode's own
calls of ``fn`` on dual tensors (the batched call of torch's vectorized forward mode, one call
per column in the loop) are watched as reverse mode's recorded call is, without unpacking each
dual to find that it is one.  Generated: the way the number leaves torch (``.item()``,
``float()``, ``.tolist()``, ``.numpy()``), the input size and the route."""

from __future__ import annotations

import warnings

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg
from gradarg.core.cuts import GraphCutWarning

CUTS = {
    "item": lambda s: s.item(),
    "float": lambda s: float(s),
    "tolist": lambda s: s.tolist(),
    "numpy": lambda s: float(s.numpy()),
}
ROUTES = [{"method": "forward", "vectorize": False}, {"method": "forward"},
          {"method": "reverse"}, {"method": "reverse", "vectorize": False}, {}]


@settings(max_examples=40, deadline=None)
@given(cut=st.sampled_from(sorted(CUTS)), n=st.integers(1, 5), route=st.sampled_from(ROUTES))
def test_a_cut_is_warned_about_on_every_route(cut, n, route):
    number = CUTS[cut]

    def fn(x):  # a new function each time: none is remembered as clean
        return x * number(x.sum())

    x = torch.randn(n, dtype=torch.float64)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            gradarg.jacobian(fn, x, **route)
        except RuntimeError:  # .numpy() of a tensor that requires grad: torch refuses
            return
    assert any(issubclass(w.category, GraphCutWarning) for w in seen), (cut, route)
