"""Class: a contrastive loss (NT-Xent / InfoNCE) over a square similarity matrix whose
diagonal, each embedding with itself, is left in: every row's largest logit is on the
diagonal and is never the row's target.  The watch names it; a diagonal masked with -inf or a
large negative value (in some rows only, too), a cross-view (N x N) matrix whose diagonal is
the target, fewer than eight rows, and an ordinary classifier say nothing of the kind.

The truth comes from torch: the logits the test computed, their argmax per row against the
row index, and the targets.  Generated: the batch, the temperature, the masking, the layout
(two views stacked, or cross-view), a classifier with as many classes as rows, and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

NAMED = "largest entry in every row is on its diagonal"


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 16), tau=st.sampled_from([0.07, 0.5, 1.0]),
       how=st.sampled_from(["unmasked", "unmasked", "inf", "large", "half", "cross",
                            "classifier"]),
       seed=st.integers(0, 2**16))
@example(n=12, tau=0.5, how="cross", seed=0)  # the diagonal is the target
@example(n=12, tau=0.5, how="half", seed=0)
@example(n=3, tau=0.5, how="unmasked", seed=0)  # six rows: not judged
@example(n=12, tau=0.5, how="unmasked", seed=0)
def test_an_unmasked_self_similarity_is_named(n, tau, how, seed):
    torch.manual_seed(seed)
    enc = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 8))
    x = torch.randn(n, 16)
    a, b = x + 0.1 * torch.randn(n, 16), x + 0.1 * torch.randn(n, 16)
    with gradarg.watch(enc) as w:
        if how == "classifier":  # 2n classes for 2n rows: square by coincidence
            head = nn.Linear(8, 2 * n)
            logits = head(enc(torch.cat([a, b])))
            target = torch.randint(0, 2 * n, (2 * n,))
        elif how == "cross":  # each view of a against each of b: the diagonal is the target
            za, zb = F.normalize(enc(a), dim=1), F.normalize(enc(b), dim=1)
            logits, target = za @ zb.t() / tau, torch.arange(n)
        else:
            z = F.normalize(torch.cat([enc(a), enc(b)]), dim=1)
            logits = z @ z.t() / tau
            eye = torch.eye(2 * n, dtype=torch.bool)
            if how == "inf":
                logits = logits.masked_fill(eye, float("-inf"))
            elif how == "large":
                logits = logits.masked_fill(eye, -1e9)
            elif how == "half":  # only the first view's rows masked
                logits = logits.masked_fill(eye & (torch.arange(2 * n) < n)[:, None], -1e9)
            target = torch.cat([torch.arange(n) + n, torch.arange(n)])
        F.cross_entropy(logits, target).backward()
    # the truth, from the logits and targets themselves
    rows = logits.shape[0]
    own = torch.arange(rows)
    diagonal_max = bool((logits.detach().argmax(1) == own).all())
    self_target = bool((target == own).any())
    text = w.summary()
    if rows >= 8 and diagonal_max and not self_target:
        assert NAMED in text, text
        assert f"{rows}x{rows}" in text
    else:
        assert NAMED not in text, text
