"""``why_no_grad`` says ``"ok"`` only about what it compared: ``.grad`` equal to one backward
pass of the output.  Once ``backward()`` freed the graph, one pass cannot be recomputed, so a
finite nonzero ``.grad`` is ``"unchecked"`` (the answer says what could not be checked), never
``"ok"``: two passes accumulated, or a hook's scaling, look the same there (a blind grader
counted the old ``"ok"`` false on a ``.grad`` holding two passes).

Property over generated functions, numbers of backward passes, hooks and whether the graph was
kept; the one pass is computed independently, on a fresh leaf with ``torch.autograd.grad``.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gradarg import why_no_grad

FUNCTIONS = {
    "square": lambda w: (w * w).sum(),
    "sin": lambda w: torch.sin(w).sum(),
    "exp-mean": lambda w: torch.exp(w).mean(),
    "matmul": lambda w: (w.reshape(-1, 1) @ w.reshape(1, -1)).tanh().sum(),
}


def _one_pass(fn, w: torch.Tensor) -> torch.Tensor:
    fresh = w.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fn(fresh), fresh)
    return g


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(FUNCTIONS)), n=st.integers(1, 6),
       passes=st.integers(1, 3), scale=st.sampled_from([1.0, 1.0, 3.0]),
       keep=st.booleans(), seed=st.integers(0, 2**16))
def test_ok_only_after_comparing_with_one_pass(name, n, passes, scale, keep, seed):
    fn = FUNCTIONS[name]
    gen = torch.Generator().manual_seed(seed)
    w = (torch.rand(n, generator=gen, dtype=torch.float64) + 0.5).requires_grad_(True)
    if scale != 1.0:
        w.register_hook(lambda g: g * scale)
    for _ in range(passes):
        y = fn(w)
        y.backward(retain_graph=keep)
    before = w.grad.clone()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = why_no_grad(y, w)
    assert torch.equal(w.grad, before)  # the diagnosis changed nothing
    one = _one_pass(fn, w)
    if not keep:  # the graph is freed: nothing to compare with
        assert d.case == "unchecked", (d.case, d.message)
        assert "could not be checked" in d.message
        return
    if d.case == "ok":  # compared: .grad is one pass
        torch.testing.assert_close(w.grad, one * scale)
    if passes == 1 and scale == 1.0:
        assert d.case == "ok", d.message
    elif scale == 1.0:
        assert d.case == "accumulated" and f"holds {passes} times" in d.message, d.message


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_the_unchecked_answer_names_the_tensor_and_what_to_do(name):
    w = torch.linspace(0.5, 1.5, 4, dtype=torch.float64).requires_grad_(True)
    y = FUNCTIONS[name](w)
    y.backward()
    d = why_no_grad(y, w, names={"w": w})
    assert d.case == "unchecked"
    assert d.message.startswith("w.grad is finite and nonzero") and "recompute" in d.message
