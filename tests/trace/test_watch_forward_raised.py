"""Class: a step whose forward raised, the error caught by the user's own code inside the
``with`` block (a Fourier layer whose modes exceed a coarse grid's frequencies: ``einsum``
raises).  The watch said only "no backward pass reached the model".

Invariant: when the model's last forward raised, the summary states torch's own error (its
type and first line, as the caller caught it) and the innermost module whose call began and
never returned, which is the module the error came from; a forward that raised and was
followed by one that returned (with its backward or without) says nothing of it.  Generated: the depth,
which layer gets a wrong width, whether a good step comes first or after, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Net(nn.Module):
    def __init__(self, depth, bad):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(4, 4), nn.Tanh())
                                    for _ in range(depth))
        self.bad = bad

    def forward(self, x, broken=False):
        for i, block in enumerate(self.blocks):
            x = block(x[:, :3] if broken and i == self.bad else x)  # a width of 3, not 4
        return x.sum(1)


@settings(max_examples=25, deadline=None)
@given(depth=st.integers(1, 4), data=st.data(),
       order=st.sampled_from(["good then bad", "bad then good", "bad then a forward only"]),
       seed=st.integers(0, 2**16))
def test_a_forward_that_raised_is_stated_with_torch_s_error(depth, data, order, seed):
    bad = data.draw(st.integers(0, depth - 1))
    torch.manual_seed(seed)
    model = Net(depth, bad)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 4)
    errors = []
    with gradarg.watch(model) as w:
        if order == "bad then a forward only":
            try:
                model(x, True)
            except RuntimeError as e:
                errors.append(e)
            with torch.no_grad():
                model(x)  # returns: the last forward did not raise
        for broken in {"good then bad": [False, True], "bad then good": [True, False]}.get(
                order, []):
            opt.zero_grad()
            try:
                model(x, broken).pow(2).mean().backward()
                opt.step()
            except RuntimeError as e:  # torch's own error, caught by the user's code
                errors.append(e)
    assert len(errors) == 1
    text = w.summary(checks=False)
    said = "the model's last forward raised" in text
    assert said == (order == "good then bad"), (order, text)
    if said:
        first = str(errors[0]).split("\n")[0]
        assert f"raised {type(errors[0]).__name__} inside module 'blocks.{bad}.0' (Linear)" \
            in text, text
        assert first[:200] in text, (first, text)
