"""Property-based tests of the input boundary (issue 44): the public callables of ``core``,
``sparse`` (patterns, compressed Jacobians and Hessians) and ``show`` on generated inputs.

Generated: dtypes (float16, bfloat16, float32, float64, complex64, complex128, int32, int64,
bool), shapes (scalars, 0-size), layouts (strided, sparse COO, CSR), devices (cpu, meta),
values (0, ±1, NaN, ±inf, ±1e-300, ±1e6 and random ones), option values and misuse (the wrong
type in every option).  The oracle is torch's own tools wherever a value comes back:
``torch.func.jacrev`` / ``torch.autograd.functional.jacobian(vectorize=True)`` for Jacobians,
``y.backward(gradient=v)`` for VJPs, ``torch.func.hessian`` for Hessians, a dense
``tensordot`` for contractions.  Every property asserts that a result, when one comes back,
equals the oracle's, and that every error is a ``TypeError`` / ``ValueError`` (or a documented
``MemoryError``) whose message names the argument at fault.

Default run: few examples per property, derandomized (about 10 s).  The long profile, by hand:
``GRADARG_HYPOTHESIS=long pytest tests/test_boundary_properties.py -p no:cacheprovider -n 0
--hypothesis-show-statistics`` (random seeds, 400 examples per property).  The mechanism lives
in this module (its own ``settings``), not in ``tests/conftest.py``.
"""

from __future__ import annotations

import math
import os
import re
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradarg

LONG = os.environ.get("GRADARG_HYPOTHESIS") == "long"
PROFILE = settings(
    max_examples=400 if LONG else 20,
    deadline=None,
    derandomize=not LONG,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.filter_too_much],
)

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
          torch.complex128, torch.int32, torch.int64, torch.bool]
SPECIAL = [0.0, 1.0, -1.0, 0.5, 1e-300, -1e-300, 1e6, -1e6, math.nan, math.inf, -math.inf]
ACCEPTED = (TypeError, ValueError, MemoryError)


@st.composite
def tensors(draw, dtypes=DTYPES, max_dims=3, max_side=3, layouts=True, devices=True,
            specials=True):
    """A tensor of a drawn dtype, shape, layout, device and values."""
    dtype = draw(st.sampled_from(dtypes))
    shape = tuple(draw(st.lists(st.integers(0, max_side), max_size=max_dims)))
    n = math.prod(shape)
    pool = st.sampled_from(SPECIAL) if specials else st.nothing()
    vals = draw(st.lists(pool | st.floats(-3, 3, allow_nan=False), min_size=n, max_size=n))
    t = torch.tensor(vals, dtype=torch.float64).reshape(shape)
    if dtype.is_complex:
        im = draw(st.lists(st.floats(-3, 3, allow_nan=False), min_size=n, max_size=n))
        t = torch.complex(t, torch.tensor(im, dtype=torch.float64).reshape(shape))
    elif dtype in (torch.int32, torch.int64, torch.bool):
        t = torch.nan_to_num(t, posinf=7.0, neginf=-7.0).clamp(-7, 7).round()
    t = t.to(dtype)
    layout = draw(st.sampled_from(["strided"] * 6 + ["coo", "csr"])) if layouts else "strided"
    if layout == "coo" and t.dim() > 0:
        t = t.to_sparse()
    elif layout == "csr" and t.dim() == 2:
        t = t.to_sparse_csr()
    if devices and draw(st.integers(0, 9)) == 0:
        t = t.to("meta")
    return t


def plain(t):
    """What torch's tools can take as a value: dense, on the CPU."""
    return isinstance(t, torch.Tensor) and t.layout == torch.strided and not t.is_meta


FUNCTIONS = {
    "sin": torch.sin,
    "square": lambda t: t * t,
    "exp": torch.exp,
    "sum": lambda t: t.sum(),
    "cumsum": lambda t: torch.cumsum(t.reshape(-1), 0),
    "abs": torch.abs,
    "times_complex": lambda t: t * (1 + 2j),
    "to_int": lambda t: (t.real > 0).long() if t.is_complex() else (t > 0).long(),
    "to_float64": lambda t: t.to(torch.complex128 if t.is_complex() else torch.float64) * 2,
}


def names_an_argument(err: BaseException, *names: str) -> bool:
    text = str(err)
    return any(re.search(rf"(^|[^\w]){re.escape(n)}([^\w]|$)", text) for n in names)


def assert_clear(err: BaseException, *names: str) -> None:
    assert isinstance(err, ACCEPTED), f"{type(err).__name__}: {err}"
    assert names_an_argument(err, *names), f"message names none of {names}: {err}"


def quietly(call):
    """``call()`` with gradarg's RuntimeWarnings about NaN/Inf (and torch's) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def same(got, want, rtol=None, atol=None):
    assert got.shape == want.shape, (got.shape, want.shape)
    low = min((got.dtype, want.dtype), key=lambda d: torch.finfo(d).bits if (
        d.is_floating_point or d.is_complex) else 64)
    if rtol is None:
        eps = torch.finfo(low).eps
        rtol, atol = (eps**0.5, eps**0.5) if low in (torch.float16, torch.bfloat16) else (
            1e3 * eps, 1e3 * eps)
    dtype = torch.promote_types(got.dtype, want.dtype)
    torch.testing.assert_close(got.to(dtype), want.to(dtype), rtol=rtol, atol=atol,
                               equal_nan=True)


def should_work(fn, x, method):
    """Whether torch computes this Jacobian and gradarg documents no refusal of it: a dense x
    on the CPU, a floating or complex output, not complex of real, no forward mode of a
    complex x."""
    if not plain(x) or not (x.is_floating_point() or x.is_complex()):
        return False
    try:
        y = quietly(lambda: fn(x))
        if not (y.is_complex() and not x.is_complex()):
            quietly(lambda: torch_jacobian(fn, x))
    except Exception:  # noqa: BLE001 - torch refuses
        return False
    if not (y.is_floating_point() or y.is_complex()):
        return False
    if y.is_complex() and not x.is_complex():  # reverse mode would drop the imaginary part
        return method == "forward"
    return not (x.is_complex() and method == "forward")


def torch_jacobian(fn, x):
    """torch's Jacobian with gradarg's conventions: jacrev for real, the vectorized
    functional one (PyTorch's conjugate convention) for complex inputs."""
    if x.is_complex():
        return torch.autograd.functional.jacobian(fn, x, vectorize=True)
    return torch.func.jacrev(fn)(x)


# ----------------------------------------------------------------------------- jacobian


@PROFILE
@given(x=tensors(), fname=st.sampled_from(sorted(FUNCTIONS)),
       method=st.sampled_from(gradarg.METHODS), vectorize=st.sampled_from([None, True, False]))
def test_jacobian_is_torchs_or_a_clear_refusal(x, fname, method, vectorize):
    fn = FUNCTIONS[fname]
    try:
        got = quietly(lambda: gradarg.jacobian(fn, x, method=method, vectorize=vectorize))
    except gradarg.VectorizationError:
        assert vectorize is True  # only when asked to batch
        return
    except Exception as err:  # noqa: BLE001 - every error is classified below
        assert_clear(err, "x", "fn", "<lambda>", "method")
        assert not should_work(fn, x, method), f"refused a case torch computes: {err}"  # noqa: PT017
        return
    assert plain(x), "a meta or sparse x must be refused"
    try:
        if method == "forward" and not x.is_complex():  # torch's forward mode: complex outputs too
            want = quietly(lambda: torch.autograd.functional.jacobian(
                fn, x, vectorize=True, strategy="forward-mode"))
        else:
            want = quietly(lambda: torch_jacobian(fn, x))
    except Exception:  # noqa: BLE001 - torch's own failures (0-size complex inputs...)
        # torch refuses (complex input to jacrev...): gradarg's own convention, checked in
        # tests/core; here only the shape
        assert got.shape == fn(x).shape + x.shape
        return
    if method == "finite-difference":
        # a difference quotient is compared where it can resolve the derivative: float64 or
        # complex128 inputs of moderate size with finite values (large magnitudes belong to
        # the finite-difference reference's own tests)
        dense = x.to(torch.complex128) if x.is_complex() else x.double()
        if x.dtype in (torch.float64, torch.complex128) and bool(
                torch.isfinite(dense).all()) and (dense.numel() == 0 or float(dense.abs().max()) <= 10) and (
                bool(torch.isfinite(want).all())):
            same(got, want, rtol=1e-5, atol=1e-6)
        return
    if x.is_complex() and method == "forward":
        pytest.fail("forward mode on complex inputs must be refused")
    if bool(torch.isfinite(want).all()) or x.is_complex():
        same(got, want)
        return
    # Inf/NaN derivatives: 0 · Inf = NaN lands on other entries by rows (jacrev) or by columns
    # (jacfwd); the route's own oracle then (auto: either)
    oracles = {"reverse": [torch.func.jacrev], "forward": [torch.func.jacfwd]}.get(
        method, [torch.func.jacrev, torch.func.jacfwd])
    failures = []
    for oracle in oracles:
        try:
            same(got, quietly(lambda o=oracle: o(fn)(x)))
            return
        except AssertionError as err:
            failures.append(err)
    raise failures[0]


TUPLE_FUNCTIONS = {
    "product": lambda a, b: a * b.sum(),
    "pair": lambda a, b: (torch.sin(a), a.sum() * torch.exp(b)),
    "second only": lambda a, b: b * 2,
}
REAL = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


@PROFILE
@given(a=tensors(dtypes=REAL, layouts=False, devices=False, max_dims=2),
       b=tensors(dtypes=REAL, max_dims=2),
       fname=st.sampled_from(sorted(TUPLE_FUNCTIONS)),
       method=st.sampled_from(gradarg.METHODS))
def test_jacobian_of_a_tuple_of_inputs_is_torchs_blocks(a, b, fname, method):
    fn = TUPLE_FUNCTIONS[fname]
    try:
        got = quietly(lambda: gradarg.jacobian(fn, (a, b), method=method))
    except Exception as err:  # noqa: BLE001
        assert_clear(err, "x[0]", "x[1]", "fn", "<lambda>", "method")
        assert not plain(b), f"refused dense inputs: {err}"  # noqa: PT017
        return
    assert plain(b)
    try:
        want = quietly(lambda: torch.func.jacrev(fn, argnums=(0, 1))(a, b))
    except Exception:  # noqa: BLE001 - torch refuses (mixed dtypes in one op...)
        return
    nested = isinstance(want[0], tuple)
    pairs = [(got[k][j], want[k][j]) for k in range(len(want)) for j in range(2)] if nested \
        else [(got[j], want[j]) for j in range(2)]
    # with Inf or NaN inputs (warned about) 0 · Inf lands on other entries by rows or by
    # columns: compared at finite inputs only
    finite = bool(torch.isfinite(a).all()) and bool(torch.isfinite(b).all())
    for g, w in pairs:
        if method == "finite-difference" or not finite:
            assert g.shape == w.shape
            continue
        if bool(torch.isfinite(w).all()):
            same(g, w)


@PROFILE
@given(x=tensors(dtypes=[torch.float32, torch.float64], layouts=False, devices=False),
       option=st.sampled_from(["create_graph", "strict", "vectorize", "method", "strategy",
                               "batch_dim", "certify", "sparsity"]),
       junk=st.sampled_from([None, "yes", 3, 2.5, -1, [1], object(), torch.ones(1)]))
def test_every_option_of_jacobian_is_checked(x, option, junk):
    try:
        got = quietly(lambda: gradarg.jacobian(torch.sin, x, **{option: junk}))
    except Exception as err:  # noqa: BLE001
        assert_clear(err, option, "x")
        return
    # accepted: then it is a value torch gives
    if option == "batch_dim" and junk is not None:
        want = torch.func.vmap(torch.func.jacrev(torch.sin), in_dims=junk)(x)
    else:
        want = torch.func.jacrev(torch.sin)(x)
    same(got, want)


# ----------------------------------------------------------------------------- backward_vjp


@PROFILE
@given(x=tensors(), v=tensors() | st.sampled_from([1.0, 2j, True, None, "v"]),
       fname=st.sampled_from(sorted(FUNCTIONS)))
def test_backward_vjp_is_torchs_backward_or_a_clear_refusal(x, v, fname):
    fn = FUNCTIONS[fname]
    try:
        got = quietly(lambda: gradarg.backward_vjp(fn, x, v))
    except Exception as err:  # noqa: BLE001
        assert_clear(err, "x", "v", "fn", "<lambda>", "output")
        assert not torch_backward_works(fn, x, v), f"refused a case torch computes: {err}"  # noqa: PT017
        return
    assert plain(x)
    leaf = x.detach().clone().requires_grad_(True)
    y = fn(leaf)
    gradient = torch.tensor(v, dtype=y.dtype) if isinstance(v, (float, complex)) else v
    try:
        quietly(lambda: y.backward(gradient=gradient))
    except RuntimeError as err:
        pytest.fail(f"gradarg gave a value where torch raises: {err}")
    want = leaf.grad
    want = want.to_dense() if want.layout != torch.strided else want
    same(got, want)


def torch_backward_works(fn, x, v):
    """Whether ``fn(x).backward(gradient=v)`` gives a value in torch, for a dense x on the CPU
    (sparse and meta inputs are refused by gradarg on purpose) and a tensor v."""
    if not plain(x) or not isinstance(v, torch.Tensor) or v.is_meta:
        return False
    if not (v.is_floating_point() or v.is_complex()):
        return False  # torch casts an integer v; gradarg refuses it (tests/test_validation.py)
    if not (x.is_floating_point() or x.is_complex()):
        return False
    leaf = x.detach().clone().requires_grad_(True)
    try:
        quietly(lambda: fn(leaf).backward(gradient=v))
    except Exception:  # noqa: BLE001 - torch refuses
        return False
    return True


# ----------------------------------------------------------------------------- contract


@PROFILE
@given(jac=tensors(dtypes=[torch.float32, torch.float64, torch.complex128], max_dims=4),
       k=st.integers(0, 2), junk=st.sampled_from([None, "v", 3]))
def test_contract_is_a_dense_tensordot_or_a_clear_refusal(jac, k, junk):
    k = min(k, jac.dim())
    v = torch.linspace(-1, 2, math.prod(jac.shape[:k])).reshape(jac.shape[:k])
    if jac.layout == torch.sparse_csr:
        v = torch.linspace(-1, 2, jac.shape[0])
    for args, names in (((v, jac), ("v", "jac")), ((junk, jac), ("v",)), ((v, junk), ("jac",))):
        try:
            got = quietly(lambda a=args: gradarg.contract(*a))
        except Exception as err:  # noqa: BLE001
            assert_clear(err, *names)
            continue
        assert args[0] is v and args[1] is jac
        dense = jac.to_dense()
        dtype = torch.promote_types(v.dtype, dense.dtype)
        want = torch.tensordot(v.to(dtype), dense.to(dtype), dims=v.dim())
        same(got, want)


# ----------------------------------------------------------------------------- sparse


def band(n, width):
    i = torch.arange(n)
    return (i[:, None] - i).abs() <= width


def stencil(u):
    up = torch.nn.functional.pad(u, (1, 1))
    return up[:-2] - 2 * u + up[2:] + torch.sin(u) * u


def energy(u):
    return ((u[1:] - u[:-1]) ** 4).sum() + torch.cos(u).sum()


@PROFILE
@given(x=tensors(max_dims=1, max_side=6), width=st.integers(0, 2),
       method=st.sampled_from(["auto", "reverse", "forward", "bidirectional"]),
       layout=st.sampled_from([torch.sparse_coo, torch.sparse_csr, torch.strided, "coo"]),
       certify=st.sampled_from([0, 1, 3, -1, 1.5, "2", True]))
def test_sparse_jacobian_is_torchs_or_a_clear_refusal(x, width, method, layout, certify):
    n = x.shape[0] if x.dim() == 1 else 4
    if n == 0:
        return
    pattern = band(n, width)
    try:
        sj = gradarg.SparseJacobian(pattern, method=method)
        got = quietly(lambda: sj(stencil, x, layout=layout, certify=certify))
    except gradarg.CertificateError:
        # a band narrower than the stencil's: the pattern misses entries and the check says so
        assert width == 0 and certify not in (0, False)
        return
    except Exception as err:  # noqa: BLE001
        assert_clear(err, "x", "layout", "certify", "fn", "pattern")
        return
    want = torch.func.jacrev(stencil)(x)
    if width == 0 or not bool(torch.isfinite(want).all()):
        # too narrow a pattern: wrong entries are possible unless certified; a non-finite
        # derivative (x holds Inf or 1e6 in float16) leaks NaN = 0·NaN into structurally zero
        # entries of torch's own Jacobian too
        return
    same(got.to_dense().reshape(want.shape), want)


@PROFILE
@given(x=tensors(max_dims=1, max_side=6), width=st.integers(0, 2),
       method=st.sampled_from(["star", "acyclic"]),
       out=st.sampled_from(["float", "long", "complex", "vector"]),
       certify=st.sampled_from([0, 2, -1, "2"]))
def test_sparse_hessian_is_torchs_or_a_clear_refusal(x, width, method, out, certify):
    n = x.shape[0] if x.dim() == 1 else 4
    if n == 0:
        return
    f = {"float": energy, "long": lambda u: energy(u).long(),
         "complex": lambda u: energy(u) * (1 + 1j), "vector": lambda u: u * u}[out]
    try:
        got = quietly(lambda: gradarg.SparseHessian(band(n, width), method=method)(
            f, x, certify=certify))
    except gradarg.CertificateError:
        assert width == 0 and certify not in (0, False)
        return
    except Exception as err:  # noqa: BLE001
        assert_clear(err, "x", "f", "certify", "pattern")
        return
    assert out == "float"
    want = torch.func.hessian(f)(x)
    if width == 0 or not bool(torch.isfinite(want).all()):
        return
    same(got.to_dense(), want)


@PROFILE
@given(pattern=tensors(dtypes=[torch.bool, torch.float32], max_dims=3, max_side=4),
       x_shape=st.sampled_from([None, (4,), (2, 2), "ab", (4, -1), (3,)]),
       strategy=st.sampled_from(["best", "largest_first", "nope", None]))
def test_patterns_are_checked_before_colouring(pattern, x_shape, strategy):
    for build in (gradarg.SparseJacobian, gradarg.SparseHessian):
        try:
            if build is gradarg.SparseJacobian:
                build(pattern, x_shape, strategy=strategy)
            else:
                build(pattern, x_shape)
        except Exception as err:  # noqa: BLE001
            assert_clear(err, "pattern", "x_shape", "strategy")


@PROFILE
@given(x=tensors(max_dims=2, max_side=3), points=st.sampled_from([1, 2, 0, "3", 2.5, None]))
def test_sparsity_pattern_holds_the_jacobians_nonzeros_or_refuses(x, points):
    try:
        got = quietly(lambda: gradarg.sparsity_pattern(torch.sin, x, points=points))
    except Exception as err:  # noqa: BLE001
        assert_clear(err, "x", "points", "fn")
        return
    assert got.dtype == torch.bool and got.shape == x.shape + x.shape
    # sin's Jacobian is diagonal, non-zero almost everywhere
    assert torch.equal(got.reshape(x.numel(), x.numel()),
                       torch.eye(x.numel(), dtype=torch.bool))


# ----------------------------------------------------------------------------- show


@PROFILE
@given(value=tensors(max_dims=2) | st.sampled_from([0.1, -2.5e-7, 1e300, math.nan, 1 - 2j,
                                                    None, "abc", [1.0], np.float32(0.25)]),
       digits=st.sampled_from([1, 4, 17, 0, -1, "4", 2.5, True]))
def test_fmt_and_friends_show_the_value_or_refuse_by_name(value, digits):
    for name, call in (("fmt", lambda: gradarg.fmt(value, digits)),
                       ("latex_matrix", lambda: gradarg.latex_matrix(value, digits)),
                       ("summarize", lambda: gradarg.summarize(value, digits))):
        try:
            text = quietly(call)
        except Exception as err:  # noqa: BLE001
            assert_clear(err, "value", "t", "x", "digits", "summarize")
            continue
        assert isinstance(text, str), name
        if name == "fmt" and isinstance(value, float) and math.isfinite(value):
            # the oracle: the number read back, to the digits asked for
            assert math.isclose(float(text), value, rel_tol=10.0 ** (1 - digits))


@PROFILE
@given(rows=st.lists(st.lists(st.sampled_from([1.0, "a", None, torch.ones(3), torch.ones(12)]),
                              min_size=1, max_size=3), max_size=3),
       headers=st.sampled_from([["a", "b"], ["a"], "ab", [1, 2], None]))
def test_markdown_table_makes_a_table_or_refuses_by_name(rows, headers):
    try:
        text = gradarg.markdown_table(rows, headers)
    except Exception as err:  # noqa: BLE001
        assert_clear(err, "rows", "headers", f"rows[{0}]", "rows[1]", "rows[2]")
        return
    table = text.split("\n\n")[0].splitlines()
    assert len(table) == 2 + len(rows)
    assert all(line.count(" | ") == len(headers) - 1 for line in table if "\\|" not in line)
