"""compare_vjp says how x.grad and the reference differ, when they do and the numbers show it.

A DISAGREE came with no word on how: a reference Jacobian passed transposed (``u @ W`` for
``W @ u``), a VJP off by a factor or a sign, a backward that drops the gradient.  The relation
is now named from the numbers (both sides, within the comparison's tolerance), never a
culprit (which side is wrong the two vectors cannot tell), and otherwise the elements where
they differ are listed.  Invariant: the sentence names the relation built here, and no
relation is named that was not built.  Truth: W itself (the reference is built from it).
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import compare_vjp

D = torch.float64
WORDS = {"transposed": "the Jacobian applied the other way", "factor": "a constant factor",
         "sign": "sign flipped", "zeros": "the reference is all zeros"}


class _TransposedBackward(torch.autograd.Function):
    """y = W x with a backward that applies W, not Wᵀ (right only for a symmetric W)."""

    @staticmethod
    def forward(x, w):
        return w @ x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.w = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return ctx.w @ g, None


@given(m=st.integers(2, 6), n=st.integers(2, 6), seed=st.integers(0, 999),
       built=st.sampled_from(["right", "transposed", "factor", "sign", "zeros", "one-entry",
                              "transposed-backward"]),
       as_function=st.booleans(), c=st.sampled_from([2.0, 0.5, 3.0, 0.25]))
def test_the_relation_named_is_the_one_built(m, n, seed, built, as_function, c):
    torch.manual_seed(seed)
    if built in ("transposed", "transposed-backward"):
        m = n  # a transpose needs a square Jacobian
    w = torch.randn(m, n, dtype=D)
    x, v = torch.randn(n, dtype=D), torch.randn(m, dtype=D)
    fn = (lambda t: _TransposedBackward.apply(t, w)) if built == "transposed-backward" else (
        lambda t: w @ t)
    jac = {"right": w, "transposed": w.T.contiguous(), "factor": c * w, "sign": -w,
           "zeros": torch.zeros_like(w), "transposed-backward": w}.get(built)
    if built == "one-entry":
        jac = w.clone()
        jac[0, 1] += 1.0
    reference = (lambda u, j=jac: u @ j) if as_function else jac
    result = compare_vjp(fn, x, v, reference=reference)
    note = result.note
    if built == "right":
        assert result.status == "agree", str(result)
        return
    assert result.status == "DISAGREE", str(result)
    assert "they differ at" in note, note
    kind = {"transposed-backward": "transposed"}.get(built, built)
    for k, words in WORDS.items():
        if k == "factor" and built == "factor":
            assert f"{c:g} × the reference" in note or words in note, note
        assert (words in note) == (k == kind), (k, note)
    if built == "one-entry":  # no relation: the elements are listed (x[1] differs)
        assert "x[1]" in note and not any(w_ in note for w_ in WORDS.values()), note


@given(n=st.integers(2, 5), seed=st.integers(0, 999), real_v=st.booleans(),
       built=st.sampled_from(["hand", "factor", "right"]))
def test_complex_relations_hold_when_named(n, seed, real_v, built):
    """Complex inputs: PyTorch's x.grad is vᵀ conj(J) (conjugate Wirtinger); a hand Jacobian
    J gives vᵀJ, its conjugate exactly when v is real.  The conjugate is named only when it
    holds; no relation is named that does not."""
    torch.manual_seed(seed)
    c = torch.complex128
    w = torch.randn(n, n, dtype=c)
    x = torch.randn(n, dtype=c)
    v = torch.randn(n, dtype=D).to(c) if real_v else torch.randn(n, dtype=c)
    jac = {"hand": w, "factor": 2 * w.conj(), "right": w.conj()}[built]
    result = compare_vjp(lambda t: w @ t, x, v, reference=jac)
    truth_grad = v @ w.conj()  # torch's convention, from the math
    torch.testing.assert_close(result.backward, truth_grad)
    if built == "right":
        assert result.status == "agree", str(result)
        return
    note = result.note
    assert result.status == "DISAGREE" and "they differ at" in note, str(result)
    conj = "complex conjugate" in note
    assert conj == (built == "hand" and real_v), note
    if built == "factor":
        assert "0.5 × the reference" in note, note
