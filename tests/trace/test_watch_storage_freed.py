"""Class: a parameter whose storage was freed while its shape stays (FSDP2 frees an unsharded
parameter once it is resharded, ``untyped_storage().resize_(0)``) is never read by the watch:
reading it reads freed memory, a segmentation fault rather than an error (a watched FSDP2
step crashed its process so, in the watch's end-of-block read of the parameter it uses to
tell whether an update ran).  The watch says what it could not read instead, and still
reports on the rest.

The truth comes from the tensors themselves: a spy (a ``TorchFunctionMode``) records every
torch function called, from the moment the storage is freed to the end of the block, with a
tensor argument that has entries but a 0-byte storage.  The user's own code in the test
touches no freed tensor after freeing it (as FSDP2 does: their ``.grad`` is dropped, so the
optimizer skips them).  Generated: which parameters are freed, when (after the backward,
after the step), whether a frozen parameter and momentum are in play, the widths and seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.overrides import TorchFunctionMode

import gradarg
from gradarg.trace.graph.values import local_sum, stored

# functions that read a tensor's metadata, never its entries: attribute descriptors (.grad,
# .grad_fn, .requires_grad, .data), views and hooks
METADATA = {"__get__", "__set__", "__hash__", "view_as", "view", "detach", "size", "dim",
            "numel", "stride", "storage_offset", "untyped_storage", "data_ptr", "element_size",
            "is_floating_point", "is_complex", "is_contiguous", "requires_grad_", "register_hook",
            "register_post_accumulate_grad_hook"}


class FreedReads(TorchFunctionMode):
    """Records each torch function that reads entries (not in :data:`METADATA`) of a tensor
    whose storage holds 0 bytes, and raises there instead of reading freed memory."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []
        self.on = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.on and getattr(func, "__name__", "") not in METADATA:
            for t in _leaves((args, kwargs)):
                if isinstance(t, torch.Tensor) and t.layout == torch.strided and t.numel() \
                        and t.device.type == "cpu" and t.untyped_storage().nbytes() == 0:
                    self.reads.append(getattr(func, "__name__", str(func)))
                    raise RuntimeError("an entry of freed storage read")  # not the crash
        return func(*args, **kwargs)


def _leaves(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        yield from _leaves(list(value.values()))
    else:
        yield value


def _free(p: torch.Tensor) -> None:
    p.grad = None  # as FSDP2's unsharded parameters: the optimizer skips them
    p.data.untyped_storage().resize_(0)


@settings(max_examples=20, deadline=None)
@given(freed=st.sets(st.integers(0, 3), min_size=1), when=st.sampled_from(["backward", "step"]),
       frozen=st.booleans(), momentum=st.sampled_from([0.0, 0.9]), width=st.integers(2, 8),
       seed=st.integers(0, 2**16))
def test_the_watch_reads_no_freed_storage(freed, when, frozen, momentum, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 2))
    params = list(model.parameters())
    if frozen:
        params[0].requires_grad_(False)
    opt = torch.optim.SGD(params, lr=0.1, momentum=momentum)
    x, y = torch.randn(8, 3), torch.randn(8, 2)
    spy = FreedReads()
    with spy, gradarg.watch(model) as w:
        for step in range(2):
            opt.zero_grad()
            params[0].grad = torch.ones_like(params[0]) if frozen else None  # a stale .grad
            nn.functional.mse_loss(model(x), y).backward()
            if step == 1 and when == "backward":
                spy.on = True
                for i in freed:
                    _free(params[i])
            opt.step()
        if when == "step":
            spy.on = True
            for i in freed:
                _free(params[i])
    spy.on = False
    assert spy.reads == [], spy.reads
    spy.on = True  # the findings and the table read no freed tensor either
    text = w.summary() + w.table() + "".join(w.problems())
    spy.on = False
    assert text and spy.reads == [], spy.reads


def test_stored_is_brute_force_over_views():
    """:func:`stored` against every entry's storage index, over views of a freed storage."""
    base = torch.arange(24.0)
    views = [base, base[3:], base.view(4, 6)[:, ::2], base.view(4, 6).t(), base[23:],
             base.as_strided((2, 3), (0, 4), 5)]
    for v in views:
        assert stored(v)
    base.untyped_storage().resize_(40)  # 10 float32 entries left
    for v in views:
        last = max(v.storage_offset() + sum(i * s for i, s in zip(ix, v.stride(), strict=True))
                   for ix in torch.cartesian_prod(*[torch.arange(n) for n in v.shape]).reshape(
                       v.numel(), v.dim()).tolist())
        assert stored(v) == (last < 10), (v.shape, v.stride(), v.storage_offset())
        assert (local_sum(v) is None) == (last >= 10)
    assert not stored(torch.empty(3, device="meta")) and stored(torch.empty(0))
