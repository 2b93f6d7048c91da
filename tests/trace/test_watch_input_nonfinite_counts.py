"""Class: data that reaches the model already holding NaN or Inf (log-spectrogram features of
zero-padded clips: ``log(0) = -inf``) is named with what it holds, each kind counted apart
(NaN, +inf, -inf), not only "NaN/Inf in an input"; -inf comes with the log-of-zero hint.  A
finite input says nothing of the kind.

The truth comes from the tensor itself, counted entry by entry in Python.  Generated: how
many entries of each kind are planted, where, the width and whether the bad value enters at
the model's input or through a buffer inside a module.  (Through a saturating layer, tanh of
-inf is -1, the output stays finite and the NaN appears only in the backward: that path names
the module that first sent it, not what the data held.)
"""

from __future__ import annotations

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Scale(nn.Module):
    """Multiplies its input by a buffer (no history, saved by the product for its backward):
    a constant that can hold NaN/Inf."""

    def __init__(self, width):
        super().__init__()
        self.register_buffer("factor", torch.ones(width))

    def forward(self, x):
        return x * self.factor


@settings(max_examples=25, deadline=None)
@given(nan=st.integers(0, 3), pos=st.integers(0, 3), neg=st.integers(0, 5),
       width=st.integers(3, 6), inside=st.booleans(), seed=st.integers(0, 2**16))
def test_an_input_holding_nan_or_inf_is_named_with_its_counts(nan, pos, neg, width, inside,
                                                              seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(width, 4), Scale(4), nn.Linear(4, 2))
    x = torch.randn(8, width)
    bad = x if not inside else model[1].factor
    values = [math.nan] * nan + [math.inf] * pos + [-math.inf] * neg
    flat = bad.view(-1)
    for i, v in zip(torch.randperm(flat.numel())[:len(values)].tolist(), values, strict=False):
        flat[i] = v
    with gradarg.watch(model) as w:
        model(x).pow(2).mean().backward()
    text = w.summary()
    # the truth: the entries counted one by one
    entries = bad.view(-1).tolist()
    counts = [("NaN", sum(1 for v in entries if math.isnan(v))),
              ("+inf", sum(1 for v in entries if v == math.inf)),
              ("-inf", sum(1 for v in entries if v == -math.inf))]
    with torch.no_grad():
        finite_out = bool(torch.isfinite(model(x)).all())
    if not any(k for _, k in counts):
        assert finite_out and "NaN/Inf" not in text, text
        return
    assert not finite_out  # no saturating layer: what the data holds reaches the output
    said = ", ".join(f"{what} in {k}" for what, k in counts if k)
    assert f"holding {said} of its {len(entries)} entries" in text, text
    assert ("log(0) is -inf" in text) == (counts[2][1] > 0), text


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 8), width=st.integers(3, 6), constant=st.sets(st.integers(0, 5)),
       eps=st.booleans(), stray=st.integers(0, 2), row=st.booleans(), seed=st.integers(0, 2**16))
def test_nan_in_whole_features_is_named_as_a_per_feature_operation(n, width, constant, eps,
                                                                   stray, row, seed):
    """Observations normalised per feature without an eps (RND's running normalisation): a
    constant feature has std 0 and becomes 0 / 0 = NaN in every example.  Said exactly when
    the non-finite entries are whole features (dimension 1) and nothing else: stray NaN
    entries elsewhere, or a whole broken example (a row), are not that pattern."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(width, 4), nn.Tanh(), nn.Linear(4, 2))
    obs = torch.randn(n, width)
    for j in constant:
        if j < width:
            obs[:, j] = 3.0
    x = (obs - obs.mean(0)) / (obs.std(0) + (1e-8 if eps else 0.0))
    flat = x.view(-1)
    for i in torch.randperm(flat.numel())[:stray].tolist():
        flat[i] = math.nan
    if row:
        x[n - 1] = math.nan
    with gradarg.watch(model) as w:
        model(x).pow(2).mean().backward()
    text = w.summary()
    # the truth, entry by entry: which features are non-finite in every example, and whether
    # any non-finite entry lies outside them
    bad = [[not math.isfinite(v) for v in r] for r in x.tolist()]
    whole = [j for j in range(width) if all(r[j] for r in bad)]
    outside = any(r[j] for r in bad for j in range(width) if j not in whole)
    said = "features (dimension 1), in every one of" in text
    assert said == bool(whole and not outside), text
    if said:
        assert f"all in {len(whole)} of its {width} features" in text, text
        assert not text.startswith("gradients ok"), text
