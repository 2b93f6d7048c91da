"""The compiled call (``SparseJacobian.compile`` / ``SparseHessian.compile``) against the eager
call and against dense references (``torch.func.jacrev`` / ``hessian``).

Most tests compile with ``backend="aot_eager"`` (torch.compile's tracing and graph capture,
no code generation: seconds); one per kind uses the default ``"inductor"`` (C++ kernels),
skipped where no C++ compiler is found.  No timing here: speed is in
``nox -s bench-asdex``.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
import torch.nn.functional as F
from problems import band_energy, brusselator, stencil_1d, stencil_2d

from gradarg import SparseHessian, SparseJacobian, hessian_sparsity, jacobian_sparsity

F64 = torch.float64
OLD = tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 4)
pytestmark = pytest.mark.skipif(OLD, reason="torch.compile of torch.func transforms: torch>=2.4")
NO_CXX = shutil.which("g++") is None and shutil.which("c++") is None


def tridiagonal_mean(u: torch.Tensor) -> torch.Tensor:
    """A tridiagonal residual plus one dense row (the mean) and one dense column (u[0]**2)."""
    up = F.pad(u, (1, 1))
    r = up[:-2] - 2 * u + up[2:] - 1e-3 * torch.exp(u) + 0.1 * u[0] ** 2
    return torch.cat([r, u.mean().reshape(1)])


@pytest.fixture(autouse=True)
def memory(monkeypatch, tmp_path):
    """Each test starts with an empty per-machine memory of compiled choices (torch's own
    caches are left where they are: they only save time); the folder it is in."""
    from gradarg.sparse import _remember

    folder = tmp_path / "memory"
    monkeypatch.setattr(_remember, "memory_dir", lambda: str(folder))
    return folder


def jac_case(fn, x, method="auto"):
    sj = SparseJacobian(jacobian_sparsity(fn, x), x.shape, method=method)
    return sj, torch.func.jacrev(fn)(x)


@pytest.mark.parametrize(
    ("fn", "shape", "method"),
    [
        (stencil_1d, (300,), "reverse"),
        (stencil_1d, (300,), "forward"),
        (stencil_2d, (12, 12), "auto"),
        (brusselator, (2, 8, 8), "forward"),
        (tridiagonal_mean, (200,), "auto"),  # bidirectional
    ],
)
def test_compiled_jacobian_equals_dense(fn, shape, method):
    x = torch.rand(shape, dtype=F64, generator=torch.Generator().manual_seed(0))
    sj, dense = jac_case(fn, x, method)
    if fn is tridiagonal_mean:
        assert sj.mode == "bidirectional"
    jac = sj.compile(fn, backend="aot_eager")
    assert jac.compile_seconds is None
    got = jac(x)
    assert jac.compile_seconds is not None and jac.compile_seconds > 0
    assert got.layout == torch.sparse_coo and got.shape == dense.shape
    torch.testing.assert_close(got.to_dense(), dense, rtol=1e-12, atol=1e-12)
    # a second point: the compiled function is reused, and right there too
    x2 = x + 0.25
    torch.testing.assert_close(jac(x2).to_dense(), torch.func.jacrev(fn)(x2),
                               rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(jac(x2, layout=torch.strided), sj(fn, x2, layout=torch.strided),
                               rtol=1e-12, atol=1e-12)
    values = jac.values(x2)
    assert values.shape == (sj.nnz,)


def test_a_tie_compiles_both_sides_and_keeps_one():
    x = torch.rand(10, 10, dtype=F64)
    sj, dense = jac_case(stencil_2d, x)
    assert sj.row_colors == sj.column_colors  # symmetric pattern: the same colouring
    jac = sj.compile(stencil_2d, backend="aot_eager")
    assert jac.compiled_candidates == 0 and jac.choice is None
    got = jac(x)
    assert jac.mode in ("reverse", "forward")
    # aot_eager: no inductor options to vary, so one compile per mode
    assert jac.choice == "timed" and jac.compiled_candidates == 2
    torch.testing.assert_close(got.to_dense(), dense, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(jac(x * 2).to_dense(), torch.func.jacrev(stencil_2d)(x * 2),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", ["star", "acyclic"])
@pytest.mark.parametrize("half", [1, 3])
def test_compiled_hessian_equals_dense(method, half):
    f = band_energy(half)
    x = torch.rand(120, dtype=F64, generator=torch.Generator().manual_seed(1))
    sh = SparseHessian(hessian_sparsity(f, x), x.shape, method=method)
    hess = sh.compile(f, backend="aot_eager")
    got = hess(x)
    torch.testing.assert_close(got.to_dense(), torch.func.hessian(f)(x), rtol=1e-10,
                               atol=1e-10)
    torch.testing.assert_close(hess(x, layout=torch.sparse_csr).to_dense(),
                               sh(f, x, layout=torch.sparse_csr).to_dense(),
                               rtol=1e-12, atol=1e-12)


def test_the_caller_tensor_is_left_alone():
    x = torch.rand(50, dtype=F64).requires_grad_(True)
    before = x.detach().clone()

    def fn(u):  # no side effect here: torch.compile would recompile at every call
        if u is x:
            raise AssertionError("fn got the caller's tensor")
        return torch.sin(2 * u)

    sj = SparseJacobian(torch.eye(50, dtype=torch.bool))
    got = sj.compile(fn, backend="aot_eager")(x)
    assert torch.equal(x.detach(), before) and x.grad is None and x.grad_fn is None
    torch.testing.assert_close(got.to_dense(), torch.diag(2 * torch.cos(2 * before)))


def test_many_compiled_functions_in_one_process():
    """torch.compile keeps graphs per code object, 8 at most: each compile gets its own."""
    sj = SparseJacobian(torch.eye(30, dtype=torch.bool))
    x = torch.rand(30, dtype=F64)
    for k in range(10):
        def fn(u, k=k):
            return torch.sin(u) * (k + 1)
        got = sj.compile(fn, backend="aot_eager")(x)
        torch.testing.assert_close(got.to_dense(), torch.diag(torch.cos(x) * (k + 1)))


def test_bad_input_and_uncapturable_function():
    sj = SparseJacobian(torch.eye(20, dtype=torch.bool))
    jac = sj.compile(torch.sin, backend="aot_eager")
    with pytest.raises(ValueError, match=r"x has shape \(21,\); the pattern expects 20"):
        jac(torch.rand(21))
    with pytest.raises(TypeError, match="real floating"):
        jac(torch.arange(20))

    def branches(u):  # Python control flow on a tensor's value: a graph break
        if u.sum() > 0:
            return torch.sin(u)
        return torch.cos(u)

    with pytest.raises(RuntimeError, match=r"torch.compile .* failed on branches: .*eager"):
        sj.compile(branches, backend="aot_eager")(torch.rand(20))
    # the eager call runs it
    x = torch.rand(20, dtype=F64)
    torch.testing.assert_close(sj(branches, x).to_dense(), torch.diag(torch.cos(x)))

    sh = SparseHessian(torch.eye(20, dtype=torch.bool))
    with pytest.raises(ValueError, match="f must return a scalar"):
        sh.compile(torch.sin, backend="aot_eager")(torch.rand(20))


@pytest.mark.skipif(NO_CXX, reason="inductor needs a C++ compiler")
def test_inductor_jacobian_and_hessian():
    x = torch.rand(400, dtype=F64, generator=torch.Generator().manual_seed(2))
    sj, dense = jac_case(tridiagonal_mean, x)
    torch.testing.assert_close(sj.compile(tridiagonal_mean)(x).to_dense(), dense,
                               rtol=1e-12, atol=1e-12)
    f = band_energy(2)
    sh = SparseHessian(hessian_sparsity(f, x), x.shape)
    torch.testing.assert_close(sh.compile(f)(x).to_dense(), torch.func.hessian(f)(x),
                               rtol=1e-10, atol=1e-10)


def test_auto_backend_without_a_compiler(monkeypatch, tmp_path):
    from gradarg.sparse.compiled import resolve_backend

    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no compiler on it
    assert resolve_backend("auto") == "aot_eager"
    sj = SparseJacobian(torch.eye(10, dtype=torch.bool))
    jac = sj.compile(torch.sin)
    assert jac.backend == "aot_eager"
    x = torch.rand(10, dtype=F64)
    torch.testing.assert_close(jac(x).to_dense(), torch.diag(torch.cos(x)))
    fake = tmp_path / "g++"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert resolve_backend("auto") == "inductor"
    assert resolve_backend("aot_eager") == "aot_eager"


def test_a_module_with_parameters_updated_in_place():
    """A model's parameters require grad and change between calls (a training loop): the
    compiled Jacobian follows them, comes out detached, and leaves .grad alone."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(),
                                torch.nn.Linear(8, 2)).double()
    x = torch.randn(16, 3, dtype=F64)

    def f(u):
        return model(u)

    sj = SparseJacobian(jacobian_sparsity(f, x), x.shape)
    jac = sj.compile(f, backend="aot_eager")
    got = jac(x)
    assert not got.requires_grad and not jac.values(x).requires_grad
    torch.testing.assert_close(got.to_dense(), torch.func.jacrev(f)(x))
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1.5)
    torch.testing.assert_close(jac(x).to_dense(), torch.func.jacrev(f)(x))
    assert all(p.grad is None for p in model.parameters())


def test_the_eager_call_is_kept_when_it_is_faster(monkeypatch):
    from gradarg.sparse.compiled import CompiledSparse

    # the eager call timed at 0 s: faster than any compiled candidate
    monkeypatch.setattr(CompiledSparse, "_eager_seconds", lambda self, x: 0.0)
    x = torch.rand(40, dtype=F64)
    sj, dense = jac_case(stencil_1d, x, "reverse")
    jac = sj.compile(stencil_1d, backend="aot_eager")
    torch.testing.assert_close(jac(x).to_dense(), dense)
    assert jac.route == "eager" and jac.compiled_candidates == 1
    x2 = x + 1
    torch.testing.assert_close(jac(x2).to_dense(), torch.func.jacrev(stencil_1d)(x2))
    assert "route='eager'" in repr(jac)
    # remembered: a second compile of the same function compiles nothing
    again = sj.compile(stencil_1d, backend="aot_eager")
    torch.testing.assert_close(again(x2).to_dense(), torch.func.jacrev(stencil_1d)(x2))
    assert again.choice == "remembered" and again.route == "eager"
    assert again.compiled_candidates == 0


def test_a_corrupt_stale_or_wrong_memory_costs_only_speed(memory):
    """The memory of a first call's choice (see test_compiled_memory.py for a second
    process): unreadable or unknown, it is ignored and rewritten; well-formed but naming a
    slower candidate, it is followed, and the result is right either way."""
    x = torch.rand(10, 10, dtype=F64, generator=torch.Generator().manual_seed(3))
    sj, dense = jac_case(stencil_2d, x)  # reverse and forward tie

    def compiled():
        jac = sj.compile(stencil_2d, backend="aot_eager")
        torch.testing.assert_close(jac(x).to_dense(), dense, rtol=1e-12, atol=1e-12)
        return jac

    first = compiled()
    assert first.choice == "timed" and first.compiled_candidates == 2
    (path,) = memory.iterdir()
    assert json.loads(path.read_text())["mode"] == first.mode
    assert compiled().choice == "remembered"
    for bad in ("{not json", json.dumps([1, 2]), json.dumps({"version": 1}),
                json.dumps({"version": 1, "mode": "sideways", "variant": "vector tails",
                            "route": "compiled"}),
                json.dumps({"version": 0, "mode": "reverse", "variant": "vector tails",
                            "route": "compiled"})):
        path.write_text(bad)
        again = compiled()
        assert again.choice == "timed" and again.compiled_candidates == 2, bad
        assert json.loads(path.read_text())["mode"] == again.mode  # rewritten
    other = "forward" if first.mode == "reverse" else "reverse"
    path.write_text(json.dumps({"version": 1, "mode": other, "variant": "vector tails",
                                "route": "compiled"}))
    wrong = compiled()
    assert (wrong.choice, wrong.compiled_candidates, wrong.mode) == ("remembered", 1, other)


def test_the_memory_names_function_pattern_shape_and_dtype(memory):
    """Another function, pattern, shape or dtype is another memory; a function rebuilt with
    the same code and captured shapes (as in the next process) is the same one."""
    from gradarg.sparse._remember import describe

    def scaled(w):
        return lambda u: stencil_1d(u) * w

    assert describe(scaled(torch.ones(30))) == describe(scaled(torch.zeros(30)))
    assert describe(scaled(torch.ones(30))) != describe(scaled(torch.ones(31)))
    assert describe(scaled(2.0)) != describe(scaled(3.0))
    assert describe(stencil_1d) != describe(stencil_2d)
    x = torch.rand(30, dtype=F64)
    sj = SparseJacobian(jacobian_sparsity(stencil_1d, x), x.shape, method="reverse")
    for fn, point in ((stencil_1d, x), (scaled(torch.ones(30)), x),
                      (stencil_1d, x.float())):
        assert sj.compile(fn, backend="aot_eager").values(point).numel() == sj.nnz
    assert sj.compile(scaled(torch.zeros(30)), backend="aot_eager").choice is None
    jac = sj.compile(scaled(torch.full((30,), 2.0)), backend="aot_eager")
    jac.values(x)
    assert jac.choice == "remembered"
    assert len(list(memory.iterdir())) == 3


@pytest.mark.parametrize("backend", ["aot_eager", pytest.param("inductor", marks=pytest.mark.skipif(
    NO_CXX, reason="inductor needs a C++ compiler"))])
def test_the_global_generator_is_left_alone(backend):
    """A compiled call leaves torch's global random state as it found it, as the eager call
    does, also for a function that draws from it (reverse mode runs fn outside vmap)."""
    x = torch.rand(30, dtype=F64)

    def noisy(u):
        return torch.sin(u) + torch.rand(()) * 0  # draws, contributes nothing

    sj = SparseJacobian(torch.eye(30, dtype=torch.bool), method="reverse")
    for fn in (torch.sin, noisy):
        jac = sj.compile(fn, backend=backend)
        for _ in range(3):  # the first call (compiles), then later ones
            torch.manual_seed(7)
            got = jac(x)
            assert torch.equal(torch.rand(4), torch.manual_seed(7) and torch.rand(4))
            torch.testing.assert_close(got.to_dense(), torch.diag(torch.cos(x)))


def test_transposed_small_matmuls_pass():
    """The inductor pass rewrites a product with few result columns into the transposed
    product, same values; a wider one is left alone."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from gradarg.sparse._inductor_pass import has_matmul, transposed_small_matmuls

    graph_pass = transposed_small_matmuls()
    if graph_pass is None:
        pytest.skip("this torch has no inductor CustomGraphPass")
    aten = torch.ops.aten
    gen = torch.Generator().manual_seed(4)
    for cols, rewritten in ((8, True), (32, False)):
        a = torch.rand(256, 16, dtype=F64, generator=gen)
        b = torch.rand(16, cols, dtype=F64, generator=gen)
        gm = make_fx(torch.mm, tracing_mode="fake")(a, b)
        graph_pass(gm.graph)
        gm.recompile()
        targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
        assert (aten.permute.default in targets) == rewritten
        torch.testing.assert_close(gm(a, b), a @ b, rtol=1e-14, atol=1e-14)
    assert graph_pass.uuid() == transposed_small_matmuls().uuid()
    layer = torch.rand(8, 4, dtype=F64)
    assert has_matmul(lambda u: torch.tanh(u @ layer), torch.rand(5, 8, dtype=F64))
    assert not has_matmul(stencil_1d, torch.rand(5, dtype=F64))


@pytest.mark.skipif(NO_CXX, reason="inductor needs a C++ compiler")
def test_inductor_candidates_for_a_network():
    """Reverse mode only (4 row colours against 8 column colours): the mode, then the loop
    tails, then (a matrix product in the graph) the transposed small products: 3 compiled
    candidates, whichever wins, and the entries right."""
    gen = torch.Generator().manual_seed(5)
    w1, w2 = torch.rand(8, 16, dtype=F64, generator=gen), torch.rand(16, 4, dtype=F64,
                                                                     generator=gen)

    def mlp(u):
        return torch.tanh(u @ w1) @ w2

    x = torch.rand(256, 8, dtype=F64, generator=gen)
    sj, dense = jac_case(mlp, x)
    jac = sj.compile(mlp)
    torch.testing.assert_close(jac(x).to_dense(), dense, rtol=1e-12, atol=1e-12)
    assert jac.compiled_candidates == 3 and jac.choice == "timed"
    tails = jac.variant.partition(" + ")[0]
    assert tails in ("vector tails", "scalar tails")
    torch.testing.assert_close(jac(x + 1).to_dense(), torch.func.jacrev(mlp)(x + 1),
                               rtol=1e-12, atol=1e-12)


def test_a_function_the_memory_cannot_name_still_compiles(memory):
    class Odd(torch.nn.Module):
        def extra_repr(self):
            raise RuntimeError("no repr")

        def forward(self, u):
            return torch.sin(u)

    sj = SparseJacobian(torch.eye(12, dtype=torch.bool))
    x = torch.rand(12, dtype=F64)
    for _ in range(2):
        jac = sj.compile(Odd(), backend="aot_eager")
        torch.testing.assert_close(jac(x).to_dense(), torch.diag(torch.cos(x)))
        assert jac.choice == "timed"
    assert not memory.exists()
