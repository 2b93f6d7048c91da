"""The package at its edges, as a script author meets it: bad arguments, the REPL, files,
optional dependencies, import cost."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

import gradarg

X = torch.linspace(-1.0, 1.0, 4, dtype=torch.float64)
NOT_A_FUNCTION = torch.sin(X)  # the classic mistake: passing f(x) instead of f


@pytest.mark.parametrize("call", [
    lambda: gradarg.jacobian(NOT_A_FUNCTION, X),
    lambda: gradarg.backward_vjp(NOT_A_FUNCTION, X, torch.ones(4, dtype=torch.float64)),
    lambda: gradarg.check_backward(NOT_A_FUNCTION, X.requires_grad_(True)),
    lambda: gradarg.explorer(NOT_A_FUNCTION, X),
    lambda: gradarg.sparsity_pattern(NOT_A_FUNCTION, X),
    lambda: gradarg.jacobian_sparsity(NOT_A_FUNCTION, X),
    lambda: gradarg.SparseJacobian(torch.eye(4, dtype=torch.bool))(NOT_A_FUNCTION, X),
    lambda: gradarg.SparseHessian(torch.eye(4, dtype=torch.bool))(NOT_A_FUNCTION, X),
], ids=["jacobian", "backward_vjp", "check_backward", "explorer", "sparsity_pattern",
        "jacobian_sparsity", "SparseJacobian", "SparseHessian"])
def test_a_non_callable_function_is_a_type_error_naming_it(call):
    with pytest.raises(TypeError, match=r"\b(fn|f) must be"):
        call()


def test_an_empty_input_gives_a_jacobian_without_columns():
    x = torch.zeros(0, dtype=torch.float64)
    J = gradarg.jacobian(lambda t: torch.cat([t, torch.ones(2, dtype=t.dtype)]), x)
    assert J.shape == (2, 0)
    assert J.shape == torch.func.jacrev(lambda t: torch.cat([t, torch.ones(2, dtype=t.dtype)]))(x).shape


def watched():
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    with gradarg.watch(net) as w:
        net(torch.randn(5, 3)).sum().backward()
    return w


@pytest.mark.parametrize("depth", [-1, 1.5, True])
def test_draw_modules_refuses_a_depth_that_is_not_a_nesting_depth(depth):
    with pytest.raises(ValueError, match="depth must be"):
        gradarg.draw_modules(watched(), depth=depth)


def test_results_show_their_short_report_at_the_repl():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    check = gradarg.check_backward(Square.apply, X.clone().requires_grad_(True))
    assert repr(check) == str(check) and "agree" in repr(check) and len(repr(check)) < 2000
    cmp = gradarg.compare_vjp(torch.sin, X, torch.ones(4, dtype=torch.float64))
    assert repr(cmp) == str(cmp) and len(repr(cmp)) < 2000
    assert "PairCheck(" not in repr(check) and "VJPComparison(" not in repr(cmp)


def test_drawings_save_to_files_and_say_how(tmp_path):
    x = torch.tensor(2.0, requires_grad=True)
    drawing = gradarg.trace_backward(x * x, names={"x": x}).draw()
    assert ".save(" in repr(drawing) and "object at 0x" not in repr(drawing)
    svg = tmp_path / "t.svg"
    assert drawing.save(svg) == str(svg)
    assert svg.read_text(encoding="utf-8").startswith("<svg")
    traces = [gradarg.trace_backward(t * t) for t in (torch.tensor(1.0, requires_grad=True),
                                                      torch.tensor(2.0, requires_grad=True))]
    pair = gradarg.side_by_side(traces, ["one", "two"])
    with pytest.raises(ValueError, match=r"\.html"):
        pair.save(tmp_path / "pair.svg")
    page = tmp_path / "pair.html"
    pair.save(page)
    assert page.read_text(encoding="utf-8").count("<svg") == 2


def test_plot_without_matplotlib_says_how_to_install_it(monkeypatch):
    w = watched()
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ModuleNotFoundError, match=r"gradarg\[plot\]"):
        w.plot()


def test_import_gradarg_loads_neither_networkx_nor_numba():
    code = ("import sys, gradarg; "
            "print(sorted(m for m in ('networkx', 'numba', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
