"""The diagnosis as ordered rules: what the rule list promises to the code that reads it."""

from __future__ import annotations

import typing

import pytest
import torch

from gradarg import GradDiagnosis, why_no_grad
from gradarg.trace.why import causes, context, rules


def test_the_case_type_and_the_docstrings_name_every_case():
    cases = rules.cases(causes.RULES)
    assert typing.get_args(typing.get_type_hints(GradDiagnosis)["case"]) == cases
    returns = why_no_grad.__doc__.split("Returns\n")[1].split("Raises\n")[0]
    for case in cases:
        assert f'``"{case}"``' in returns, case
        assert f'``"{case}"``' in GradDiagnosis.__doc__, case


class _Context:
    def __init__(self) -> None:
        self.asked = 0

    @property
    def freed(self) -> bool:
        self.asked += 1
        return True


def test_rules_are_asked_in_order_and_freed_only_where_handled():
    undecided = rules.Rule(("a",), "", lambda c: None)
    live_only = rules.Rule(("b",), "", lambda c: "b")
    split = rules.Rule(("c",), "", lambda c: "live", lambda c: "freed")
    ctx = _Context()
    assert rules.decide((undecided, live_only, split), ctx) == (live_only, "b")
    assert ctx.asked == 0  # asking may cost a backward pass: no rule here needed it
    assert rules.decide((undecided, split, live_only), ctx) == (split, "freed")
    assert ctx.asked == 1
    with pytest.raises(LookupError):
        rules.decide((undecided,), ctx)


def test_no_backward_pass_runs_for_what_the_graph_alone_shows(monkeypatch):
    def no_pass(*args, **kwargs):
        raise AssertionError("a traced pass ran")

    monkeypatch.setattr(context, "trace_backward", no_pass)
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    h = w * 3
    y = (h**2).sum()
    assert why_no_grad(y, h).case == "non-leaf"
    assert why_no_grad(y, torch.ones(2, requires_grad=True)).case == "not-reachable"
    with pytest.raises(AssertionError, match="a traced pass ran"):
        why_no_grad(y, w)
