"""Class: a training step under ``torch.compile`` with the watch on.  The watch's own code is
never compiled: every graph torch.compile builds comes from the user's code (the watch's
module hooks run eagerly at a graph break, and a ``backward()`` called inside the compiled
function runs its hooks with Dynamo off).  Before, Dynamo compiled the watch's hooks frame by
frame and recompiled them at every new argument up to its recompile limit (a 0.02 s step took
29 s on its first watched run).  The gradients are the same as an unwatched eager step's.

The truth is torch's own: the graphs handed to a counting backend (``torch.compile(backend=)``),
whose nodes' ``stack_trace`` names the file each operation came from; and plain eager
gradients of a copy of the model.
"""

from __future__ import annotations

import copy
import os

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SOURCE = os.path.dirname(gradarg.__file__)

MODELS = {
    "mlp": lambda: nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1)),
    "batchnorm": lambda: nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(),
                                       nn.Linear(8, 1)),
    "nested": lambda: nn.Sequential(nn.Sequential(nn.Linear(6, 8), nn.GELU()),
                                    nn.Linear(8, 1)),
}


# Dynamo reads .grad of a graph input that is not a leaf when a frame starts at a graph break
# (here the watch's hook before BatchNorm): torch's own warning, not the watch's
@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
@settings(max_examples=6, deadline=None)
@given(kind=st.sampled_from(sorted(MODELS)), inside=st.booleans(), steps=st.integers(1, 3),
       seed=st.integers(0, 99))
def test_the_watch_adds_no_compiled_code_and_changes_no_gradient(kind, inside, steps, seed):
    torch.compiler.reset()
    torch.manual_seed(seed)
    model = MODELS[kind]()
    eager = copy.deepcopy(model)
    ours: list[str] = []

    def backend(gm, example_inputs):
        for node in gm.graph.nodes:
            if SOURCE in (node.meta.get("stack_trace") or ""):
                ours.append(node.name)
        return gm.forward

    @torch.compile(backend=backend)
    def step(x):
        loss = model(x).pow(2).mean()
        if inside:
            loss.backward()
        return loss

    xs = [torch.randn(4, 6) for _ in range(steps)]
    got, want = [], []
    with gradarg.watch(model):
        for x in xs:
            model.zero_grad()
            loss = step(x)
            if not inside:
                loss.backward()
            got.append([p.grad.clone() for p in model.parameters()])
    for x in xs:
        eager.zero_grad()
        eager(x).pow(2).mean().backward()
        want.append([p.grad.clone() for p in eager.parameters()])
    assert not ours, ours  # no graph holds an operation of the watch's code
    for g, w in zip(got, want, strict=True):
        assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(g, w, strict=True))
