"""jacobian(fn, x, sparsity=P) colours a pattern once: the colouring of a pattern seen before
(same entries, shapes and method) is reused, a different pattern is never confused with it."""

from __future__ import annotations

import pytest
import torch
from problems import stencil_1d

import gradarg
from gradarg.sparse import _seen, compressed

F64 = torch.float64


def tridiagonal(n: int, layout=torch.sparse_coo) -> torch.Tensor:
    i = torch.arange(n)
    dense = (i[:, None] - i[None, :]).abs() <= 1
    return dense.to_sparse() if layout == torch.sparse_coo else dense


def shifted(u: torch.Tensor) -> torch.Tensor:  # J[i, j] != 0 only for j in {i, i + 2}
    return u * u + torch.nn.functional.pad(u[2:], (0, 2)) ** 3


@pytest.fixture
def colourings(monkeypatch):
    """Count the colourings made (still computing them)."""
    _seen.clear()
    calls = []
    real = compressed.color_pattern

    def spy(*args, **kwargs):
        calls.append(args[1] if len(args) > 1 else kwargs.get("side"))
        return real(*args, **kwargs)

    monkeypatch.setattr(compressed, "color_pattern", spy)
    yield calls
    _seen.clear()


def test_second_call_does_not_colour_again(colourings):
    x = torch.linspace(-1, 1, 12, dtype=F64)
    P = tridiagonal(12)
    first = gradarg.jacobian(stencil_1d, x, sparsity=P)
    made = len(colourings)
    assert made >= 1
    for step in range(3):  # a Newton loop: a new point, the same pattern object
        x = x + 0.1 * step
        got = gradarg.jacobian(stencil_1d, x, sparsity=P)
        torch.testing.assert_close(got.to_dense(), torch.func.jacrev(stencil_1d)(x))
    assert len(colourings) == made
    # a new tensor with the same entries (rebuilt each step) hits too
    gradarg.jacobian(stencil_1d, x, sparsity=tridiagonal(12))
    assert len(colourings) == made
    assert first.to_dense().shape == (12, 12)


def test_different_pattern_same_shape_is_not_confused(colourings):
    x = torch.linspace(0.1, 1, 10, dtype=F64)
    i = torch.arange(10)
    P_shift = ((i[None, :] - i[:, None]) == 0) | ((i[None, :] - i[:, None]) == 2)
    gradarg.jacobian(stencil_1d, x, sparsity=tridiagonal(10, torch.strided))
    made = len(colourings)
    got = gradarg.jacobian(shifted, x, sparsity=P_shift)  # same shape, other entries
    assert len(colourings) > made
    torch.testing.assert_close(got.to_dense(), torch.func.jacrev(shifted)(x))


def test_pattern_edited_in_place_is_coloured_again(colourings):
    x = torch.linspace(0.1, 1, 10, dtype=F64)
    P = torch.eye(10, dtype=torch.bool)
    gradarg.jacobian(torch.sin, x, sparsity=P)
    made = len(colourings)
    P |= tridiagonal(10, torch.strided)  # same object, new entries
    got = gradarg.jacobian(stencil_1d, x, sparsity=P)
    assert len(colourings) > made
    torch.testing.assert_close(got.to_dense(), torch.func.jacrev(stencil_1d)(x))


def test_method_and_input_shape_are_part_of_the_key(colourings):
    x = torch.linspace(0.1, 1, 9, dtype=F64)
    P = tridiagonal(9)
    gradarg.jacobian(stencil_1d, x, sparsity=P, method="reverse")
    made = len(colourings)
    got = gradarg.jacobian(stencil_1d, x, sparsity=P, method="forward")
    assert len(colourings) > made
    torch.testing.assert_close(got.to_dense(), torch.func.jacrev(stencil_1d)(x))


def test_cache_is_bounded(colourings):
    x = torch.linspace(0.1, 1, 6, dtype=F64)
    for k in range(_seen.MAX_ENTRIES + 3):
        P = torch.eye(6, dtype=torch.bool)
        P[0, k % 6] = True
        P[5, (k // 6) % 6] = True
        gradarg.jacobian(torch.sin, x, sparsity=P)
    assert len(_seen._SEEN) <= _seen.MAX_ENTRIES


def test_bad_pattern_still_raises_the_patterns_error(colourings):
    x = torch.zeros(3, dtype=F64)
    with pytest.raises(TypeError, match=r"torch\.bool"):
        gradarg.jacobian(torch.sin, x, sparsity=torch.eye(3))


def test_eager_passes_need_no_forward_mode_unless_a_custom_function_is_in_the_graph():
    """The eager JVPs and Hessian products run as backward passes (gradarg.sparse.passes), so
    a process that only builds and calls SparseHessian and forward-mode SparseJacobian never
    loads torch's forward-mode decompositions (TorchScript-compiled on their first use); a
    custom autograd.Function in the graph sends them to torch's forward mode, which loads
    them.  Observed in fresh processes through sys.modules."""
    import json
    import subprocess
    import sys

    code = """
import json, sys, torch, gradarg
x = torch.rand(6, dtype=torch.float64)
eye = torch.eye(6, dtype=torch.bool)
H = gradarg.SparseHessian(eye)(lambda u: (u ** 3).sum(), x).to_dense()
J = gradarg.SparseJacobian(eye, method="forward")(torch.sin, x).to_dense()
ok = torch.allclose(H, torch.diag(6 * x)) and torch.allclose(J, torch.diag(torch.cos(x)))
before = "torch._decomp.decompositions_for_jvp" in sys.modules
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(u):
        return u ** 3
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.u = inputs[0]  # forward mode reads it here (saved tensors are for backward)
    @staticmethod
    def backward(ctx, g):
        (u,) = ctx.saved_tensors
        return 3 * u ** 2 * g
    @staticmethod
    def jvp(ctx, t):
        return 3 * ctx.u ** 2 * t
J2 = gradarg.SparseJacobian(eye, method="forward")(Cube.apply, x).to_dense()
ok2 = torch.allclose(J2, torch.diag(3 * x ** 2))
print(json.dumps({"ok": ok, "before": before, "ok2": ok2,
                  "after": "torch._decomp.decompositions_for_jvp" in sys.modules}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"ok": True, "before": False, "ok2": True, "after": True}
