"""Why is my ``.grad`` None, zero or NaN? One sentence, checked on the live graph.

:func:`why_no_grad` looks at the output's graph (``grad_fn.next_functions``, the tensors each
node saved) and, when the tensor is reachable and the saved tensors are still there, runs one
traced ``torch.autograd.grad`` pass with ``retain_graph=True`` (nothing is accumulated into any
``.grad``) to find where the cotangent became zero or NaN. After the caller's own
``backward()`` freed the saved tensors, it answers from ``.grad`` and the graph's structure
(which ``backward()`` leaves in place) and says what could not be checked.

The causes and their order are :data:`gradarg.trace.why.causes.RULES`; the ``Case`` type and the
lists of cases in the docstrings below are made from them.
"""

from __future__ import annotations

import gc
import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import torch

from ..._validate import check_tensor
from ..tape.tracer import kept_retained_grads
from . import rules
from .causes import RULES
from .context import Context
from .located import locate, made_at

__all__ = ["GradDiagnosis", "why_no_grad"]

_CASES = rules.cases(RULES)
if TYPE_CHECKING:
    Case = str  # at run time the Literal of the rules' cases (a type checker reads no computed one)
else:
    Case = Literal[_CASES]


def _fill_in(doc: str, marker: str, text: str) -> str:
    """``doc`` with ``marker`` replaced by ``text``, wrapped at 96 columns from where the marker
    stands, continuation lines at that line's indentation."""
    line = next(ln for ln in doc.split("\n") if marker in ln)
    indent = len(line) - len(line.lstrip())
    filled = textwrap.fill(text, 96, initial_indent=" " * line.index(marker),
                           subsequent_indent=" " * indent, break_on_hyphens=False,
                           break_long_words=False)
    return doc.replace(marker, filled.lstrip())


@dataclass(frozen=True)
class GradDiagnosis:
    """The answer of :func:`why_no_grad`.

    Attributes
    ----------
    case : str
        One of <cases>.
    message : str
        One sentence saying what holds and what to do.
    node : str or None
        The node concerned: where the path was cut, where the cotangent became zero, or where
        NaN/Inf first appeared (a label as in :func:`gradarg.trace_backward`).
    gradient : torch.Tensor or None
        The gradient one backward pass gives the tensor, when it could be computed.
    """

    case: Case
    message: str
    node: str | None = None
    gradient: torch.Tensor | None = None

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"GradDiagnosis({self.case!r}): {self.message}"

    def _repr_html_(self) -> str:
        import html

        return (f'<p class="gradarg-diagnosis"><code>{html.escape(self.case)}</code>: '
                f"{html.escape(self.message)}</p>")


def why_no_grad(
    output: torch.Tensor | Callable[[], torch.Tensor],
    tensor: torch.Tensor,
    *,
    gradient: Any = None,
    names: Mapping[str, torch.Tensor] | None = None,
    module: torch.nn.Module | None = None,
) -> GradDiagnosis:
    """Say why ``tensor.grad`` is None, zero or NaN, before or after ``output.backward()``.

    Works from what is there: the graph's structure (``grad_fn`` and ``next_functions``, which
    outlive ``backward()``), the saved tensors (freed by ``backward()`` unless
    ``retain_graph=True``), ``.grad``, ``requires_grad``, ``is_leaf`` and grad mode. While the
    saved tensors are there, one traced ``torch.autograd.grad`` pass (``retain_graph=True``,
    nothing accumulated) finds the node where the gradient became zero or non-finite; after
    ``backward()`` the diagnosis is read from ``.grad`` and the structure, and the message says
    what could not be checked.

    Parameters
    ----------
    output : torch.Tensor or callable
        The tensor ``backward`` is (or was) called on, or a function of no arguments that
        recomputes it (``lambda: loss_fn(model(x), y)``).  A function is called twice, under
        ``torch.random.fork_rng`` (your random state is left as it was): when the two
        results differ, the forward is random (dropout in training mode, random
        augmentation), and ``.grad`` from an earlier step is not compared with a pass of the
        recomputed graph (``"random-forward"``).  When the path from ``tensor`` is cut
        (``"output-no-grad"``, ``"new-leaf"``, ``"not-reachable"``, ``"unused-parameter"``)
        it is called a third time, watched, and the
        message names the torch call that cut the path, the line of your code that made
        it and, when grad mode was off there, the ``torch.no_grad()`` /
        ``set_grad_enabled(False)`` / ``inference_mode`` (or decorator) that turned it off;
        for a NaN/Inf or zero gradient (``"nonfinite"``, ``"zero"``) the third call names
        the line that made the node where it first appears.
        Each call is an ordinary forward: it updates what a forward updates (batch-norm
        running statistics in training mode).
    tensor : torch.Tensor
        The tensor whose ``.grad`` is in question.
    gradient : torch.Tensor or number, optional
        The upstream gradient ``v``; default 1 for one-element outputs, ones otherwise (the
        answer then says so: a plain ``output.backward()`` raises for those).  A complex
        output without it answers ``"backward-raises"``, as ``backward()`` does.
    names : dict, optional
        Names used in the message (``{"w": w, "h": h}``).
    module : torch.nn.Module, optional
        The model: its parameters are named as in ``named_parameters()``, and a parameter
        absent from the graph is reported with its module when none of that module's
        parameters is in the graph either (a module never used in the forward).

    Returns
    -------
    GradDiagnosis
        ``case``, a one-sentence ``message``, the ``node`` concerned and the ``gradient`` one
        pass gives ``tensor`` (when it could be computed). Checked in this order: <checked>.

    Raises
    ------
    TypeError
        ``output``, ``tensor`` or a value of ``names`` is not a tensor; ``names`` is not a
        mapping; ``module`` is not a ``torch.nn.Module``.

    Notes
    -----
    Nothing is changed: the traced pass uses ``torch.autograd.grad`` with ``retain_graph=True``
    and removes its hooks. Sparse gradients (``nn.Embedding(sparse=True)``) are checked through
    their stored values. Leaves and ``retain_grad``:
    https://pytorch.org/docs/stable/generated/torch.Tensor.retain_grad.html; what
    ``backward()`` frees: https://pytorch.org/docs/stable/autograd.html#saved-tensors

    Examples
    --------
    >>> import torch
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> h = w * 3
    >>> y = (h ** 2).sum()
    >>> why_no_grad(y, h, names={"h": h}).case
    'non-leaf'
    >>> why_no_grad(y, w.detach() * 0 + 1).case
    'requires-grad-false'

    After the user's own ``backward()`` the answer comes from ``.grad`` and the graph:

    >>> x = torch.tensor([0.0, 4.0], requires_grad=True)
    >>> y = torch.sqrt(x).sum()
    >>> y.backward()
    >>> d = why_no_grad(y, x, names={"x": x})
    >>> d.case, "sqrt" in d.message, "recompute" in d.message
    ('nonfinite', True, True)

    A loss rebuilt from its value is a new leaf, cut from the computation:

    >>> loss = torch.tensor(y.item(), requires_grad=True)
    >>> why_no_grad(loss, x).case
    'new-leaf'

    Given the forward as a function, the cut is located by running it again:

    >>> lin = torch.nn.Linear(2, 1)
    >>> def step():
    ...     with torch.no_grad():
    ...         h = lin(torch.ones(1, 2))
    ...     return h.sum()
    >>> print(why_no_grad(step, lin.weight).message)
    output has no graph ...: running the function again located where the path
    from tensor to output was cut: F.linear at ... (in step)
    `h = lin(torch.ones(1, 2))` ran with grad mode off, turned off by
    torch.no_grad at ... (in step) `with torch.no_grad():`
    """
    random_forward, recompute = None, None
    if callable(output) and not isinstance(output, torch.Tensor):
        recompute = output
        with torch.random.fork_rng():
            first, second = output(), output()
        check_tensor("output()", first)
        if isinstance(second, torch.Tensor) and not torch.equal(first.detach(),
                                                                 second.detach()):
            random_forward = ("two calls of the function you passed gave different outputs "
                              "(run under torch.random.fork_rng: your random state is as it "
                              "was)")
        output = first
    check_tensor("output", output)
    check_tensor("tensor", tensor)
    if module is not None and not isinstance(module, torch.nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    if names is not None and not isinstance(names, Mapping):
        raise TypeError(f"names must be a mapping of str to tensors, got {type(names).__name__}")
    names = dict(names or {})
    for k, t in names.items():
        check_tensor(f"names[{k!r}]", t)
    if module is not None:
        for k, p in module.named_parameters():
            names.setdefault(k, p)
    xname = next((k for k, t in names.items() if t is tensor), "tensor")
    oname = next((k for k, t in names.items() if t is output), "output")

    context = Context(output, tensor, gradient=gradient, names=names, module=module,
                      xname=xname, oname=oname, random_forward=random_forward)
    # no .grad changed: the passes below run the retain_grad() hooks of the graph's non-leaves
    with kept_retained_grads((tensor, output, *names.values(), *_retained(context))):
        rule, answer = rules.decide(RULES, context)
    assert answer.case in rule.cases, (answer.case, rule.cases)
    if (gradient is None and output.numel() != 1 and output.grad_fn is not None
            and answer.case not in (*_CUT, "backward-raises", "non-leaf", "integer-dtype")):
        answer = answer._replace(message=(
            f"{answer.message} ({oname} has {output.numel()} entries: this answer takes an "
            f"upstream gradient of ones, as {oname}.backward(torch.ones_like({oname})) or "
            f"{oname}.sum().backward(); a plain {oname}.backward() raises 'grad can be "
            f"implicitly created only for scalar outputs': pass gradient= to both)"))
    if recompute is not None and answer.case in _CUT:
        answer = _located(answer, recompute, tensor, xname, oname)
    elif answer.case in _CUT and answer.node is None:
        # the graph alone did not show which call cut the path: running the forward does
        answer = answer._replace(message=(
            f"{answer.message}; to have the call that cut the path named, pass the "
            f"computation instead of its result: why_no_grad(lambda: <{oname} computed from "
            f"the inputs>, {xname}) runs it once more, watched"))
    elif recompute is not None and answer.case in ("nonfinite", "zero"):
        answer = _made(answer, recompute, tensor)
    if (module is not None and tensor.grad_fn is None and tensor.requires_grad
            and answer.case in ("ok", "unchecked", "not-run", "differs", "accumulated", "zero",
                               "nonfinite")
            and not any(p is tensor for p in module.parameters())):
        answer = answer._replace(message=(
            f"{answer.message}; note: {xname} is not among the parameters of the module you "
            f"passed ({type(module).__name__}.parameters() does not list it: a layer kept in a "
            f"plain list or dict instead of nn.ModuleList / nn.ModuleDict, or a tensor "
            f"attribute that is not an nn.Parameter), so an optimizer built from "
            f"model.parameters() never updates it"))
    # tied weights: named_parameters() gives one name per tensor; the others are said
    tied = [] if module is None else [
        k for k, p in module.named_parameters(remove_duplicate=False) if p is tensor]
    if len(tied) > 1:
        answer = answer._replace(message=(
            f"{answer.message} ({' and '.join(tied)} are one tensor, tied weights: its .grad "
            f"sums the gradients of every use)"))
    flag = None if module is None else _module_flag(module, tensor, xname)
    if flag is not None:
        answer = answer._replace(message=f"{answer.message}; note: {flag}")
    return GradDiagnosis(*answer)


def _module_flag(module: torch.nn.Module, tensor: torch.Tensor, xname: str) -> str | None:
    """A ``requires_grad`` attribute set on a module (``layer.requires_grad = False``) that
    holds ``tensor`` and disagrees with ``tensor.requires_grad``, in words: ``nn.Module`` has
    no such switch, so the assignment only stores an attribute and freezes (or unfreezes)
    nothing; :meth:`torch.nn.Module.requires_grad_` is the call.  The outermost such module."""
    for name, sub in module.named_modules():
        flag = vars(sub).get("requires_grad")
        if not isinstance(flag, bool) or flag == tensor.requires_grad:
            continue
        if not any(p is tensor for p in sub.parameters()):
            continue
        label = name or "model"
        return (f"{label}.requires_grad = {flag} was set on the module, which only stores an "
                f"attribute (nn.Module has no such switch): no parameter changed, so {xname} "
                f"still has requires_grad={tensor.requires_grad}; call "
                f"{label}.requires_grad_({flag}) to {'unfreeze' if flag else 'freeze'} its "
                f"parameters")
    return None


def _retained(context: Context) -> list[torch.Tensor]:
    """The live non-leaf tensors of the output's graph that retain their gradient
    (``retain_grad()``): torch's engine runs their hooks in ``torch.autograd.grad`` too, so
    each pass of the diagnosis would add to their ``.grad``.  Found among the objects the
    garbage collector tracks (torch keeps no public list of them); tens of milliseconds in a
    process of 10⁵ objects, paid once per diagnosis."""
    if context.output.grad_fn is None:
        return []
    # type(), not isinstance(): isinstance asks a weak proxy's referent (ReferenceError when
    # it is gone) and a module's lazy attributes (deprecation warnings); a retained non-leaf
    # is a plain tensor (subclasses, FakeTensor under torch.compile, are left alone)
    found = [o for o in gc.get_objects() if type(o) is torch.Tensor]
    return [t for t in found if t.grad_fn is not None and t.retains_grad
            and context.graph.key_of(t) is not None]


# the cases where the path from the tensor to the output is cut: a recomputing function is
# called once more, watched, to say where
_CUT = ("output-no-grad", "new-leaf", "not-reachable", "unused-parameter")


def _located(answer, recompute: Callable[[], Any], tensor: torch.Tensor, xname: str,
             oname: str):
    """``answer`` with the cut located by one more call of ``recompute``
    (:func:`~gradarg.trace.why.located.locate`): for an output without a graph, or a module
    whose parameters are all outside the graph, the located cut replaces the list of
    possible ones; otherwise it is added."""
    found = locate(recompute, tensor)
    said = found.sentence(xname, oname) if found is not None else None
    if said is None:
        return answer
    if answer.case == "output-no-grad" and answer.message.startswith(f"{oname} has no graph"):
        return answer._replace(message=(
            f"{oname} has no graph (requires_grad=False, no grad_fn), so no backward pass "
            f"leads from it to {xname}: {said}"))
    head, colon, _ = answer.message.partition(": ")
    if answer.case == "unused-parameter" and found is not None and found.cuts and colon:
        # "<x> is not in <output>'s graph, and neither is any other parameter of module m":
        # the module did run; what cut its output is now known
        return answer._replace(message=f"{head}: {said}")
    return answer._replace(message=f"{answer.message}; {said}")


_NODE = re.compile(r"\(([A-Z]\w*Backward\d*)\)")


def _made(answer, recompute: Callable[[], Any], tensor: torch.Tensor):
    """``answer`` (NaN/Inf or a zero gradient first appearing at a node the message names,
    ``(SqrtBackward0)``) with the line of the caller's code that made that node, found by one
    more call of ``recompute`` (:func:`~gradarg.trace.why.located.made_at`)."""
    found = _NODE.search(answer.message)
    if found is None:
        return answer
    node = found.group(1)
    lines = made_at(recompute, tensor, node)
    if not lines:
        return answer
    said = (f"the forward call that made {node}: {lines[0]}" if len(lines) == 1 else
            f"the {len(lines)} forward calls that made a {node} node (the one concerned "
            f"among them): {'; '.join(lines)}")
    return answer._replace(message=f"{answer.message}; running the function again located {said}")


if GradDiagnosis.__doc__ and why_no_grad.__doc__:  # docstrings are absent under python -OO
    GradDiagnosis.__doc__ = _fill_in(GradDiagnosis.__doc__, "<cases>",
                                     ", ".join(f'``"{case}"``' for case in _CASES))
    why_no_grad.__doc__ = _fill_in(why_no_grad.__doc__, "<checked>", rules.checked(RULES))
