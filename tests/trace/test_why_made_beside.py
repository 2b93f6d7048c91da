"""why_no_grad on a tensor made from the graph's leaves beside or after the computation.

``why_no_grad(loss, model.weight[0])``, ``w.t()`` or a second forward's activation: the tensor
is not in the loss's graph, but the leaves it was computed from are.  Nothing was cut, so the
answer must not blame ``.detach()`` or a leaf made from values; it names the leaf in the graph
and, for a slice or view of one leaf, says the gradient is that part of the leaf's ``.grad``,
which is checked against ``torch.func.grad`` of the loss as a function of those entries.  A
tensor detached on its way into the loss is still called cut (the graph shows it), and once
``backward()`` freed the saved tensors that can no longer be checked, which the answer says.
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

FORWARDS = {  # the loss as a function of the leaf w (shape (rows, cols))
    "square": lambda w, x: ((x @ w.T) ** 2).sum(),
    "tanh": lambda w, x: torch.tanh(x @ w.T).sum() + w.sum(),
    "exp-mean": lambda w, x: (x @ w.T).exp().mean(),
}
PARTS = {  # (the tensor taken from w, the same part of a tensor of w's shape)
    "row": (lambda w: w[0], lambda g: g[0]),
    "column": (lambda w: w[:, 1], lambda g: g[:, 1]),
    "transpose": (lambda w: w.t(), lambda g: g.t()),
    "flat": (lambda w: w.reshape(-1), lambda g: g.reshape(-1)),
    "last-rows": (lambda w: w[1:], lambda g: g[1:]),
}
CUT_WORDS = (".detach()", "new leaf", "numpy", "no history only at")


@given(rows=st.integers(2, 4), cols=st.integers(2, 5), forward=st.sampled_from(sorted(FORWARDS)),
       part=st.sampled_from(sorted(PARTS)), freed=st.booleans(), seed=st.integers(0, 999))
def test_a_part_of_a_leaf_taken_beside_names_the_leaf(rows, cols, forward, part, freed, seed):
    torch.manual_seed(seed)
    w = torch.randn(rows, cols, dtype=torch.float64, requires_grad=True)
    x = torch.randn(3, cols, dtype=torch.float64)
    loss = FORWARDS[forward](w, x)
    if freed:
        loss.backward()
    take, same_part = PARTS[part]
    t = take(w)  # taken after the forward, to read "its gradient"
    d = why_no_grad(loss, t, names={"w": w})
    assert d.case == "not-reachable"
    assert "but w, which tensor was computed from" in d.message, d.message
    assert "w.grad" in d.message
    assert not any(word in d.message for word in CUT_WORDS), d.message
    assert ("cannot be checked" in d.message) == freed
    # the truth: the tensor is not in the graph, the leaf is; and the gradient of the loss
    # with respect to those entries is that part of the leaf's gradient
    (gw,) = torch.autograd.grad(FORWARDS[forward](w, x), w)

    # torch.func.grad with respect to the part: the loss rebuilt from it (index_put)
    index = torch.arange(w.numel()).reshape(w.shape)
    where = same_part(index).reshape(-1)

    def rebuilt(values):
        full = w.detach().reshape(-1).index_put((where,), values.reshape(-1))
        return FORWARDS[forward](full.reshape(w.shape), x)

    gpart = torch.func.grad(rebuilt)(take(w).detach().clone())
    torch.testing.assert_close(gpart, same_part(gw))


@given(seed=st.integers(0, 999), freed=st.booleans())
def test_a_second_forward_names_the_parameters(seed, freed):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    x = torch.randn(3, 4)
    hidden = model[1](model[0](x))  # read for inspection
    loss = model(x).pow(2).sum()  # a forward of its own
    if freed:
        loss.backward()
    d = why_no_grad(loss, hidden, module=model)
    assert d.case == "not-reachable"
    assert "are in it" in d.message and "0.weight" in d.message, d.message
    assert not any(word in d.message for word in CUT_WORDS), d.message


def test_a_detached_path_is_still_called_cut():
    w = torch.randn(3, requires_grad=True)
    h = w * 2
    loss = (h.detach() * w).sum()
    d = why_no_grad(loss, h, names={"w": w, "h": h})
    assert d.case == "not-reachable"
    assert ".detach()" in d.message and "computation of its own" not in d.message, d.message
    loss.backward()  # freed: the cut can no longer be seen, and the answer says so
    d = why_no_grad(loss, h, names={"w": w, "h": h})
    assert "cannot be checked" in d.message or "could not be checked" in d.message, d.message
