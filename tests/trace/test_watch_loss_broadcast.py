"""Class: a hand-written loss that broadcasts a tensor computed from the model's output across
the batch (a prediction of shape ``(N, 1)`` against a target of shape ``(N,)``: every example
compared with every other).  The summary says so, with both shapes, exactly when the loss
made such a tensor; a row-wise broadcast (``x - x.max(1, keepdim=True)``), a similarity
matrix from a product (a contrastive loss's ``z @ z.T``) and matching shapes are never named.

The truth comes from torch alone: ``torch.broadcast_shapes`` of the two operands the test's
loss combines.  Generated: the prediction's shape (a column ``pred[:, k:k+1]``, a column
``pred[:, k]``, the whole output), the target's shape, the loss's form, the batch size.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

FORMS = {
    "squared": lambda e: (e ** 2).mean(),
    "absolute": lambda e: e.abs().mean(),
    "pinball": lambda e: torch.maximum(0.3 * e, -0.7 * e).mean(),
}


@settings(max_examples=40, deadline=None)
@given(pred_kind=st.sampled_from(["column (N, 1)", "column (N,)", "whole (N, 3)"]),
       target_kind=st.sampled_from(["(N,)", "(N, 1)", "(N, 3)"]),
       form=st.sampled_from(sorted(FORMS)), n=st.sampled_from([1, 5, 8]),
       extra=st.sampled_from(["none", "row-wise", "contrastive"]), seed=st.integers(0, 2**16))
def test_a_loss_broadcast_across_the_batch_is_named_exactly(pred_kind, target_kind, form, n,
                                                             extra, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
    x = torch.randn(n, 4)
    target = {"(N,)": torch.randn(n), "(N, 1)": torch.randn(n, 1),
              "(N, 3)": torch.randn(n, 3)}[target_kind]
    with gradarg.watch(model) as w:
        out = model(x)
        pred = {"column (N, 1)": out[:, 1:2], "column (N,)": out[:, 1],
                "whole (N, 3)": out}[pred_kind]
        try:
            shape = torch.broadcast_shapes(pred.shape, target.shape)  # torch's own verdict
        except RuntimeError:
            return  # shapes that do not broadcast: torch raises, nothing to watch
        loss = FORMS[form](target - pred)
        if extra == "row-wise":  # a log-softmax written out: a broadcast along each row
            loss = loss - (out - out.max(1, keepdim=True).values).mean()
        elif extra == "contrastive":  # an N x N similarity from a product, on purpose
            loss = loss + (out @ out.T).logsumexp(1).mean() * 0.01
        loss.backward()
    across = n > 1 and shape.count(n) >= 2 and pred.shape.count(n) == 1
    text = w.summary(checks=False)
    said = "the loss broadcast a tensor of shape" in text
    assert said == across, (pred_kind, target_kind, n, extra, text)
    if said:
        shown = "(" + ", ".join(map(str, pred.shape)) + ("," if pred.dim() == 1 else "") + ")"
        assert f"of shape {shown}" in text and f"to ({n}, {n})" in text, text


def test_a_row_wise_broadcast_of_a_square_output_is_not_named():
    # as many classes as examples: x - x.max(1, keepdim=True) goes from (4, 1) to (4, 4), along
    # each row (the other input has the output's shape), not every example against every other
    torch.manual_seed(0)
    model = nn.Linear(3, 4)
    with gradarg.watch(model) as w:
        out = model(torch.randn(4, 3))
        z = out - out.max(1, keepdim=True).values
        (z.exp().sum(1).log() - z[:, 0]).mean().backward()
    assert "broadcast" not in w.summary(checks=False)


def test_a_row_norm_of_an_output_as_wide_as_the_batch_is_not_named():
    # F.normalize of an (8, 8) output expands the (8, 1) norms to (8, 8) along each row: with
    # as many features as examples, a row-wise broadcast cannot be told from one across the
    # batch, and nothing is said
    torch.manual_seed(0)
    model = nn.Linear(3, 8)
    with gradarg.watch(model) as w:
        z = nn.functional.normalize(model(torch.randn(8, 3)), dim=1)
        (z @ z.T).logsumexp(1).mean().backward()
    assert "broadcast" not in w.summary(checks=False)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 8), hidden=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_a_gradient_penalty_is_no_broadcast(n, hidden, seed):
    """A WGAN-GP step whose critic's input width equals the batch size: the penalty's double
    backward multiplies ``(N, 1)`` by ``(1, N)`` (a matrix product, not a broadcast), and the
    loss combines only tensors of matching shapes (checked with ``torch.broadcast_shapes``)."""
    torch.manual_seed(seed)
    critic = nn.Sequential(nn.Linear(n, hidden), nn.Tanh(), nn.Linear(hidden, 1))
    opt = torch.optim.Adam(critic.parameters(), lr=1e-4)
    real, fake = torch.randn(n, n), torch.randn(n, n)
    eps = torch.rand(n, 1)
    with gradarg.watch(critic) as w:
        opt.zero_grad()
        x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
        out = critic(x_hat)
        g, = torch.autograd.grad(out.sum(), x_hat, create_graph=True)
        norms = g.norm(2, dim=1)
        assert torch.broadcast_shapes(norms.shape, ()) == (n,)  # no (N, N) made by the loss
        loss = critic(fake).mean() - critic(real).mean() + 10 * ((norms - 1) ** 2).mean()
        loss.backward()
        opt.step()
    assert "broadcast" not in w.summary(checks=False), w.summary(checks=False)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 8), seed=st.integers(0, 2**16))
def test_all_pairs_made_by_an_explicit_unsqueeze_are_not_named(n, seed):
    """A loss over every pair of rows made on purpose (FAPE's frames against atoms, a distance
    matrix): ``x[None] - y[:, None]`` gives ``(N, N, 3)`` from ``(1, N, 3)``; the singleton
    dimension is the user's own ``unsqueeze``, not a prediction's ``(N, 1)`` shape."""
    torch.manual_seed(seed)
    model = nn.Linear(4, 3)
    with gradarg.watch(model) as w:
        x = model(torch.randn(n, 4))
        pairs = x[None, :, :] - x.detach()[:, None, :]
        assert torch.broadcast_shapes((1, n, 3), (n, 1, 3)) == (n, n, 3)  # all pairs
        pairs.pow(2).sum(-1).add(1e-6).sqrt().mean().backward()
    assert "broadcast" not in w.summary(checks=False), w.summary(checks=False)
