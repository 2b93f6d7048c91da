"""What tells a watch that an optimizer step moved a parameter (``gradarg.trace.graph.values``).

The invariant: an update that changes any entry changes :func:`fingerprint`, including the
updates whose entries cancel in the sum, which Adam makes (every entry moved by the same
amount, up or down, when its moments hold one gradient); an update that changes nothing
leaves it equal.  Tested over generated weights and such updates, and on a real Adam step
with a zero gradient after one nonzero one.
"""

from __future__ import annotations

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gradarg.trace.graph.values import RESIDUES, fingerprint, local_sum, same_print


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40).map(lambda k: 2 * k), seed=st.integers(0, 2**16),
       step=st.sampled_from([1e-3, 0.1, 0.5]), dtype=st.sampled_from([torch.float32,
                                                                        torch.float64]))
# the 2-norm changes by 2 step Σ ±w_i + n step², which rounds to nothing in float32 here (the
# random sweep): the partial sums still see it
@example(n=50, seed=1829, step=1e-3, dtype=torch.float32)
def test_an_update_that_cancels_in_the_sum_still_changes_the_fingerprint(n, seed, step, dtype):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(n, generator=g, dtype=dtype)
    signs = torch.ones(n, dtype=dtype)
    signs[torch.randperm(n, generator=g)[: n // 2]] = -1  # as many up as down
    moved = w + step * signs
    assert not torch.equal(moved, w)
    before, after = fingerprint(w), fingerprint(moved)
    assert before is not None and after is not None
    assert not same_print(before, after)
    assert same_print(before, fingerprint(w.clone()))


def test_a_zero_gradient_adam_step_moves_a_weight_whose_sum_it_keeps():
    w = torch.nn.Parameter(torch.tensor([[0.5, -0.25], [1.0, 2.0]]))
    opt = torch.optim.Adam([w], lr=0.1)
    w.grad = torch.tensor([[1.0, -1.0], [-2.0, 2.0]])  # two up, two down
    opt.step()
    before_sum, before = local_sum(w), fingerprint(w)
    w.grad = torch.zeros_like(w)
    opt.step()  # the moments still move every entry, by the same amount up or down
    assert local_sum(w) == before_sum  # the sum alone cannot tell
    assert before is not None and not same_print(before, fingerprint(w))


def test_nan_equals_nan_and_a_stored_nothing_is_none():
    t = torch.tensor([float("nan"), 1.0])
    a, b = fingerprint(t), fingerprint(t.clone())
    assert a is not None and b is not None and same_print(a, b)
    assert fingerprint(torch.empty(3, device="meta")) is None


@given(n=st.integers(2, 200), seed=st.integers(0, 2**16),
       dtype=st.sampled_from([torch.float32, torch.float64]))
def test_a_swap_of_two_entries_changes_the_fingerprint(n, seed, dtype):
    """Two entries of different values swapped (a permutation keeps the sum and the 2-norm
    exactly): the fingerprint changes when their flat positions differ modulo RESIDUES."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(n, generator=g, dtype=dtype)
    i, j = torch.randperm(n, generator=g)[:2].tolist()
    if (i - j) % RESIDUES == 0:
        j = (i + 1) % n
    swapped = w.clone()
    swapped[i], swapped[j] = w[j], w[i]
    before, after = fingerprint(w), fingerprint(swapped)
    assert before is not None and after is not None
    assert not same_print(before, after)
    assert same_print(fingerprint(w.reshape(2, -1) if n % 2 == 0 else w), before)
