"""Class: a custom ``autograd.Function`` whose ``backward`` returns None for an input that leads
to a parameter.  Two invariants:

- the watch never breaks the user's step: its hooks accept the None a tensor hook receives when
  a ``backward`` asks ``torch.autograd.grad`` about a tensor it cannot reach (the watched step's
  gradients are the plain step's, bit for bit);
- ``why_no_grad`` names the Function, and says its ``backward`` returned None, exactly for the
  parameters that got no gradient although a path from the loss reaches them through it; a
  parameter that got a gradient, or one no path reaches, is never explained this way.

The truth comes from torch alone: ``.grad`` after the same step run without the watch, and the
construction (which Function returns None for which input).  Generated: what each of two
Functions' ``backward`` returns for its input and its weight (a gradient, None, or None by way
of ``torch.autograd.grad`` on a recomputation that has no graph, as
https://github.com/pytorch/pytorch/issues/45405 did), whether a second path from the loss
reaches the weight, and whether a later layer is cut off with ``detach()``.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

RETURNS = ("grad", "none", "regrad")


def function_class(name: str, for_input: str, for_weight: str) -> type:
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        out = []
        for how, exact, t in ((for_input, lambda: g @ w.t(), x), (for_weight,
                                                                   lambda: x.t() @ g, w)):
            if how == "grad":
                out.append(exact())
            elif how == "none" or not t.requires_grad:
                out.append(None)
            else:  # a recomputation without a graph, asked about t: None
                y = (x @ w).requires_grad_(True)
                out.append(torch.autograd.grad(y, t, grad_outputs=g, allow_unused=True)[0])
        return tuple(out)

    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    return type(name, (torch.autograd.Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(backward)})


class Net(nn.Module):
    def __init__(self, first: type, second: type, shortcut: bool, cut: bool):
        super().__init__()
        self.inp = nn.Linear(4, 5)
        self.w1 = nn.Parameter(torch.randn(5, 5) * 0.3)
        self.w2 = nn.Parameter(torch.randn(5, 5) * 0.3)
        self.out = nn.Linear(5, 1)
        self.first, self.second, self.shortcut, self.cut = first, second, shortcut, cut

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        h = torch.tanh(self.first.apply(h, self.w1))
        h = self.second.apply(h.detach() if self.cut else h, self.w2)
        if self.shortcut:  # a second path to w1 that does not pass through a Function
            h = h + (h.detach() @ self.w1) * 0.1
        return self.out(torch.tanh(h))


def run(net: Net, watched: bool):
    torch.manual_seed(3)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    w = None
    if watched:
        with gradarg.watch(net) as w:
            opt.zero_grad()
            nn.functional.mse_loss(net(x), y).backward()
    else:
        opt.zero_grad()
        nn.functional.mse_loss(net(x), y).backward()
    return w, {n: None if p.grad is None else p.grad.clone() for n, p in net.named_parameters()}


@settings(max_examples=40, deadline=None)
@given(returns=st.tuples(*[st.sampled_from(RETURNS)] * 4), shortcut=st.booleans(),
       cut=st.booleans(), seed=st.integers(0, 2**16))
def test_none_from_a_custom_function_is_named_and_never_breaks_the_step(returns, shortcut, cut,
                                                                          seed):
    first = function_class("FirstMatmul", returns[0], returns[1])
    second = function_class("SecondMatmul", returns[2], returns[3])
    torch.manual_seed(seed)
    net = Net(first, second, shortcut, cut)
    state = {k: v.clone() for k, v in net.state_dict().items()}
    _, plain = run(net, watched=False)
    net.load_state_dict(state)
    w, seen = run(net, watched=True)  # raises here if a hook of the watch breaks the step
    for name, g in plain.items():  # the watch changed nothing
        assert (g is None) == (seen[name] is None) and (g is None or torch.equal(g, seen[name]))
    # the Functions on the paths from the loss to each parameter, and whether any path
    # reaches it (the construction)
    both = set() if cut else {"FirstMatmul", "SecondMatmul"}
    fns = {"out.weight": set(), "out.bias": set(), "w2": {"SecondMatmul"}, "w1": both,
           "inp.weight": both, "inp.bias": both}
    in_graph = {"out.weight": True, "out.bias": True, "w2": True, "w1": not cut or shortcut,
                "inp.weight": not cut, "inp.bias": not cut}
    for name, g in plain.items():
        why = w.why_no_grad(name)
        if g is None and in_graph[name]:
            assert "returned None" in why, (name, returns, shortcut, cut, why)
            named = {f for f in ("FirstMatmul", "SecondMatmul") if f"{f} (node {f}Backward)" in why}
            assert named and named <= fns[name], (name, fns[name], why)
        else:
            assert "returned None" not in why, (name, returns, shortcut, cut, why)
