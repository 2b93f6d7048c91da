"""why_no_grad locates the entries where a derivative is infinite, from the values saved.

The forum's NaN gradients: ``(x - x.mean()) / x.std()`` of a constant input, ``acos`` of a
cosine similarity of 1, ``log`` of a softmax that underflowed, ``sqrt`` at 0, a fully masked
row of logits.  The answer used to list every possible cause ("sqrt at 0, log of 0, division
by 0"); now it names the one the saved values show and how many entries sit there.  The truth
is torch's: the gradient is non-finite exactly when some entry is at the point, and the count
is computed here from the inputs.  The algorithm is checked against this brute-force count for
every operation of ``gradarg.trace.graph.singularpoints``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

D = torch.float64
# op -> (f(x), the value that puts an entry at the singular point, a regular value's range,
#        the phrase)
OPS = {
    "div": (lambda x: torch.full_like(x, 3.0) / x, 0.0, (0.5, 2.0), "the divisor is exactly 0"),
    "log": (torch.log, 0.0, (0.5, 2.0), "log's input is exactly 0"),
    "sqrt": (torch.sqrt, 0.0, (0.5, 2.0), "sqrt's input is exactly 0"),
    "rsqrt": (torch.rsqrt, 0.0, (0.5, 2.0), "rsqrt's input is exactly 0"),
    "reciprocal": (torch.reciprocal, 0.0, (0.5, 2.0), "reciprocal's input is exactly 0"),
    "pow": (lambda x: x ** 0.5, 0.0, (0.5, 2.0), "the base of a power below 1 is exactly 0"),
    "acos": (torch.acos, 1.0, (-0.5, 0.5), "acos's input is exactly ±1"),
    "asin": (torch.asin, -1.0, (-0.5, 0.5), "asin's input is exactly ±1"),
    "atanh": (torch.atanh, 1.0, (-0.5, 0.5), "atanh's input is exactly ±1"),
    "acosh": (torch.acosh, 1.0, (1.5, 3.0), "acosh's input is exactly 1"),
}


@given(op=st.sampled_from(sorted(OPS)), n=st.integers(1, 6), data=st.data(),
       seed=st.integers(0, 999))
def test_the_entries_at_a_singular_point_are_counted(op, n, data, seed):
    f, point, (lo, hi), phrase = OPS[op]
    at = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, dtype=D, generator=g) * (hi - lo) + lo
    x = torch.where(torch.tensor(at), torch.full_like(x, point), x).requires_grad_()
    (grad,) = torch.autograd.grad(f(x).sum(), x)
    d = why_no_grad(f(x).sum(), x, names={"x": x})
    k = sum(at)
    # the truth: a non-finite gradient exactly at the entries put at the point
    assert torch.equal(~torch.isfinite(grad), torch.tensor(at))
    if k:
        assert d.case == "nonfinite", d.message
        assert f"{phrase} at {k} of {n} entries" in d.message, d.message
    else:
        assert d.case != "nonfinite" and phrase not in d.message, d.message


@given(rows=st.integers(1, 4), classes=st.integers(2, 5), data=st.data())
def test_fully_masked_rows_of_logits_are_counted(rows, classes, data):
    masked = data.draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
    logits = torch.randn(rows, classes, dtype=D)
    logits[torch.tensor(masked)] = float("-inf")
    logits.requires_grad_()
    target = torch.zeros(rows, dtype=torch.long)
    (grad,) = torch.autograd.grad(F.cross_entropy(logits, target), logits)
    d = why_no_grad(F.cross_entropy(logits, target), logits, names={"logits": logits})
    k = sum(masked)
    if k:  # the truth: NaN gradient (every entry: the mean over rows spreads it)
        assert not bool(torch.isfinite(grad).all())
        assert d.case == "nonfinite"
        assert f"every class masked out) at {k * classes} of {rows * classes}" in d.message, \
            d.message
    else:
        assert bool(torch.isfinite(grad).all()) and d.case != "nonfinite"


def test_the_std_of_a_constant_input():
    x = torch.full((4,), 2.0, requires_grad=True)
    d = why_no_grad(((x - x.mean()) / x.std()).sum(), x, names={"x": x})
    assert d.case == "nonfinite" and "the divisor is exactly 0 at 1 of 1 entries" in d.message
    assert "x.std() + eps" in d.message
