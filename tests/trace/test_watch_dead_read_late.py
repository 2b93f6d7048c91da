"""Dead units are read when the record is read, from the ReLU-like outputs the watch keeps
(``watching/deadunits.py``): the figures match plain torch, the watch lets go of the outputs
when the block ends, never keeps one the step would have freed (no graph: read at once), and
reports nothing for an output modified in place after its call returned."""

from __future__ import annotations

import gc
import weakref

import torch

import gradarg


def _net() -> tuple[torch.nn.Sequential, torch.Tensor, int]:
    """Linear(4, 6) -> ReLU with units 0, 2, 4 dead for every example (weights and bias
    negative on them, inputs positive): 3 of 6 dead, known without the tool."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 6)
    with torch.no_grad():
        lin.weight.copy_(torch.rand(6, 4))
        lin.bias.fill_(0.1)
        lin.weight[0::2] *= -1
        lin.bias[0::2] = -0.1
    x = torch.rand(8, 4) + 0.1
    net = torch.nn.Sequential(lin, torch.nn.ReLU())
    dead = int((torch.relu(lin(x)) == 0).all(dim=0).sum())  # plain torch
    return net, x, dead


def _relu_call(w) -> gradarg.trace.watching.records.ModuleRecord:
    return next(c for c in w.modules if c.kind == "ReLU")


def test_dead_units_match_plain_torch_and_the_outputs_are_let_go():
    net, x, dead = _net()
    assert dead == 3
    with gradarg.watch(net) as w:
        out = net(x)
        out.sum().backward()
        ref = weakref.ref(out.untyped_storage())  # the memory, whoever holds it
        del out
        gc.collect()
        assert ref() is not None  # kept until the record is read or the block ends
    gc.collect()
    assert ref() is None
    assert _relu_call(w).dead_units == (dead, 6)


def test_an_output_without_graph_is_read_at_once_and_not_kept():
    net, x, dead = _net()
    with gradarg.watch(net) as w:
        with torch.no_grad():
            out = net(x)
        ref = weakref.ref(out.untyped_storage())
        del out
        gc.collect()
        assert ref() is None  # the watch held no reference to it
        assert _relu_call(w).dead_units == (dead, 6)


def test_an_output_modified_in_place_after_its_call_is_not_reported():
    net, x, _ = _net()
    with gradarg.watch(net) as w:
        out = net(x)
        out.sum().backward()
        with torch.no_grad():
            out.add_(1.0)  # after the call returned: no unit is 0 any more
    assert _relu_call(w).dead_units is None
