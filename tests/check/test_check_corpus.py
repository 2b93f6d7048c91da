"""check_backward on a corpus of custom Functions: every wrong backward caught, no right one
flagged, in float64 and float32, and the recognisable bugs named.

Which backward is wrong is known by construction (tests/check/backward_corpus.py writes each bug on
purpose); torch.autograd.gradcheck confirms the right ones that are smooth at their inputs.
"""

from __future__ import annotations

import pytest
import torch
from backward_corpus import F32, F64, RIGHT, WRONG, inputs

import gradarg

DTYPES = [pytest.param(F64, id="float64"), pytest.param(F32, id="float32")]


def _ids(cases):
    return [pytest.param(c, id=c.name) for c in cases]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", _ids(WRONG))
def test_every_wrong_backward_is_caught(case, dtype):
    r = gradarg.check_backward(case.fn, *inputs(case, dtype))
    if dtype not in case.wrong_in:  # the bug does not exist in this dtype
        assert r, str(r)
        return
    assert not r and r.status == "wrong", str(r)
    assert r.wrong_pairs and r.example is not None
    assert r.summary.startswith("WRONG")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", _ids(RIGHT))
def test_no_right_backward_is_flagged(case, dtype):
    r = gradarg.check_backward(case.fn, *inputs(case, dtype))
    assert r and r.status == "agree", str(r)
    assert all(p.agree for p in r.pairs) and all(p.agree for p in r.probes)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", _ids([c for c in WRONG if c.kind is not None]))
def test_the_classification_names_the_bug(case, dtype):
    if dtype not in case.wrong_in:
        pytest.skip("not wrong in this dtype")
    r = gradarg.check_backward(case.fn, *inputs(case, dtype))
    if case.kind == "region":
        assert any(p.region and "x < 0" in p.region for p in r.wrong_pairs), str(r)
    else:
        assert any(p.pattern == case.kind for p in r.wrong_pairs), str(r)
    assert ("Only some inputs are wrong" in r.summary) == case.only_some_inputs, r.summary


@pytest.mark.parametrize("case", _ids(WRONG))
def test_random_probes_alone_catch_every_wrong_backward(case):
    r = gradarg.check_backward(case.fn, *inputs(case, F64), localize=False)
    assert not r and r.pairs == () and not all(p.agree for p in r.probes)


@pytest.mark.parametrize("case", _ids([c for c in RIGHT if "exactly 0" not in c.name]))
def test_right_cases_are_right_by_gradcheck(case):
    # independent judge of the corpus itself (kinks excepted: there gradcheck's central
    # difference straddles the kink)
    args = inputs(case, F64)
    assert torch.autograd.gradcheck(case.fn, args, nondet_tol=1e-12)


def test_corpus_size():
    assert len(WRONG) >= 25 and len(RIGHT) >= 10
