"""The example scripts run, print the numbers derived by hand, and are the code the pages run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TUTORIAL = ROOT / "docs" / "tutorial"
# page (docs/tutorial/NAME.md) -> script (examples/NAME.py)
PAGES = {
    "scalar-chain": "scalar_chain",
    "vjp-by-examples": "vjp_by_examples",
    "why-a-vector": "why_a_vector",
    "matrix-product": "matrix_product",
    "black-box": "black_box",
}


@pytest.fixture(scope="module", autouse=True)
def _examples_on_path():
    sys.path.insert(0, str(EXAMPLES))
    yield
    sys.path.remove(str(EXAMPLES))


def run_script(name: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")], capture_output=True, text=True, check=True
    )
    return proc.stdout


# Expected numbers are derived on paper, not copied from the scripts' output:
#   scalar chain: d = log(8 a^2) -> dd/da = 2/a = 0.4 at a = 5; vector: 2/[1, 2, 3]
#   y = x^2 at 1: 2x = 2 (x100 -> 200); y = x1 + x2: [1, 1] (x100 -> [100, 100])
#   x @ M with M = [[1, 2], [3, 4]]: one-hot rows of M^T: [1, 3], [2, 4]; their sum [3, 7]
EXPECTED = {
    "scalar_chain": ["a.grad = 0.4", "[2.0, 1.0, 0.6667]"],
    "vjp_by_examples": ["x.grad = 2;", "gradient=100: 200", "[1, 1]", "[100, 100]", "verdict"],
    "matrix_product": ["x.grad = [[1, 3]]", "x.grad = [[2, 4]]", "x.grad = [[3, 7]]"],
    "why_a_vector": ["[2, 4, 6]"],
    "black_box": ["max |diff| = 0.0e+00", "teacher accuracy on held-out digits"],
}


@pytest.mark.parametrize("name", sorted(PAGES.values()))
def test_script_runs_and_prints_hand_derived_numbers(name):
    out = run_script(name)
    for needle in EXPECTED[name]:
        assert needle in out, f"{needle!r} missing from examples/{name}.py output:\n{out}"
    assert "DISAGREE" not in out


def test_scalar_chain_every_node_gives_0_4():
    import scalar_chain as sc

    up = sc.upstream_gradients(5.0)
    assert up["c"].item() == pytest.approx(1 / 200)  # 1/c, c = 8 * 25
    assert up["b"].item() == pytest.approx(8 / 200)
    for node, g in [("d", None), ("c", up["c"]), ("b", up["b"])]:
        assert sc.grad_from(node, 5.0, g).item() == pytest.approx(0.4)
    for g in sc.vector_chain([1.0, 2.0, 3.0]).values():
        torch.testing.assert_close(g, torch.tensor([2.0, 1.0, 2 / 3]))


def test_matrix_product_one_hot_rows_and_linearity():
    import matrix_product as mp

    torch.testing.assert_close(mp.grad_for([[1.0, 0.0]]), torch.tensor([[1.0, 3.0]]))
    torch.testing.assert_close(mp.grad_for([[0.0, 1.0]]), torch.tensor([[2.0, 4.0]]))
    torch.testing.assert_close(mp.grad_for([[1.0, 1.0]]), torch.tensor([[3.0, 7.0]]))


def test_doubling_grad_is_power_of_two_times_v():
    import why_a_vector as wv

    x, y, k, v, grad = wv.doubling(seed=0)
    assert y.norm() >= 1000 > (y / 2).norm()  # k is the first power that passes 1000
    torch.testing.assert_close(y, 2**k * x.detach())
    torch.testing.assert_close(grad, 2**k * v)


def test_black_box_estimate_improves_with_queries():
    import black_box as bb

    r = bb.run(query_counts=(1, 1024))
    # m random unit directions in d = 64 dimensions: the estimate's expected
    # cosine with the true gradient is about sqrt(m / (m + d)): 0.12 for m = 1,
    # 0.97 for m = 1024 (a property of the estimator, not of this run).
    assert r["rows"][-1]["cos_upstream"] > 0.9
    assert r["rows"][0]["cos_upstream"] < 0.5
    torch.testing.assert_close(r["exact_g"], r["end_to_end"])


def test_black_box_teacher_is_trained_on_the_digits():
    import black_box as bb

    (x_train, y_train), (x_test, y_test) = bb.digits()
    assert x_train.shape == (1200, 64) and x_test.shape == (597, 64)
    assert set(y_test.tolist()) == set(range(10)) == set(y_train.tolist())
    assert float(x_train.min()) >= 0.0 and float(x_train.max()) <= 1.0
    teacher, accuracy = bb.train_teacher()
    # chance is 0.1; a small MLP on these digits reaches well over 0.9
    assert accuracy > 0.9
    hits = teacher(x_test).argmax(dim=1) == y_test
    assert accuracy == hits.double().mean().item()
    assert not any(p.requires_grad for p in teacher.parameters())


@pytest.mark.parametrize(("page", "script"), sorted(PAGES.items()))
def test_page_runs_the_script_functions(page, script):
    """One source: the page imports its script's functions and shows their code, never a copy."""
    text = (TUTORIAL / f"{page}.md").read_text()
    assert re.search(rf"^from {script} import ", text, re.MULTILINE), f"{page}.md does not import {script}"
    included = re.findall(r"```\{literalinclude\} ([^\n]+)", text)
    assert all(p.strip().endswith(f"examples/{script}.py") for p in included)
    imported = re.search(rf"^from {script} import \(?([^)]*?)\)?$", text, re.MULTILINE | re.DOTALL)
    assert imported is not None
    module = __import__(script)
    for name in re.split(r"[\s,()]+", imported.group(1)):
        if name:
            assert hasattr(module, name), f"{page}.md imports {name!r}, missing from {script}.py"
    # no function of the script is re-defined on the page
    defined_on_page = set(re.findall(r"^def (\w+)", text, re.MULTILINE))
    defined_in_script = set(re.findall(r"^def (\w+)", (EXAMPLES / f"{script}.py").read_text(), re.MULTILINE))
    assert not defined_on_page & defined_in_script


def test_every_tutorial_page_has_a_script():
    assert {p.stem for p in TUTORIAL.glob("*.md")} == set(PAGES)
    assert {p.stem for p in EXAMPLES.glob("*.py")} >= set(PAGES.values())
