"""Boolean options of the public functions take a bool, nothing standing for one (issue 44).

``torch.autograd.functional.jacobian(torch.sin, x, strict=1)`` runs (torch tests
truthiness), and so did ``gradarg.jacobian``; ``strict="no"`` is truthy too.  Invariant:
every boolean option of every public callable (and of the public methods of the public
classes) accepts ``True``, ``False`` and NumPy's bool and refuses any other value with a
``TypeError`` that names the option, shows what was given and says that a bool is expected.
``test_the_table_covers_every_boolean_option`` reads the signatures, so an option added later
without an entry below fails it.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg

X = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)


def _jacobian(**kw):
    return gradarg.jacobian(torch.sin, X, **kw)


def _check_backward(**kw):
    return gradarg.check_backward(torch.sin, X.clone().requires_grad_(), probes=1, **kw)


def _trace_backward(**kw):
    x = X.clone().requires_grad_()
    return gradarg.trace_backward((x * x).sum(), **kw)


def _summary(**kw):
    model = torch.nn.Linear(3, 1).double()
    with gradarg.watch(model) as w:
        model(X).sum().backward()
    return w.summary(**kw)


def _sparse_jacobian_compile(**kw):
    # a Python function: package=True refuses a builtin (its code cannot be keyed)
    return gradarg.SparseJacobian(torch.eye(3, dtype=torch.bool)).compile(
        lambda t: torch.sin(t), **kw)


def _sparse_hessian_compile(**kw):
    return gradarg.SparseHessian(torch.eye(3, dtype=torch.bool)).compile(
        lambda t: t.sin().sum(), **kw)


# (public callable, option) -> (a call taking the option, does it also accept None?)
OPTIONS = {
    ("jacobian", "create_graph"): (_jacobian, False),
    ("jacobian", "strict"): (_jacobian, False),
    ("jacobian", "vectorize"): (_jacobian, True),
    ("check_backward", "parameters"): (_check_backward, False),
    ("check_backward", "localize"): (_check_backward, True),  # also 'auto', 'bounded', 'full'
    ("trace_backward", "use_grad"): (_trace_backward, False),
    ("trace_backward", "retain_graph"): (_trace_backward, False),
    ("GradWatch.summary", "checks"): (_summary, False),
    ("SparseJacobian.compile", "fullgraph"): (_sparse_jacobian_compile, False),
    ("SparseHessian.compile", "fullgraph"): (_sparse_hessian_compile, False),
    ("SparseJacobian.compile", "package"): (_sparse_jacobian_compile, True),
    ("SparseHessian.compile", "package"): (_sparse_hessian_compile, True),
}
# fields of result records (dataclasses the package fills in), not options of a call
RECORDS = {"PairCheck", "VJPComparison", "ParamRecord", "TracedNode", "ExampleV"}


def _boolean_parameters(f):
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if isinstance(p.default, bool) or "bool" in str(p.annotation).split(" | ")
            or str(p.annotation).startswith("bool")]


def test_the_table_covers_every_boolean_option():
    found = set()
    for name in gradarg.__all__:
        obj = getattr(gradarg, name)
        if not callable(obj) or name in RECORDS or (
                inspect.isclass(obj) and issubclass(obj, BaseException)):
            continue
        found |= {(name, p) for p in _boolean_parameters(obj)}
        if inspect.isclass(obj):
            for mname, m in inspect.getmembers(obj, inspect.isfunction):
                if not mname.startswith("_"):
                    found |= {(f"{name}.{mname}", p) for p in _boolean_parameters(m)}
    assert found == set(OPTIONS), (found - set(OPTIONS), set(OPTIONS) - found)


not_bools = st.one_of(
    st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=4),
    st.sampled_from([np.int64(1), np.float64(0.0), torch.tensor(True), torch.tensor(1),
                     [True], (), b"", 1j]),
)


@settings(max_examples=max(10, settings.default.max_examples))
@given(st.sampled_from(sorted(OPTIONS)), not_bools)
def test_a_non_bool_is_refused_by_name(key, value):
    _, option = key
    call, takes_none = OPTIONS[key]
    if option == "localize" and isinstance(value, str):
        value = value + "?"  # its strings: 'auto', 'bounded', 'full' (a ValueError otherwise)
    with pytest.raises((TypeError, ValueError)) as info:
        call(**{option: value})
    msg = str(info.value)
    assert option in msg, (key, value, msg)
    if info.type is TypeError:
        assert type(value).__name__ in msg and "bool" in msg, (key, value, msg)
    else:  # only an unknown string option (localize) is a ValueError
        assert option == "localize" and isinstance(value, str), (key, value, msg)
    assert takes_none or "None" not in msg.split(", got")[0], (key, msg)


@pytest.mark.parametrize("value", [True, False, np.bool_(True), np.bool_(False), None])
@pytest.mark.parametrize("key", sorted(OPTIONS))
def test_a_bool_is_accepted(key, value):
    call, takes_none = OPTIONS[key]
    _, option = key
    if value is None and not takes_none:
        with pytest.raises(TypeError, match=f"{option} must be a bool"):
            call(**{option: value})
        return
    if option == "create_graph" and value:
        out = call(**{option: value})
        assert out.requires_grad
        return
    if option == "strict" and value:  # sin's outputs each depend on x: nothing to refuse
        torch.testing.assert_close(call(**{option: value}), torch.func.jacrev(torch.sin)(X))
        return
    if option == "use_grad" or option == "retain_graph":
        call(**{option: value})
        return
    call(**{option: value})
