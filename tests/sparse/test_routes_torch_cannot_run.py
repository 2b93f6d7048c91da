"""SparseJacobian's values equal the Jacobian on every route, also where torch cannot run the
route as usual: ``cdist``'s batched backward is wrong in torch 2.13 (``vmap`` over its VJP,
as ``torch.func.jacrev`` does), and ``cdist``/``pdist`` have neither a double backward nor a
forward-mode derivative (forward mode's two ways of making JVPs).  The oracle is
``torch.autograd.functional.jacobian`` without ``vectorize`` (one backward pass per row)."""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import gradarg

D = torch.float64


def reference(fn, x):
    return torch.autograd.functional.jacobian(fn, x)  # a loop over rows: right


def cases(draw_p, draw_q, draw_d, seed):
    g = torch.Generator().manual_seed(seed)
    other = torch.randn(draw_q, draw_d, generator=g, dtype=D)
    x = torch.randn(draw_p * draw_d, generator=g, dtype=D)

    def cdist(v):
        return torch.cdist(v.view(draw_p, draw_d), other).reshape(-1)

    def pdist(v):
        return torch.pdist(v.view(draw_p, draw_d)).pow(2)

    def mixed(v):  # cdist beside an ordinary operation
        return torch.cat([cdist(v), v.sin()])

    return x, {"cdist": cdist, "pdist": pdist, "mixed": mixed}


@given(p=st.integers(2, 5), q=st.integers(1, 4), d=st.integers(1, 3),
       seed=st.integers(0, 2**16), method=st.sampled_from(
           ["auto", "reverse", "forward", "bidirectional"]))
def test_every_route_gives_the_jacobian(p, q, d, seed, method):
    x, fns = cases(p, q, d, seed)
    for name, fn in fns.items():
        pattern = gradarg.jacobian_sparsity(fn, x, layout=torch.strided)
        sj = gradarg.SparseJacobian(pattern, method=method)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # forward mode's fallback, said
            got = sj(fn, x).to_dense().to(D)
        want = reference(fn, x)
        assert torch.allclose(got, want, rtol=1e-10, atol=1e-12), (name, method, sj)


def test_forward_mode_falls_back_to_reverse_and_says_so():
    x, fns = cases(4, 3, 2, 0)
    fn = fns["cdist"]
    sj = gradarg.SparseJacobian(gradarg.jacobian_sparsity(fn, x, layout=torch.strided),
                                method="forward")
    assert sj.mode == "forward"
    with pytest.warns(UserWarning, match=r"forward mode is not available.*_cdist_forward.*"
                                         r"reverse mode is used instead"):
        got = sj(fn, x)
    assert sj.mode == "reverse" and sj.passes == sj.row_colors
    assert torch.allclose(got.to_dense(), reference(fn, x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once: later calls run reverse mode directly
        assert torch.allclose(sj(fn, x).to_dense(), reference(fn, x))


def test_a_compiled_jacobian_of_a_wrongly_batched_operation_is_refused():
    x, fns = cases(3, 2, 2, 1)
    fn = fns["cdist"]
    sj = gradarg.SparseJacobian(gradarg.jacobian_sparsity(fn, x, layout=torch.strided),
                                method="reverse")
    jac = sj.compile(fn, backend="aot_eager")
    with pytest.raises(ValueError, match=r"^fn: torch .* CdistBackward0 wrongly"):
        jac(x)


def test_torch_still_batches_cdist_wrongly():
    # when this fails, torch fixed cdist's batched backward: WRONG_BATCHED_BACKWARD can shrink
    x, fns = cases(4, 3, 2, 0)
    fn = fns["cdist"]
    assert not torch.allclose(torch.func.jacrev(fn)(x), reference(fn, x))
