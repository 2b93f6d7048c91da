"""gradarg: the ``gradient`` argument of ``Tensor.backward()``, checked.

``y.backward(gradient=v)`` computes the vector-Jacobian product ``vᵀJ`` and puts it in
``x.grad``.  This package builds Jacobians (three independent routes), compares what
``backward`` computes with an independent ``vᵀJ``, and renders live tensors as LaTeX.
"""

# Rooms, bottom to top (imports run downward only; tests/test_layout.py checks it):
#   _validate  <-  core  <-  show  <-  check, trace;   core  <-  sparse
from .check import (
    BackwardCheck,
    ExampleV,
    LocalizationCostWarning,
    PairCheck,
    ProbeCheck,
    VJPComparison,
    WrongEntry,
    backward_rtol,
    check_backward,
    compare_vjp,
)
from .core import (
    METHODS,
    VectorizationError,
    backward_vjp,
    contract,
    fd_step,
    fd_tolerance,
    jacobian,
)
from .show import (
    VJPExplorer,
    explorer,
    fmt,
    latex_jacobian,
    latex_matrix,
    latex_vjp,
    markdown_table,
    summarize,
)
from .sparse import (
    CertificateError,
    SparseHessian,
    SparseJacobian,
    UnsupportedOpError,
    color_pattern,
    hessian_sparsity,
    jacobian_sparsity,
    sparsity_pattern,
)
from .trace import (
    BackwardPlayer,
    BackwardTrace,
    Drawing,
    GradDiagnosis,
    GradWatch,
    ModuleRecord,
    ParamRecord,
    TracedEdge,
    TracedNode,
    draw_modules,
    side_by_side,
    trace_backward,
    trace_svg,
    watch,
    why_no_grad,
)

__version__ = "0.1.0"

__all__ = [
    "METHODS",
    "BackwardCheck",
    "BackwardPlayer",
    "BackwardTrace",
    "CertificateError",
    "Drawing",
    "ExampleV",
    "GradDiagnosis",
    "GradWatch",
    "LocalizationCostWarning",
    "ModuleRecord",
    "PairCheck",
    "ParamRecord",
    "ProbeCheck",
    "SparseHessian",
    "SparseJacobian",
    "TracedEdge",
    "TracedNode",
    "UnsupportedOpError",
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
    "draw_modules",
    "explorer",
    "fd_step",
    "fd_tolerance",
    "fmt",
    "hessian_sparsity",
    "jacobian",
    "jacobian_sparsity",
    "latex_jacobian",
    "latex_matrix",
    "latex_vjp",
    "markdown_table",
    "side_by_side",
    "sparsity_pattern",
    "summarize",
    "trace_backward",
    "trace_svg",
    "watch",
    "why_no_grad",
]
