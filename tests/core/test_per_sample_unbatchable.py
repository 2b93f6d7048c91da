"""jacobian(fn, x, batch_dim=...) where torch.func.vmap cannot batch fn: the documented loop,
whatever the batching's error says.

A blind case (an unbatched ``nn.GRU`` on one sample) raised vmap's "output with shape [1, 10]
doesn't match the broadcast shape [5, 1, 10]": the fallback to one Jacobian per sample was
taken only when the error's text said "vmap".  Invariant: for any fn that runs on one sample,
``batch_dim`` gives each sample's Jacobian (truth: ``torch.func.jacrev`` on each sample, in a
loop; ``torch.autograd.functional.jacobian`` where fn writes into a captured tensor, which
jacrev refuses); ``vectorize=True`` raises ``VectorizationError`` instead of looping; an fn
that fails on a single sample raises its own error (with ``vectorize=True`` inside the
``VectorizationError``, a ``RuntimeError``).

Generated: the recurrent layer (GRU, LSTM, RNN: their unbatched input path writes into a
tensor vmap cannot batch), an in-place write into a captured buffer, ``.item()`` in fn, the
sizes, the batch dimension.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.autograd.functional import jacobian
from torch.func import jacrev

import gradarg

F64 = torch.float64


def make(kind: str, width: int, hidden: int):
    torch.manual_seed(0)
    if kind in ("GRU", "LSTM", "RNN"):
        layer = getattr(torch.nn, kind)(width, hidden).double()
        return lambda s: layer(s)[0][-1]  # one sample (T, width) -> (hidden,)
    if kind == "buffer":
        buf = torch.zeros(hidden, dtype=F64)
        w = torch.randn(hidden, width, dtype=F64)

        def f(s):  # writes into a tensor captured from outside (not batched under vmap)
            buf.copy_(torch.tanh(w @ s.sum(0)))
            return buf * s.sum()
        return f
    w = torch.randn(hidden, width, dtype=F64)
    return lambda s: torch.sin(w @ s.sum(0)) * (2.0 if float(s.sum().item()) > 0 else -1.0)


@pytest.mark.filterwarnings("ignore::gradarg.core.cuts.GraphCutWarning")  # .item(): documented warning
@settings(max_examples=max(1, settings.default.max_examples // 2), deadline=None)
@given(kind=st.sampled_from(["GRU", "LSTM", "RNN", "buffer", "item"]),
       batch=st.integers(1, 4), steps=st.integers(1, 5), width=st.integers(1, 4),
       hidden=st.integers(1, 5), where=st.sampled_from([0, 1, 2, -1]),
       seed=st.integers(0, 99))
def test_per_sample_jacobian_of_an_unbatchable_fn_is_each_samples_own(
        kind, batch, steps, width, hidden, where, seed):
    f = make(kind, width, hidden)
    torch.manual_seed(seed)
    samples = torch.randn(batch, steps, width, dtype=F64)
    x = samples.movedim(0, where).contiguous()
    each = (lambda s: jacobian(f, s)) if kind == "buffer" else jacrev(f)
    truth = torch.stack([each(samples[i].clone()) for i in range(batch)])
    got = gradarg.jacobian(f, x, batch_dim=where)
    torch.testing.assert_close(got, truth)
    x_before = x.clone()
    try:
        batched = gradarg.jacobian(f, x, batch_dim=where, vectorize=True)
    except gradarg.VectorizationError:  # the samples' batch, or one sample's basis
        pass
    else:  # vmap could batch it after all (a batch of one runs as well)
        torch.testing.assert_close(batched, truth)
    assert torch.equal(x, x_before)


def test_an_fn_that_fails_on_one_sample_raises_its_own_error():
    def f(s):
        raise RuntimeError("my own error: the sample has the wrong length")

    with pytest.raises(RuntimeError, match="my own error"):
        gradarg.jacobian(f, torch.randn(3, 4, dtype=F64), batch_dim=0)
    with pytest.raises(RuntimeError, match="my own error"):
        gradarg.jacobian(f, torch.randn(3, 4, dtype=F64), batch_dim=0, vectorize=True)  # wrapped
