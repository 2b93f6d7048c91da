"""Class: a refusal of the trace room's entry points names the argument at fault (blind edge
cases, round 2: ``watch(lambda t: t)`` said "watch() takes a torch.nn.Module" without naming
``model``).  Each entry point is called with one argument replaced by a value of a wrong type
(generated from a pool of junk: numbers, strings, lists, functions, None where not allowed);
it raises ``TypeError`` or ``ValueError`` and the message contains the parameter's name.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

JUNK = st.sampled_from([3, 2.5, "text", [1, 2], (lambda t: t), object(), {"a": 1}, b"x"])


def _calls():
    """(parameter, call with the junk value in it)."""
    x = torch.ones(2, requires_grad=True)

    def loss():
        return (x * 2).sum()

    return {
        "watch.model": ("model", lambda j: gradarg.watch(j)),
        "watch.full_steps": ("full_steps", lambda j: gradarg.watch(nn.Linear(2, 2),
                                                                   full_steps=j)),
        "why_no_grad.tensor": ("tensor", lambda j: gradarg.why_no_grad(loss(), j)),
        "why_no_grad.output": ("output", lambda j: gradarg.why_no_grad(j, x)),
        "why_no_grad.module": ("module", lambda j: gradarg.why_no_grad(loss(), x, module=j)),
        "trace_backward.output": ("output", lambda j: gradarg.trace_backward(j)),
        "trace_backward.names": ("names", lambda j: gradarg.trace_backward(loss(), names=j)),
    }


CALLS = _calls()
ALLOWED = {  # values a parameter accepts: a callable output (why_no_grad), a step count
    "why_no_grad.output": (lambda j: callable(j)),
    "watch.full_steps": (lambda j: isinstance(j, int) and j >= 1),
}


@settings(max_examples=60, deadline=None)
@given(which=st.sampled_from(sorted(CALLS)), junk=JUNK)
def test_a_wrong_type_is_refused_by_the_arguments_name(which, junk):
    name, call = CALLS[which]
    if ALLOWED.get(which, lambda j: False)(junk):
        return
    with pytest.raises((TypeError, ValueError)) as err:
        call(junk)
    assert name in str(err.value), (which, junk, str(err.value))
