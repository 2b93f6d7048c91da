"""Class: an edit of ``.grad`` made out of place between the backward and the optimizer step,
its result thrown away (``p.grad.data.clamp(-1, 1)`` instead of ``clamp_``), is named instead
of "ok"; an edit that takes effect (in place, assigned, copied in) or a result that is used
(a norm for logging, a list kept) is not.

The truth comes from torch alone: ``.grad`` read just before ``optimizer.step()`` against a
copy taken right after the backward (an edit that took effect changed it; a thrown-away one
did not, though the op changes the values), and the form of the generated line (its result is
or is not used).  Generated: the op, the form, ``.data`` or not, how many parameters are
edited, the number of iterations, the optimizer.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

OPS = {  # name -> (out of place, in place); each changes a gradient of this test's scale
    "clamp": (lambda g: g.clamp(-1e-3, 1e-3), lambda g: g.clamp_(-1e-3, 1e-3)),
    "mul": (lambda g: g.mul(0.5), lambda g: g.mul_(0.5)),
    "div": (lambda g: g / 4, lambda g: g.div_(4)),
    "add": (lambda g: torch.add(g, 1.0), lambda g: g.add_(1.0)),
    "sign": (lambda g: g.sign(), lambda g: g.sign_()),
    "where": (lambda g: torch.where(g >= g.max(), g, 0.0), None),
}
# what each form does with the result; whether the edit takes effect; whether it is said
FORMS = {
    "thrown away": (False, True),
    "in place": (True, False),
    "assigned": (True, False),
    "copied in": (True, False),
    "kept in a list": (False, False),
    "kept until after the step": (False, False),
    "used for a norm": (False, False),
}


def edit(p, op: str, form: str, data: bool, kept: list) -> None:
    g = p.grad.data if data else p.grad
    out_of_place, in_place = OPS[op]
    if form == "thrown away":
        out_of_place(g)
    elif form == "in place":
        if in_place is None:
            p.grad.copy_(out_of_place(g))
        else:
            in_place(g)
    elif form == "assigned":
        p.grad = out_of_place(g)
    elif form == "copied in":
        p.grad.copy_(out_of_place(g))
    elif form in ("kept in a list", "kept until after the step"):
        kept.append(out_of_place(g))
    else:
        kept.append(float(out_of_place(g).norm()))


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(sorted(OPS)), form=st.sampled_from(sorted(FORMS)),
       data=st.booleans(), every=st.booleans(), steps=st.integers(1, 2),
       adam=st.booleans(), seed=st.integers(0, 2**16))
def test_a_thrown_away_edit_of_grad_is_named(op, form, data, every, steps, adam, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 2))
    opt = (torch.optim.Adam if adam else torch.optim.SGD)(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 3) * 4, torch.randn(16, 2) * 40
    params = list(model.parameters())
    edited = params if every else params[-1:]
    changed = []
    kept: list = []
    with gradarg.watch(model) as w:
        for _ in range(steps):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            left = [p.grad.clone() for p in edited]
            for p in edited:
                edit(p, op, form, data, kept)
            changed.append(any(not torch.equal(a, p.grad) for a, p in zip(left, edited,
                                                                         strict=True)))
            opt.step()
            if form == "kept until after the step":
                kept.clear()  # freed after the step: held through the window, not thrown away
    takes_effect, said_expected = FORMS[form]
    assert all(c == takes_effect for c in changed), (op, form, changed)  # torch's truth
    text = w.summary(checks=False)
    said = "thrown away" in text and f"{op}()" in text
    assert said == said_expected, (op, form, data, text)
    if said_expected:
        assert not text.startswith("gradients ok"), text
        # the parameter named is an edited one, and the count of the others is right
        assert ("0.weight and 3 more parameter(s)" in text) if every else (
            "the .grad of 2.bias made" in text), text
    assert torch._C._len_torch_function_stack() == 0  # no mode left behind


def test_a_thrown_away_edit_of_another_tensor_is_not_named():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        model(torch.randn(4, 3)).sum().backward()
        model.weight.data.clamp(-1, 1)  # a weight, not a gradient: not this class
        torch.randn(3).clamp(-1, 1)
        opt.step()
    assert "thrown away" not in w.summary(checks=False)


def test_the_window_closes_and_modes_stack_with_the_users():
    """The watch's function mode is left when the block ends, also under a mode of the
    user's entered between two steps, and beside a grad penalty's (graphless) mode."""

    class Counting(torch.overrides.TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            Counting.calls += 1
            return func(*args, **(kwargs or {}))

    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 3, requires_grad=True)
    with gradarg.watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            out = model(x)
            (g,) = torch.autograd.grad(out.sum(), x, create_graph=True)
            (out.sum() + g.pow(2).sum()).backward()
            with Counting():
                model.weight.grad.clamp(-1, 1)
            opt.step()
        opt.zero_grad()
        model(x).sum().backward()
        user_mode = Counting()
        user_mode.__enter__()
    # the user's own, still entered, above the watch's (off: it passes calls on)
    assert torch._C._len_torch_function_stack() == 2
    user_mode.__exit__(None, None, None)
    assert "thrown away" in w.summary(checks=False)
    with gradarg.watch(model):  # the next watch pops the one left off, innermost again
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()  # its window closes: its own mode and the one left off are popped
        assert torch._C._len_torch_function_stack() == 0
    assert torch._C._len_torch_function_stack() == 0


# Dynamo reads .grad of the traced tensors under a filter of its own, which "error" overrides
@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
def test_under_a_compiled_model():
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    compiled = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradarg.watch(model) as w:
        for _ in range(3):
            opt.zero_grad()
            compiled(torch.randn(4, 3)).sum().backward()
            for p in model.parameters():
                p.grad.data.clamp(-1e-3, 1e-3)
            opt.step()
    assert "thrown away" in w.summary(checks=False)
    assert torch._C._len_torch_function_stack() == 0
