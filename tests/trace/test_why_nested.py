"""why_no_grad on nested tensors (``torch.nested.nested_tensor``), which have no single shape.

A random sweep of odd inputs found ``why_no_grad`` raising torch's "NestedTensorImpl doesn't
support sizes" on a nested leaf: the evidence readers took ``.shape`` and flat values.  Each
situation's case here is the one torch's own pass shows (computed in the test), for a nested
leaf, a nested output and a non-leaf made from one.
"""

from __future__ import annotations

import warnings

import pytest
import torch

from gradarg import why_no_grad


def _nested(requires_grad=True):
    with warnings.catch_warnings():  # "nested tensors are a prototype"
        warnings.simplefilter("ignore")
        return torch.nested.nested_tensor([torch.rand(2) + 0.5, torch.rand(3) + 0.5],
                                          requires_grad=requires_grad)


def _pad(t):
    return torch.nested.to_padded_tensor(t, 0.0)


def _through(h):
    return _pad(h).sum(), h


SITUATIONS = {  # name: (build -> (output, tensor), the case torch's pass shows)
    "reached": (lambda x: (_pad(x * 2).sum(), x), "not-run"),
    "times-zero": (lambda x: (_pad(x * 0).sum(), x), "zero"),
    "sqrt-at-zero": (lambda x: (_pad((x * 0).sqrt()).sum(), x), "nonfinite"),
    "detached": (lambda x: (_pad(x.detach() * 2).sum()
                            + torch.ones(1, requires_grad=True).sum(), x), "not-reachable"),
    "non-leaf": (lambda x: _through(x * 2), "non-leaf"),
    "nested-output": (lambda x: (x * 2, x), "not-run"),
}


def _truth(out, x):
    """The case one pass of torch shows (before any backward)."""
    if x.grad_fn is not None:
        return "non-leaf"
    g = torch.autograd.grad(out, x, torch.ones_like(out), retain_graph=True,
                            allow_unused=True)[0]
    if g is None:
        return "not-reachable"
    vals = torch.cat([p.reshape(-1) for p in g.unbind()])
    if not bool(torch.isfinite(vals).all()):
        return "nonfinite"
    return "zero" if not bool(vals.ne(0).any()) else "not-run"


@pytest.mark.parametrize("name", sorted(SITUATIONS))
def test_a_nested_tensor_gets_the_case_torch_shows(name):
    build, case = SITUATIONS[name]
    out, x = build(_nested())
    assert _truth(out, x) == case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = why_no_grad(out, x)
    assert d.case == case, d.message
    assert x.grad_fn is not None or x.grad is None  # nothing accumulated into the leaf


def test_a_frozen_nested_leaf_gives_an_output_without_graph():
    x = _nested(requires_grad=False)
    out = _pad(x * 2).sum()
    assert why_no_grad(out, x).case == "output-no-grad"
