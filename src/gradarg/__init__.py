"""gradarg: the ``gradient`` argument of ``Tensor.backward()``, checked.

``y.backward(gradient=v)`` computes the vector-Jacobian product ``vᵀJ`` and puts it in
``x.grad``.  This package builds Jacobians (three independent routes), compares what
``backward`` computes with an independent ``vᵀJ``, and renders live tensors as LaTeX.
"""

from ._routes import VectorizationError
from .check import BackwardCheck, ExampleV, PairCheck, ProbeCheck, check_backward
from .coloring import color_pattern
from .compare import VJPComparison, compare_vjp
from .diagnose import GradDiagnosis, why_no_grad
from .explorer import VJPExplorer, explorer
from .finite_diff import fd_step, fd_tolerance
from .graph_svg import Drawing, side_by_side, trace_svg
from .jacobian import METHODS, jacobian
from .localize import WrongEntry
from .pattern import sparsity_pattern
from .render import fmt, latex_jacobian, latex_matrix, latex_vjp, markdown_table, summarize
from .sparse import CertificateError, SparseJacobian
from .tolerance import backward_rtol
from .trace import BackwardTrace, TracedEdge, TracedNode, trace_backward
from .vjp import backward_vjp, contract

__version__ = "0.1.0"

__all__ = [
    "METHODS",
    "BackwardCheck",
    "BackwardTrace",
    "CertificateError",
    "Drawing",
    "ExampleV",
    "GradDiagnosis",
    "PairCheck",
    "ProbeCheck",
    "SparseJacobian",
    "TracedEdge",
    "TracedNode",
    "VJPComparison",
    "VJPExplorer",
    "VectorizationError",
    "WrongEntry",
    "backward_rtol",
    "backward_vjp",
    "check_backward",
    "color_pattern",
    "compare_vjp",
    "contract",
    "explorer",
    "fd_step",
    "fd_tolerance",
    "fmt",
    "jacobian",
    "latex_jacobian",
    "latex_matrix",
    "latex_vjp",
    "markdown_table",
    "side_by_side",
    "sparsity_pattern",
    "summarize",
    "trace_backward",
    "trace_svg",
    "why_no_grad",
]
