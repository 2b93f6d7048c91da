"""Where a path to the output was cut, as the graph shows it: the constants its nodes saved.

A tensor that reaches a node without history (``.detach()``, ``.data``, ``.item()``, NumPy, an
integer cast, ``torch.no_grad()``) is saved there as a constant, not linked through
``next_functions``: its memory, its values or its dtype can still tell where it came from while
the saved tensors are there (before ``backward()`` frees them).  Read by the diagnosis rules of
:mod:`.causes`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ...show.render import fmt
from ..graph.nodes import (
    Graph,
    children,
    is_leaf,
    leaf_tensor,
    op_name,
    saved_names,
    saved_tensors,
    saved_values,
)
from ..graph.operators import row

__all__ = ["constants", "copied_leaf", "cut", "entries_without_history", "history_free",
           "is_mask", "module_of", "same_storage", "typed_like"]

# a run without a graph that looks like torch.no_grad() in the graph it leaves: torch's reentrant
# checkpoint runs its block under no_grad and records it again in backward only when one of its
# inputs requires grad (torch.utils.checkpoint's docs; it warns "None of the inputs have
# requires_grad=True. Gradients will be None")
REENTRANT = ("or inside torch.utils.checkpoint(use_reentrant=True) when none of its inputs "
             "requires grad: use_reentrant=False records it")


def same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether ``a`` and ``b`` share memory (a ``.detach()`` or ``.data`` alias)."""
    try:
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() != 0
    except RuntimeError:
        return False


def copied_leaf(leaves: list[torch.Tensor], x: torch.Tensor, xname: str) -> str:
    """A leaf of the graph that holds a copy of ``x``'s values, in words, or ``""``: all of
    them (``torch.tensor(x.tolist())``, ``x.detach().clone().requires_grad_()``, a NumPy round
    trip) or some of its entries (``torch.tensor([x[0].item(), x[1].item()])``).  Evidence:
    every entry of the leaf equals an entry of ``x`` exactly, and at least one of them is not
    a whole number (0 or 1 can match by chance; a computed non-integer float cannot)."""
    if not (x.is_floating_point() and x.numel()) or x.is_nested:  # nested: no flat values
        return ""
    flat = x.detach().reshape(-1).double()
    for leaf in leaves:
        if (leaf is x or leaf.is_nested or not leaf.is_floating_point()
                or not 0 < leaf.numel() <= flat.numel()):
            continue
        vals = leaf.detach().reshape(-1).double()
        if typed_like(leaf):  # values one would type can match by chance
            continue
        if not bool(torch.isin(vals, flat).all()):  # sorted search: no leaf × x table
            continue
        shape = tuple(leaf.shape)
        if leaf.shape == x.shape and torch.equal(vals, flat):
            held = f"exactly {xname}'s values"
        else:
            at = [int((flat == vals[i]).nonzero()[0]) for i in range(min(len(vals), 4))]
            more = ", ..." if len(vals) > 4 else ""
            held = (f"{len(vals)} of {xname}'s entries (flat positions "
                    f"{', '.join(map(str, at))}{more})")
        return (f"the graph's leaf of shape {shape} holds {held}: a copy made from its values "
                f"(torch.tensor(x.tolist()), torch.tensor([x[0].item(), ...]), x.new_tensor(...), "
                f"x.detach().clone(), a NumPy round trip), a new leaf, so backward() stops "
                f"there and never reaches {xname}: compute with {xname} itself (indexing, "
                f"torch.stack or torch.cat keep the path)")
    return ""


def constants(nodes: list[Any]) -> list[tuple[Any, str, Any]]:
    """``(node, attribute, value)`` for every saved input that does not require grad."""
    return [(node, attr, val) for node, attr, val in saved_values(nodes) if "result" not in attr
            and ((isinstance(val, torch.Tensor) and not val.requires_grad)
                 or (isinstance(val, (int, float)) and not isinstance(val, bool)))]


def typed_like(t: torch.Tensor) -> bool:
    """Whether every value of ``t`` is a number one would type (at most four significant
    digits in the shortest form that reads back to it in ``t``'s dtype: 2, 0.5, 1e-3, 3.142):
    a constant equal to such a value may be typed, not copied; a computed value (0.6961,
    -1.4531) has more digits and matches another only when copied from it."""
    if not t.is_floating_point() or t.is_nested:
        return True
    low = t.dtype in (torch.float32, torch.float16, torch.bfloat16)
    np_dtype = np.float32 if low else np.float64
    for v in t.detach().reshape(-1)[:64].double().tolist():
        if not math.isfinite(v):
            continue
        digits = np.format_float_scientific(np_dtype(v), unique=True, trim="-").split("e")[0]
        if len(digits.replace("-", "").replace(".", "").rstrip("0")) > 4:
            return False
    return True


def _cast_of(val: torch.Tensor, x: torch.Tensor) -> bool:
    """Whether the integer tensor ``val`` holds ``x``'s values cast to its dtype (truncated,
    rounded, floored or ceiled): an integer weight of ``x``'s size (``torch.arange(n)``)
    that merely meets ``x`` in a product is no cast of it; nor is a tensor of two entries or
    of 0 and 1 only, which random values meet by chance too often to count."""
    if val.dtype == torch.bool or not x.is_floating_point() or x.is_nested or val.is_nested:
        return False
    if val.numel() < 3 or bool(((val == 0) | (val == 1)).all()):
        return False  # two entries, or only 0 and 1 (a mask): too easily met by chance
    v = val.detach().reshape(-1)
    xd = x.detach().reshape(-1)
    return any(torch.equal(v, f(xd).to(v.dtype))
               for f in (torch.trunc, torch.round, torch.floor, torch.ceil))


def cut(nodes: list[Any], x: torch.Tensor, xname: str) -> tuple[str, str | None]:
    """What cut the path from ``x`` to the output, judged from the constants the graph holds:
    the phrase, and the node that holds the evidence (``None`` if none does)."""
    consts = constants(nodes)
    for node, _, val in consts:
        if isinstance(val, torch.Tensor) and same_storage(val, x):
            return ((f"the graph holds {xname}'s memory as a constant in {node.name()}: the path "
                    f"was cut by .detach() or .data (or a NumPy round trip through "
                    f"torch.from_numpy); use {xname} itself"), node.name())
    for node, _, val in consts:
        if (isinstance(val, torch.Tensor) and not (val.is_floating_point() or val.is_complex())
                and val.numel() == x.numel() and val.numel() > 1 and _cast_of(val, x)):
            return ((f"{node.name()} takes an integer tensor ({val.dtype}) with {xname}'s size: "
                    f"a cast to an integer dtype (.long(), .int(), .round().long()) cut the "
                    f"path; integer tensors carry no gradient"), node.name())
    # values one would type (2, 0.5) can equal a constant by chance: then the answer says
    # what it saw and both readings, never that a copy cut the path
    typed = typed_like(x)
    for node, _, val in consts:
        if (isinstance(val, torch.Tensor) and not (val.is_nested or x.is_nested)
                and val.shape == x.shape and val.numel() > 1
                and val.dtype == x.dtype and torch.equal(val, x.detach())):
            if typed:
                return ((f"{node.name()} takes a tensor without graph equal to {xname}'s "
                        f"values: if it was copied from {xname} (torch.tensor(x.tolist()), a "
                        f"NumPy round trip, .detach().clone()), that cut the path; if it is a "
                        f"constant of its own, {xname} is not used at all"), node.name())
            return ((f"{node.name()} takes a copy of {xname}'s values that has no graph "
                    f"(torch.tensor(x.tolist()), a NumPy round trip, .detach().clone()): "
                    f"compute with {xname} itself"), node.name())
    if x.numel() == 1:
        xv = x.detach().reshape(()).item()
        for node, _, val in consts:
            num = val.item() if isinstance(val, torch.Tensor) and val.numel() == 1 else val
            if isinstance(num, (int, float)) and num == xv:
                if typed:
                    return ((f"{node.name()} uses the number {fmt(xv)}, which is also "
                            f"{xname}'s value: if it came from {xname} (.item() or float()), "
                            f"that cut the path, keep it a tensor; if it is a constant you "
                            f"wrote, {xname} is not used at all"), node.name())
                return ((f"{node.name()} uses {xname}'s value {fmt(xv)} as a plain number: "
                        f".item() or float() cut the path; keep it a tensor"), node.name())
    return ((f"nothing in the output's graph comes from {xname}: between them the path was cut "
            f"(by .detach(), .data, .item()/NumPy, torch.no_grad(), or an integer cast)"), None)


def module_of(name: str, module: torch.nn.Module | None) -> tuple[Any, Any]:
    """``(submodule name, submodule)`` owning the parameter ``name`` of ``module``, or
    ``(None, None)``."""
    if module is None or "." not in name:
        return None, None
    sub = name.rsplit(".", 1)[0]
    try:
        return sub, module.get_submodule(sub)
    except AttributeError:
        return None, None


def is_mask(v: torch.Tensor) -> bool:
    """A dropout mask: only 0 and one other value (``1 / (1 - p)``)."""
    if not v.is_floating_point() or v.numel() < 2:
        return False
    values = torch.unique(v.detach())
    return len(values) <= 2 and bool((values == 0).any())


def history_free(graph: Graph, what: str, oname: str, names: Mapping[str, Any]) -> str:
    """Where a value without history joins the graph: the junctions of :func:`_junctions`
    (input data and integer targets excluded), each with the module whose parameters take its
    result, if ``names`` holds them; ``""`` when the graph shows none."""
    found = _junctions(graph, names)
    if not found:
        # no cut value meets computed values: the graph's inputs without history are where
        # data enters (which is also where a value cut before the first parameter enters)
        # (not a node's own auxiliary results, a layer norm's mean and rstd, nor a batch
        # norm's running statistics: computed inside the operation, never a cut value)
        consts = [(n.name(), tuple(v.shape)) for n, a, v in saved_tensors(graph.nodes)
                  if v.grad_fn is None and not v.requires_grad and v.is_floating_point()
                  and v.dim() > 0 and not is_mask(v) and "result" not in a
                  and "running" not in a
                  and not (_LOSS_INPUT.search(a) and a in _loss_inputs(n))]
        if not consts:
            return ""
        seen = ", ".join(f"{n} {s}" for n, s in dict(consts).items())
        return (f"; {oname}'s graph takes tensors without history only at {seen} (input "
                f"data, or values computed under torch.no_grad() {REENTRANT}, or detached): "
                f"if {what} should reach {oname}, its path runs into one of these")
    shown, one = _listed(found)
    return (f"; {'a value' if one else 'values'} without history (computed under "
            f"torch.no_grad() {REENTRANT}, detached, or made from NumPy) "
            f"join{'s' if one else ''} {oname}'s graph at {shown}: if {what} should reach "
            f"{oname}, its path was cut before {'there' if one else 'one of these'}")


def _listed(found: list[str]) -> tuple[str, bool]:
    """The first three of ``found`` in words (``"... and 2 more"``), and whether it is one."""
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return ", ".join(found[:3]) + more, len(found) == 1


def entries_without_history(graph: Graph, what: str, oname: str,
                            names: Mapping[str, Any]) -> str:
    """After ``backward()`` freed the saved values: the lowest nodes of the graph with an
    input that needs no gradient (``None`` in ``next_functions``: the structure outlives the
    values; lowest: no other such node below it), each with the module whose parameter it
    takes or that takes its result (from ``names``), as words, or ``""`` when there is none.
    The graph ends where a path was cut, so a value cut from ``what``'s path enters it at one
    of them, as input data does; what each input is cannot be read any more (a loss
    function's target is left out: its node saved ``_saved_target``)."""
    import networkx as nx  # imported when used: import gradarg stays light

    by_id = {id(t): name for name, t in names.items()}
    entries = set()
    for k, n in enumerate(graph.nodes):
        loose = sum(c is None for c, _ in children(n))
        if not (is_leaf(n) or not loose or ("_saved_target" in saved_names(n) and loose == 1)):
            entries.add(k)
    g = graph.nx
    if not entries or not nx.is_directed_acyclic_graph(g):
        return ""
    below: dict[int, bool] = {}  # node k -> some entry lies below it (one pass, inputs first)
    for k in reversed(list(nx.topological_sort(g))):
        below[k] = any(c in entries or below[c] for c in g.successors(k))
    found = []
    for k in sorted(entries):
        if below[k]:
            continue  # not the lowest: a dropout mask, a scale, on a path a cut lies below
        n = graph.nodes[k]
        own = _taker(graph, k, by_id)
        module = None if own else _consumer(graph, k, by_id)
        found.append(n.name() + (f" in module '{own}'" if own else
                                 f", whose result goes into module '{module}'" if module else ""))
    if not found:
        return ""
    shown, one = _listed(found)
    return (f"; the graph (its structure outlives backward) ends in inputs without history at "
            f"{shown} (input data, or a value computed under torch.no_grad(), detached or "
            f"made from NumPy): if {what} should reach {oname}, its path was cut before "
            f"{'there' if one else 'one of these'}")


# a loss node (BinaryCrossEntropyBackward0, MseLossBackward0, ...) saves its target and class
# weights as attributes of these names: labels and constants, not a value that was cut
_LOSS_INPUT = re.compile(r"_saved_(target|weight|pos_weight)$")


def _loss_inputs(node: Any) -> set[str]:
    """The saved attributes of ``node`` that are a loss function's target or class weights
    (none unless the node saves a ``_saved_target``)."""
    attrs = {a for _, a, _ in saved_tensors([node])}
    return {a for a in attrs if _LOSS_INPUT.search(a)} if "_saved_target" in attrs else set()


def _junctions(graph: Graph, names: Mapping[str, Any]) -> list[str]:
    """Nodes, output side first, where a tensor without history (an input of the node absent
    from ``next_functions``) meets a value computed from the model's input data: where a cut
    value rejoins the computation.  Not junctions: the layer that takes the input data itself
    (its other inputs are parameters only), integer inputs (targets, indices), scalars, and
    dropout masks (a saved factor holding only 0 and one other value)."""
    import networkx as nx  # imported when used: import gradarg stays light

    nodes, g = graph.nodes, graph.nx
    if not nx.is_directed_acyclic_graph(g):
        return []
    # carries[k]: the value of node k depends on the model's input data (or on some other
    # value without history): an input outside the graph below it, or integer indices saved
    carries: dict[int, bool] = {}
    for k in reversed(list(nx.topological_sort(g))):
        n = nodes[k]
        if is_leaf(n):
            carries[k] = False
            continue
        here = any(c is None for c, _ in children(n)) or any(
            not (v.is_floating_point() or v.is_complex()) for _, _, v in saved_tensors([n]))
        carries[k] = here or any(carries[c] for c in g.successors(k))
    by_id = {id(t): name for name, t in names.items()}
    found = []
    for k, n in enumerate(nodes):
        if is_leaf(n) or not any(c is None for c, _ in children(n)):
            continue
        if not any(carries[c] for c in g.successors(k)):
            continue  # the first layer on the input data
        named = [(a, v) for _, a, v in saved_tensors([n]) if not v.requires_grad]
        labels = _loss_inputs(n)
        if labels:
            # a loss function's target (and its class weights): the labels, not a cut value
            named = [(a, v) for a, v in named if a not in labels]
            if not any(v.dim() > 0 for _, v in named):
                continue
        saved = [v for _, v in named]
        if saved and all(v.dim() == 0 or is_mask(v) or not v.is_floating_point()
                         for v in saved):
            continue
        shape = next((tuple(v.shape) for v in saved if v.dim() > 0), None)
        text = n.name() + (f" (a constant of shape {shape})" if shape else "")
        module = _consumer(graph, k, by_id)
        found.append(text + (f", whose result goes into module '{module}'" if module else ""))
    return found


def _taker(graph: Graph, k: int, by_id: Mapping[int, str]) -> str | None:
    """The module (from parameter names) whose parameter node ``k`` itself takes, directly or
    through at most two view nodes, or ``None``."""
    if not by_id:
        return None
    nodes, g = graph.nodes, graph.nx
    todo = [(c, 0) for c in g.successors(k)]
    while todo:
        c, depth = todo.pop()
        var = leaf_tensor(nodes[c])
        if var is not None and id(var) in by_id:
            name = by_id[id(var)]
            return name.rsplit(".", 1)[0] if "." in name else "(the model itself)"
        if depth < 2 and var is None and row(op_name(nodes[c])).view:
            todo += [(cc, depth + 1) for cc in g.successors(c)]
    return None


def _consumer(graph: Graph, k: int, by_id: Mapping[int, str]) -> str | None:
    """The module (from parameter names) of the nearest node on the output side of ``k`` that
    takes a parameter, directly or through at most two view nodes (``TBackward0``)."""
    if not by_id:
        return None
    g = graph.nx
    seen, frontier = {k}, [k]
    while frontier:
        nxt = []
        for a in frontier:
            for p in g.predecessors(a):
                if p in seen:
                    continue
                seen.add(p)
                nxt.append(p)
                if (module := _taker(graph, p, by_id)) is not None:
                    return module
        frontier = nxt
    return None
