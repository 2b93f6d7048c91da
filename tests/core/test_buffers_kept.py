"""Helpers leave the caller's module buffers as they were.

A module in training mode updates buffers in place at every call (BatchNorm's running
statistics and ``num_batches_tracked``; a counter a module keeps).  ``jacobian``,
``backward_vjp``, ``compare_vjp``, ``check_backward``, ``jacobian_sparsity`` and
``SparseJacobian`` evaluate ``fn`` many times (finite differences: hundreds), and each
evaluation moved the caller's running statistics: checking a model's backward mid-training
corrupted its BatchNorm state.  Invariant: after any helper, every buffer of the modules ``fn``
reaches (the module itself, a bound method's object, a closure's or a named global's modules)
holds what it held before, and the result is what ``torch.func.jacrev`` gives on a copy.
"""

from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import gradarg

D = torch.float64


class Counter(torch.nn.Module):
    """A linear layer that counts its calls in a buffer (as some modules keep statistics)."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(d, d).double()
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return torch.tanh(self.lin(x))


MODULES = {
    "batchnorm": lambda d: torch.nn.BatchNorm1d(d).double(),
    "instancenorm": lambda d: torch.nn.Sequential(
        torch.nn.Unflatten(1, (1, d)), torch.nn.InstanceNorm1d(1, affine=True,
                                                               track_running_stats=True).double(),
        torch.nn.Flatten()),
    "counter": Counter,
}
HELPERS = ["jacobian", "jacobian-fd", "backward_vjp", "compare_vjp", "check_backward",
           "jacobian_sparsity", "SparseJacobian"]
GLOBAL_MODEL: torch.nn.Module | None = None  # a model kept in a global, as scripts do


def _global_fn(t):
    return GLOBAL_MODEL(t)


def _as_fn(m: torch.nn.Module, how: str):
    if how == "module":
        return m
    if how == "bound":
        return m.forward
    if how == "closure":
        return lambda t: m(t)
    global GLOBAL_MODEL
    GLOBAL_MODEL = m
    return _global_fn


def _run(helper: str, fn, x: torch.Tensor):
    if helper == "jacobian":
        return gradarg.jacobian(fn, x)
    if helper == "jacobian-fd":
        return gradarg.jacobian(fn, x, method="finite-difference")
    if helper == "backward_vjp":
        return gradarg.backward_vjp(fn, x, torch.ones(x.shape, dtype=D))
    if helper == "compare_vjp":
        return gradarg.compare_vjp(fn, x, torch.ones(x.shape, dtype=D))
    if helper == "check_backward":
        return gradarg.check_backward(fn, x.clone().requires_grad_())
    pattern = gradarg.jacobian_sparsity(fn, x)
    if helper == "jacobian_sparsity":
        return pattern
    return gradarg.SparseJacobian(pattern, x.shape)(fn, x).to_dense()


@given(kind=st.sampled_from(sorted(MODULES)), helper=st.sampled_from(HELPERS),
       how=st.sampled_from(["module", "bound", "closure", "global"]), d=st.integers(2, 4),
       batch=st.integers(2, 4), seed=st.integers(0, 99))
def test_buffers_are_what_they_were(kind, helper, how, d, batch, seed):
    torch.manual_seed(seed)
    m = MODULES[kind](d)
    m.train()
    x = torch.randn(batch, d, dtype=D)
    twin = copy.deepcopy(m)
    before = {k: b.clone() for k, b in m.named_buffers()}
    try:
        out = _run(helper, _as_fn(m, how), x)
    except (gradarg.UnsupportedOpError, ValueError, TypeError) as err:
        pytest.skip(f"{helper} refused this module: {err}")  # a refusal changes nothing either
    finally:
        after = dict(m.named_buffers())
        for k, b in before.items():
            assert torch.equal(after[k], b), (k, b, after[k])
    if helper in ("jacobian", "jacobian-fd", "SparseJacobian"):
        # train mode: batch statistics, not running ones (torch.func refuses the in-place
        # update of a captured buffer; torch.autograd.functional runs it eagerly on the twin)
        truth = torch.autograd.functional.jacobian(twin, x)
        torch.testing.assert_close(out.reshape(truth.shape), truth, rtol=1e-6, atol=1e-7)
