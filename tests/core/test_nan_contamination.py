"""A NaN that one mode multiplies into entries off every path is not returned as the Jacobian.

An elementwise backward computes ``grad_out * local`` over all entries: where the local
derivative is NaN (``xlogy``'s ``x / y`` at ``x = y = 0``, ``sqrt``'s ``1 / (2 sqrt(0))`` times
zero), a row's zero cotangent turns it into NaN, so reverse mode puts NaN in the whole column
of that input, and forward mode, with zero tangents, in the whole row of that output.  Found
by a blind case (``tests/fuzz``, eighth set, ``xlogy_zero_zero_jacobian``): gradarg returned
torch's reverse-mode column of NaN.  A NaN on a path from input ``j`` to output ``i`` reaches
both modes, so the invariant, tested over generated points: wherever torch's own reverse mode
(``torch.autograd.functional.jacobian``) or forward mode (``torch.func.jacfwd``) gives a finite
entry, ``gradarg.jacobian`` gives that value, whichever method it is asked for; and where both
give NaN, so does gradarg.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg

D = torch.float64

FUNCTIONS = {
    "xlogy": lambda a, b: torch.special.xlogy(a, b),
    "a * sqrt(b)": lambda a, b: a * torch.sqrt(b),
    "a * log(b)": lambda a, b: a * torch.log(b),
    "sqrt(a * b) + a": lambda a, b: torch.sqrt(a * b) + a,
    "b / a, mixed": lambda a, b: (b / a)[[1, 0, 2, 3]] * a,
}


def _oracle(fn, a, b):
    """Per block: torch's reverse-mode and forward-mode Jacobians (torch alone)."""
    rev = torch.autograd.functional.jacobian(fn, (a, b))
    fwd = torch.func.jacfwd(fn, argnums=(0, 1))(a, b)
    return rev, fwd


def _agrees(got, rev, fwd):
    for g, r, f in zip(got, rev, fwd, strict=True):
        finite_r, finite_f = ~torch.isnan(r), ~torch.isnan(f)
        both = finite_r & finite_f
        assert torch.allclose(g[both], r[both]) and torch.allclose(g[both], f[both])
        assert torch.allclose(g[finite_r & ~finite_f], r[finite_r & ~finite_f])
        assert torch.allclose(g[finite_f & ~finite_r], f[finite_f & ~finite_r])
        assert bool(torch.isnan(g[~finite_r & ~finite_f]).all())


values = st.sampled_from([0.0, 0.0, 1.0, 2.5, 0.5])


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(FUNCTIONS)), st.lists(values, min_size=4, max_size=4),
       st.lists(values, min_size=4, max_size=4),
       st.sampled_from(["auto", "reverse", "forward"]))
def test_a_finite_entry_of_either_mode_is_the_jacobians(name, a, b, method):
    fn = FUNCTIONS[name]
    a, b = torch.tensor(a, dtype=D), torch.tensor(b, dtype=D)
    rev, fwd = _oracle(fn, a, b)
    got = gradarg.jacobian(fn, (a, b), method=method)
    _agrees(got, rev, fwd)


def test_xlogy_at_zero_zero():
    """The blind case: d xlogy(x, y) / dy is NaN only at its own (0, 0) entry."""
    x = torch.tensor([0.0, 0.0, 2.0], dtype=D)
    y = torch.tensor([0.0, 1.0, 3.0], dtype=D)
    for method in ("auto", "reverse", "forward"):
        _, dy = gradarg.jacobian(torch.special.xlogy, (x, y), method=method)
        want = torch.diag(torch.tensor([0.0, 0.0, 2.0 / 3.0], dtype=D))
        assert bool(torch.isnan(dy[0, 0]))
        mask = torch.ones_like(dy, dtype=torch.bool)
        mask[0, 0] = False
        assert torch.equal(dy[mask], want[mask]), (method, dy)


def test_create_graph_and_strict_keep_the_modes_result():
    """No second mode is mixed into a result that carries a graph, or a strict one: torch's
    reverse-mode column, as before."""
    x = torch.tensor([0.0, 0.0, 2.0], dtype=D)
    y = torch.tensor([0.0, 1.0, 3.0], dtype=D, requires_grad=True)
    _, dy = gradarg.jacobian(torch.special.xlogy, (x, y), create_graph=True)
    assert bool(torch.isnan(dy[:, 0]).all())


@pytest.mark.parametrize("method", ["reverse", "forward"])
def test_a_finite_jacobian_is_untouched(method):
    x = torch.tensor([0.5, 1.0, 2.0], dtype=D)
    got = gradarg.jacobian(torch.sqrt, x, method=method)
    assert torch.equal(got, torch.diag(0.5 / torch.sqrt(x)))
