"""Record what flows through a backward pass: the upstream gradient (cotangent) at every node.

:func:`trace_backward` runs one real backward pass, ``output.backward(gradient=v, inputs=...)``
(or ``torch.autograd.grad`` with ``use_grad=True``), with hooks on every node of the output's
graph (``torch.autograd.graph.Node.register_prehook`` and ``register_hook``, see
https://pytorch.org/docs/stable/autograd.html#autograd-graph). Each node's pre-hook sees the
cotangent that arrived (``grad_outputs``); its hook sees what the node sent on to the next nodes
(``grad_inputs``). Every hook is removed before :func:`trace_backward` returns or raises, and the
returned :class:`BackwardTrace` keeps only detached tensors and strings, never the graph.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import torch

from ..._validate import check_cotangent, check_flag, check_tensor
from ..graph.labels import forward_values, label, names_by_node
from ..graph.nodes import (
    check_not_freed,
    children,
    leaf_tensor,
    node_class,
    op_name,
    opaque_nodes,
    walk,
)
from .traced import BackwardTrace, TracedEdge, TracedNode

__all__ = ["kept_retained_grads", "trace_backward"]


def _as_tensors(value: Any, what: str) -> tuple[torch.Tensor, ...] | None:
    if value is None:
        return None
    seq = (value,) if isinstance(value, torch.Tensor) else tuple(value)
    if not seq:
        raise ValueError(f"{what} is empty; expected at least one tensor")
    for i, t in enumerate(seq):
        check_tensor(f"{what}[{i}]", t)
        if not t.requires_grad:
            raise ValueError(f"{what}[{i}] does not require grad; backward cannot reach it")
    return seq


def _detach(ts: Sequence[Any]) -> tuple[torch.Tensor | None, ...]:
    return tuple(None if t is None else t.detach() for t in ts)


@contextlib.contextmanager
def kept_retained_grads(tensors: Iterable[Any]) -> Iterator[None]:
    """Put back, on leaving, the ``.grad`` of every non-leaf among ``tensors`` that retains its
    gradient (``retain_grad()``): its hook runs in ``torch.autograd.grad`` as in ``backward``
    and adds what arrived to ``.grad`` (torch's engine runs a node's retains-grad hooks in
    every pass), which a pass meant to leave the caller's tensors as they were must undo."""
    kept = {id(t): (t, t.grad) for t in tensors
            if isinstance(t, torch.Tensor) and t.grad_fn is not None and t.retains_grad}
    try:
        yield
    finally:
        for t, g in kept.values():
            t.grad = g


def trace_backward(
    output: torch.Tensor,
    gradient: Any = None,
    *,
    inputs: torch.Tensor | Sequence[torch.Tensor] | None = None,
    names: Mapping[str, torch.Tensor] | None = None,
    use_grad: bool = False,
    retain_graph: bool = False,
) -> BackwardTrace:
    """Run ``output.backward(gradient=gradient, inputs=inputs)`` and record every cotangent.

    Parameters
    ----------
    output : torch.Tensor
        The tensor to start from; must require grad and have a ``grad_fn``.
    gradient : torch.Tensor or number, optional
        The upstream gradient ``v`` (``grad_outputs``, cotangent), shape ``output.shape``.
        Optional only for a one-element output (then 1, as in ``Tensor.backward``).
    inputs : torch.Tensor or sequence, optional
        As ``Tensor.backward(inputs=...)``: accumulate only into these.
    names : dict, optional
        Names for tensors (``str`` to ``torch.Tensor``) of the graph, e.g. ``{"a": a, "b": b}``: the drawing then says
        ``c = 8 * b`` instead of ``MulBackward0``. Unnamed nodes show their operation.
    use_grad : bool
        Use ``torch.autograd.grad`` instead of ``backward``: no ``.grad`` is touched; each leaf's
        gradient is still recorded.  (A non-leaf's ``retain_grad()`` hook runs in
        ``torch.autograd.grad`` too and adds to its ``.grad``: that ``.grad`` is put back for
        the tensors of ``inputs`` and ``names``; a retained tensor not given here keeps the
        addition, as after any ``torch.autograd.grad`` call.)
    retain_graph : bool
        Keep the graph for another backward pass (as in ``backward``).

    Returns
    -------
    BackwardTrace
        Every node with the cotangent it received and what it sent, in execution order.

    Raises
    ------
    TypeError
        ``output``, ``gradient``, an entry of ``inputs`` or of ``names`` is not a tensor.
    ValueError
        ``output`` is on the meta device (no values to show), does not require grad or has no
        ``grad_fn``; ``gradient`` is missing for a
        non-scalar output or has the wrong shape; an entry of ``inputs`` does not require grad.
    UserWarning
        The graph holds reentrant ``torch.utils.checkpoint`` regions, whose inside the hooks
        cannot see (the trace then records what is outside them).
    RuntimeError
        The graph was freed by an earlier backward pass without ``retain_graph=True``; or the
        backward pass itself fails (e.g. a saved tensor was modified in place): then the error is
        torch's, with a note naming the node that was running. Hooks are removed in all cases.

    Notes
    -----
    The caller's tensors end up as after a plain ``output.backward(gradient, inputs=inputs)``
    (or untouched with ``use_grad=True``): same ``.grad`` values, no hooks left behind.
    Node hooks: https://pytorch.org/docs/stable/autograd.html#backward-hooks-execution

    Where the hooks cannot see: a ``torch.compile``'d region is one node
    (``CompiledFunctionBackward``): the cotangents entering and leaving it and its parameters'
    gradients are recorded, the operations inside are not. A reentrant
    ``torch.utils.checkpoint`` region (``CheckpointFunctionBackward``) runs its inside in a
    backward pass of its own: a ``UserWarning`` says so, the parameters used inside are absent
    from the trace (listed in :attr:`BackwardTrace.unreached` when named) and their ``.grad`` is
    filled as usual; ``use_reentrant=False`` makes the inside visible. Sparse gradients
    (``nn.Embedding(sparse=True)``) are recorded as sparse tensors.

    Examples
    --------
    >>> import torch
    >>> a = torch.tensor(5.0, requires_grad=True)
    >>> b = a * a
    >>> c = 8 * b
    >>> d = torch.log(c)
    >>> t = trace_backward(d, names={"a": a, "b": b, "c": c, "d": d})
    >>> [(n.label, round(n.arrived.item(), 4)) for n in t.executed]
    [('d = log(c)', 1.0), ('c = 8 * b', 0.005), ('b = a * a', 0.04), ('a', 0.4)]
    >>> a.grad
    tensor(0.4000)
    """
    check_tensor("output", output)
    use_grad = check_flag("use_grad", use_grad, "trace_backward")
    retain_graph = check_flag("retain_graph", retain_graph, "trace_backward")
    if output.is_meta:
        raise ValueError(
            "output is on the meta device, which holds shapes but no values: a trace shows the "
            "gradients' values, so there is nothing to trace; compute it on a real device "
            "(cpu, cuda)")
    if not output.requires_grad:
        raise ValueError(
            "output does not require grad, so there is no backward pass to trace: it was "
            "computed under torch.no_grad()/inference_mode, or from tensors that do not "
            "require grad (detach(), .data, .item(), integer casts cut the graph)"
        )
    if output.grad_fn is None:
        raise ValueError(
            "output is a leaf tensor (no grad_fn): there is no graph to trace; pass a tensor "
            "computed from it"
        )
    if gradient is None:
        if output.numel() != 1:
            raise ValueError(
                f"output has shape {tuple(output.shape)}: pass gradient= (the upstream "
                f"gradient, shape {tuple(output.shape)}); it can be omitted only for a "
                f"one-element output"
            )
        gradient = torch.ones_like(output)
    v = check_cotangent(gradient, output, name="gradient")
    input_seq = _as_tensors(inputs, "inputs")
    order, index = walk(output.grad_fn)
    labels_by_key = names_by_node(names, index, order)
    check_not_freed(order)
    opaque = opaque_nodes(order)
    if opaque:
        warnings.warn(
            f"the graph holds {len(opaque)} reentrant torch.utils.checkpoint node(s) "
            f"({opaque[0]}): the operations and parameters inside run in a backward pass of "
            f"their own that node hooks cannot see, so they are absent from the trace (their "
            f".grad is still filled); use checkpoint(..., use_reentrant=False) to trace them",
            UserWarning, stacklevel=2)
    leaves = {k: var for k, n in enumerate(order) if (var := leaf_tensor(n)) is not None}
    leaf_ids = {id(t) for t in leaves.values()}
    unreached = tuple(str(k) for k, t in (names or {}).items()
                      if not (t.grad_fn in index if t.grad_fn is not None else id(t) in leaf_ids))
    consts = {k: t for k, t in (names or {}).items() if not t.requires_grad}
    labels = [label(n, k, labels_by_key, index, consts) for k, n in enumerate(order)]
    values = forward_values(names, labels_by_key, index, order)
    output_name = labels_by_key.get(0)

    arrived: dict[int, tuple] = {}
    sent: dict[int, tuple] = {}
    ran: list[int] = []

    def make_hooks(key: int):
        def pre(grad_outputs):
            ran.append(key)
            arrived[key] = grad_outputs

        def post(grad_inputs, grad_outputs):
            sent[key] = grad_inputs

        return pre, post

    # .grad before the pass: where there was none, .grad afterwards is what arrived (no copy)
    had_grad = {k for k, t in leaves.items() if t.grad is not None} if not use_grad else set()
    handles = []
    grads_returned: dict[int, torch.Tensor | None] = {}
    try:
        for key, node in enumerate(order):
            pre, post = make_hooks(key)
            handles.append(node.register_prehook(pre))
            handles.append(node.register_hook(post))
        if use_grad:
            targets = input_seq or tuple(leaves.values())
            with kept_retained_grads((*(input_seq or ()), *(names or {}).values())):
                res = torch.autograd.grad(output, targets, grad_outputs=v,
                                          retain_graph=retain_graph, allow_unused=True)
            by_id = {id(t): k for k, t in leaves.items()}
            for t, g in zip(targets, res, strict=True):
                if id(t) in by_id:
                    grads_returned[by_id[id(t)]] = None if g is None else g.detach().clone()
        else:
            output.backward(gradient=v, inputs=input_seq, retain_graph=retain_graph)
    except Exception as err:  # torch's errors, and a custom backward's or a hook's own
        if ran and hasattr(err, "add_note"):
            err.add_note(f"gradarg.trace_backward: the pass failed in or after node "
                         f"'{labels[ran[-1]]}' ({order[ran[-1]].name()})")
        raise
    finally:
        for h in handles:
            h.remove()
        handles.clear()

    run_order = {k: i for i, k in enumerate(ran)}
    nodes, edges = [], []
    for key, node in enumerate(order):
        leaf = leaves.get(key)
        grad = None
        if leaf is not None:
            if use_grad:
                grad = grads_returned.get(key)
            elif key not in had_grad and arrived.get(key):
                grad = arrived[key][0].detach()  # AccumulateGrad copied it into .grad
            else:
                held = leaf.grad
                grad = None if held is None else held.detach().clone()
        nexts = children(node)
        child_keys = tuple(None if c is None else index[c] for c, _ in nexts)
        got = sent.get(key, ())
        nodes.append(TracedNode(
            key=key, name=labels_by_key.get(key), label=labels[key],
            grad_fn=node_class(node), op=op_name(node),
            order=run_order.get(key), grad_outputs=_detach(arrived.get(key, ())),
            grad_inputs=_detach(got), children=child_keys, is_leaf=leaf is not None,
            grad=grad,
            value=values.get(key),
        ))
        for slot, (child, input_nr) in enumerate(nexts):
            if child is not None:
                cot = got[slot] if slot < len(got) else None
                edges.append(TracedEdge(key, index[child], slot, input_nr,
                                        None if cot is None else cot.detach()))
    return BackwardTrace(nodes, edges, v, output_name, unreached, opaque)
