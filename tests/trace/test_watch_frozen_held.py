"""Class: the optimizer was built from a selection of the model's parameters (an adapter's
layers, a head) and some of those it holds are frozen, so its step never moves them: a
``requires_grad_(False)`` on a module after new layers were attached to it (IP-Adapter's
``to_k_ip`` frozen with the denoiser), or a selection by name that picks frozen layers.  The
watch names each such parameter instead of "ok"; an optimizer over every parameter of the model,
with some frozen (the usual way to freeze), and a selection of trainable parameters only are
not named.

The truth comes from torch: which parameters the optimizer holds (its ``param_groups``) and
which of those the step left bit for bit unchanged with no ``.grad``.  Generated: a wrapper
holding a body of 2 to 4 blocks (names nested one level down), which blocks are frozen and
whether the freeze happens before or after the blocks' ``extra`` layers are attached, whether
the optimizer holds the ``extra`` layers only, every trainable parameter, or every parameter,
the optimizer, a ``.grad`` left on the frozen layers from before the freeze or not, how
``zero_grad`` runs (to None, to zeros, not at all) and the seed.

Also here: a parameter asked for by its name inside a submodule (``body.0.extra.weight`` for
the wrapper's ``net.body.0.extra.weight``) is the same tensor, or the name is refused with the
candidates when several submodules hold it.
"""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = re.compile(r"(\d+) parameter\(s\) the optimizer holds are frozen \(requires_grad=False\):"
                  r" ([^(]*) \(observed")
OPTIMIZERS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.01),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01),
}


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Linear(4, 4)

    def attach(self):
        self.extra = nn.Linear(4, 4, bias=False)

    def forward(self, x):
        return torch.tanh(self.main(x) + self.extra(x))


class Wrapper(nn.Module):
    def __init__(self, blocks, frozen, freeze_after):
        super().__init__()
        self.net = nn.Module()
        self.net.body = nn.ModuleList(Block() for _ in range(blocks))
        for i, b in enumerate(self.net.body):
            if i in frozen and not freeze_after:
                b.requires_grad_(False)
            b.attach()
            if i in frozen and freeze_after:
                b.requires_grad_(False)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        for b in self.net.body:
            x = b(x)
        return self.head(x)


@settings(max_examples=40, deadline=None)
@given(blocks=st.integers(2, 4), frozen=st.sets(st.integers(0, 3), max_size=3),
       freeze_after=st.booleans(), held=st.sampled_from(["extra", "trainable", "all"]),
       opt=st.sampled_from(sorted(OPTIMIZERS)), stale=st.booleans(),
       zero=st.sampled_from(["none", "zeros", "skip"]), seed=st.integers(0, 2**16))
def test_frozen_parameters_a_selective_optimizer_holds_are_named(blocks, frozen, freeze_after,
                                                                 held, opt, stale, zero, seed):
    check(blocks, frozen, freeze_after, held, opt, stale, zero, seed)


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
@pytest.mark.parametrize("zero", ["zeros", "skip"])
def test_a_frozen_parameter_stepped_on_a_grad_left_from_before_is_not_idle(opt, zero):
    """The adapter frozen after attaching, with a ``.grad`` left from before the freeze that
    ``zero_grad`` does not reset to None: the step reads it (the random draw may miss this)."""
    check(2, {0}, True, "extra", opt, True, zero, 0)


def check(blocks, frozen, freeze_after, held, opt, stale, zero, seed):
    """One step under the watch against the truth from torch."""
    torch.manual_seed(seed)
    frozen = {i for i in frozen if i < blocks}
    model = Wrapper(blocks, frozen, freeze_after)
    picked = {"extra": [p for n, p in model.named_parameters() if ".extra." in n],
              "trainable": [p for p in model.parameters() if p.requires_grad],
              "all": list(model.parameters())}[held]
    optimizer = OPTIMIZERS[opt](picked)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    if stale:  # a .grad left from before the freeze
        for p in model.parameters():
            p.grad = None if p.requires_grad else torch.full_like(p, 0.1)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with gradarg.watch(model) as w:
        if zero != "skip":
            optimizer.zero_grad(set_to_none=zero == "none")
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    text = w.summary(checks=False)
    # the truth, from torch: held by the optimizer, left unchanged, no .grad
    holds = {id(p) for g in optimizer.param_groups for p in g["params"]}
    idle = [n for n, p in model.named_parameters() if id(p) in holds
            and p.grad is None and torch.equal(p.detach(), before[n])]
    selection = len(holds) < len(list(model.parameters()))
    said = SAID.search(text)
    if idle and selection:
        assert said is not None, text
        assert int(said[1]) == len(idle)
        assert said[2].split(", ") == idle, text
        assert not text.startswith("gradients ok"), text
    else:
        assert said is None, text


@pytest.mark.parametrize("blocks", [1, 2])
def test_a_parameter_asked_for_by_its_name_in_a_submodule(blocks):
    torch.manual_seed(0)
    model = Wrapper(blocks, set(), False)
    with gradarg.watch(model) as w:
        model(torch.randn(2, 4)).sum().backward()
    full = dict(model.named_parameters())
    for prefix, sub in model.named_modules():
        for local, p in sub.named_parameters():
            holders = {id(q) for m in (s for _, s in model.named_modules())
                       for n, q in m.named_parameters() if n == local}
            if local in full or len(holders) == 1:
                assert full[w.param_name(local)] is p, (prefix, local)
                assert w.why_no_grad(local) == w.why_no_grad(p)
            else:
                with pytest.raises(KeyError, match="give the full name") as e:
                    w.param_name(local)
                named = str(e.value).split(": ", 1)[1].split("; give")[0].split(", ")
                assert {id(full[n]) for n in named} == holders, str(e.value)
    with pytest.raises(KeyError, match=r"no parameter named 'nothing\.weight'"):
        w.param_name("nothing.weight")
