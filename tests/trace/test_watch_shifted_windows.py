"""Class: Swin's shifted windows (``torch.roll`` of the feature map, then window attention)
without the attention mask: tokens from opposite borders share the last windows and attend to
each other.  The watch said "ok".

Invariant: named exactly when, by torch's own account, a token's output depends on a token at
the opposite corner of the map, which no window of the unshifted partition holds with it
(attention wraps around); a regular window block, a shifted block with its mask (filled with
-inf or added as -100) and a rolled map whose windows are masked by region say nothing of it.
Truth: ``torch.autograd.grad`` of the top-left token's output with respect to the input.
Generated: the shift, the mask and how it is applied, the width, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SIZE, WINDOW = 8, 4


def _partition(x):  # (B, H, W, C) -> (B * windows, WINDOW * WINDOW, C)
    b, h, w, c = x.shape
    x = x.view(b, h // WINDOW, WINDOW, w // WINDOW, WINDOW, c).transpose(2, 3)
    return x.reshape(-1, WINDOW * WINDOW, c)


def _merge(windows, b):
    x = windows.view(b, SIZE // WINDOW, SIZE // WINDOW, WINDOW, WINDOW, -1).transpose(2, 3)
    return x.reshape(b, SIZE, SIZE, -1)


def _blocked(shift):
    regions = torch.zeros(1, SIZE, SIZE, 1)
    spans = (slice(0, -WINDOW), slice(-WINDOW, -shift), slice(-shift, None))
    for i, (hs, ws) in enumerate((h, w) for h in spans for w in spans):
        regions[:, hs, ws] = i
    ids = _partition(regions).squeeze(-1)
    return ids[:, :, None] != ids[:, None, :]


class Block(nn.Module):
    def __init__(self, width, shift, mask):
        super().__init__()
        self.shift, self.mask = shift, mask
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)

    def forward(self, x):
        b = x.shape[0]
        h = torch.roll(x, (-self.shift, -self.shift), (1, 2))  # a shift of 0 rolls nothing
        win = _partition(h)
        q, k, v = self.qkv(win).chunk(3, -1)
        scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
        if self.shift and self.mask != "none":
            blocked = _blocked(self.shift).repeat(b, 1, 1)
            scores = (scores.masked_fill(blocked, float("-inf")) if self.mask == "fill"
                      else scores + blocked * -100.0)
        h = _merge(self.proj(scores.softmax(-1) @ v), b)
        h = torch.roll(h, (self.shift, self.shift), (1, 2))
        return x + h


@settings(max_examples=25, deadline=None)
@given(shift=st.sampled_from([0, 1, 2]), mask=st.sampled_from(["none", "fill", "add"]),
       width=st.sampled_from([4, 8]), seed=st.integers(0, 2**16))
def test_shifted_windows_without_their_mask_are_named(shift, mask, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, width), Block(width, shift, mask), nn.Linear(width, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, labels = torch.rand(4, SIZE, SIZE, 3), torch.randint(0, 2, (4,))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(images).mean((1, 2)), labels)
        loss.backward()
        opt.step()
    probe = images[:1].clone().requires_grad_()
    (g,) = torch.autograd.grad(model(probe)[0, 0, 0].sum(), probe)
    # the opposite corner reaches the top-left (Swin's -100 leaves a weight of about e^-100)
    wraps = bool(g[0, -1, -1].abs().sum() > 1e-6 * g.abs().sum())
    text = w.summary(checks=False)
    named = "rolled by" in text and "no mask on its scores" in text
    assert named == wraps, (shift, mask, text)
    if named:
        assert f"rolled by {(-shift, -shift)}" in text and not text.startswith("gradients ok"), text
