"""Class: a normalization layer that keeps running statistics and runs again during the backward
in train mode (the recomputation of a checkpointed function) updates them twice in one step:
named instead of "ok"; nothing is said when it runs once per forward.

The truth comes from torch alone: ``num_batches_tracked`` before and after the step against the
number of forward calls.  Generated: checkpointing (non-reentrant, reentrant, none), the layer
inside the checkpointed function or outside, its kind, train or eval mode, whether it tracks
running statistics, the batch.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.utils.checkpoint import checkpoint

import gradarg

NORMS = {
    "BatchNorm1d": lambda track: nn.BatchNorm1d(6, track_running_stats=track),
    "InstanceNorm1d": lambda track: nn.InstanceNorm1d(6, track_running_stats=track),
}


class Net(nn.Module):
    def __init__(self, norm: str, track: bool, ckpt: str | None, inside: bool):
        super().__init__()
        self.lin = nn.Linear(4, 6)
        self.norm = NORMS[norm](track)
        self.head = nn.Linear(6, 1)
        self.ckpt, self.inside, self.kind = ckpt, inside, norm

    def block(self, x):
        h = self.lin(x)
        if self.kind == "InstanceNorm1d":
            h = h.unsqueeze(-1).expand(-1, -1, 3)
        return self.norm(h) if self.inside else h

    def forward(self, x):
        if self.ckpt is None:
            h = self.block(x)
        else:
            x = x.requires_grad_() if self.ckpt == "reentrant" else x
            h = checkpoint(self.block, x, use_reentrant=self.ckpt == "reentrant")
        if not self.inside:
            h = self.norm(h)
        if self.kind == "InstanceNorm1d":
            h = h.mean(-1)
        return self.head(torch.relu(h))


@settings(max_examples=30, deadline=None)
@given(norm=st.sampled_from(sorted(NORMS)), track=st.booleans(),
       ckpt=st.sampled_from([None, "non-reentrant", "reentrant"]), inside=st.booleans(),
       train=st.booleans(), seed=st.integers(0, 2**16))
def test_statistics_updated_again_in_the_backward_are_named(norm, track, ckpt, inside, train,
                                                            seed):
    torch.manual_seed(seed)
    model = Net(norm, track, ckpt, inside).train(train)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    tracked = model.norm.num_batches_tracked
    before = int(tracked) if tracked is not None else 0
    with gradarg.watch(model) as w:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    after = int(model.norm.num_batches_tracked) if tracked is not None else 0
    truth = after - before > 1  # one forward: more than one update came from the backward
    text = w.summary(checks=False)
    said = "ran again during the backward" in text
    assert said == truth, (norm, track, ckpt, inside, train, before, after, text)
    if truth:
        assert f"{norm} 'norm'" in text and not text.startswith("gradients ok"), text
