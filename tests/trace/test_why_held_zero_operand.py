"""After ``backward()`` freed the graph, an exactly zero weight gradient is placed at the
product whose other operand is all zeros when a tensor the caller holds shows it: said as
fact when the held tensor is that operand (the same node), as "if it is that operand" when it
only has the shape the node recorded (a blind
grader: "zero weight gradient after backward not located although the all-zero input was
named"); nothing is claimed when no held tensor shows it, or when two held tensors could be
that operand.

Property over generated products (``nn.Linear``'s ``addmm``, ``mm``, ``matmul``, ``mul``),
operands (a constant passed in ``names``, a computed intermediate the caller holds), one or two
uses of the product, decoys (an all-zero tensor of another shape, or of the same shape).  The
truth is established with torch alone: the weight's gradient is exactly zero, and is not once
the operand is replaced by ones (the zero operand is the cause).
"""

from __future__ import annotations

import warnings

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gradarg import why_no_grad

BATCH, IN, OUT = 5, 4, 3


def _product(kind: str, z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    if kind == "linear":
        return torch.nn.functional.linear(z, w, torch.ones(OUT, dtype=w.dtype))
    if kind == "mm":
        return z @ w.T
    if kind == "matmul":
        return torch.matmul(z.reshape(1, BATCH, IN), w.T)
    return z * w[0]  # mul: the operand's shape is not kept by MulBackward0


def _loss(kind: str, z: torch.Tensor, w: torch.Tensor, uses: int) -> torch.Tensor:
    out = _product(kind, z, w).pow(2).sum()
    if uses == 2:
        out = out + torch.tanh(_product(kind, z, w)).sum()
    return out


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["linear", "mm", "matmul", "mul"]),
       operand=st.sampled_from(["constant", "intermediate"]), uses=st.integers(1, 2),
       named=st.booleans(), decoy=st.sampled_from([None, "other shape", "same shape"]),
       seed=st.integers(0, 2**16))
def test_a_zero_gradient_is_placed_at_the_held_zero_operand(kind, operand, uses, named, decoy,
                                                            seed):
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(OUT, IN, generator=gen, dtype=torch.float64, requires_grad=True)
    if operand == "constant":
        z = torch.zeros(BATCH, IN, dtype=torch.float64)
    else:
        base = torch.randn(BATCH, IN, generator=gen, dtype=torch.float64, requires_grad=True)
        z = base * 0.0
    loss = _loss(kind, z, w, uses)
    loss.backward()
    # the truth, by torch alone: zero now, nonzero with the operand replaced by ones
    assert not w.grad.ne(0).any()
    w2 = w.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(_loss(kind, torch.ones(BATCH, IN, dtype=torch.float64), w2, uses),
                               w2)
    assert g.ne(0).any()
    names: dict[str, torch.Tensor] = {"z": z} if named else {}
    if decoy == "other shape":
        names["d"] = torch.zeros(7, 2, dtype=torch.float64)
    elif decoy == "same shape":
        names["d"] = torch.zeros(BATCH, IN, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = why_no_grad(loss, w, names={**names, "w": w})
    assert d.case == "zero", d.message
    claims_z = "z, which you passed" in d.message or "z (which the caller still holds)" in d.message
    # a held tensor is said to be the operand only when it is (the same node); a tensor of the
    # operand's recorded shape only as "if it is that operand"
    assert "d (which" not in d.message, d.message
    if "d, which you passed" in d.message:
        assert decoy == "same shape" and not named and "if it is that operand" in d.message
    if not named:
        assert not claims_z, d.message
        return
    # the operand in the graph and held: always placed; a constant: only where the node kept
    # its shape (not mul), one product cuts every path (a shape cannot tell two products'
    # operands apart) and no other held zero tensor has that shape
    shown = operand == "intermediate" or (kind != "mul" and decoy != "same shape" and uses == 1)
    assert claims_z == shown, d.message
    if claims_z:
        assert "every path from" in d.message and "all zeros" in d.message


def test_a_path_around_the_zero_product_is_no_claim():
    """The weight also reached through another product with a nonzero operand: its gradient
    is not zero there, and a zero gradient elsewhere is not blamed on the held zero."""
    w = torch.randn(OUT, IN, dtype=torch.float64, requires_grad=True)
    z = torch.zeros(BATCH, IN, dtype=torch.float64)
    keep = torch.randn(BATCH, IN, dtype=torch.float64)
    loss = (z @ w.T).sum() + 0.0 * (keep @ w.T).sum()  # the second path sends exact zeros too
    loss.backward()
    assert not w.grad.ne(0).any()
    d = why_no_grad(loss, w, names={"z": z, "w": w})
    assert "z, which you passed" not in d.message, d.message
