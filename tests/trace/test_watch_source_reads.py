"""Class: a parameter that got no gradient although its module ran, whose class reads it only
in ways that carry no gradient (a comparison, ``.item()``, ``.detach()``, ``.data``, under
``torch.no_grad()``) or never: ``why_no_grad`` says how, from the class's source and saying
so; with another read in the source that could carry a gradient it says it cannot tell which
ran; a parameter that got a gradient is never explained this way.

The truth comes from torch alone: ``.grad`` after a plain backward.  Generated: how the
parameter is read, whether a differentiable read sits in a branch that does not run, the
comparison's side.  Each generated class is written to a file and imported, as a user's
module is.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

# how forward reads self.p: (expression, the words why_no_grad uses for it; None: a gradient)
FORMS = {
    "less than": ("(h < self.p).float() * h", "in a comparison"),
    "greater on the left": ("(self.p > h).float() * h", "in a comparison"),
    "item": ("h * self.p.item()", "through calls that return no gradient"),
    "float": ("h * float(self.p)", "through calls that return no gradient"),
    "detach": ("h * self.p.detach()", "through calls that return no gradient"),
    "data": ("h * self.p.data", "through calls that return no gradient"),
    "no_grad": (None, "inside torch.no_grad()"),
    "never": ("h * 1.0", "never read"),
    "product (control)": ("h * self.p", None),
}
_COUNT = itertools.count()


def module_class(form: str, branch: bool):
    expr, _ = FORMS[form]
    if form == "no_grad":
        body = ("        with torch.no_grad():\n            s = self.p * 2\n"
                "        h = h * s")
    else:
        body = f"        h = {expr}"
    other = ("        if self.other:  # never true here\n            h = h * self.p\n"
             if branch else "")
    source = (
        "import torch\nfrom torch import nn\n\n\n"
        "class Gate(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.lin = nn.Linear(3, 4)\n        self.p = nn.Parameter(torch.tensor(0.3))\n"
        "        self.other = False\n\n"
        "    def forward(self, x):\n        h = self.lin(x)\n" + other + body + "\n"
        "        return h.sum(1, keepdim=True)\n")
    path = Path(tempfile.mkdtemp()) / f"gate_{next(_COUNT)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod.Gate


# float(p) and .item() of a tensor that requires grad: torch's own warning, the point here
@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True")
@settings(max_examples=30, deadline=None)
@given(form=st.sampled_from(sorted(FORMS)), branch=st.booleans(), seed=st.integers(0, 2**16))
def test_a_parameter_read_only_without_gradient_is_explained_from_the_source(form, branch,
                                                                             seed):
    torch.manual_seed(seed)
    model = module_class(form, branch)()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        nn.functional.mse_loss(model(torch.randn(5, 3)), torch.randn(5, 1)).backward()
        opt.step()
    truth_none = model.p.grad is None  # torch's own verdict
    words = FORMS[form][1]
    assert truth_none == (words is not None), (form, model.p.grad)
    why = w.why_no_grad("p")
    if not truth_none:
        assert "class's source" not in why, why
        return
    if words == "never read" and branch:  # the branch reads it: not "never"
        assert "in a way" not in why and "never read" not in why, why
        return
    assert words in why and "read from the class's source" in why, (form, branch, why)
    assert ("cannot tell which ran" in why) == branch, why
