"""why_no_grad never changes a ``.grad``, a retained non-leaf's included.

torch's engine runs a non-leaf's ``retain_grad()`` hook in every pass, ``torch.autograd.grad``
included, and the hook adds what arrived to ``.grad``.  The diagnosis's own pass therefore
added one pass to every retained tensor of the graph: after the user's single ``backward()``,
asking about a retained tensor read twice one pass and answered "accumulated: 2 backward()
calls" (false), and asking about another tensor left the retained one's ``.grad`` doubled.

Invariant, over generated chains with random retained intermediates, before and after the
user's backward, asked about a leaf or an intermediate, with or without names: every tensor's
``.grad`` is as it was, and a retained tensor after one backward is never "accumulated".
"""

from __future__ import annotations

import warnings

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import trace_backward, why_no_grad

STEPS = {
    "tanh": torch.tanh,
    "scale": lambda t: t * 1.5,
    "square": lambda t: t * t,
    "sin": torch.sin,
    "matmul": lambda t: t @ torch.linspace(0.5, 1.5, t.shape[-1] ** 2).reshape(t.shape[-1], -1),
}


def _grads(ts):
    """Each tensor's ``.grad`` (a non-retained non-leaf has none to read: ``None``)."""
    return [None if (t.grad_fn is not None and not t.retains_grad) or t.grad is None
            else t.grad.clone() for t in ts]


def _same(a, b):
    return all((x is None and y is None) or (x is not None and y is not None and torch.equal(x, y))
               for x, y in zip(a, b, strict=True))


@given(steps=st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=5),
       retain=st.lists(st.booleans(), min_size=5, max_size=5),
       after=st.booleans(), ask=st.integers(0, 5), named=st.booleans(), n=st.integers(1, 4))
def test_no_grad_changes_and_no_false_accumulation(steps, retain, after, ask, named, n):
    torch.manual_seed(n)
    w = torch.randn(n, requires_grad=True)
    chain = [w]
    for k, name in enumerate(steps):
        t = STEPS[name](chain[-1])
        if retain[k]:
            t.retain_grad()
        chain.append(t)
    loss = chain[-1].sum()
    if after:
        loss.backward(retain_graph=True)
    before = _grads(chain)
    asked = chain[min(ask, len(chain) - 1)]
    names = {f"t{k}": t for k, t in enumerate(chain)} if named else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = why_no_grad(loss, asked, names=names)
    assert _same(before, _grads(chain)), d.message
    if after and (asked is w or asked.retains_grad):
        assert d.case == "ok", d.message  # one backward: exactly one pass in .grad


def test_trace_with_use_grad_puts_named_retained_grads_back():
    w = torch.randn(3, requires_grad=True)
    h = w.exp()
    h.retain_grad()
    y = (h * 2).sum()
    y.backward(retain_graph=True)
    kept = h.grad.clone()
    trace_backward(y, names={"h": h, "w": w}, use_grad=True, retain_graph=True)
    assert torch.equal(h.grad, kept)
    assert torch.equal(w.grad, 2 * w.exp().detach())  # untouched: one pass's gradient


def test_a_dead_weak_proxy_in_the_process_is_no_error():
    """Finding retained tensors reads the live objects: a weak proxy whose referent is gone
    (isinstance on it raises ReferenceError) and tensor subclasses are passed over."""
    import weakref

    class Holder:
        pass

    held = Holder()
    proxy = weakref.proxy(held)
    del held  # the proxy is dead
    w = torch.randn(3, requires_grad=True)
    h = w * 2
    h.retain_grad()
    y = h.sum()
    assert why_no_grad(y, w).case == "not-run"
    assert h.grad is None
    assert proxy is not None
