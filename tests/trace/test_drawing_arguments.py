"""Every drawing entry point refuses a value of the wrong type with a ``TypeError`` that names
the argument and says what it expects, whatever the value (generated), instead of an
``AttributeError`` from deep inside."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import gradarg
from gradarg.trace.draw.drawing import trace_dot

WRONG = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5),
                  st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=2),
                                                                        st.integers(), max_size=2),
                  st.just(torch.zeros(2)))


def a_trace():
    a = torch.tensor(5.0, requires_grad=True)
    return gradarg.trace_backward(torch.log(8 * a * a), names={"a": a})


@given(value=WRONG)
def test_a_trace_argument_of_the_wrong_type_is_named(value):
    for call, name in ((gradarg.trace_svg, "trace"), (gradarg.BackwardPlayer, "trace"),
                       (trace_dot, "trace")):
        with pytest.raises(TypeError, match=rf"^{name} must be a gradarg.BackwardTrace"):
            call(value)
    if not isinstance(value, (list, str)):
        with pytest.raises(TypeError, match=r"^traces must be a sequence"):
            gradarg.side_by_side(value)
    elif value and not isinstance(value, str):
        with pytest.raises(TypeError, match=r"^traces\[0\] must be a gradarg.BackwardTrace"):
            gradarg.side_by_side(value)


@given(value=st.one_of(st.integers(), st.floats(allow_nan=False), st.lists(st.text(), max_size=2)))
def test_text_options_must_be_strings(value):
    trace = a_trace()
    with pytest.raises(TypeError, match=r"^source must be a string"):
        gradarg.trace_svg(trace, source=value)
    with pytest.raises(TypeError, match=r"^title must be a string"):
        gradarg.trace_svg(trace, title=value)
    with pytest.raises(TypeError, match=r"^source must be a string"):
        gradarg.BackwardPlayer(trace, source=value)


def test_the_right_values_still_draw():
    trace = a_trace()
    assert gradarg.trace_svg(trace, source="loss", title="t").startswith("<svg")
    assert "digraph" in trace_dot(trace)
    assert gradarg.side_by_side([trace, trace], titles=["a", "b"]).svg.count("<svg") >= 2
    with pytest.raises(TypeError, match=r"titles must be a sequence of strings"):
        gradarg.side_by_side([trace], titles="a")


def test_expand_as_a_string_is_refused_with_the_fix():
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sequential(torch.nn.Linear(2, 1)))
    with gradarg.watch(net) as w:
        net(torch.randn(3, 2)).sum().backward()
    with pytest.raises(TypeError, match=r"expand must be a sequence of module names, got the "
                                        r"string '1'; for one module write expand=\['1'\]"):
        w.draw(expand="1")


def test_a_meta_graph_is_refused_by_trace_backward_itself():
    x = torch.empty(3, device="meta", requires_grad=True)
    with pytest.raises(ValueError, match=r"^output is on the meta device"):
        gradarg.trace_backward((x * 2).sum())
