"""The ahead-of-time package of a compiled call (``CompiledSparse.package``): a later
``compile`` of the same function loads it instead of compiling, and it is never stale.

One package is built for the whole module (an AOTInductor compile: the slow part), in a
temporary ``TORCHINDUCTOR_CACHE_DIR``.  A fresh ``compile`` of the same function stands for a
later process (it finds the remembered choice and the package on disk, and compiles
nothing); whether a real later process loads it, and how fast, is measured by
``benchmarks/compiled_later_process.py``.  Each of the four things the traced graph depends
on is then changed, on a fresh loaded copy: the function's code, a closure value, a global it
reads, a captured tensor's shape or dtype.  Each must change the package's key (a later
process would not find the package) and, in this process, send the call back to
``torch.compile``, whose result must follow the new function (against ``torch.func.jacfwd``).
"""

from __future__ import annotations

import os
import shutil

import pytest
import torch

import gradarg
from gradarg.sparse import _aot

OLD = tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 6)
NO_CXX = shutil.which("g++") is None and shutil.which("c++") is None
pytestmark = [
    pytest.mark.skipif(OLD, reason="AOTInductor packages: torch>=2.6"),
    pytest.mark.skipif(NO_CXX, reason="inductor needs a C++ compiler"),
]

# the end-to-end changes past the first compile a torch.compile each (seconds): run with
# GRADARG_SLOW_TESTS=1; the key and the per-call check of each change always run (below)
SLOW = pytest.mark.skipif(os.environ.get("GRADARG_SLOW_TESTS") != "1",
                          reason="compiles once per change: GRADARG_SLOW_TESTS=1 runs it")

N = 8
G_SHIFT = 0.25  # a global float the function reads
G_W = torch.linspace(-1.0, 1.0, N, dtype=torch.float64)  # a global tensor it reads


def make():
    """A function with a closure tensor ``w``, a closure float ``c`` and two globals; setters
    that rebind the closure's names."""
    w = torch.linspace(1.0, 2.0, N, dtype=torch.float64)
    c = 0.5

    def f(u):
        return torch.sin(u) * w + c * u**2 + G_SHIFT * u.roll(1) * G_W

    def set_c(value):
        nonlocal c
        c = value

    def set_w(value):
        nonlocal w
        w = value

    return f, set_c, set_w


def _other_code():
    w, c = None, None

    def f(u):
        return torch.cos(u) * w + c * u + G_SHIFT * u.roll(1) * G_W

    return f.__code__


X = torch.linspace(-0.9, 0.7, N, dtype=torch.float64)


def want(f):
    return torch.func.jacfwd(f)(X)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One package, built in a temporary cache folder: ``(sj, path)``."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path_factory.mktemp("inductor")))
    f, _, _ = make()
    sj = gradarg.SparseJacobian(gradarg.jacobian_sparsity(f, X), X.shape)
    jit = sj.compile(f)  # by default, the first call chooses, then packages
    assert jit.artifact is None
    torch.testing.assert_close(jit(X).to_dense(), want(f), rtol=1e-12, atol=1e-12)
    assert (jit.choice, jit.artifact, jit.why_not_packaged) == ("timed", "package", None)
    path = key(jit, f)
    assert os.path.exists(path)
    assert jit._ready[X.shape, X.dtype].compiled.path == path  # calls run the package
    assert jit.package(X) == path  # already made: the same file, nothing rebuilt
    torch.testing.assert_close(jit(X).to_dense(), want(f), rtol=1e-12, atol=1e-12)
    yield sj, path
    mp.undo()


def loaded(sj):
    """A fresh compile of a fresh ``make()`` (same code and values): loaded from the
    package; the function and its setters."""
    f, set_c, set_w = make()
    jit = sj.compile(f)
    torch.testing.assert_close(jit(X).to_dense(), want(f), rtol=1e-12, atol=1e-12)
    assert (jit.choice, jit.artifact, jit.compiled_candidates) == ("remembered", "package", 0)
    return jit, f, set_c, set_w


def key(jit, f):
    """The package file a later process would look for, for ``f``."""
    return jit._package_path(X, _aot.fingerprint(f))


def test_a_later_compile_loads_the_package_and_follows_tensor_values(built):
    sj, path = built
    jit, f, _, _ = loaded(sj)
    assert key(jit, f) == path
    # captured tensors are inputs, not constants baked in: in-place changes are followed
    G_W.mul_(3.0)
    try:
        torch.testing.assert_close(jit(X).to_dense(), want(f), rtol=1e-12, atol=1e-12)
    finally:
        G_W.div_(3.0)
    assert jit.artifact == "package"
    # the public loader runs the same package
    ready = jit._ready[X.shape, X.dtype]
    public = _aot.Packaged(_aot.load(path, public=True), _aot.fingerprint(f), path)
    torch.testing.assert_close(public(X, *ready.seeds), ready.compiled(X, *ready.seeds),
                               rtol=0, atol=0)


@SLOW
def test_a_change_of_code_invalidates(built):
    sj, path = built
    jit, f, _, _ = loaded(sj)
    f.__code__ = _other_code()  # same closure names, other code
    assert key(jit, f) != path  # (the unchanged function's key is path: the test above)
    torch.testing.assert_close(jit(X).to_dense(), want(f), rtol=1e-12, atol=1e-12)
    assert jit.artifact == "torch.compile"


@SLOW
def test_with_package_true_a_change_gets_a_package_of_its_own(built):
    sj, path = built
    f, set_c, _ = make()
    jit = sj.compile(f, package=True)
    jit(X)
    assert jit.artifact == "package"
    set_c(2.0)
    torch.testing.assert_close(jit(X).to_dense(), want(f), rtol=1e-12, atol=1e-12)
    assert jit.artifact == "package" and key(jit, f) != path and os.path.exists(key(jit, f))


@SLOW
def test_a_change_of_a_closure_value_invalidates(built):
    sj, path = built
    jit, f, set_c, _ = loaded(sj)
    set_c(2.5)  # (2.0 is packaged by the package=True test)
    assert key(jit, f) != path
    torch.testing.assert_close(jit(X).to_dense(), want(f), rtol=1e-12, atol=1e-12)
    assert jit.artifact == "torch.compile"
    # by default, a change is not packaged again (one AOTInductor build per change): said
    assert "changed" in jit.why_not_packaged and not os.path.exists(key(jit, f))


def test_package_false_neither_makes_nor_loads_a_package(built):
    sj, path = built
    f, _, _ = make()
    jit = sj.compile(f, package=False)
    torch.testing.assert_close(jit(X).to_dense(), want(f), rtol=1e-12, atol=1e-12)
    assert (jit.artifact, jit.why_not_packaged) == ("torch.compile", "package=False")
    assert key(jit, f) == path  # the package is there, and not used


def test_by_default_what_cannot_be_packaged_runs_torch_compile_and_says_why(tmp_path,
                                                                             monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    weights = [2.0]  # a list can change in place: no key could follow it

    def f(u):
        return u * weights[0]

    sj = gradarg.SparseJacobian(torch.eye(N, dtype=torch.bool), X.shape)
    jit = sj.compile(f)  # no error: package=None packages only where it can
    torch.testing.assert_close(jit(X).to_dense(), torch.diag(torch.full((N,), 2.0,
                                                                        dtype=X.dtype)))
    assert jit.artifact == "torch.compile" and "list" in jit.why_not_packaged
    weights[0] = 3.0  # torch.compile's guards follow it
    assert torch.equal(jit(X).to_dense().diagonal(), torch.full((N,), 3.0, dtype=X.dtype))
    plain = sj.compile(f, backend="aot_eager")
    plain(X)
    assert plain.artifact == "torch.compile" and "backend='aot_eager'" in plain.why_not_packaged
    assert not (tmp_path / "gradarg" / "packages").exists() or not any(
        (tmp_path / "gradarg" / "packages").iterdir())


@SLOW
def test_a_change_of_a_global_invalidates(built, monkeypatch):
    sj, path = built
    jit, f, _, _ = loaded(sj)
    monkeypatch.setitem(globals(), "G_SHIFT", -1.5)
    assert key(jit, f) != path
    torch.testing.assert_close(jit(X).to_dense(), want(f), rtol=1e-12, atol=1e-12)
    assert jit.artifact == "torch.compile"


@SLOW
@pytest.mark.parametrize("new_w", [
    torch.tensor([3.0], dtype=torch.float64),  # another shape (broadcast)
    torch.linspace(1.0, 2.0, N, dtype=torch.float32),  # another dtype
], ids=["shape", "dtype"])
def test_a_change_of_a_captured_tensors_shape_or_dtype_invalidates(built, new_w):
    sj, path = built
    jit, f, _, set_w = loaded(sj)
    set_w(new_w)
    assert key(jit, f) != path
    torch.testing.assert_close(jit(X).to_dense(), want(f), rtol=1e-6, atol=1e-6)
    assert jit.artifact == "torch.compile"


def test_what_cannot_be_keyed_is_not_packaged():
    weights = [1.0, 2.0]  # a list can change in place: no key could follow it

    def f(u):
        return u * weights[0]

    sj = gradarg.SparseJacobian(torch.eye(N, dtype=torch.bool), X.shape)
    with pytest.raises(ValueError, match="list"):
        sj.compile(f).package(X)
    with pytest.raises(ValueError, match="backend='inductor'"):
        sj.compile(torch.sin, backend="aot_eager").package(X)
    # asked for at compile(): refused there, naming what
    with pytest.raises(ValueError, match="list"):
        sj.compile(f, package=True)
    with pytest.raises(ValueError, match="needs inductor; the backend is 'aot_eager'"):
        sj.compile(lambda u: u.sin(), backend="aot_eager", package=True)
    with pytest.raises(ValueError, match="fullgraph=True"):
        sj.compile(lambda u: u.sin(), fullgraph=False, package=True)
    with pytest.raises(ValueError, match="no torch mode"):
        sj.compile(lambda u: u.sin(), mode="max-autotune", package=True)
    with pytest.raises(ValueError, match="only Python functions"):
        sj.compile(torch.sin, package=True)
    with pytest.raises(TypeError, match="package"):
        sj.compile(lambda u: u.sin(), package="yes")
    sh = gradarg.SparseHessian(torch.eye(N, dtype=torch.bool), X.shape)
    with pytest.raises(ValueError, match="list"):
        sh.compile(lambda u: (u * weights[0]).sum(), package=True)


# ---------------------------------------------------------------- without compiling anything


class Runner:
    """Stands for a loaded package: returns a marker."""

    def run(self, inputs):
        self.inputs = inputs
        return [torch.zeros(1)]


def _change_code(f, set_c, set_w, monkeypatch):
    f.__code__ = _other_code()


def _change_closure(f, set_c, set_w, monkeypatch):
    set_c(2.0)


def _change_global(f, set_c, set_w, monkeypatch):
    monkeypatch.setitem(globals(), "G_SHIFT", -1.5)


def _change_shape(f, set_c, set_w, monkeypatch):
    set_w(torch.tensor([3.0], dtype=torch.float64))


def _change_dtype(f, set_c, set_w, monkeypatch):
    set_w(torch.linspace(1.0, 2.0, N, dtype=torch.float32))


@pytest.mark.parametrize("change", [_change_code, _change_closure, _change_global,
                                    _change_shape, _change_dtype],
                         ids=["code", "closure", "global", "shape", "dtype"])
def test_each_change_changes_the_key_and_stops_a_loaded_package(change, monkeypatch):
    f, set_c, set_w = make()
    walk = _aot.fingerprint(f)
    packaged = _aot.Packaged(Runner(), walk, "path")
    seeds = (torch.ones(2, N, dtype=torch.float64),)
    packaged(X, *seeds)  # unchanged: runs, with the captured tensors after the seeds
    assert [t.shape for t in packaged.runner.inputs] == [X.shape, seeds[0].shape, (N,), (N,)]
    before = _aot.package_path("memory", "reverse", "vector tails", walk, seeds, {})
    change(f, set_c, set_w, monkeypatch)
    after = _aot.package_path("memory", "reverse", "vector tails", _aot.fingerprint(f), seeds,
                              {})
    assert after != before  # a later process would not find the package
    with pytest.raises(_aot.Stale):  # this process stops using it
        packaged(X, *seeds)


def test_the_key_ignores_tensor_values_and_follows_them():
    f, _, set_w = make()
    walk = _aot.fingerprint(f)
    before = _aot.package_path("memory", "reverse", "vector tails", walk, (), {})
    packaged = _aot.Packaged(Runner(), walk, "path")
    set_w(torch.full((N,), 7.0, dtype=torch.float64))  # same shape, dtype: a new input
    assert _aot.package_path("memory", "reverse", "vector tails", _aot.fingerprint(f), (),
                             {}) == before
    packaged(X)
    assert any(torch.equal(t, torch.full((N,), 7.0, dtype=torch.float64))
               for t in packaged.runner.inputs)
