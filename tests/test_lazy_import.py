"""``import gradarg`` imports only what a script uses.

Each public name is imported from its room on first use (the package's ``__getattr__``), so a
script that computes sparse Jacobians never imports the watch, the checker or Dynamo
(``torch._dynamo``: 0.7-1 s, most of a later process's time to its first compiled result,
issue 45).  Checked in fresh interpreters (the test process has imported everything), by
what ``sys.modules`` holds, not by a timing.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import gradarg


def _modules_after(code: str) -> list[str]:
    """The modules a fresh interpreter holds after ``code`` (the source tree's gradarg)."""
    script = f"import sys\n{code}\nimport json\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_gradarg_imports_no_room():
    mods = _modules_after("import gradarg")
    assert not [m for m in mods if m.startswith("gradarg.")]
    assert "torch._dynamo" not in mods


def test_sparse_call_imports_neither_trace_check_nor_dynamo():
    # a script that keeps its pattern (detection runs torch.func.functionalize, which imports
    # Dynamo itself: torch's cost, not the package's)
    mods = _modules_after(
        "import torch, gradarg\n"
        "f = lambda x: x[1:] * x[:-1]\n"
        "x = torch.rand(6, dtype=torch.float64)\n"
        "i = torch.arange(5)\n"
        "pattern = torch.zeros(5, 6, dtype=torch.bool)\n"
        "pattern[i, i] = pattern[i, i + 1] = True\n"
        "J = gradarg.SparseJacobian(pattern)(f, x)\n"
        "assert torch.allclose(J.to_dense(), torch.autograd.functional.jacobian(f, x))\n")
    assert "gradarg.sparse" in mods
    assert not [m for m in mods if m.startswith(("gradarg.trace", "gradarg.check"))]
    assert "torch._dynamo" not in mods


def test_watch_disables_its_module_hooks_for_compile():
    # the disabled caller of the module hooks (used while Dynamo traces) is made when the
    # first module hook is made, not at import
    mods = _modules_after(
        "import torch, gradarg\n"
        "from gradarg.trace.watching import patches\n"
        "assert not patches._DISABLED\n"
        "m = torch.nn.Linear(2, 1)\n"
        "with gradarg.watch(m):\n"
        "    m(torch.ones(1, 2)).sum().backward()\n"
        "assert patches._DISABLED[0]._torchdynamo_disable\n")
    assert "torch._dynamo" in mods


@pytest.mark.parametrize("name", gradarg.__all__)
def test_every_public_name_resolves(name):
    assert getattr(gradarg, name) is not None
    assert name in dir(gradarg)


def test_unknown_name_raises_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'jacobain'"):
        gradarg.jacobain  # noqa: B018


@pytest.mark.parametrize("room", ["check", "core", "plot", "show", "sparse", "trace"])
def test_a_room_is_an_attribute_after_import_gradarg(room):
    mods = _modules_after(f"import gradarg\nassert gradarg.{room}.__name__ == 'gradarg.{room}'")
    assert f"gradarg.{room}" in mods


def test_jacobian_with_sparsity_after_import_gradarg():
    # jacobian(sparsity=...) runs the route gradarg.sparse registers when it is imported
    _modules_after(
        "import torch, gradarg\n"
        "x = torch.rand(4, dtype=torch.float64)\n"
        "J = gradarg.jacobian(lambda t: t**2, x, sparsity=torch.eye(4, dtype=torch.bool))\n"
        "assert torch.equal(J.to_dense(), torch.diag(2 * x))\n")
