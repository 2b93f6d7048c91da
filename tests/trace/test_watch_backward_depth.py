"""One count of running ``backward()`` calls for every part of the watch
(``patches.backward_depth``): balanced after any mix of plain, nested (a reentrant
checkpoint's recomputation runs a backward inside the outer one) and failing calls, and the
``outer`` hooks hear exactly the calls that ran inside no other."""

import torch
import torch.utils.checkpoint as cp
from hypothesis import given, settings
from hypothesis import strategies as st

from gradarg.trace.watching import patches


def _nested_loss(x):
    lin = torch.nn.Linear(3, 3)
    return cp.checkpoint(lin, x, use_reentrant=True).sum()  # a backward inside the backward


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["plain", "nested", "fails"]), min_size=1, max_size=6))
def test_depth_balanced_and_outer_hooks_hear_outermost_calls(kinds):
    heard = {"call": 0, "done": 0, "all_calls": 0, "depth_at_outer": set()}

    def on_call(tensors):
        heard["call"] += 1
        heard["depth_at_outer"].add(patches.backward_depth())

    def on_done():
        heard["done"] += 1
        heard["depth_at_outer"].add(patches.backward_depth())

    def on_any(tensors):
        heard["all_calls"] += 1

    handles = [patches.register_backward_call_hook(on_call, outer=True),
               patches.register_backward_done_hook(on_done, outer=True),
               patches.register_backward_call_hook(on_any)]
    try:
        nested = 0
        for kind in kinds:
            x = torch.randn(2, 3, requires_grad=True)
            if kind == "plain":
                (x * 2).sum().backward()
            elif kind == "nested":
                _nested_loss(x).backward()
                nested += 1
            else:
                y = x.exp()
                loss = (y * 2).sum()
                y.add_(1)  # a saved tensor modified in place: backward raises
                try:
                    loss.backward()
                except RuntimeError:
                    pass
                else:  # pragma: no cover
                    raise AssertionError("expected the in-place error")
            assert patches.backward_depth() == 0
    finally:
        for h in handles:
            h.remove()
    # torch's own reentrant checkpoint calls torch.autograd.backward inside the outer call
    assert heard["call"] == heard["done"] == len(kinds)
    assert heard["all_calls"] == len(kinds) + nested
    assert heard["depth_at_outer"] == {1}
    assert patches.backward_depth() == 0
