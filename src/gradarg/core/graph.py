"""Evaluating ``fn`` and walking the autograd graph it records.

:func:`call` evaluates a function and checks its outputs; :func:`reverse_graph` records one
plain forward pass for reverse mode, :func:`recorded_forward` one for the older batched paths;
:func:`walk_graph`, :func:`reachable_inputs`, :func:`graph_names` and :func:`custom_nodes` read
the recorded graph without running a backward pass.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Container, Iterator, Sequence
from typing import Any

import torch

from .._validate import as_output_tuple
from . import speeds
from .cuts import watching

__all__ = ["call", "copies", "custom_nodes", "grad_on", "graph_names", "reachable_inputs", "recorded_forward",
           "refuse_complex_of_real", "refusing_complex_of_real", "reverse_graph", "walk_graph"]


def call(
    fn: Callable[..., Any], xs: Sequence[torch.Tensor], dual: bool = False
) -> tuple[tuple[torch.Tensor, ...], bool]:
    """Evaluate ``fn(*xs)`` and check its outputs (tensors with differentiable dtypes).

    Where an input requires grad or is a dual tensor, ``fn`` runs under
    :func:`~gradarg.core.cuts.watching`: a ``.item()`` (or ``float()``, ``.numpy()``, ...) of
    a tensor that depends on an input warns that the derivative through it is taken as zero.
    ``dual=True``: every tensor of ``xs`` is a dual tensor the caller made (not unpacked to
    check).
    """
    with watching(xs, fn, dual):
        res = fn(*xs)
    outs, is_tuple = as_output_tuple(fn, res)
    name = getattr(fn, "__name__", "fn")
    for k, yk in enumerate(outs):
        if not (yk.is_floating_point() or yk.is_complex()):
            label = f"output {k} of {name}" if is_tuple else f"the output of {name}"
            raise TypeError(
                f"{label} has dtype {yk.dtype}, which is not differentiable; expected a floating "
                f"or complex output (integer and bool results such as argmax or comparisons "
                f"have no Jacobian)"
            )
    return outs, is_tuple


def grad_on() -> contextlib.AbstractContextManager[Any]:
    """``torch.enable_grad()``, or a shared no-op when grad mode is on already (the common
    case: entering and leaving ``enable_grad`` costs a few microseconds per call)."""
    return _NO_CHANGE if torch.is_grad_enabled() else torch.enable_grad()


_NO_CHANGE: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()


def copies(xs: Sequence[Any], keep: Sequence[int] = ()) -> list[Any]:
    """``xs`` with every tensor cloned, except the positions in ``keep`` (tensors made for this
    one call).  For evaluations repeated at points the caller set (finite differences): an
    ``fn`` that writes into its inputs (``t.mul_(2)``) then changes neither those points nor
    the caller's tensors, and no output aliases them."""
    return [x if i in keep or not isinstance(x, torch.Tensor) else x.clone()
            for i, x in enumerate(xs)]


def reverse_graph(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...], *, create_graph: bool = False
) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...], bool]:
    """One plain forward pass recorded by autograd: ``(leaves, outputs, is_tuple)``.

    ``fn`` is evaluated once, unbatched, so it may do anything a normal forward pass may
    (``.item()``, data-dependent control flow, random draws); only the backward passes are
    batched.  The leaves share memory with ``xs``, which are already private copies.  With
    ``create_graph`` an ``x`` that requires grad is used as it is (not detached), so that
    the Jacobian stays connected to the caller's graph.
    """
    leaves = tuple(
        x if create_graph and x.requires_grad else x.detach().requires_grad_(True) for x in xs
    )
    with grad_on():
        outs, is_tuple = call(fn, leaves)
    return leaves, outs, is_tuple


def walk_graph(roots: Sequence[Any], stop: Container[int] = ()) -> Iterator[Any]:
    """Every backward node reachable from the ``roots`` (``grad_fn`` nodes), each once; the
    walk does not go on behind a node whose ``id`` is in ``stop``.

    Visited nodes are kept referenced until the walk ends: autograd may hand out a new Python
    object for a node each time it is reached (torch 2.1 does), and a dropped object's ``id``
    can be reused by the next one, which would make an unvisited node look visited.
    """
    stack = [r for r in roots if r is not None]
    seen: dict[int, Any] = {}
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        yield node
        if id(node) not in stop:
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)


def reachable_inputs(y: torch.Tensor, inputs: Sequence[torch.Tensor]) -> set[int]:
    """Indices ``j`` of the ``inputs`` that the autograd graph of ``y`` reaches.

    What ``torch.autograd.grad(y, inputs, allow_unused=True)`` answers with ``None`` for an
    unreached input, found by walking the graph instead of running a backward pass.  The
    graph behind a non-leaf input is not part of ``fn``: the walk stops there.
    """
    leaf_ids = {id(x): j for j, x in enumerate(inputs) if x.grad_fn is None}
    input_nodes = [(x.grad_fn, j) for j, x in enumerate(inputs) if x.grad_fn is not None]
    node_ids = {id(node): j for node, j in input_nodes}  # input_nodes keeps them referenced
    found: set[int] = set()
    for node in walk_graph([y.grad_fn], stop=node_ids):
        if id(node) in node_ids:
            found.add(node_ids[id(node)])
        variable = getattr(node, "variable", None)  # AccumulateGrad: the leaf it feeds
        if variable is not None and id(variable) in leaf_ids:
            found.add(leaf_ids[id(variable)])
        if len(found) == len(inputs):
            break
    return found


def graph_names(outs: Sequence[torch.Tensor]) -> set[str]:
    """The names of every backward node reachable from ``outs`` (``"MmBackward0"``, ...)."""
    return {node.name() for node in walk_graph([y.grad_fn for y in outs])}


def custom_nodes(nodes: Sequence[Any]) -> list[str]:
    """Names of the nodes whose backward is user code (``autograd.Function``, compiled regions)."""
    custom = torch.autograd.function.BackwardCFunction
    return [n.name() for n in nodes if isinstance(n, custom)]  # type: ignore[attr-defined]


def recorded_forward(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...]
) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...], bool, list[Any]] | None:
    """One forward pass recorded by autograd, for the older batched paths: ``(leaves, outs,
    is_tuple, graph nodes)``, or ``None`` when they do not apply (complex or non-floating
    tensors, no output depending on ``xs``, an ``autograd.Function`` or a node of
    :data:`~gradarg.core.speeds.WRONG_BATCHED_BACKWARD` in the graph)."""
    if not all(x.is_floating_point() for x in xs):
        return None
    leaves = tuple(x.detach().requires_grad_(True) for x in xs)
    with grad_on():
        outs, is_tuple = call(fn, leaves)
    if any(y.is_complex() for y in outs) or not any(y.requires_grad for y in outs):
        return None
    nodes = list(walk_graph([y.grad_fn for y in outs if y.requires_grad]))
    if custom_nodes(nodes) or any(node.name() in speeds.WRONG_BATCHED_BACKWARD for node in nodes):
        return None
    return leaves, outs, is_tuple, nodes


def refuse_complex_of_real(out_dtypes: Sequence[torch.dtype], xs: Sequence[torch.Tensor],
                           fn: Callable[..., Any] | None = None) -> None:
    """Refuse a complex output of a real input in reverse mode and finite differences, as
    ``torch.func.jacrev`` and ``torch.autograd.functional.jacobian`` (its default
    ``vectorize=False``) do.

    PyTorch's reverse mode gives a real input a real gradient (``Re(conj(v) ∂y/∂x)``), so a
    Jacobian built from one-hot real cotangents would hold only ``Re(∂y/∂x)``, silently
    losing the imaginary part (what ``vectorize=True`` returns).  Forward mode gives
    ``∂y/∂x`` itself, as ``torch.autograd.functional.jacobian(..., strategy="forward-mode",
    vectorize=True)`` does: not refused.  ``ValueError`` naming the output and the input.
    """
    for d in out_dtypes:  # the common case first: no complex output, nothing to check
        if d.is_complex:
            break
    else:
        return
    complex_out = [k for k, d in enumerate(out_dtypes) if d.is_complex]
    real_in = [j for j, x in enumerate(xs) if not x.is_complex()]
    if not complex_out or not real_in:
        return
    name = getattr(fn, "__name__", "fn")
    k, j = complex_out[0], real_in[0]
    out = f"output {k} of {name}" if len(out_dtypes) > 1 else f"the output of {name}"
    inp = f"input {j}" if len(xs) > 1 else "the input x"
    raise ValueError(
        f"{out} is complex ({out_dtypes[k]}) but {inp} is real ({xs[j].dtype}): reverse mode "
        f"gives a real input a real gradient, so the Jacobian would keep only the real part "
        f"of each entry (torch.func.jacrev and torch.autograd.functional.jacobian refuse it). "
        f"Use method='forward' for the complex derivative dy/dx, take the Jacobian of "
        f"torch.view_as_real(fn(x)) (real and imaginary parts as a last dimension of size 2), "
        f"or pass a complex x"
    )


def refusing_complex_of_real(fn: Callable[..., Any],
                             xs: Sequence[torch.Tensor]) -> Callable[..., Any]:
    """``fn`` that applies :func:`refuse_complex_of_real` to what it returns, for the routes
    that evaluate ``fn`` before they can read its outputs' dtypes (finite differences: a
    complex half-precision difference quotient fails in torch before anything else)."""

    def checked(*args: Any) -> Any:
        out = fn(*args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        refuse_complex_of_real([y.dtype for y in outs if isinstance(y, torch.Tensor)], xs, fn)
        return out

    checked.__name__ = getattr(fn, "__name__", "fn")
    return checked
