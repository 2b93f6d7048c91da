"""The API reference page documents every public name."""

from pathlib import Path

import gradarg
import gradarg.plot

API_PAGE = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "api.md").read_text()


def test_every_public_name_is_on_the_api_page():
    missing = [name for name in gradarg.__all__ if not any(
        f":: {name}" in line or f":: gradarg.{name}" in line for line in API_PAGE.splitlines())]
    assert missing == []


def test_plot_module_is_on_the_api_page():
    assert all(f":: gradarg.plot.{name}" in API_PAGE for name in gradarg.plot.__all__)


def test_every_public_callable_has_a_numpy_style_docstring_with_examples_or_raises():
    for name in gradarg.__all__:
        obj = getattr(gradarg, name)
        if callable(obj) and not isinstance(obj, type):
            doc = obj.__doc__ or ""
            assert "Examples" in doc or "Raises" in doc, f"{name} lacks Examples/Raises"


def test_docstring_examples_fit_the_code_box():
    """The API page shows docstring examples in code boxes: at 1280 px they hold 80 columns."""
    src = Path(gradarg.__file__).parent
    long = [
        f"{path.relative_to(src)}:{number}: {line.strip()}"
        for path in sorted(src.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if line.lstrip().startswith((">>> ", "... ")) and len(line.strip()) > 80
    ]
    assert long == []
