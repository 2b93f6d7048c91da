"""Is the tensor tracked, and is it in the output's graph? The first causes
:func:`gradarg.why_no_grad` checks (:data:`RULES`, in order; the rest are in :mod:`.causes`).

Each cause is a :class:`~gradarg.trace.why.rules.Rule`: the cases it answers, a phrase for the
docstring, its handling of a live graph and, where it differs, of a freed one.  Only the
graph's structure and the constants its nodes saved are read here: no backward pass runs.
"""

from __future__ import annotations

import torch

from ..graph.nodes import (
    first_nodes,
    is_leaf,
    leaf_tensor,
    node_class,
    saved_tensors,
    single_input_chain,
)
from ..graph.values import shape_text
from .context import Answer, Cause, Context
from .cuts import (
    constants,
    copied_leaf,
    cut,
    entries_without_history,
    history_free,
    module_of,
    same_storage,
)
from .rules import undecided
from .source import never_referred

__all__ = ["RULES"]


# -- the tensor and the output ----------------------------------------------------------------
def _integer_dtype(c: Context) -> Answer | None:
    if c.tensor.is_floating_point() or c.tensor.is_complex():
        return None
    return Answer("integer-dtype", (
        f"{c.xname} has dtype {c.tensor.dtype}: only floating and complex tensors can require "
        f"grad, so it never gets a .grad; make it floating before the computation "
        f"(e.g. .float()) and keep integer casts out of the path"))


INTEGER_DTYPE = Cause(("integer-dtype",), 'an integer dtype (``"integer-dtype"``)',
                      _integer_dtype)


def _inference_mode(c: Context) -> Answer | None:
    if not c.tensor.is_inference():
        return None
    return Answer("inference-mode", (
        f"{c.xname} was created under torch.inference_mode(): inference tensors never record "
        f"a graph; create it outside inference_mode (or clone it there)"))


INFERENCE_MODE = Cause(("inference-mode",),
                       'created under ``inference_mode`` (``"inference-mode"``)', _inference_mode)


def _no_graph(c: Context) -> Answer | None:
    output, xname, oname = c.output, c.xname, c.oname
    if output.grad_fn is not None or output is c.tensor:
        return None
    if output.is_inference():
        return Answer("output-no-grad", (
            f"{oname} was computed under torch.inference_mode(): it has no graph, so no "
            f"backward pass leads from it to {xname}; compute it outside inference_mode "
            f"(torch.no_grad() or inference_mode belong to evaluation only)"))
    if output.requires_grad:
        return Answer("new-leaf", (
            f"{oname} is a new leaf (requires_grad=True but no grad_fn): it holds values "
            f"without history, made while nothing was recorded (a forward under "
            f"torch.no_grad(), .detach(), .item() or NumPy, torch.tensor([...]) of other "
            f"tensors) and marked as requiring grad afterwards (.requires_grad_(), "
            f"requires_grad=True, Variable(..., requires_grad=True)); marking it later gives "
            f"it no history, so backward() stops at {oname} and never reaches {xname}: "
            f"compute it with grad mode on, with torch operations on the tensors themselves "
            f"(torch.stack or torch.cat to combine losses)"))
    facts = []
    if not torch.is_grad_enabled():
        facts.append("grad mode is off right now (inside torch.no_grad() or after "
                     "torch.set_grad_enabled(False))")
    if c.tensor.requires_grad and c.tensor.is_leaf:
        facts.append(f"{xname} requires grad now: if {xname}.requires_grad_() came after the "
                     f"forward, set it before")
    with_graph = [k for k, t in c.names.items() if t is not output and t.grad_fn is not None]
    if with_graph:
        facts.append(f"{', '.join(with_graph[:3])} has a graph and {oname} has none: the path "
                     f"was cut between them")
    seen = "".join(f"; {f}" for f in facts)
    return Answer("output-no-grad", (
        f"{oname} has no graph (requires_grad=False, no grad_fn), so no backward pass leads "
        f"from it to {xname}: it was computed under torch.no_grad(), or only from tensors "
        f"without history (.detach(), .data, .item() or NumPy, integer results such as argmax "
        f"or .long(), torch.tensor([...]) of other tensors, gradients from "
        f"torch.autograd.grad without create_graph=True as in a gradient penalty){seen}"))


NO_GRAPH = Cause(("output-no-grad", "new-leaf"),
                 'output without a graph (``"output-no-grad"``) or itself a new leaf cut from '
                 'the computation (``"new-leaf"``)', _no_graph)


def _not_tracked(c: Context) -> Answer | None:
    tensor, xname = c.tensor, c.xname
    if tensor.requires_grad:
        return None
    for node in c.nodes:
        var = leaf_tensor(node)
        if var is not None and same_storage(var, tensor):
            return Answer("requires-grad-false", (
                f"{xname} does not require grad: it shares memory with a leaf of the graph, "
                f"so it is a .detach()/.data alias of it; that leaf gets the .grad"))
    node = next((n.name() for n, _, val in constants(c.nodes)
                 if isinstance(val, torch.Tensor) and same_storage(val, tensor)), None)
    extra = f" ({node} takes it as a constant)" if node is not None else ""
    return Answer("requires-grad-false", (
        f"{xname} has requires_grad=False, so autograd never tracks it{extra}: create it "
        f"with requires_grad=True or call {xname}.requires_grad_() before using it"), node)


NOT_TRACKED = Cause(("requires-grad-false",),
                    '``requires_grad=False`` (``"requires-grad-false"``)', _not_tracked)


def _output_itself(c: Context) -> Answer | None:
    if c.output is not c.tensor:
        return None
    return Answer("ok", (
        f"{c.xname} is the output itself: backward() gives it the upstream gradient"))


OUTPUT_ITSELF = Cause(("ok",), 'the output itself (``"ok"``)', _output_itself)


# -- not in the output's graph ----------------------------------------------------------------
def _outside(c: Context) -> bool:
    """The tensor is not a node of the output's graph (these rules apply only then)."""
    return c.key is None


def _held_itself(c: Context) -> Answer | None:
    xname = c.xname
    for node, _, val in saved_tensors(c.nodes):
        if val is c.tensor:
            return Answer("not-reachable", (
                f"{xname} is not reachable from {c.oname}: {node.name()} holds {xname} itself "
                f"as a constant, so {xname} did not require grad when the forward ran: "
                f"requires_grad_() came after the forward; set it before and recompute"),
                node.name())
    return None


HELD_ITSELF = Cause(("not-reachable",), 'not in the output\'s graph (``"not-reachable"``, '
                    "with what cut the path when the graph shows it)", _held_itself,
                    when=_outside)


def _cut_found(c: Context) -> Answer | None:
    """Live only: which constant shows the cut (freed saved tensors show nothing)."""
    xname, oname = c.xname, c.oname
    if copied_leaf(c.graph.leaves(), c.tensor, xname):
        return None  # a leaf holding x's values is stronger evidence: UNREACHABLE says it
    text, node = cut(c.nodes, c.tensor, xname)
    if node is not None:
        return Answer("not-reachable", f"{xname} is not reachable from {oname}: {text}", node)
    consts = constants(c.nodes)
    for name, t in c.names.items():
        if t is c.tensor or t.grad_fn is None:
            continue
        hit = next((n for n, _, v in consts if isinstance(v, torch.Tensor)
                    and same_storage(v, t)), None)
        if hit is not None:
            return Answer("not-reachable", (
                f"{xname} is not reachable from {oname}: {hit.name()} takes the memory of "
                f"{name} (which has a graph) as a constant: {name} was detached on the way "
                f"(.detach() or .data); use {name} itself"), hit.name())
    return None


CUT_FOUND = Cause(("not-reachable",), "", _cut_found, undecided, _outside)


_HISTORY = 256  # nodes of the tensor's own history read for the leaves it comes from


def _leaf_name(c: Context, leaf: torch.Tensor) -> str | None:
    """The leaf's name in ``names`` (which holds the module's parameters too), else ``None``."""
    return next((name for name, t in c.names.items() if t is leaf), None)


def _made_beside(c: Context) -> Answer | None:
    """A non-leaf outside the output's graph whose own history reaches leaves that are in
    it: made from them beside or after the computation (``model.weight[0]``, ``w.t()``
    taken to read a gradient, a second forward), not cut from it.  Read from the structure of
    both graphs (so also once ``backward()`` freed the saved tensors)."""
    tensor, xname, oname = c.tensor, c.xname, c.oname
    if tensor.grad_fn is None:
        return None
    leaves = [leaf_tensor(n) for n in first_nodes([tensor.grad_fn], _HISTORY) if is_leaf(n)]
    used = [t for t in leaves if t is not None and c.graph.key_of(t) is not None]
    if not used:
        return None
    one = len(used) == 1
    first = _leaf_name(c, used[0])
    names = [first or f"the leaf of shape {tuple(used[0].shape)}"] + [
        _leaf_name(c, t) or f"the leaf of shape {tuple(t.shape)}" for t in used[1:3]]
    what = names[0] if one else ", ".join(names) + (
        f" and {len(used) - 3} more" if len(used) > 3 else "")
    chain = single_input_chain(tensor.grad_fn, 8) if one else None
    how = (" by " + ", then ".join(node_class(n) for n in reversed(chain[1]))
           if chain is not None else "")
    read = ""
    if chain is not None:
        grad = f"{first}.grad" if first else "the leaf's .grad"
        read = (f" Its gradient is the matching part of {grad} after backward() (the same "
                f"indexing or view applied to the gradient: w.grad[0] for w[0]).")
    return Answer("not-reachable", (
        f"{xname} is not in {oname}'s graph, but {what}, which {xname} was computed "
        f"from{how}, {'is' if one else 'are'} in it: {oname} reaches "
        f"{'that leaf' if one else 'those leaves'} by a computation of its own, not through "
        f"{xname}, so backward() fills {'its' if one else 'their'} .grad and never reaches "
        f"{xname} ({xname} is a separate result: a second forward, or a slice or view such as "
        f"weight[0] or w.t() taken after the forward to read a gradient).{read} If {oname} "
        f"should depend on {xname}, compute it from {xname}"))


def _made_beside_freed(c: Context) -> Answer | None:
    answer = _made_beside(c)
    if answer is None:
        return None
    return answer._replace(message=answer.message + (
        f" (whether {c.xname} was also detached on a way into {c.oname} cannot be checked: "
        f"backward() freed the saved tensors that would show it)"))


MADE_BESIDE = Cause(("not-reachable",), "", _made_beside, _made_beside_freed, _outside)


def _not_the_module_parameter(c: Context) -> Answer | None:
    """An ``nn.Parameter`` that is not one of ``module``'s parameters now: if it was taken
    from the module before (as an optimizer takes it), the module attribute was assigned a
    new one since (a parameter made in ``forward`` is re-made at every call)."""
    module, tensor, xname = c.module, c.tensor, c.xname
    if module is None or not isinstance(tensor, torch.nn.Parameter):
        return None
    if any(p is tensor for p in module.parameters()):
        return None
    leaf_ids = {id(t) for t in c.graph.leaves()}
    alike = [k for k, p in module.named_parameters() if id(p) in leaf_ids
             and p.shape == tensor.shape and p.dtype == tensor.dtype]
    # one of the module's parameters in the graph with its shape and dtype: named (several
    # such are common, biases and norms of one width: then none is)
    alike_text = (f"; the only parameter of {module.__class__.__name__} in the graph with its "
                  f"shape and dtype is {alike[0]}" if len(alike) == 1 else "")
    return Answer("not-reachable", (
        f"{xname} is an nn.Parameter, but not one of {module.__class__.__name__}'s parameters "
        f"now, and it is not in {c.oname}'s graph: if it was taken from the model before the "
        f"forward (an optimizer built then holds it), the module's attribute was assigned "
        f"another nn.Parameter since, and the graph holds the new one{alike_text}: either "
        f"code outside the forward replaced it (model.layer.weight = nn.Parameter(...), or a "
        f"layer swapped in after the optimizer was built: build the optimizer after the last "
        f"replacement, or add the new parameters to it), or the forward assigns "
        f"self.w = nn.Parameter(...), which re-creates the parameter at every call (create "
        f"it once in __init__ and only use it in forward); which of the two the graph cannot "
        f"show"))


NOT_THE_MODULE_PARAMETER = Cause(("not-reachable",), "", _not_the_module_parameter,
                                 when=_outside)


def _unused_module(c: Context) -> Answer | None:
    xname, oname = c.xname, c.oname
    leaf_ids = {id(t) for t in c.graph.leaves()}
    sub, mod = module_of(xname, c.module)
    if mod is None or any(id(p) in leaf_ids for p in mod.parameters()) or c.opaque:
        return None
    holder_name, _, attr = sub.rpartition(".")
    holder = c.module.get_submodule(holder_name) if c.module is not None else None
    unused = never_referred(holder, attr) if holder is not None else None
    if unused is not None:
        return Answer("unused-parameter", (
            f"{xname} is not in {oname}'s graph, and neither is any other parameter of module "
            f"{sub} ({type(mod).__name__}): {unused}; call it in forward if it should be "
            f"trained, or leave it out of the model and the optimizer (DDP: "
            f"find_unused_parameters=True)"), sub)
    where = history_free(c.graph, f"{sub}'s output", oname, c.names)
    return Answer("unused-parameter", (
        f"{xname} is not in {oname}'s graph, and neither is any other parameter of module "
        f"{sub} ({type(mod).__name__}): {sub} did not take part in computing {oname} (its "
        f"forward was not called, or its output was cut before {oname} by .detach(), "
        f".data, NumPy or torch.no_grad(), or it ran inside a reentrant checkpoint none of "
        f"whose inputs requires grad){where}; if "
        f"it is meant to be unused, leave it out of the optimizer (DDP: "
        f"find_unused_parameters=True)"))


UNUSED_MODULE = Cause(("unused-parameter",), "no parameter of its module in the graph "
                      'either (``"unused-parameter"``)', _unused_module, when=_outside)


def _opaque(c: Context) -> Answer | None:
    if not c.opaque:
        return None
    xname = c.xname
    return Answer("not-reachable", (
        f"{xname} is not a node of {c.oname}'s graph as hooks see it: the graph holds a "
        f"reentrant torch.utils.checkpoint region ({c.opaque[0]}) whose inside is rebuilt "
        f"in a backward pass of its own; if {xname} is used inside it, its .grad is filled "
        f"by backward() but cannot be traced (use_reentrant=False makes it visible)"),
        c.opaque[0])


OPAQUE = Cause(("not-reachable",), "", _opaque, when=_outside)


def _leaves_hint(c: Context) -> str:
    leaves = c.graph.leaves()
    if not (0 < len(leaves) <= 3 and c.module is None):
        return ""
    shapes = ", ".join(str(tuple(v.shape)) for v in leaves)
    return (f"; the graph's leaves are tensors of shape {shapes}, none of them {c.xname}: if "
            f"one of them was made from computed values (torch.tensor([...], "
            f"requires_grad=True), a NumPy copy), it is a new leaf that cut the path; "
            f"combine tensors with torch.stack or torch.cat instead")


def _unreachable(c: Context) -> Answer | None:
    copied = copied_leaf(c.graph.leaves(), c.tensor, c.xname)
    if copied:
        return Answer("not-reachable", f"{c.xname} is not reachable from {c.oname}: {copied}")
    more = history_free(c.graph, c.xname, c.oname, c.names)
    return Answer("not-reachable", (
        f"{c.xname} is not reachable from {c.oname}: {cut(c.nodes, c.tensor, c.xname)[0]}"
        f"{more}{_leaves_hint(c)}"))


def _unreachable_freed(c: Context) -> Answer | None:
    where = entries_without_history(c.graph, c.xname, c.oname, c.names)
    return Answer("not-reachable", (
        f"{c.xname} is not in {c.oname}'s graph: the path from it was cut (.detach(), .data, "
        f".item()/NumPy, torch.no_grad(), a reentrant checkpoint none of whose inputs "
        f"requires grad, an integer cast, requires_grad_() after the forward) or it was not "
        f"used{where}; what each input there holds could not be "
        f"checked, because backward() freed the saved tensors: recompute {c.oname} and call "
        f"why_no_grad before backward()"))


UNREACHABLE = Cause(("not-reachable",), "", _unreachable, _unreachable_freed, _outside)


# -- in the graph -----------------------------------------------------------------------------
# operations that make a copy, a view or a constant rescaling of one tensor: a leaf that
# requires grad followed only by these is an initialisation or a move done after
# requires_grad=True (``torch.randn(..., requires_grad=True) * 0.01``, ``.to(device)``)
_COPIES = {"ToCopyBackward0": ".to() / .double() / .float() / .cuda() (ToCopyBackward0: a "
                              "copy in another dtype or on another device)",
           "CloneBackward0": ".clone() (CloneBackward0)"}
_RESCALES = {"MulBackward0": "a product with a tensor without history or a number "
                             "(MulBackward0)",
             "DivBackward0": "a division by a tensor without history or a number "
                             "(DivBackward0)",
             "AddBackward0": "an addition of a constant (AddBackward0)",
             "SubBackward0": "a subtraction of a constant (SubBackward0)",
             "NegBackward0": "a negation (NegBackward0)"}
_VIEWS = {"ViewBackward0", "UnsafeViewBackward0", "UnsqueezeBackward0", "SqueezeBackward0",
          "SqueezeBackward1", "TBackward0", "TransposeBackward0", "PermuteBackward0",
          "ExpandBackward0"}
_CHAIN = 4  # at most this many such operations between the leaf and the tensor


def _made_from_leaf(tensor: torch.Tensor) -> tuple[torch.Tensor, list[str]] | None:
    """The leaf that requires grad which ``tensor`` is a copy, view or constant rescaling of
    (each operation on the way taking no other input with history), and those operations'
    names, innermost first; ``None`` otherwise (``tanh(w)``, ``a * b``, a longer chain)."""
    found = single_input_chain(tensor.grad_fn, _CHAIN + 1)
    if found is None:
        return None
    leaf, ops = found
    names = [node_class(n) for n in reversed(ops)]
    var = leaf_tensor(leaf)
    if not names or var is None or not all(
            n in _COPIES or n in _RESCALES or n in _VIEWS for n in names):
        return None
    return var, names


def _non_leaf(c: Context) -> Answer | None:
    tensor, xname = c.tensor, c.xname
    if tensor.grad_fn is None or tensor.retains_grad:
        return None
    made = _made_from_leaf(tensor)
    if made is not None:
        leaf, names = made
        ops = ", then ".join(_COPIES.get(n) or _RESCALES.get(n) or f"a view ({n})"
                             for n in names)
        of = (f"the leaf tensor of shape {shape_text(leaf)} ({leaf.dtype}, {leaf.device}) that "
              f"requires grad")
        if any(n in _COPIES for n in names):
            make = ("create it with the dtype and device it needs and set requires_grad "
                    "there (torch.randn(..., dtype=..., device=..., requires_grad=True)), "
                    "or move first and call .requires_grad_() last")
        else:
            make = ("compute its value first and make that the leaf: "
                    "(torch.randn(...) * 0.01).requires_grad_(), or nn.Parameter(...)")
        return Answer("non-leaf", (
            f"{xname} is not a leaf: it was made from {of} by {ops}, so backward() fills "
            f"that leaf's .grad, not {xname}'s (.grad is filled only for leaf tensors). If "
            f"{xname} itself is what should be trained (an initialisation or a move done "
            f"after requires_grad=True), {make}; to read the gradient of {xname} as it is, "
            f"call {xname}.retain_grad() before backward(), or use "
            f"torch.autograd.grad({c.oname}, {xname})"), tensor.grad_fn.name())
    return Answer("non-leaf", (
        f"{xname} is not a leaf (made by {tensor.grad_fn.name()}), and backward() fills "
        f".grad only for leaf tensors: call {xname}.retain_grad() before backward(), or "
        f"use torch.autograd.grad({c.oname}, {xname})"), tensor.grad_fn.name())


NON_LEAF = Cause(("non-leaf",), 'a non-leaf without ``retain_grad()`` (``"non-leaf"``; a '
                 'copy, view or constant rescaling of one leaf, as ``torch.randn(..., '
                 'requires_grad=True) * 0.01`` or ``.to(device)`` after it, named with that '
                 'leaf)',
                 _non_leaf)


RULES: tuple[Cause, ...] = (
    INTEGER_DTYPE, INFERENCE_MODE, NO_GRAPH, NOT_TRACKED, OUTPUT_ITSELF,
    HELD_ITSELF, CUT_FOUND, MADE_BESIDE, NOT_THE_MODULE_PARAMETER, UNUSED_MODULE, OPAQUE,
    UNREACHABLE,
    NON_LEAF,
)
"""The causes about tracking and reachability, in order."""
