"""The example scripts are the tutorial pages' visible code (one source: the page), run on their
own in an empty directory, and print the numbers derived by hand."""

from __future__ import annotations

import pytest
from reader import ROOT, run_script, visible_code

SCRIPTS = visible_code.tutorial_scripts()            # docs/tutorial/NAME.md -> examples/NAME.py

# Expected numbers are derived on paper, not copied from the scripts' output:
#   scalar chain: c = 8 * 5^2 = 200; d = log(8 a^2) -> dd/da = 2/a = 0.4; vector: 2/[1, 2, 3]
#   y = x^2 at 1: 2x = 2 (x100 -> 200); vec_fn at [0.5, -1] with v = [1, 0.5, 2]:
#     vᵀJ = [x2 + 0.5 * 2 x1, x1 + 0.5 * 3 + 2 e^x2] = [-0.5, 2 + 2/e = 2.736];
#     X @ W with V: X.grad = V Wᵀ = [[1, 2, 0], [2.5, 0, -6]]
#   x @ M with M = [[1, 2], [3, 4]]: one-hot rows of Mᵀ: [1, 3], [2, 4]; their sum [3, 7]
#   why a vector: 2x at [1, 2, 3]; L1 = 0.5^2 + 3^2 = 9.25, L2 = 2.5,
#     0.2 * 2 (x - t) + 0.8 sign(x) = [0.6, 2]
EXPECTED = {
    "scalar_chain": ["c = 200", "a.grad = 0.4", "from e: a.grad = [2, 1, 0.6667]",
                     "from b, gradient=[1, 0.25, 0.1111]: a.grad = [2, 1, 0.6667]"],
    "vjp_by_examples": ["returned None, x.grad = 2,", "x.grad = 200",
                        "x.grad = [100, 100], vᵀ·J = [[100. 100.]]", "[-0.5, 2.736]",
                        "X.grad = [[1, 2, 0], [2.5, 0, -6]]", "(2, 2, 2, 3)"],
    "matrix_product": ["x.grad = [[1, 3]]", "x.grad = [[2, 4]]", "x.grad = [[3, 7]]"],
    "why_a_vector": ["[2, 4, 6]", "[9.25, 2.5]", "[0.6, 2]"],
    "black_box": ["teacher accuracy on held-out digits: 0.9"],
}


def test_every_tutorial_page_has_its_script():
    assert {s.stem for s in SCRIPTS.values()} == set(EXPECTED)
    assert {p.stem for p in (ROOT / "examples").glob("*.py")} == set(EXPECTED)


@pytest.mark.parametrize("page", sorted(SCRIPTS), ids=lambda p: p.stem)
def test_script_is_generated_from_its_page(page):
    """Edit the page, then `python docs/tools/visible_code.py --write`."""
    assert SCRIPTS[page].read_text(encoding="utf-8") == visible_code.script(page)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_script_runs_alone_and_prints_hand_derived_numbers(name):
    proc = run_script(ROOT / "examples" / f"{name}.py")
    assert proc.returncode == 0, proc.stderr
    for needle in EXPECTED[name]:
        assert needle in proc.stdout, f"{needle!r} missing from examples/{name}.py:\n{proc.stdout}"
