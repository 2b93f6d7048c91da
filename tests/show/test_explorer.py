"""gradarg.explorer: the data its HTML embeds, the numbers it shows first, and its errors.

Expected values come from torch.autograd.functional.jacobian and from y.backward(gradient=v),
never from the explorer itself. What the page computes when a reader types is checked in the
browser suite (tests/browser).
"""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
import torch

import gradarg

M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])


def matmul(x):
    return x @ M


class _Elements(HTMLParser):
    """Every start tag with its attributes, and the text of elements carrying data-row."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.cells: dict[tuple[str, str], str] = {}
        self._cell: tuple[str, str] | None = None
        self.live = ""
        self._in_live = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "data-row" in a:
            self._cell = (a["data-row"], a["data-col"])
            self.cells[self._cell] = ""
        self._in_live = a.get("aria-live") == "polite"

    def handle_endtag(self, tag):
        self._cell = None
        self._in_live = False

    def handle_data(self, data):
        if self._cell is not None:
            self.cells[self._cell] += data
        if self._in_live:
            self.live += data


def parse(ex) -> _Elements:
    p = _Elements()
    p.feed(ex._repr_html_())
    return p


def root_data(p: _Elements) -> dict:
    tag, attrs = p.tags[0]
    assert tag == "div" and "gradarg-explorer" in attrs["class"].split()
    return {k[5:]: v for k, v in attrs.items() if k.startswith("data-")}


def test_html_embeds_the_jacobian_shapes_v_and_name():
    x = torch.tensor([[2.0, 1.0]])
    ex = gradarg.explorer(matmul, x, v=[[0.5, -2.0]])
    data = root_data(parse(ex))
    expected = torch.autograd.functional.jacobian(matmul, x).reshape(2, 2)
    assert torch.equal(torch.tensor(json.loads(data["jacobian"])), expected)
    assert json.loads(data["x-shape"]) == [1, 2]
    assert json.loads(data["y-shape"]) == [1, 2]
    assert json.loads(data["v"]) == [0.5, -2.0]
    assert data["example"] == "matmul"
    assert json.loads(data["digits"]) == 4


def test_first_view_shows_scaled_rows_and_their_sum_as_backward_gives_it():
    x = torch.tensor([[2.0, 1.0]], requires_grad=True)
    v = torch.tensor([[0.5, -2.0]])
    p = parse(gradarg.explorer(matmul, x.detach(), v=v))
    J = torch.autograd.functional.jacobian(matmul, x.detach()).reshape(2, 2)
    for i in range(2):
        for k in range(2):
            assert float(p.cells[(str(i), str(k))]) == pytest.approx(float(v.flatten()[i] * J[i, k]))
    matmul(x).backward(gradient=v)
    shown = [float(p.cells[("sum", str(k))]) for k in range(2)]
    assert shown == pytest.approx(x.grad.flatten().tolist())
    assert p.live.strip() == f"x.grad = vᵀJ = {gradarg.fmt(x.grad)}"


def test_vjp_equals_backward_for_random_v():
    torch.manual_seed(1)
    W = torch.randn(3, 4, dtype=torch.float64)

    def fn(x):
        return torch.tanh(x @ W)

    x = torch.randn(2, 3, dtype=torch.float64)
    ex = gradarg.explorer(fn, x)
    assert ex.y_shape == (2, 4) and ex.x_shape == (2, 3)
    for _ in range(5):
        v = torch.randn(2, 4, dtype=torch.float64)
        leaf = x.clone().requires_grad_(True)
        fn(leaf).backward(gradient=v)
        torch.testing.assert_close(ex.vjp(v), leaf.grad)


def test_one_labelled_number_box_per_entry_of_v():
    p = parse(gradarg.explorer(lambda t: t**2, torch.tensor([1.0, 2.0, 3.0])))
    boxes = [a for tag, a in p.tags if tag == "input"]
    assert [b["type"] for b in boxes] == ["number"] * 3
    assert [b["aria-label"].split(",")[0] for b in boxes] == ["v[0]", "v[1]", "v[2]"]
    assert [tag for tag, _ in p.tags].count("label") == 3
    assert sum(1 for _, a in p.tags if a.get("aria-live") == "polite") == 1


def test_self_contained_no_external_assets():
    page = gradarg.explorer(matmul, torch.tensor([[2.0, 1.0]]))._repr_html_()
    for needle in ("src=", "href=", "http", "@import", "url("):
        assert needle not in page
    assert page.count("<script>") == 1


def test_scalar_output_and_scalar_input():
    ex = gradarg.explorer(lambda t: (t**2).sum(), torch.tensor([1.0, 2.0]))
    assert ex.y_shape == () and ex.jacobian.shape == (1, 2)
    assert ex.vjp(3.0).tolist() == [6.0, 12.0]  # 3 * 2x
    p = parse(ex)
    assert [a["aria-label"].split(",")[0] for t, a in p.tags if t == "input"] == ["v"]
    ex0 = gradarg.explorer(torch.sin, torch.tensor(0.0))
    assert ex0.x_shape == () and ex0.vjp().item() == 1.0  # cos(0)


def test_name_default_and_escaping():
    assert gradarg.explorer(lambda t: 2 * t, torch.ones(2)).name == "fn"
    ex = gradarg.explorer(lambda t: 2 * t, torch.ones(2), name='<b>"y"</b>')
    page = ex._repr_html_()
    assert "<b>" not in page
    assert root_data(parse(ex))["example"] == '<b>"y"</b>'


def test_never_touches_the_callers_tensor():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    before = x.detach().clone()
    gradarg.explorer(lambda t: t * 3, x)
    assert x.grad is None and x.requires_grad and torch.equal(x.detach(), before)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"v": torch.ones(2)}, ValueError, r"v has shape \(2,\) but the output has shape \(1, 2\)"),
        ({"v": [[1.0, float("nan")]]}, ValueError, "v holds NaN"),
        ({"digits": 0}, ValueError, "digits must be an int from 1 to 17"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        gradarg.explorer(matmul, torch.tensor([[2.0, 1.0]]), **kwargs)


def test_bad_functions_and_inputs():
    with pytest.raises(ValueError, match=r"y has shape \(17,\) \(17 entries\).*1 to 16"):
        gradarg.explorer(lambda t: t, torch.zeros(17))
    with pytest.raises(ValueError, match="at most 256 entries of J"):
        gradarg.explorer(lambda t: t[:2], torch.zeros(200))
    with pytest.raises(TypeError, match="returned a tuple of 2 values"):
        gradarg.explorer(lambda t: (t, t), torch.zeros(2))
    with pytest.raises(TypeError, match="real floating"):
        gradarg.explorer(lambda t: t, torch.zeros(2, dtype=torch.complex64))
    with pytest.raises(TypeError, match="autograd cannot differentiate"):
        gradarg.explorer(lambda t: t, torch.zeros(2, dtype=torch.int64))
    with pytest.raises(ValueError, match="Jacobian of fn at x holds NaN or Inf"):
        gradarg.explorer(torch.sqrt, torch.zeros(2))
    with pytest.raises(ValueError, match="x has no entries"):
        gradarg.explorer(lambda t: t.sum(), torch.zeros(0))
