"""Showing live tensors to a reader: numbers, LaTeX, Markdown and HTML tables, the explorer, plots.

What it is for: ``fmt`` and ``summarize`` (one way of printing numbers everywhere, also used by
the reports of :mod:`gradarg.check` and the drawings of :mod:`gradarg.trace`); ``latex_matrix``,
``latex_jacobian``, ``latex_vjp`` and ``markdown_table`` (formulas built from the run);
``explorer`` (the ``vᵀJ`` boxes that update as you type); ``plot.jacobian_heatmap``
(matplotlib, imported only when called).

Modules: ``render``, ``explorer``, ``plot``; ``checks`` (their input checks).

May import: :mod:`gradarg.core` and ``gradarg._validate``; never :mod:`gradarg.check`,
:mod:`gradarg.trace` or :mod:`gradarg.sparse`, which print through it.
"""

from .explorer import VJPExplorer, explorer
from .render import fmt, latex_jacobian, latex_matrix, latex_vjp, markdown_table, summarize

__all__ = [
    "VJPExplorer",
    "explorer",
    "fmt",
    "latex_jacobian",
    "latex_matrix",
    "latex_vjp",
    "markdown_table",
    "summarize",
]
