"""The module hooks of ``watch`` run eagerly, in and out of torch.compile: called directly when
nothing is being traced, and through ``torch.compiler.disable`` (a graph break) while
torch.compile traces the module."""

from __future__ import annotations

import torch

from gradarg.trace.watching.patches import eager_unless_traced


def test_the_hook_never_runs_inside_a_trace():
    seen: list[bool] = []

    def hook(module, args):
        seen.append(torch.compiler.is_compiling())

    wrapped = eager_unless_traced(hook)
    net = torch.nn.Linear(3, 2)
    handle = net.register_forward_pre_hook(wrapped)
    try:
        x = torch.randn(4, 3)
        net(x)
        assert seen == [False]  # eagerly: called, outside any trace
        torch._dynamo.reset()
        compiled = torch.compile(net, backend="eager")
        compiled(x)
        compiled(x)
    finally:
        handle.remove()
        torch._dynamo.reset()
    # one call per forward, each run eagerly (a hook traced into the graph would have been
    # called once, at trace time, with is_compiling() True, and never again)
    assert seen == [False, False, False]


def test_eagerly_the_hook_is_called_directly():
    frames: list[str] = []

    def hook(*args):
        import sys
        frames.append(sys._getframe(1).f_code.co_name)
        return args

    assert eager_unless_traced(hook)(1, 2) == (1, 2)
    assert frames == ["call"]  # the plain dispatcher, not torch.compiler.disable's wrapper
