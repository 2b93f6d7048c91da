"""A loss term computed from ``torch.autograd.grad``'s result without ``create_graph=True``
(a gradient penalty that adds nothing to any gradient) is said, and only then.

Class: "ok" never while the loss holds a term that cannot reach the parameters.  The truth
comes from torch alone: the parameters' gradients with the term and without it are equal
while the loss's value changed (the term is a constant), against a step with
``create_graph=True`` where they differ.  Generated: the model's widths, the penalty's form
and weight, how it is added to the loss, how ``grad`` is called (keyword or positional
``create_graph``, a tuple or a dict of inputs), and controls where a gradient without a graph
is used as it should be (FGSM's perturbed input, a logged norm).
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "holds a term computed from torch.autograd.grad's result"

PENALTIES = {
    "wgan-gp": lambda g: ((g.norm(2, dim=1) - 1) ** 2).mean(),
    "squared norm": lambda g: g.pow(2).sum(),
    "abs mean": lambda g: g.abs().mean(),
}
ADDS = {
    "loss + lam * gp": lambda loss, gp, lam: loss + lam * gp,
    "lam * gp + loss": lambda loss, gp, lam: lam * gp + loss,
    "loss - (-lam) * gp": lambda loss, gp, lam: loss - (-lam) * gp,
    "torch.add alpha": lambda loss, gp, lam: torch.add(loss, gp, alpha=lam),
    "sum of a list": lambda loss, gp, lam: sum([loss, lam * gp]),
}


def _grad(out, x, create_graph, positional, as_dict):
    if as_dict:
        return torch.autograd.grad(out, {"x": x}, create_graph=create_graph)["x"]
    if positional:
        return torch.autograd.grad(out, x, None, True, create_graph)[0]
    return torch.autograd.grad(out, x, create_graph=create_graph)[0]


def _step(model, data, *, penalty, add, lam, create_graph, positional, as_dict, with_term=True):
    real, fake, a = data
    model.zero_grad(set_to_none=True)
    xh = (a * real + (1 - a) * fake).requires_grad_(True)
    base = model(fake).mean() - model(real).mean()
    if not with_term:
        base.backward()
        return base.detach()
    g = _grad(model(xh).sum(), xh, create_graph, positional, as_dict)
    loss = ADDS[add](base, PENALTIES[penalty](g), lam)
    loss.backward()
    return loss.detach()


def _grads(model):
    return [None if p.grad is None else p.grad.clone() for p in model.parameters()]


@settings(max_examples=25, deadline=None)
@given(width=st.integers(2, 6), hidden=st.integers(2, 8), seed=st.integers(0, 2**16),
       penalty=st.sampled_from(sorted(PENALTIES)), add=st.sampled_from(sorted(ADDS)),
       lam=st.sampled_from([0.5, 10.0]), create_graph=st.booleans(),
       positional=st.booleans(), as_dict=st.booleans())
def test_a_graphless_term_is_said_exactly_when_it_adds_nothing(
        width, hidden, seed, penalty, add, lam, create_graph, positional, as_dict):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(width, hidden), nn.Tanh(), nn.Linear(hidden, 1)).double()
    data = (torch.randn(8, width, dtype=torch.float64), torch.randn(8, width, dtype=torch.float64),
            torch.rand(8, 1, dtype=torch.float64))
    kw = {"penalty": penalty, "add": add, "lam": lam, "create_graph": create_graph,
              "positional": positional, "as_dict": as_dict}

    # the truth, torch alone: the term changes the loss's value; does it change a gradient?
    without = _step(model, data, with_term=False, **kw)
    g0 = _grads(model)
    with_term = _step(model, data, **kw)
    g1 = _grads(model)
    assert not torch.equal(with_term, without)
    adds_nothing = all(torch.equal(a, b) for a, b in zip(g0, g1, strict=True))
    assert adds_nothing == (not create_graph)

    with gradarg.watch(model) as w:
        _step(model, data, **kw)
    text = w.summary(checks=False)
    assert (SAID in text) == adds_nothing, text
    if adds_nothing:
        assert not text.startswith("gradients ok"), text
        assert "create_graph=True" in text and "test_watch_graphless.py:" in text
    # nothing left behind: no function mode, torch.autograd.grad itself again
    assert torch.overrides._get_current_function_mode_stack() == []
    assert not hasattr(torch.autograd.grad, "__wrapped__")


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), eps=st.sampled_from([0.01, 0.1]))
def test_a_gradient_used_as_data_is_not_a_term(seed, eps):
    """FGSM: the input's gradient without a graph makes a perturbed input the model is
    trained on, and a norm only logged: neither is a term of the loss."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        xr = x.clone().requires_grad_(True)
        g, = torch.autograd.grad(nn.functional.cross_entropy(model(xr), y), xr)
        logged = g.norm().item()
        x_adv = x + eps * g.sign()
        loss = nn.functional.cross_entropy(model(x_adv), y)
        loss.backward()
        opt.step()
    assert logged >= 0
    assert SAID not in w.summary(checks=False)


class _UserMode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_a_user_mode_entered_after_the_grad_call_is_left_in_place():
    """The watch's mode is popped at the block's end only when it is innermost: a user's
    function mode entered after the grad call and still open keeps its place (the watch's
    mode stays below it, idle, passing calls on, until a later window pops it: fnmodes.py)."""
    model = nn.Linear(3, 1)
    x = torch.randn(4, 3, requires_grad=True)
    with gradarg.watch(model):
        g, = torch.autograd.grad(model(x).sum(), x)
        outer = _UserMode()
        outer.__enter__()
        (model(x).sum() + g.norm()).backward()
    stack = torch.overrides._get_current_function_mode_stack()
    assert stack[-1] is outer  # the user's mode is still the innermost one
    outer.__exit__(None, None, None)
    assert torch.zeros(2).sum() == 0  # calls pass through the idle mode below
    idle = torch.overrides._get_current_function_mode_stack()
    assert idle and not any(m.on for m in idle)  # the watch's modes, idle, left for now
    with gradarg.watch(model):  # a later window pops them, innermost again
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(x).sum().backward()
        opt.step()
    assert not torch.overrides._get_current_function_mode_stack()


REMADE = {
    "torch.tensor of .item()": lambda loss: torch.tensor(loss.item(), requires_grad=True),
    "through NumPy": lambda loss: torch.tensor(loss.detach().numpy(), requires_grad=True),
    "detach().requires_grad_()": lambda loss: loss.detach().requires_grad_(),
    "torch.tensor of .tolist()": lambda loss: torch.tensor(loss.tolist(), requires_grad=True),
    "kept (control)": lambda loss: loss,
    "multiplied by a new leaf (control)": lambda loss: loss * torch.tensor(
        1.0, dtype=loss.dtype, requires_grad=True),
}


@settings(max_examples=20, deadline=None)
@given(remade=st.sampled_from(sorted(REMADE)), seed=st.integers(0, 2**16),
       double=st.booleans())
def test_a_loss_made_anew_is_named_exactly_when_it_is_a_leaf(remade, seed, double):
    """A loss re-created as a leaf (no graph): named with the call; the truth from torch
    alone (its grad_fn, and no parameter's .grad set by its backward)."""
    torch.manual_seed(seed)
    dtype = torch.float64 if double else torch.float32
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)).to(dtype)
    x, y = torch.randn(6, 3, dtype=dtype), torch.randn(6, 1, dtype=dtype)
    with gradarg.watch(model) as w:
        loss = REMADE[remade](((model(x) - y) ** 2).mean())
        leaf = loss.grad_fn is None
        loss.backward()
    assert leaf == all(p.grad is None for p in model.parameters())
    text = w.summary(checks=False)
    assert ("is a leaf tensor with no graph" in text) == leaf, text
    if leaf:
        assert text.startswith("no backward pass reached the model")
        assert "test_watch_graphless.py:" in w.why_no_grad("0.weight")


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), out=st.integers(1, 3), inner=st.sampled_from([0.01, 0.1]))
def test_fast_weights_from_a_gradient_without_a_graph_are_not_a_term(seed, out, inner):
    """First-order meta-learning: ``p - lr * g`` with ``g`` from ``autograd.grad`` without
    ``create_graph`` is an update of each parameter (a leaf), even a one-element one (a bias
    of one output), not a term of a loss; the query loss reaches the parameters through
    ``p``.  The truth: every parameter's ``.grad`` after the query loss's backward is the
    gradient of that loss at the fast weights (first-order MAML's meta-gradient)."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, out))
    xs, ys, xq, yq = torch.randn(6, 3), torch.randn(6, out), torch.randn(6, 3), torch.randn(6, out)
    call = torch.func.functional_call
    with gradarg.watch(model) as w:
        params = dict(model.named_parameters())
        support = nn.functional.mse_loss(call(model, params, (xs,)), ys)
        g = torch.autograd.grad(support, list(params.values()))
        fast = {n: p - inner * gi for (n, p), gi in zip(params.items(), g, strict=True)}
        nn.functional.mse_loss(call(model, fast, (xq,)), yq).backward()
    at = {n: f.detach().requires_grad_(True) for n, f in fast.items()}
    want = torch.autograd.grad(nn.functional.mse_loss(call(model, at, (xq,)), yq),
                               list(at.values()))
    for p, gw in zip(model.parameters(), want, strict=True):
        assert torch.allclose(p.grad, gw, atol=1e-6)
    assert SAID not in w.summary(checks=False)
