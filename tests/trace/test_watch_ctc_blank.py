"""Class: CTC targets that hold the loss's blank index (labels numbered from 0 while the
blank is 0) are named with the count of such positions, within each sequence's length;
padding beyond a target's length and targets numbered around the blank say nothing.

The truth comes from the data: the target positions within their lengths equal to the
blank, counted by the test (padded ``(N, S)`` and concatenated 1-d targets), with torch's own
loss computed on them.  Generated: classes, the blank index, targets that avoid it or not,
the layout, lengths, and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

NAMED = re.compile(r"(\d+) of the (\d+) target labels of ctc_loss \((\d+) of (\d+) sequences\) "
                   r"equal its blank index (\d+)")


@settings(max_examples=25, deadline=None)
@given(classes=st.integers(3, 6), blank_last=st.booleans(), avoid=st.booleans(),
       padded=st.booleans(), batch=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_targets_holding_the_blank_are_named(classes, blank_last, avoid, padded, batch, seed):
    torch.manual_seed(seed)
    blank = classes - 1 if blank_last else 0
    labels = [c for c in range(classes) if not (avoid and c == blank)]
    model = nn.Linear(4, classes)
    t_in, s_max = 12, 4
    lengths = torch.randint(1, s_max + 1, (batch,))
    pick = torch.randint(0, len(labels), (batch, s_max))
    targets = torch.tensor(labels)[pick]
    if padded:  # padding beyond each length holds the blank: not a label
        for i, n in enumerate(lengths):
            targets[i, n:] = blank
    x = torch.randn(t_in, batch, 4)
    with gradarg.watch(model) as w:
        log_probs = model(x).log_softmax(2)
        flat = targets if padded else torch.cat([targets[i, :n] for i, n in enumerate(lengths)])
        loss = F.ctc_loss(log_probs, flat, torch.full((batch,), t_in), lengths, blank=blank)
        loss.backward()
    # the truth, counted from the data
    rows = [targets[i, :n] for i, n in enumerate(lengths)]
    hits = [int((r == blank).sum()) for r in rows]
    text = w.summary()
    found = NAMED.search(text)
    if sum(hits):
        assert found, text
        assert [int(v) for v in found.groups()] == [sum(hits), int(lengths.sum()),
                                                    sum(1 for h in hits if h), batch, blank]
    else:
        assert found is None, text
