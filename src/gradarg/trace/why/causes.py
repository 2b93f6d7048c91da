"""Why a ``.grad`` is None, zero or NaN: the causes :func:`gradarg.why_no_grad` checks, in order.

Each cause is a :class:`~gradarg.trace.why.rules.Rule` over one
:class:`~gradarg.trace.why.context.Context`: the cases it answers, a phrase for the docstring, and
its handling of a live graph (read from one traced pass) and of one whose saved tensors
``backward()`` freed (read from ``.grad`` and the graph's structure), or ``None`` where it
cannot decide.  :data:`RULES` is the order: first those of :mod:`.reach` (is the tensor tracked
and in the graph?), then those here (what the pass and ``.grad`` show).  ``why_no_grad``'s
``Case`` type, its docstring's list of cases and its Returns prose are made from
:data:`RULES`.  A new cause is one rule, in :mod:`.reach` or here, placed in its ``RULES``.
"""

from __future__ import annotations

import re

import torch

from ..graph.nodes import (
    children,
    in_place_edits,
    is_custom,
    leaf_tensor,
    node_class,
    op_name,
)
from ..graph.operators import factors, row, singular
from ..graph.singularpoints import at_singular
from ..graph.values import dense_values, finite
from . import reach
from .alive import dead_relu, describe, held_zero_factor, live_singular
from .context import Answer, Cause, Context
from .gradients import (
    Zero,
    Zeros,
    bad_data,
    compare,
    custom_on_path,
    edited,
    forward_origin,
    random_nodes,
    stats,
    through_views,
)
from .raised import COMPLEX_OUTPUT, RAISES
from .rules import undecided
from .zeroed import saturated, zero_node, zeroed_between

__all__ = ["RULES"]


def _in_place_versions(c: Context) -> Answer | None:
    """The version counters of the saved tensors still on the graph: read before any other
    case, live or after a backward that raised (which freed only what ran before the error)."""
    for node, attr, message in in_place_edits(c.nodes):
        what, fix = edited(c.graph, c.names, node, attr, message)
        what = f": {what}" if what else ""
        return Answer("modified-in-place", (
            f"a tensor saved for {node.name()} was modified in place after it was saved{what}; "
            f"a backward pass through this graph stops with an error there, and nothing "
            f"below it gets a gradient: {fix}"), node.name())
    return None


def _in_place(c: Context) -> Answer | None:
    seen = _in_place_versions(c)
    if seen is not None:
        return seen
    err = c.inplace_error
    if err is None:
        return None
    notes = " ".join(getattr(err, "__notes__", []))  # trace_backward names the node
    where = re.search(r"\((\w+Backward\d*)\)", notes) or re.search(
        r"output \d+ of (\w+)", str(err))
    node = where.group(1) if where else None
    at = f" (saved for {node})" if node else ""
    return Answer("modified-in-place", (
        f"a tensor the backward pass needs{at} was modified in place after it was "
        f"saved, so the pass stops with an error: write the operation out of place "
        f"(h = h + 1 instead of h += 1) or clone before modifying"), node)


IN_PLACE = Cause(("modified-in-place",),
                 'a saved tensor modified in place (``"modified-in-place"``, from the version '
                 "counters of the saved tensors still on the graph)", _in_place,
                 _in_place_versions)


def _ran(c: Context) -> str:
    return (f"{c.xname} is in {c.oname}'s graph, and backward() has run through that graph "
            f"(its saved tensors are freed), yet {c.xname}.grad is None")


def _recompute(c: Context) -> str:
    return (f"which node did it could not be checked: backward() freed the saved tensors "
            f"it needs; recompute {c.oname} and call why_no_grad before backward(), or "
            f"trace it with gradarg.trace_backward")


def _custom_none(c: Context) -> Answer | None:
    if c.pass_grad is not None:
        return None
    custom = custom_on_path(c.graph, c.position)
    if not custom:
        return None
    return Answer("zero", (
        f"{c.xname} is in {c.oname}'s graph but no gradient reaches it: the custom "
        f"Function {custom} returns None for it from backward() (so .grad stays "
        f"None); return a gradient for every input that requires grad"), custom)


def _custom_none_freed(c: Context) -> Answer | None:
    if c.tensor.grad is not None:
        return None
    custom = custom_on_path(c.graph, c.position)
    if not custom:
        return None
    return Answer("zero", (
        f"{_ran(c)}: the path passes through the custom Function {custom}, whose "
        f"backward() returning None for this input leaves .grad None (return a "
        f"gradient for every input that requires grad); the only other causes: .grad "
        f"was reset after the backward (zero_grad(set_to_none=True)), or "
        f"backward(inputs=...) left {c.xname} out"), custom)


CUSTOM_NONE = Cause(("zero",), 'a custom Function returning None for it (``"zero"``)',
                    _custom_none, _custom_none_freed)


def _nonfinite(c: Context) -> Answer | None:
    if not c.stats[1]:
        return None
    xname, grad, trace = c.xname, c.grad, c.trace
    first = trace.first_nonfinite
    if first is None:
        return Answer("nonfinite", f"{xname}'s gradient holds NaN or Inf", None, grad)
    live = c.nodes[first.key]
    where = [k for k in c.graph.ancestors(first.key) if row(op_name(c.nodes[k])).masks_branch]
    sent = next((t for t in first.grad_inputs if t is not None and not finite(t)), None)
    got = first.arrived
    if where and sent is not None and got is not None and got.shape == sent.shape:
        bad = ~torch.isfinite(dense_values(sent)) if sent.layout != torch.strided else \
            ~torch.isfinite(sent)
        if sent.layout == torch.strided and bool((got[bad] == 0).all()):
            return Answer("nonfinite", (
                f"{xname}'s gradient holds NaN: torch.where sends a zero cotangent into the "
                f"branch it did not take, and {first.label} ({first.grad_fn}) turns that 0 into "
                f"NaN (0 · inf: its derivative is infinite or undefined at those inputs); "
                f"masking the output is not enough, mask the input too (the double where): "
                f"safe = torch.where(cond, x, 1.0); torch.where(cond, torch.sqrt(safe), 0.0)"),
                first.label, grad)
    data = bad_data(live)
    if data is not None:
        return Answer("nonfinite", (
            f"{xname}'s gradient holds NaN or Inf; it first appears at {first.label} "
            f"({first.grad_fn}), whose backward multiplies by a saved input without history "
            f"({data}) that holds NaN or Inf: the data (or a constant) is not finite; check it "
            f"with torch.isfinite(...).all() before the forward"), first.label, grad)
    origin = forward_origin(live, c.graph.index)
    if origin is not None and origin is not live:
        olabel = trace.nodes[c.graph.index[origin]].label
        fix = row(op_name(origin)).fix_in_product
        extra = f" ({fix})" if fix and row(first.op).product else ""
        return Answer("nonfinite", (
            f"{xname}'s gradient holds NaN or Inf; it starts at {olabel} ({node_class(origin)}): "
            f"its forward value is already infinite or NaN there (e.g. log of 0, the square "
            f"root of a negative number), and the backward of {first.label} ({first.grad_fn}), "
            f"the first to send NaN/Inf, multiplies by that value or one computed from it; keep "
            f"the input of {olabel} inside its domain (clamp(min=eps)){extra}"), olabel, grad)
    if (point := at_singular(live)) is not None:
        return Answer("nonfinite", (
            f"{xname}'s gradient holds NaN or Inf; it first appears at {first.label} "
            f"({first.grad_fn}): {point.text}"),
            first.label, grad)
    return Answer("nonfinite", (
        f"{xname}'s gradient holds NaN or Inf; it first appears at {first.label} "
        f"({first.grad_fn}): a derivative is infinite there (sqrt at 0, log of 0, division by "
        f"0); keep the input away from that point, e.g. clamp(min=eps)"), first.label, grad)


def _nonfinite_freed(c: Context) -> Answer | None:
    grad = c.tensor.grad
    if grad is None:
        return None
    total, bad, _ = stats(grad)
    if not bad:
        return None
    ops = {op_name(c.nodes[k]) for k in c.path}
    found = live_singular(c)
    if found is not None:
        trap = ""
        if any(row(o).masks_branch for o in ops):
            trap = (f"; the path has torch.where above {found.op}: where sends 0 into the "
                    f"branch not taken and 0 · inf = NaN there even where that branch is not "
                    f"used; the fix is the double where (mask the input too: "
                    f"torch.where(cond, x, 1.0) before the op)")
        return Answer("nonfinite", (
            f"{c.xname}.grad holds NaN or Inf in {bad} of {total} entries; "
            f"{describe(found)}{trap}"), found.op, grad)
    kinds = sorted({op_name(c.nodes[k]) for k in c.path if singular(c.nodes[k])})
    over = sorted(o for o in ops if row(o).overflows)
    overflow = "".join(f" ({o} overflows to inf for {row(o).overflows})" for o in over)
    hint = ""
    if any(row(o).masks_branch for o in ops) and (kinds or over):
        hint = (f"; the path has torch.where above {', '.join(kinds + over)}: where sends 0 "
                f"into the branch not taken and 0 · inf = NaN there{overflow}; the fix is "
                f"the double where (mask the input too: torch.where(cond, x, 1.0) before the "
                f"op)")
    elif kinds or over:
        parts = []
        if kinds:
            where = "; ".join(f"{o}: {row(o).singular}" for o in kinds)
            parts.append(f"{', '.join(kinds)}, whose derivative is infinite or undefined at "
                         f"some inputs ({where})")
        parts += [f"{o}, whose forward overflows to inf for {row(o).overflows}" for o in over]
        hint = "; the path passes through " + "; and ".join(parts)
    return Answer("nonfinite", (
        f"{c.xname}.grad holds NaN or Inf in {bad} of {total} entries{hint}; {_recompute(c)}"),
        None, grad)


NONFINITE = Cause(("nonfinite",), 'NaN/Inf (``"nonfinite"``: the node where it starts)',
                  _nonfinite, _nonfinite_freed)


_STEP_FIX = ("a step function has derivative zero almost everywhere: if the rounding is "
             "meant, a straight-through estimator (x + (x.round() - x).detach()) keeps its "
             "values and passes the gradient")


def _factor_leaves(c: Context, z: Zero) -> list[tuple[str, torch.Tensor]]:
    """The all-zero leaves behind ``z`` that require grad, with their names."""
    named = {id(t): k for k, t in c.names.items()}
    return [(named.get(id(t), f"the leaf of shape {tuple(t.shape)}"), t) for t in z.leaves
            if t.requires_grad]


def _moves(c: Context, z: Zero, grads: list[torch.Tensor | None]) -> str:
    """Whether the all-zero factors behind ``z`` move at the next optimizer step, from their
    own gradients ``grads`` (one pass before backward, ``.grad`` after it)."""
    leaves = _factor_leaves(c, z)
    if not leaves:
        return (f"; nothing it is made from requires grad, so {c.xname}'s gradient stays zero "
                f"while it does")
    stuck = [(name, g) for (name, _), g in zip(leaves, grads, strict=True)
             if g is None or not stats(g)[2]]
    if stuck:
        name, g = stuck[0]
        got = "no gradient (None)" if g is None else "an exactly zero gradient"
        return (f"; {name} gets {got} itself, so it never moves and {c.xname}'s gradient "
                f"stays zero: initialise one of the factors nonzero")
    shown = ", ".join(name for name, _ in leaves)
    verbs = ("requires grad and gets", "it") if len(leaves) == 1 else ("require grad and get",
                                                                        "them")
    return (f"; {shown} {verbs[0]} a nonzero gradient, so an optimizer step moves {verbs[1]} "
            f"and {c.xname} gets a gradient from then on: expected when a factor is "
            f"initialised to zero on purpose (LoRA's B, a zero-initialised gate)")


def _own_grads(c: Context, z: Zero) -> list[torch.Tensor | None]:
    """One pass's gradient of each all-zero factor behind ``z`` (nothing accumulated)."""
    leaves = [t for _, t in _factor_leaves(c, z)]
    if not leaves:
        return []
    gradient = c.gradient if c.gradient is not None else torch.ones_like(c.output)
    return list(torch.autograd.grad(c.output, leaves, gradient, retain_graph=True,
                                    allow_unused=True))


def _zero_product(c: Context, key: int) -> Zero | None:
    """Why node ``key`` sends zeros towards the tensor: a factor of that input is all zeros."""
    towards = c.graph.ancestors(c.position) | {c.position}
    node, zeros = c.nodes[key], Zeros(c.names)
    for slot, (child, _) in enumerate(children(node)):
        if child is not None and c.graph.index[child] in towards:
            z = zeros.sent(node, slot)
            if z is not None:
                return z
    return None


def _zero(c: Context) -> Answer | None:
    if c.stats[2]:
        return None
    trace = c.trace
    node = zero_node(trace, c.graph, c.position)
    where = None if node is None else node.label
    detail = ""
    if node is not None:
        op = node.grad_fn
        operator = row(node.op)
        if op == "BackwardHookFunctionBackward":  # torch's node for a module's hooks
            why = (" (a module's full backward hook, register_full_backward_hook: it "
                   "returned zeros for the module's input, replacing its gradient)")
        elif is_custom(c.nodes[node.key]):
            none = any(t is None for t in node.grad_inputs)
            why = (f" (the custom Function {op}: its backward() "
                   + ("returns None for this input" if none else "returns zeros") + ")")
        elif (z := _zero_product(c, node.key)) is not None:
            why = f": it multiplies the cotangent by {z.text}{_moves(c, z, _own_grads(c, z))}"
        elif operator.dead_unit:
            why = " (a ReLU whose inputs were all ≤ 0: a dead ReLU)"
        elif operator.zero_derivative:
            why = f" ({node.op}: {_STEP_FIX})"
        elif operator.saturates:
            why = (f" (a saturated clamp: its derivative is 0 where {operator.gate}, and every "
                   f"entry the cotangent reached lay there)")
        elif operator.limits and (sat := saturated(c.nodes[node.key], node.arrived,
                                                    node.op, operator.limits)):
            why = sat
        elif operator.gate:
            why = (f" (it sends 0 to {operator.gate}, and every entry on the way to "
                   f"{c.xname} lay there)")
        else:
            why = ""
        detail = f"; the cotangent became zero at {where} ({op}){why}"
    else:
        detail, where = zeroed_between(c)
    return Answer("zero", (
        f"{c.xname} is reachable from {c.oname} but its gradient is exactly zero{detail}"),
        where, c.grad)


def _grads_now(z: Zero, c: Context) -> list[torch.Tensor | None]:
    return [t.grad for _, t in _factor_leaves(c, z)]


def _moved_factor(c: Context) -> Answer | None:
    """A product on every path to the tensor whose factor is a leaf that got a nonzero
    gradient, while every leaf reached only through that product got an exactly zero one (or
    none): the factor was zero at the forward, as far as the gradients show, and has moved
    since (an optimizer step)."""
    g, nodes, xname = c.graph, c.nodes, c.xname
    named = {id(t): k for k, t in c.names.items()}
    for k in sorted(c.path):
        op = op_name(nodes[k])
        kids = children(nodes[k])
        for slot, (child, _) in enumerate(kids):
            if child is None or g.index[child] not in c.path:
                continue
            for j in factors(op, slot):
                leaf = through_views(kids[j][0]) if j < len(kids) else None
                if leaf is None or leaf.grad is None or not stats(leaf.grad)[2]:
                    continue
                kept = g.reachable({(k, slot)})
                if c.position in kept:
                    continue  # another path reaches the tensor
                behind = [leaf_tensor(nodes[b]) for b in set(range(len(nodes))) - kept]
                if any(t is not None and t.grad is not None and stats(t.grad)[2]
                       for t in behind):
                    continue
                name = named.get(id(leaf), f"the leaf of shape {tuple(leaf.shape)}")
                return Answer("zero", (
                    f"{xname}.grad is exactly zero: every path from {c.oname} to {xname} passes "
                    f"through {node_class(nodes[k])}, which multiplies the cotangent by {name}; "
                    f"{name}.grad is nonzero, so a nonzero cotangent reached that product, and "
                    f"every leaf reached only through it got an exactly zero gradient: "
                    f"consistent with {name} having been all zeros at the forward (a "
                    f"zero-initialised factor, as LoRA's B or a gate); it is not all zeros now "
                    f"(it moved after the forward: an optimizer step), so {xname} gets a gradient "
                    f"from the next step on"), op)
    return None


def _zero_freed(c: Context) -> Answer | None:
    grad = c.tensor.grad
    if grad is None or stats(grad)[2]:
        return None
    nodes, xname = c.nodes, c.xname
    steps = {k for k in c.path if row(op_name(nodes[k])).zero_derivative}
    if steps and c.graph.cut_by(c.position, steps):
        op = op_name(nodes[min(steps)])
        return Answer("zero", (
            f"{xname}.grad is exactly zero: every path from {c.oname} to {xname} passes "
            f"through {op} ({nodes[min(steps)].name()}), whose derivative is zero; "
            f"{_STEP_FIX}"), op)
    edges = Zeros(c.names).edges(c.graph)
    if edges and c.position not in c.graph.reachable(set(edges)):
        on = sorted(e for e in edges if e[0] in c.path
                    and c.graph.index[children(nodes[e[0]])[e[1]][0]] in c.path)
        # the zero that alone cuts every path (a zero on one of many paths is not the cause)
        alone = [e for e in on if c.position not in c.graph.reachable({e})]
        k, _ = (alone or on)[0]
        z = edges[(alone or on)[0]]
        return Answer("zero", (
            f"{xname}.grad is exactly zero: every path from {c.oname} to {xname} passes "
            f"through {node_class(nodes[k])}, which multiplies the cotangent by "
            f"{z.text}{_moves(c, z, _grads_now(z, c))}"), op_name(nodes[k]))
    moved = _moved_factor(c)
    if moved is not None:
        return moved
    dead = dead_relu(c)
    if dead is not None:
        return Answer("zero", f"{xname}.grad is exactly zero: {dead}", "relu")
    product = held_zero_factor(c)
    if product is not None:
        return Answer("zero", f"{xname}.grad is exactly zero: {product}")
    ops = sorted({op_name(nodes[k]) for k in c.path})
    gates = [o for o in ops if row(o).gate]
    found = []
    if gates:
        found.append(f"{', '.join(gates)}, which can send zeros (a ReLU whose inputs were all "
                     f"≤ 0, a mask, a multiplication by 0)")
    for o in ops:
        if row(o).limits:
            ends = " or ".join(f"{v:g}" for v in row(o).limits)
            found.append(f"{o}, which sends exact zeros where it saturated (output exactly "
                         f"{ends})")
        if row(o).zero_at_zero:
            found.append(f"{o}, whose gradient is exactly 0 at an all-zero input")
    hint = "; the path passes through " + "; and ".join(found) if found else ""
    return Answer("zero", f"{xname}.grad is exactly zero{hint}; {_recompute(c)}")


ZERO = Cause(("zero",), 'exactly zero (``"zero"``: where the cotangent became zero, e.g. '
             "a dead ReLU)", _zero, _zero_freed)


def _not_run(c: Context) -> Answer | None:
    if c.tensor.grad is not None:
        return None
    return Answer("not-run", (
        f"{c.xname} is reachable and one pass gives it a nonzero gradient, but its .grad is "
        f"None: backward() has not run since it was last reset (zero_grad(set_to_none=True)), "
        f"or inputs= left it out"), None, c.grad)


def _not_run_freed(c: Context) -> Answer | None:
    if c.tensor.grad is not None:
        return None
    return Answer("not-run", (
        f"{_ran(c)}: .grad was reset after that backward (zero_grad(set_to_none=True)), or "
        f"backward(inputs=...) left {c.xname} out"), None)


NOT_RUN = Cause(("not-run",), '``.grad`` not filled (``"not-run"``)', _not_run,
                _not_run_freed)


def _differs(c: Context) -> Answer | None:
    current = c.tensor.grad
    assert current is not None
    diff = compare(current, c.grad, c.tensor, c.xname)
    if diff is None:
        return None
    random_forward = c.random_forward or random_nodes(c.nodes)
    if random_forward:
        xname, oname = c.xname, c.oname
        return Answer("random-forward", (
            f"{xname}.grad differs from what one backward pass of {oname} gives, but the "
            f"forward is random: {random_forward}; a recomputed {oname} draws new random "
            f"values, so this comparison cannot tell clipping, accumulation or an edit "
            f"from a different draw: compare in eval() mode, or call torch.manual_seed(s) "
            f"before the step and again before recomputing"), None, c.grad)
    return Answer(diff[0], diff[1], None, c.grad)


DIFFERS = Cause(("random-forward", "accumulated", "differs"),
                '``.grad`` unlike one pass (``"random-forward"`` when the forward is random, '
                '``"accumulated"`` when it is exactly k passes, ``"differs"`` otherwise, with '
                "what the difference is consistent with)", _differs, undecided)


def _ok(c: Context) -> Answer | None:
    return Answer("ok", (
        f"{c.xname} is reachable from {c.oname} and its gradient is finite and nonzero"),
        None, c.grad)


def _ok_freed(c: Context) -> Answer | None:
    grad = c.tensor.grad
    assert grad is not None
    total, _, nonzero = stats(grad)
    return Answer("unchecked", (
        f"{c.xname}.grad is finite and nonzero ({nonzero} of {total} entries nonzero); whether "
        f"it holds exactly one backward pass (and not an accumulation or an edited .grad) "
        f"could not be checked: backward() freed the saved tensors; recompute {c.oname} and "
        f"ask again to compare"))


OK = Cause(("ok", "unchecked"),
           'fine (``"ok"``: reachable, and ``.grad`` equal to one backward pass); after '
           '``backward()`` freed the graph, ``"unchecked"``: ``.grad`` is finite and nonzero, '
           'and whether it is one pass (not an accumulation, a hook\'s or an edit) could not be '
           'compared', _ok, _ok_freed)


RULES: tuple[Cause, ...] = (
    *reach.RULES, COMPLEX_OUTPUT, IN_PLACE, RAISES, CUSTOM_NONE, NONFINITE, ZERO, NOT_RUN, DIFFERS, OK,
)
"""The causes, in the order :func:`gradarg.why_no_grad` checks them."""
