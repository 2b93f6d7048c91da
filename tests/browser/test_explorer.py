"""The explorer on the landing page: typed ``v``s against torch.

For five seeded random upstream gradients typed with the keyboard into each explorer, what the
page shows (each row of J scaled by its entry of v, their sum, the live summary) must agree at
4 significant digits with torch: ``y.backward(gradient=v)`` on the page's ``y = x @ M`` (also the
matrix-product page's example), and rows of ``torch.autograd.functional.jacobian``.
"""

from __future__ import annotations

import json
import math
import re

import pytest
import torch
from browsing import EXPLORER_RUNS

import gradarg

EXPLORER_PAGES = ["index.html"]
M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])      # the landing page's y = x @ M at x = [[2, 1]]
X0 = [[2.0, 1.0]]


def matmul(x):
    return x @ M


def agree_at_4_digits(shown: str, value: float) -> bool:
    """``shown`` is ``value`` rounded to 4 significant digits (a rounding tie may go either way)."""
    if shown == gradarg.fmt(value, 4):
        return True
    mantissa = re.sub(r"e.*", "", shown).lstrip("-").replace(".", "").lstrip("0")
    if len(mantissa) > 4 or value == 0:
        return False
    unit = 10.0 ** (math.floor(math.log10(abs(value))) - 3)
    return abs(float(shown) - value) <= 0.5 * unit * (1 + 1e-6)


def test_agree_at_4_digits_is_strict():
    assert agree_at_4_digits("0.6667", 2 / 3) and agree_at_4_digits("-12.35", -12.345)
    assert not agree_at_4_digits("0.6666", 2 / 3)
    assert not agree_at_4_digits("0.66667", 2 / 3)  # more digits than the page promises
    assert not agree_at_4_digits("0.667", 2 / 3)


@pytest.mark.parametrize("page", EXPLORER_PAGES)
def test_explorer_shows_what_torch_computes(visits, page):
    explorers = visits(page).explorers
    assert len(explorers) == 1, "one explorer on the page"
    (ex,) = explorers
    x0 = torch.tensor(X0)
    y_shape = tuple(matmul(x0).shape)
    m, n = math.prod(y_shape), x0.numel()
    J = torch.autograd.functional.jacobian(matmul, x0).reshape(m, n)
    data = ex["data"]
    assert json.loads(data["xShape"]) == list(x0.shape)
    assert json.loads(data["yShape"]) == list(y_shape)
    assert data["example"]
    torch.testing.assert_close(torch.tensor(json.loads(data["jacobian"]), dtype=torch.float64), J.double())
    assert len(ex["runs"]) == EXPLORER_RUNS
    typed_vs = set()
    for run in ex["runs"]:
        v = torch.tensor([float(t) for t in run["typed"]]).reshape(y_shape)
        typed_vs.add(tuple(run["typed"]))
        x = x0.clone().requires_grad_(True)
        matmul(x).backward(gradient=v)
        cells = {(row, col): text for row, col, text in run["cells"]}
        assert len(cells) == (m + 1) * n
        for i in range(m):
            for k in range(n):
                expected = float(v.flatten()[i] * J[i, k])
                assert agree_at_4_digits(cells[(str(i), k)], expected), (run, i, k, expected)
        for k in range(n):
            expected = float(x.grad.flatten()[k])
            assert agree_at_4_digits(cells[("sum", k)], expected), (run, k, expected)
        prefix = "x.grad = vᵀJ = "
        assert run["live"].startswith(prefix)
        live = re.findall(r"-?[\d.]+(?:e-?\d+)?", run["live"][len(prefix):])
        grads = x.grad.flatten().tolist()
        assert len(live) == n and all(map(agree_at_4_digits, live, grads)), (run["live"], grads)
        assert run["focus"] == ex["labels"], "Tab moves through the entries of v in order"
    assert len(typed_vs) == EXPLORER_RUNS
