"""gradarg: the ``gradient`` argument of ``Tensor.backward()``, checked.

``y.backward(gradient=v)`` computes the vector–Jacobian product (VJP) ``vᵀJ``, with ``J`` the
Jacobian of ``y`` with respect to a leaf ``x``, and adds it to ``x.grad``.  gradarg computes
what that product is made of, checks backward passes against independent Jacobians, and shows
what flows through a backward pass.  What it offers, by task (``help(gradarg.<name>)`` for
each; the guide with worked examples is the site, ``nox -s docs`` builds it):

Jacobians and VJPs
    ``jacobian(fn, x, method="auto" | "reverse" | "forward" | "finite-difference")``, a
    drop-in for ``torch.autograd.functional.jacobian``; ``backward_vjp``, ``contract``.
Is a backward right?
    ``compare_vjp(fn, x, v)``: what ``backward(gradient=v)`` gives against ``vᵀJ`` from an
    independent Jacobian.  ``check_backward(MyFunction.apply, *inputs)``: a custom
    ``autograd.Function`` checked, its wrong entries and their pattern reported.
What flowed through a backward pass?
    ``trace_backward(y, v, names=...)``: the upstream gradient at every node (``.draw()``,
    ``.to_svg()``); ``why_no_grad(y, x)``: why ``x.grad`` is None, zero or NaN;
    ``with watch(model) as w:`` around a training step: gradient norms per module and
    parameter, ``w.summary()``; ``draw_modules(w)``.
Sparse Jacobians and Hessians
    ``jacobian_sparsity`` / ``hessian_sparsity`` (patterns by tracing), ``SparseJacobian``,
    ``SparseHessian`` (a few passes by colouring), ``sparsity_pattern``, ``color_pattern``.
Showing tensors
    ``fmt``, ``summarize``, ``latex_matrix``, ``latex_jacobian``, ``latex_vjp``,
    ``markdown_table``; ``explorer(fn, x)``: ``vᵀJ`` recomputed as you type, in a notebook.
"""

# Rooms, bottom to top (imports run downward only; tests/test_layout.py checks it):
#   _validate  <-  core  <-  show  <-  check, trace;   core  <-  sparse
# Each public name is imported from its room when first used (PEP 562's module __getattr__),
# so that ``import gradarg`` costs no more than the rooms a script uses: a script that only
# computes sparse Jacobians never imports the watch, the checker or Dynamo (0.2-0.3 s).
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers and IDEs read; at run time, __getattr__ below
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

_SUBPACKAGES = ("check", "core", "plot", "show", "sparse", "trace")
_ROOM = {
    "BackwardCheck": "check",
    "ExampleV": "check",
    "LocalizationCostWarning": "check",
    "PairCheck": "check",
    "ProbeCheck": "check",
    "VJPComparison": "check",
    "WrongEntry": "check",
    "backward_rtol": "check",
    "check_backward": "check",
    "compare_vjp": "check",
    "METHODS": "core",
    "VectorizationError": "core",
    "backward_vjp": "core",
    "contract": "core",
    "fd_step": "core",
    "fd_tolerance": "core",
    "jacobian": "core",
    "VJPExplorer": "show",
    "explorer": "show",
    "fmt": "show",
    "latex_jacobian": "show",
    "latex_matrix": "show",
    "latex_vjp": "show",
    "markdown_table": "show",
    "summarize": "show",
    "CertificateError": "sparse",
    "SparseHessian": "sparse",
    "SparseJacobian": "sparse",
    "UnsupportedOpError": "sparse",
    "color_pattern": "sparse",
    "hessian_sparsity": "sparse",
    "jacobian_sparsity": "sparse",
    "sparsity_pattern": "sparse",
    "BackwardPlayer": "trace",
    "BackwardTrace": "trace",
    "Drawing": "trace",
    "GradDiagnosis": "trace",
    "GradWatch": "trace",
    "ModuleRecord": "trace",
    "ParamRecord": "trace",
    "TracedEdge": "trace",
    "TracedNode": "trace",
    "draw_modules": "trace",
    "side_by_side": "trace",
    "trace_backward": "trace",
    "trace_svg": "trace",
    "watch": "trace",
    "why_no_grad": "trace",
}


def __getattr__(name: str) -> object:
    """``gradarg.<name>``: imported from its room on first use, then kept as an attribute."""
    import importlib

    if name in _SUBPACKAGES:  # ``gradarg.sparse.SparseJacobian`` after ``import gradarg``
        return importlib.import_module(f".{name}", __name__)
    room = _ROOM.get(name)
    if room is None:
        raise AttributeError(f"module 'gradarg' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{room}", __name__), name)
    if name == "jacobian":  # its sparsity= route is registered by gradarg.sparse on import
        importlib.import_module(".sparse", __name__)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_ROOM, *_SUBPACKAGES})


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
