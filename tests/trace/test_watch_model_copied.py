"""Class: a copy of the watched model made inside the block (``copy.deepcopy`` for an EMA
teacher or a reference, ``torch.save`` of the whole model for a checkpoint).  The copy is made
(before, nothing of the watch could be copied: ``TypeError: cannot pickle 'module' object``),
holds the model's parameters and buffers as they were, and leaves the record of the watched model as it
is without the copy: the copy's calls are not the model's.

The truth comes from torch alone: the copy's ``state_dict`` against the model's at the copy,
and the same step watched without any copy.  Generated: when the copy is made, how, whether it is
called afterwards, and the model's layers.
"""

from __future__ import annotations

import copy
import io

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

WHEN = ("before forward", "after forward", "after backward", "after step")


def _model(norm: bool) -> nn.Module:
    layers = [nn.Linear(5, 8), nn.BatchNorm1d(8) if norm else nn.Tanh(), nn.Linear(8, 2)]
    return nn.Sequential(*layers)


def _step(model, opt, x, y, copy_at, how, call):
    made = None
    for at in WHEN:
        if at == "after forward":
            out = model(x)
        elif at == "after backward":
            nn.functional.mse_loss(out, y).backward()
        elif at == "after step":
            opt.step()
        if at == copy_at and how is not None:
            if how == "deepcopy":
                made = copy.deepcopy(model)
            else:
                buffer = io.BytesIO()
                torch.save(model, buffer)
                buffer.seek(0)
                made = torch.load(buffer, weights_only=False)
            theirs, ours = made.state_dict(), model.state_dict()  # the model at the copy
            assert theirs.keys() == ours.keys()
            assert all(torch.equal(theirs[k], ours[k]) for k in ours), (copy_at, how)
            if call:  # the teacher's forward, as an EMA or distillation step does
                with torch.no_grad():
                    made.eval()(x)
    return made


@settings(max_examples=20, deadline=None)
@given(copy_at=st.sampled_from(WHEN), how=st.sampled_from(["deepcopy", "torch.save"]),
       call=st.booleans(), norm=st.booleans(), seed=st.integers(0, 2**16))
def test_a_copy_made_in_the_block_works_and_leaves_the_record_alone(copy_at, how, call, norm,
                                                                    seed):
    texts = []
    for with_copy in (False, True):
        torch.manual_seed(seed)
        model = _model(norm)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        x, y = torch.randn(6, 5), torch.randn(6, 2)
        with gradarg.watch(model) as w:
            made = _step(model, opt, x, y, copy_at, how if with_copy else None, call)
        texts.append((w.summary(), len(w.modules)))
        if made is not None:  # nothing of the watch is left to act on the copy
            before = len(w.modules)
            made(x).sum().backward()
            assert len(w.modules) == before
    assert texts[0] == texts[1]
