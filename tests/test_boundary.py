"""The input boundary of the core, sparse and show helpers (issue 44): every misuse refused
before any work, with a TypeError / ValueError (MemoryError for sizes) that names the argument;
complex semantics as torch's; sizes estimated before they are allocated."""

from __future__ import annotations

import resource

import numpy as np
import pytest
import torch

import gradarg
from gradarg import _validate
from gradarg.core.cuts import GraphCutWarning

F64 = torch.float64
X = torch.linspace(-1.0, 1.0, 4, dtype=F64)
BAND = (torch.arange(4)[:, None] - torch.arange(4)).abs() <= 1
DIAG = torch.eye(4, dtype=torch.bool)
META = torch.zeros(4, dtype=F64, device="meta")


def stencil(u):
    up = torch.nn.functional.pad(u, (1, 1))
    return up[:-2] - 2 * u + up[2:] + torch.sin(u)


def energy(u):
    return ((u[1:] - u[:-1]) ** 4).sum() + torch.cos(u).sum()


# ----------------------------------------------------------------------------- devices, layouts

INPUT_CALLS = {
    "jacobian": lambda x: gradarg.jacobian(torch.sin, x),
    "jacobian-batch_dim": lambda x: gradarg.jacobian(torch.sin, x, batch_dim=0),
    "backward_vjp": lambda x: gradarg.backward_vjp(torch.sin, x, torch.ones(4, dtype=F64)),
    "SparseJacobian": lambda x: gradarg.SparseJacobian(BAND)(stencil, x),
    "SparseHessian": lambda x: gradarg.SparseHessian(BAND)(energy, x),
    "sparsity_pattern": lambda x: gradarg.sparsity_pattern(torch.sin, x),
    "explorer": lambda x: gradarg.explorer(torch.sin, x),
}


@pytest.mark.parametrize("call", INPUT_CALLS.values(), ids=INPUT_CALLS.keys())
def test_a_meta_input_is_refused_with_the_reason(call):
    with pytest.raises(ValueError, match=r"x is on the meta device, which holds shapes but no values"):
        call(META)


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("call", INPUT_CALLS.values(), ids=INPUT_CALLS.keys())
def test_a_sparse_input_is_refused_not_densified(call, layout):
    x = X.to_sparse() if layout == "coo" else X.reshape(2, 2).to_sparse_csr()
    with pytest.raises(TypeError, match=r"x is a sparse tensor .*x\.to_dense\(\)"):
        call(x)


def test_a_sparse_v_is_densified_and_gives_torchs_product():
    v = torch.tensor([0.0, 2.0, 0.0, -1.0], dtype=F64)
    got = gradarg.backward_vjp(torch.sin, X, v.to_sparse())
    _, pullback = torch.func.vjp(torch.sin, X)
    assert got.layout == torch.strided
    torch.testing.assert_close(got, pullback(v)[0])


def test_a_meta_or_misplaced_v_is_refused():
    with pytest.raises(ValueError, match="v is on the meta device"):
        gradarg.backward_vjp(torch.sin, X, torch.ones(4, dtype=F64, device="meta"))


def test_a_meta_pattern_is_refused():
    with pytest.raises(ValueError, match="pattern is on the meta device"):
        gradarg.SparseJacobian(BAND.to("meta"))


@pytest.mark.parametrize("layout", [torch.sparse_coo, torch.sparse_csr])
def test_contract_takes_the_sparse_jacobian_that_sparse_jacobian_returns(layout):
    x = torch.linspace(0.1, 1.0, 6, dtype=F64).reshape(2, 3)

    def f(u):
        return torch.stack([u.sum(0), (u**2).prod(0)])  # (2, 3) -> (2, 3)

    dense = torch.func.jacrev(f)(x)  # oracle: torch's own Jacobian
    sj = gradarg.SparseJacobian(dense != 0, x.shape)
    v = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]], dtype=F64)
    want = torch.func.vjp(f, x)[1](v)[0]
    if layout == torch.sparse_coo:
        got = gradarg.contract(v, sj(f, x))  # the default: COO of shape y.shape + x.shape
    else:
        got = gradarg.contract(v.reshape(-1), sj(f, x, layout=torch.sparse_csr)).reshape(2, 3)
    torch.testing.assert_close(got, want)


def test_contract_refuses_meta_and_arrays_of_objects():
    with pytest.raises(ValueError, match="jac is on the meta device"):
        gradarg.contract(torch.ones(2), torch.ones(2, 3, device="meta"))
    with pytest.raises(TypeError, match="v must hold numbers"):
        gradarg.contract(np.array(["a", "b"]), torch.ones(2, 3))


# ----------------------------------------------------------------------------- option types

OPTION_MISUSE = [
    (lambda: gradarg.jacobian(torch.sin, X, create_graph="yes"), TypeError, "create_graph must be"),
    (lambda: gradarg.jacobian(torch.sin, X, strict=2), TypeError, "strict must be"),
    (lambda: gradarg.jacobian(torch.sin, X, vectorize="no"), TypeError, "vectorize must be"),
    (lambda: gradarg.jacobian(torch.sin, X, method=["auto"]), ValueError, "method must be"),
    (lambda: gradarg.jacobian(torch.sin, X, strategy=1), ValueError, "strategy must be"),
    (lambda: gradarg.jacobian(torch.sin, X, certify=2), ValueError, "certify=2 .* needs sparsity="),
    (lambda: gradarg.jacobian(stencil, X, sparsity=BAND, certify=-1), ValueError,
     "certify must be at least 0"),
    (lambda: gradarg.SparseJacobian(BAND)(stencil, X, certify="2"), TypeError,
     "certify must be an integer, got '2'"),
    (lambda: gradarg.SparseJacobian(BAND)(stencil, X, certify=1.5), TypeError,
     "certify must be an integer"),
    (lambda: gradarg.SparseJacobian(BAND)(stencil, X, certify=1, generator=3), TypeError,
     "generator must be None or a torch.Generator, got 3"),
    (lambda: gradarg.SparseJacobian(BAND)(stencil, X, layout="coo"), ValueError,
     "layout must be"),
    (lambda: gradarg.SparseJacobian(BAND, "ab"), TypeError, "x_shape must be a shape"),
    (lambda: gradarg.SparseJacobian(BAND, (4, -1)), ValueError, "x_shape must hold non-negative"),
    (lambda: gradarg.SparseJacobian(BAND, method=None), ValueError, "method must be"),
    (lambda: gradarg.SparseJacobian(BAND, strategy=3), ValueError, "strategy must be"),
    (lambda: gradarg.SparseHessian(BAND, method=1), ValueError, "method must be"),
    (lambda: gradarg.SparseHessian(BAND)(energy, X, certify=True), TypeError,
     "certify must be an integer, got the bool"),
    (lambda: gradarg.sparsity_pattern(torch.sin, X, points="3"), TypeError,
     "points must be an integer"),
    (lambda: gradarg.sparsity_pattern(torch.sin, X, points=0), ValueError,
     "points must be at least 1"),
    (lambda: gradarg.sparsity_pattern(torch.sin, X, generator=0), TypeError,
     "generator must be None or a torch.Generator"),
    (lambda: gradarg.explorer(torch.sin, X, digits="4"), TypeError, "digits must be an int"),
    (lambda: gradarg.explorer(torch.sin, X, name=3), TypeError, "name must be a string"),
]


@pytest.mark.parametrize(("call", "error", "message"), OPTION_MISUSE,
                         ids=[f"{i}" for i in range(len(OPTION_MISUSE))])
def test_options_of_the_wrong_type_or_range_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_drop_in_flags_take_bools_not_truthy_values():
    # torch.autograd.functional.jacobian takes any truthy value (strict=1, strict="no");
    # gradarg takes a bool or NumPy's bool and refuses the rest by name (issue 44)
    want = torch.func.jacrev(torch.sin)(X)
    for flag in (False, np.bool_(False), np.bool_(True)):
        torch.testing.assert_close(gradarg.jacobian(torch.sin, X, strict=flag), want)
    for flag in (0, 1):
        with pytest.raises(TypeError, match=r"jacobian: strict must be a bool \(True or "
                                            r"False\), got int " + str(flag)):
            gradarg.jacobian(torch.sin, X, strict=flag)
    torch.testing.assert_close(gradarg.sparsity_pattern(torch.sin, X, points=np.int64(2)),
                               want != 0)


# ----------------------------------------------------------------------------- complex semantics


def test_a_complex_v_for_a_real_output_is_refused_as_torch_refuses_it():
    v = torch.ones(4, dtype=torch.complex128)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.sin(X.clone().requires_grad_()).backward(v)
    with pytest.raises(ValueError, match=r"v has dtype torch.complex128 but the output has "
                                         r"dtype torch.float64.*drop the imaginary part"):
        gradarg.backward_vjp(torch.sin, X, v)
    with pytest.raises(ValueError, match="v is the complex number"):
        gradarg.backward_vjp(lambda t: t.sum(), X, 1j)
    # inside a transform as well
    with pytest.raises(ValueError, match=r"v has dtype torch\.complex128"):
        torch.func.grad(lambda t: gradarg.backward_vjp(torch.sin, t, v).sum())(X)


def test_a_real_v_for_a_complex_output_is_refused_as_torch_refuses_it():
    fn = lambda t: t * (1 + 2j)
    with pytest.raises(RuntimeError, match="same dtype"):
        fn(X.clone().requires_grad_()).backward(torch.ones(4, dtype=F64))
    with pytest.raises(ValueError, match="invent an imaginary part"):
        gradarg.backward_vjp(fn, X, torch.ones(4, dtype=F64))


def test_a_complex_v_for_a_complex_output_gives_torchs_gradient():
    fn = lambda t: t * (1 + 2j)
    v = torch.tensor([1 + 1j, 2 - 1j, 0.5j, -1.0], dtype=torch.complex128)
    leaf = X.clone().requires_grad_()
    fn(leaf).backward(v)
    torch.testing.assert_close(gradarg.backward_vjp(fn, X, v), leaf.grad)


def test_real_dtypes_of_v_are_cast_as_torch_casts_them():
    leaf = X.clone().requires_grad_()
    v = torch.tensor([1.0, 2.0, 3.0, 4.0])  # float32 for a float64 output: torch casts
    torch.sin(leaf).backward(v)
    torch.testing.assert_close(gradarg.backward_vjp(torch.sin, X, v), leaf.grad)


# ----------------------------------------------------------------------------- types that give zeros


@pytest.mark.parametrize("f", [lambda t: (t * t).sum().long(), lambda t: (t > 0).sum()],
                         ids=["long", "count"])
def test_sparse_hessian_refuses_an_integer_output(f):
    with pytest.raises(RuntimeError, match="floating-point or complex"):
        torch.func.hessian(f)(X)  # torch refuses it too
    with pytest.raises(TypeError, match=r"f must return a scalar of a real floating dtype.*"
                                        r"all zeros"):
        gradarg.SparseHessian(DIAG)(f, X)


def test_sparse_hessian_refuses_a_complex_output():
    with pytest.raises(TypeError, match="complex scalar has no Hessian"):
        gradarg.SparseHessian(DIAG)(lambda t: (t * t).sum() * (1 + 1j), X)


def cumsum_fn(u):
    return torch.cumsum(u, 0) * u  # lower triangular Jacobian


def test_a_wrong_sparsity_given_to_jacobian_is_caught_by_certify():
    wrong = DIAG  # misses the sub-diagonal entries of the true (lower triangular) Jacobian
    J = gradarg.jacobian(cumsum_fn, X, sparsity=wrong)
    true = torch.func.jacrev(cumsum_fn)(X)
    # without the check: wrong entries, no word (what certify= is for)
    assert not torch.allclose(J.to_dense(), true * wrong)
    with pytest.raises(gradarg.CertificateError, match="misses non-zero entries"):
        gradarg.jacobian(cumsum_fn, X, sparsity=wrong, certify=2)
    right = true != 0
    got = gradarg.jacobian(cumsum_fn, X, sparsity=right, certify=2)
    torch.testing.assert_close(got.to_dense(), true)


def test_a_wrong_pattern_given_to_sparse_hessian_is_caught_by_certify():
    f = lambda u: (u[0] * u[3]) ** 2 + (u**3).sum()  # H couples 0 and 3
    true = torch.func.hessian(f)(X)
    sh = gradarg.SparseHessian(DIAG)
    assert not torch.allclose(sh(f, X).to_dense(), true * DIAG)  # silently wrong without it
    gen = torch.Generator().manual_seed(1)
    with pytest.raises(gradarg.CertificateError, match="misses non-zero entries of the Hessian"):
        sh(f, X, certify=2, generator=gen)
    right = gradarg.SparseHessian(true != 0)
    for layout in (torch.sparse_coo, torch.strided):
        got = right(f, X, certify=3, layout=layout)
        torch.testing.assert_close(got.to_dense(), true)


def test_certify_leaves_the_global_generator_alone():
    state = torch.get_rng_state()
    gradarg.SparseHessian(BAND)(energy, X, certify=2)
    gradarg.jacobian(stencil, X, sparsity=BAND, certify=2)
    assert torch.equal(torch.get_rng_state(), state)


# ----------------------------------------------------------------------------- under transforms


@pytest.mark.parametrize("build", [
    lambda t: gradarg.SparseJacobian(BAND)(stencil, t).to_dense().sum(),
    lambda t: gradarg.SparseHessian(BAND)(energy, t).to_dense().sum(),
], ids=["SparseJacobian", "SparseHessian"])
@pytest.mark.parametrize("transform", [torch.func.grad, torch.func.jacrev, torch.func.vmap],
                         ids=["grad", "jacrev", "vmap"])
def test_sparse_helpers_built_inside_a_transform_give_the_named_refusal(build, transform):
    x = X if transform is not torch.func.vmap else X.expand(2, 4)
    with pytest.raises(ValueError, match=r"\(pattern\) computes a compressed derivative .* "
                                         r"called inside torch\.func\."):
        transform(build)(x)


# ----------------------------------------------------------------------------- memory


def test_a_dense_jacobian_too_large_for_the_machine_is_refused_with_the_estimate():
    x = torch.zeros(200_000)
    for method in gradarg.METHODS:
        with pytest.raises(MemoryError, match=r"needs about \d+ GB, more than the .* available "
                                              r"now; nothing was allocated\. Instead: .*"
                                              r"backward_vjp.*SparseJacobian"):
            gradarg.jacobian(torch.sin, x, method=method)
    with pytest.raises(MemoryError, match="2 samples of batch_dim= together"):
        gradarg.jacobian(torch.sin, torch.zeros(2, 200_000), batch_dim=0)


def test_a_huge_sparse_pattern_is_refused_before_its_colouring_allocates():
    n = 2 * 10**9
    one = torch.sparse_coo_tensor(torch.tensor([[0], [n - 1]]), torch.tensor([True]), (1, n),
                                  check_invariants=True)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(MemoryError, match=r"SparseJacobian's colouring \(a pattern of 1 × "
                                          r"2000000000, 1 entries\) needs about 128 GB"):
        gradarg.SparseJacobian(one)
    square = torch.sparse_coo_tensor(torch.tensor([[0], [0]]), torch.tensor([True]), (n, n),
                                     check_invariants=True)
    with pytest.raises(MemoryError, match="SparseHessian's colouring"):
        gradarg.SparseHessian(square)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 200 * 1024  # the 16 GB of the issue: never allocated


def test_memory_limits_follow_what_is_available(monkeypatch):
    small = 300 * 2**20
    monkeypatch.setattr(_validate, "available_memory", lambda: small)
    x = torch.zeros(10_000, dtype=F64)  # an 800 MB Jacobian
    with pytest.raises(MemoryError, match="800 MB, more than the 315 MB"):
        gradarg.jacobian(torch.sin, x)
    i = torch.arange(10_000)
    sj = gradarg.SparseJacobian(torch.sparse_coo_tensor(torch.stack([i, i]),
                                                        torch.ones(10_000, dtype=torch.bool),
                                                        (10_000, 10_000), check_invariants=True))
    sj(torch.sin, x)  # the compressed Jacobian is small
    with pytest.raises(MemoryError, match=r"layout=torch.strided.*Instead: layout=torch.sparse_coo"):
        sj(torch.sin, x, layout=torch.strided)
    monkeypatch.setattr(_validate, "available_memory", lambda: None)  # unknown: no refusal
    _validate.check_memory("anything", 10**15, "")


def test_available_memory_reads_the_machine():
    avail = _validate.available_memory()
    assert avail is None or 0 < avail < 2**60
    assert _validate.size_text(1.6e11) == "160 GB" and _validate.size_text(512) == "512 bytes"


# ----------------------------------------------------------------------------- show

SHOW_MISUSE = [
    (lambda: gradarg.fmt("abc"), TypeError, "value must be a number, a torch.Tensor"),
    (lambda: gradarg.fmt(None), TypeError, "value must be a number"),
    (lambda: gradarg.fmt(1.0, digits="a"), TypeError, "digits must be an integer"),
    (lambda: gradarg.fmt(1.0, digits=-1), ValueError, "digits must be from 1 to 40"),
    (lambda: gradarg.fmt(META), ValueError, "value is on the meta device"),
    (lambda: gradarg.latex_matrix(None), TypeError, "t must be a number"),
    (lambda: gradarg.latex_matrix([[1, 2], [3]]), ValueError, "t must be rectangular"),
    (lambda: gradarg.latex_matrix([["a"]]), TypeError, "t must hold numbers"),
    (lambda: gradarg.latex_matrix(torch.eye(2), env="b}x"), ValueError, "env must be a LaTeX"),
    (lambda: gradarg.latex_jacobian(torch.eye(2), (3,)), ValueError,
     r"jac has shape \(2, 2\), which does not start with out_shape = \(3,\)"),
    (lambda: gradarg.latex_jacobian(torch.eye(2), "2"), TypeError, "out_shape must be a shape"),
    (lambda: gradarg.latex_vjp(torch.ones(2), torch.eye(3), torch.ones(3)), ValueError,
     "does not start with v.shape"),
    (lambda: gradarg.latex_vjp(torch.ones(2), torch.eye(2), torch.ones(3)), ValueError,
     "result has 3 elements but jac has 2 columns"),
    (lambda: gradarg.markdown_table([[1, 2, 3]], ["a", "b"]), ValueError,
     r"rows\[0\] has 3 cells but there are 2 headers"),
    (lambda: gradarg.markdown_table(None, ["a"]), TypeError, "rows must be a sequence"),
    (lambda: gradarg.markdown_table([[1]], "a"), TypeError, "headers must be a sequence"),
    (lambda: gradarg.summarize(META), ValueError, "x is on the meta device"),
    (lambda: gradarg.summarize(X, max_entries=-1), ValueError, "max_entries must be at least 0"),
]


@pytest.mark.parametrize(("call", "error", "message"), SHOW_MISUSE,
                         ids=[f"{i}" for i in range(len(SHOW_MISUSE))])
def test_show_refuses_what_it_cannot_show_by_name(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_show_densifies_sparse_tensors():
    t = torch.tensor([[0.0, 1.5], [2.0, 0.0]])
    assert gradarg.fmt(t.to_sparse()) == gradarg.fmt(t) == "[[0, 1.5], [2, 0]]"
    assert gradarg.latex_matrix(t.to_sparse_csr()) == gradarg.latex_matrix(t)
    assert gradarg.summarize(t.to_sparse()) == "[0, 1.5, 2, 0]"


# ----------------------------------------------------------------------------- found by the
# property suite (tests/test_boundary_properties.py), kept as plain cases


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental:UserWarning")
def test_finite_differences_refuse_a_complex_half_output_before_dividing():
    # float16 x, complex output: torch's complex-half division failed first (NotImplementedError)
    with pytest.raises(ValueError, match=r"complex \(torch\.complex32\) but the input x is real"):
        gradarg.jacobian(lambda t: t * (1 + 2j), torch.zeros((), dtype=torch.float16),
                         method="finite-difference")


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental:UserWarning")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.complex32])
def test_show_takes_dtypes_numpy_lacks(dtype):
    t = torch.arange(12.0).to(dtype)
    assert gradarg.summarize(t).startswith("[0, 1, 2, …, 10, 11] (shape (12,)")
    assert gradarg.summarize(t[:0]) == "[]"
    assert gradarg.latex_matrix(t[:2]) == r"\begin{bmatrix} 0 & 1 \end{bmatrix}"


def test_sparsity_pattern_refuses_a_non_finite_x():
    # at Inf, reverse mode's 0 · NaN marks structurally zero entries of sin's diagonal Jacobian
    with pytest.raises(ValueError, match="x contains NaN or Inf"):
        gradarg.sparsity_pattern(torch.sin, torch.tensor([0.0, float("inf")]))


@pytest.mark.parametrize(("options", "error", "message"), [
    ({"backend": 3}, TypeError, "backend must be a string"),
    ({"backend": "nope"}, ValueError, "backend must be 'auto' or a torch.compile backend"),
    ({"mode": 5}, ValueError, "mode must be None or one of torch.compile's modes"),
    ({"fullgraph": "x"}, TypeError, "fullgraph must be a bool"),
])
def test_compile_options_are_checked_when_compile_is_called(options, error, message):
    with pytest.raises(error, match=message):
        gradarg.SparseJacobian(BAND).compile(stencil, **options)
    with pytest.raises(error, match=message):
        gradarg.SparseHessian(BAND).compile(energy, **options)


def test_the_text_of_a_tensor_too_large_for_memory_is_refused_before_it_is_built():
    huge = torch.zeros(10**9, dtype=torch.bool)  # 1 GB; its text about 68 GB
    for call in (lambda: gradarg.fmt(huge), lambda: gradarg.latex_matrix(huge),
                 lambda: gradarg.markdown_table([["x", huge]], ["name", "value"])):
        with pytest.raises(MemoryError, match=r"the text of .* \(1000000000 entries\) needs "
                                              r"about 68 GB.*Instead: gradarg\.summarize"):
            call()


def test_the_explorers_v_is_checked_by_name():
    ex = gradarg.explorer(torch.sin, X, v=[1, 0, 0, 0])  # nested lists of numbers: float64
    want = torch.func.vjp(torch.sin, X)[1](torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=F64))[0]
    torch.testing.assert_close(ex.vjp([0, 1, 0, 0]), want)
    for call in (lambda: gradarg.explorer(torch.sin, X, v=[1j, 0, 0, 0]),
                 lambda: ex.vjp([1j, 0, 0, 0])):
        with pytest.raises(ValueError, match=r"v has dtype torch\.complex64 but the output"):
            call()
    for call in (lambda: gradarg.explorer(torch.sin, X, v="a"), lambda: ex.vjp("ab")):
        with pytest.raises(TypeError, match="v must be a tensor, a number or nested lists"):
            call()


def test_batch_dim_with_item_inside_loops_over_the_samples():
    x = torch.tensor([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]], dtype=F64)

    def f(t):  # .item(): vmap cannot batch it
        return t * t.sum().item()

    want = torch.stack([torch.func.jacrev(f)(s) for s in x])  # torch, one sample at a time
    # the .item() cut is said at every call (core/cuts.py), the loop's value is torch's
    for method in ("auto", "forward"):
        with pytest.warns(GraphCutWarning, match=r"Tensor\.item\(\)"):
            got = gradarg.jacobian(f, x, batch_dim=0, method=method)
        torch.testing.assert_close(got, want)
    with pytest.warns(GraphCutWarning, match=r"Tensor\.item\(\)"):
        torch.testing.assert_close(gradarg.jacobian(f, x.T, batch_dim=1), want)
    with pytest.raises(gradarg.VectorizationError, match="batch_dim=0: fn could not be batched"):
        gradarg.jacobian(f, x, batch_dim=0, vectorize=True)


def test_finite_differences_take_a_tuple_with_an_empty_input():
    a, b = torch.zeros(0, dtype=F64), torch.tensor([0.5, 1.0], dtype=F64)

    def f(a, b):
        return torch.sin(b), a.sum() * torch.exp(b)

    want = torch.func.jacrev(f, argnums=(0, 1))(a, b)
    got = gradarg.jacobian(f, (a, b), method="finite-difference")  # an IndexError before
    for k in range(2):
        for j in range(2):
            torch.testing.assert_close(got[k][j], want[k][j], rtol=1e-7, atol=1e-8)


def test_a_sparse_meta_v_is_refused_as_meta():  # found by the property suite
    v = torch.ones(4, dtype=F64).to_sparse().to("meta")
    with pytest.raises(ValueError, match="v is on the meta device"):
        gradarg.backward_vjp(torch.sin, X, v)
