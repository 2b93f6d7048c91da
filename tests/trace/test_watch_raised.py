"""A ``backward()`` that raised inside the block is an observed event (issue 43): the summary
and ``GradWatch.why_no_grad`` name the error, not only that no pass reached the model; the
wrapper on ``torch.autograd.backward`` is gone when the watch is."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import gradarg


def test_a_backward_that_raised_before_the_model_is_named_with_its_error():
    original = torch.autograd.backward
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 3))
    with gradarg.watch(net) as w:
        scores = torch.sigmoid(net(torch.randn(2, 4)))
        scores[..., 0] = 0.0  # sigmoid saved its output for backward
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            (-scores.mean()).backward()
    assert torch.autograd.backward is original  # nothing left behind
    first = str(info.value).split(" Hint:")[0].split(";")[0]  # torch's own words
    s = w.summary(checks=False)
    assert s.startswith("no backward pass reached the model; a backward() call in the block "
                        "raised RuntimeError")
    assert " ".join(first.split()) in s
    why = w.why_no_grad("0.weight")
    assert "backward() call in the block raised RuntimeError" in why
    assert "modified by an inplace" in why


def test_no_error_no_claim_and_a_later_success_is_read_as_usual():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 3))
    with gradarg.watch(net) as w:
        net(torch.randn(2, 4)).sum().backward()
    assert "raised" not in w.summary(checks=False)
    with gradarg.watch(net) as w:
        with pytest.raises(RuntimeError):
            torch.zeros(2, requires_grad=True).sum().backward(torch.ones(3))  # wrong shape
        net.zero_grad()
        net(torch.randn(2, 4)).sum().backward()
    assert w.summary(checks=False).startswith("gradients ok")


def test_the_wrapper_is_shared_by_nested_watches_and_removed_with_the_last():
    original = torch.autograd.backward
    net = nn.Linear(2, 1)
    outer = gradarg.watch(net)
    inner = gradarg.watch(net)
    outer.remove()
    assert torch.autograd.backward is not original  # inner still listens
    inner.remove()
    assert torch.autograd.backward is original


def test_a_wrapper_put_on_after_the_watch_is_not_undone():
    original = torch.autograd.backward
    net = nn.Linear(2, 1)
    w = gradarg.watch(net)

    def theirs(*args, **kwargs):  # another library wraps it while the watch is on
        return theirs.inner(*args, **kwargs)

    theirs.inner = torch.autograd.backward
    torch.autograd.backward = theirs
    try:
        w.remove()
        assert torch.autograd.backward is theirs  # not clobbered
        # a new watch wraps theirs (ours inside it passes through) and hears the error
        with gradarg.watch(net) as w2, pytest.raises(RuntimeError):
            torch.zeros(2, requires_grad=True).sum().backward(torch.ones(3))
        assert w2.grads.raised is not None and torch.autograd.backward is theirs
    finally:
        torch.autograd.backward = original
