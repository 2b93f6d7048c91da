"""why_no_grad with ``module=`` says when the asked tensor is not among the module's parameters.

Layers kept in a plain Python list (not ``nn.ModuleList``) get gradients but are not listed by
``model.parameters()``, so an optimizer built from it never moves them.  Invariant, over
generated models: the note appears exactly for the tensors ``module.parameters()`` does not
list (checked against that list), whatever the answer's case.
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad


class Net(torch.nn.Module):
    def __init__(self, registered: list[bool]):
        super().__init__()
        self.kept = torch.nn.ModuleList()
        self.plain: list[torch.nn.Linear] = []
        self.layers = []
        for r in registered:
            layer = torch.nn.Linear(3, 3)
            (self.kept if r else self.plain).append(layer)
            self.layers.append(layer)

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


@given(registered=st.lists(st.booleans(), min_size=1, max_size=4), after=st.booleans())
def test_the_note_marks_exactly_the_unlisted_tensors(registered, after):
    net = Net(registered)
    out = net(torch.randn(2, 3)).sum()
    if after:
        out.backward(retain_graph=True)
    listed = {id(p) for p in net.parameters()}
    for layer in net.layers:
        d = why_no_grad(out, layer.weight, module=net)
        noted = "is not among the parameters of the module you passed" in d.message
        assert noted == (id(layer.weight) not in listed), d.message
