"""A trainable module run with recording off inside a watched step: the summary and
``why_no_grad`` name the line that called it and the switch around it, whichever way the
switch was written (a decorator on the helper, a ``with`` block in the helper or around the
forward in the training loop, ``inference_mode``, ``set_grad_enabled(False)``), and
:func:`gradarg.trace.why.located.call_site` finds the same from the stack alone."""

from __future__ import annotations

import inspect

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg
from gradarg.trace.why.located import call_site


class Net(nn.Module):
    def __init__(self, how: str):
        super().__init__()
        self.how = how
        self.proj, self.head = nn.Linear(4, 6), nn.Linear(6, 1)

    @torch.no_grad()
    def decorated(self, x):
        return self.proj(x)

    @torch.inference_mode()
    def inferred(self, x):
        return self.proj(x)

    def blocked(self, x):
        with torch.no_grad():
            return self.proj(x)

    def disabled(self, x):
        with torch.set_grad_enabled(False):
            return self.proj(x)

    def forward(self, x):
        h = getattr(self, self.how)(x) if self.how != "outer" else self.proj(x)
        return self.head(torch.tanh(h.clone()))


# how -> (the function named as the caller, the switch as said)
SAID = {
    "decorated": ("Net.decorated", "@torch.no_grad() on Net.decorated"),
    "inferred": ("Net.inferred", "@torch.inference_mode() on Net.inferred"),
    "blocked": ("Net.blocked", "torch.no_grad at"),
    "disabled": ("Net.disabled", "torch.set_grad_enabled(False) at"),
    "outer": ("Net.forward", "torch.no_grad at"),
}


def _step(how: str, seed: int):
    torch.manual_seed(seed)
    net, x = Net(how), torch.randn(8, 4)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with gradarg.watch(net) as w:
        opt.zero_grad()
        if how == "outer":  # a no_grad block left around the model's forward for the body
            with torch.no_grad():
                h = net.proj(x)
            out = net.head(torch.tanh(h))
        else:
            out = net(x)
        out.pow(2).mean().backward()
        opt.step()
    return w, net


@settings(max_examples=15, deadline=None)
@given(how=st.sampled_from(sorted(SAID)), seed=st.integers(0, 50))
def test_the_summary_names_the_line_and_the_switch(how, seed):
    w, net = _step(how, seed)
    assert net.proj.weight.grad is None and net.head.weight.grad is not None  # plain torch
    text = w.summary(checks=False)
    function, switch = SAID[how]
    if how == "outer":  # called from the training loop itself: this test's function
        function = "_step"
    assert "called at" in text and f"(in {function})" in text, text
    assert switch in text, text
    assert switch in w.why_no_grad("proj.weight")


def _here():
    return call_site(inspect.currentframe())


@torch.no_grad()
def _decorated():
    return _here()


def _in_block():
    with torch.inference_mode():
        return _here()


def _enabled_inside():
    with torch.set_grad_enabled(True):
        return _here()


@pytest.mark.parametrize(("fn", "kind", "where"), [
    (_decorated, "no_grad", None), (_in_block, "inference_mode", "_in_block"),
    (_enabled_inside, None, None), (_here, None, None)])
def test_call_site_reads_the_stack_and_the_source(fn, kind, where):
    site = fn()
    assert site.where is not None and site.where.function == "_here"
    if kind is None:
        assert site.switch is None
    else:
        assert site.switch.kind == kind and site.switch.off
        if where is None:
            assert site.switch.decorates == fn.__qualname__
        else:
            assert site.switch.where.function == where
            assert "with torch.inference_mode():" in site.switch.where.text
