"""Every batched path auto may keep gives the Jacobian (speeds.ROUTES): class "a path chosen by
timing changes the speed, never the result".  Whatever path a trial or a remembered plan names,
on generated graphs (elementwise ops, matrix products of both forms, a linear layer with bias,
softmax, reductions, inputs of one or two dimensions), jacobian(fn, x) equals torch.func.jacrev's
result; a named path that does not apply to the graph (the older batching rules refuse, the
double-VJP's recorded backward has no fast rule) falls back to the tables without an error."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg
from gradarg.core import speeds

OPS = {
    "sin": torch.sin,
    "tanh": torch.tanh,
    "exp": lambda t: torch.exp(0.1 * t),
    "softmax": lambda t: torch.softmax(t, dim=-1),
    "relu": torch.relu,
    "square": lambda t: t * t,
}


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))


def build(n_in: int, n_out: int, form: str, op: str, reduce: bool, seed: int):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(n_out, n_in, generator=g, dtype=torch.float64)
    b = torch.randn(n_out, generator=g, dtype=torch.float64)
    act = OPS[op]

    def fn(x):
        if form == "mv":
            y = w @ x
        elif form == "mm":
            y = x @ w.T
        else:  # a linear layer with bias
            y = torch.nn.functional.linear(x, w, b)
        y = act(y)
        return y.sum(-1) if reduce else y

    return fn


@settings(max_examples=60, deadline=None)
@given(n_in=st.integers(1, 12), n_out=st.integers(1, 12), rows=st.integers(0, 3),
       form=st.sampled_from(["mv", "mm", "linear"]), op=st.sampled_from(sorted(OPS)),
       reduce=st.booleans(), route=st.sampled_from(speeds.ROUTES), seed=st.integers(0, 99))
def test_every_named_path_gives_the_jacobian(n_in, n_out, rows, form, op, reduce, route, seed):
    if form == "mv":
        rows = 0
    fn = build(n_in, n_out, form, op, reduce, seed)
    shape = (n_in,) if rows == 0 else (rows, n_in)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed + 1),
                    dtype=torch.float64)
    want = torch.func.jacrev(fn)(x)
    speeds.PLANS.set(fn, ("auto", speeds.signature((x,))), route)
    got = gradarg.jacobian(fn, x)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)
    # the plan is kept, and the caller's input untouched
    assert speeds.PLANS.get(fn, ("auto", speeds.signature((x,)))) == route
    assert x.grad is None and not x.requires_grad


@pytest.mark.parametrize("route", speeds.ROUTES)
def test_a_named_path_is_ignored_with_create_graph_and_strict(route):
    fn = build(5, 4, "linear", "tanh", False, 0)
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    speeds.PLANS.set(fn, ("auto", speeds.signature((x,))), route)
    got = gradarg.jacobian(fn, x, create_graph=True)
    torch.testing.assert_close(got, torch.func.jacrev(fn)(x))
    assert got.requires_grad  # differentiable, as create_graph asks
    torch.testing.assert_close(gradarg.jacobian(fn, x, strict=True), torch.func.jacrev(fn)(x))
