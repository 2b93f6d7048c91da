"""why_no_grad: a normalisation's own statistics are no cut, and tied weights are named both ways.

(1) Where the answer lists the nodes at which tensors without history join the graph (places
a cut value could enter), it counted the mean and rstd a layer norm saves for its backward
(computed inside the operation) and a batch norm's running statistics: with a model's unused
head asked about, "takes tensors without history only at NativeLayerNormBackward0 (2, 8, 1)"
pointed at a layer norm.  (2) ``module.named_parameters()`` names a tied tensor once
(``transformer.wte.weight`` for GPT-2's ``lm_head.weight``): asked about the other name, the
answer spoke of a parameter the user did not name, without saying they are one tensor.
Truth: torch's saved-tensor attributes (``_saved_result1``...), its ``.grad`` after backward,
and ``named_parameters(remove_duplicate=False)``.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

NORMS = {"layer": lambda d: torch.nn.LayerNorm(d), "batch": lambda d: torch.nn.BatchNorm1d(d),
         "group": lambda d: torch.nn.GroupNorm(1, d), "rms": lambda d: torch.nn.RMSNorm(d)}


class Body(torch.nn.Module):
    def __init__(self, norm: str, d: int) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.norm = NORMS[norm](d)
        self.unused = torch.nn.Linear(d, 1)  # a head this loss does not use (a pooler)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.lin(x).relu()).square().mean()


@given(norm=st.sampled_from(sorted(NORMS)), d=st.integers(2, 6), batch=st.integers(2, 5),
       seed=st.integers(0, 99))
def test_a_normalisations_statistics_are_not_where_a_cut_enters(norm, d, batch, seed):
    torch.manual_seed(seed)
    m = Body(norm, d)
    loss = m(torch.randn(batch, d))
    answer = why_no_grad(loss, m.unused.weight, module=m)
    listed = re.search(r"without history only at (.*?) \(input", answer.message)
    if listed:
        assert "Norm" not in listed.group(1), answer.message
    loss.backward()
    assert m.unused.weight.grad is None and m.lin.weight.grad is not None  # torch's truth


class Tied(torch.nn.Module):
    def __init__(self, vocab: int, d: int) -> None:
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, d)
        self.head = torch.nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight  # tied, as GPT-2's lm_head

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(self.head(self.wte(ids)), ids)


@given(vocab=st.integers(3, 9), d=st.integers(2, 5), after=st.booleans(),
       asked=st.sampled_from(["wte", "head"]), seed=st.integers(0, 99))
def test_tied_weights_are_named_both_ways(vocab, d, after, asked, seed):
    torch.manual_seed(seed)
    m = Tied(vocab, d)
    names = [k for k, p in m.named_parameters(remove_duplicate=False) if p is m.wte.weight]
    assert names == ["wte.weight", "head.weight"]  # torch's record of the tie
    loss = m(torch.randint(0, vocab, (4,)))
    if after:
        loss.backward()
    param = m.wte.weight if asked == "wte" else m.head.weight
    text = why_no_grad(loss, param, module=m).message
    assert "wte.weight" in text and "head.weight" in text and "tied" in text, text


def test_an_untied_parameter_is_not_called_tied():
    torch.manual_seed(0)
    m = Body("layer", 3)
    loss = m(torch.randn(2, 3))
    assert "tied" not in why_no_grad(loss, m.lin.weight, module=m).message
