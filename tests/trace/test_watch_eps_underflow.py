"""Class: weights that hold NaN/Inf are named as such, never as an overflow of the module's
computation, and an optimizer whose ``eps`` rounds to 0 in the parameters' dtype (Adam's
1e-8 in float16) is named as what made them, with the entries where its second moment is 0.

The truth comes from torch: ``torch.isfinite`` of the parameters after the steps, the
optimizer's eps cast to the parameters' dtype, and the optimizer's own state.  Generated: the
dtype, the optimizer, eps, the rows a batch uses, steps and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

NAMED = re.compile(r"(\d+) of the (\d+) entries of (\S+) \((\w+)\) hold NaN/Inf after (\w+)\.step")


class Bag(nn.Module):
    def __init__(self, rows):
        super().__init__()
        self.embed = nn.Embedding(rows, 4)
        self.head = nn.Linear(4, 3)

    def forward(self, ids):
        return self.head(self.embed(ids).mean(1))


@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from([torch.float16, torch.bfloat16, torch.float32]),
       name=st.sampled_from(["Adam", "AdamW", "RMSprop", "Adagrad"]),
       eps=st.sampled_from([1e-8, 1e-10, 1e-4]), used=st.integers(3, 10),
       steps=st.integers(1, 2), spread=st.booleans(), poisoned=st.booleans(),
       seed=st.integers(0, 2**16))
def test_eps_zero_in_the_parameters_dtype_is_named(dtype, name, eps, used, steps, spread,
                                                   poisoned, seed):
    torch.manual_seed(seed)
    model = Bag(12).to(dtype)
    if poisoned:  # NaN in the weights before the block, whatever the optimizer does
        with torch.no_grad():
            model.embed.weight[11] = float("nan")
    opt = getattr(torch.optim, name)(model.parameters(), lr=1e-3, eps=eps)
    with gradarg.watch(model) as w:
        for i in range(steps):
            opt.zero_grad()
            top = 11 if spread and i else used  # a second batch may read NaN rows
            ids = torch.randint(0, top, (8, 5))  # rows >= top get no gradient
            F.cross_entropy(model(ids).float(), torch.randint(0, 3, (8,))).backward()
            opt.step()
    # the truth
    zero = float(torch.tensor(eps, dtype=dtype)) == 0
    bad = {n: int((~torch.isfinite(p.detach())).sum()) for n, p in model.named_parameters()}
    text = w.summary()
    found = NAMED.search(text)
    if zero and any(bad.values()):
        assert found, text
        n = found[3]
        assert int(found[1]) == bad[n] and int(found[2]) == dict(model.named_parameters())[n].numel()
        assert found[4] == str(dtype).replace("torch.", "") and found[5] == name
        state = opt.state[dict(model.named_parameters())[n]]
        second = next(state[k] for k in ("exp_avg_sq", "square_avg", "sum") if k in state)
        at_zero = int(((second == 0) & ~torch.isfinite(dict(model.named_parameters())[n])).sum())
        assert f"{at_zero} of them where its second moment is still 0" in text, text
    else:
        assert found is None, text


def test_weights_holding_nan_are_not_called_an_overflow():
    torch.manual_seed(0)
    model = Bag(12).half()
    with torch.no_grad():
        model.embed.weight[2] = float("nan")  # set before the step, by hand
    with gradarg.watch(model) as w:
        F.cross_entropy(model(torch.tensor([[1, 2, 3]])).float(), torch.tensor([0])).backward()
    text = w.summary()
    assert "its parameter embed.weight holds NaN/Inf in 4 of 48 entries" in text, text
    assert "overflow" not in text, text
