"""Record the user's own training step: the gradient through every module and parameter.

:func:`watch` puts light hooks on a model while the user runs an ordinary forward and backward
pass: forward pre-hooks and hooks on every module note the order in which modules ran and hang
a tensor hook (``torch.Tensor.register_hook``) on each tensor that enters or leaves a module; a
tensor hook on every parameter sees the gradient each backward pass computed for it, before it
is added to ``.grad``. Each hook stores one norm (a float); tables are assembled when asked
for; leaving the ``with`` block (or :meth:`GradWatch.remove`) removes every hook.  When tensor
hooks run: https://pytorch.org/docs/stable/notes/autograd.html#backward-hooks-execution.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import torch

from ..._validate import check_flag
from ..graph.values import state as _state
from . import draws, explain, findings, inputpasses, ranks, stepsums, targets, view, zeroops
from .bootstrap import NODE as BOOTSTRAP_NODE
from .bootstrap import Bootstrap
from .closures import ClosureSteps
from .detail import Detail, check_full_steps
from .forwarderror import ForwardErrors
from .gradedits import GradEdits
from .gradhooks import GradEvents
from .graphless import GraphlessTerms
from .graphnotes import GraphNotes
from .intcuts import IntCuts
from .lastgraph import read as last_graph
from .lossascent import LossAscent
from .lossnodes import READERS, LossNodes
from .lossshapes import LossShapes
from .model import Watched
from .noneback import NoneReturned
from .padreads import PadReads
from .plateau import Plateaus
from .recorder import Recorder
from .records import ModuleRecord, ParamRecord, assemble, full_name
from .rowselect import RowSelect
from .seeding import SeedCalls
from .sentinel import Sentinel
from .silentedits import SilentEdits
from .snapshots import Snapshots
from .stepleft import StepLeft
from .tokenshift import TokenShift
from .trainmode import ModeSeen

if TYPE_CHECKING:
    from ..draw.drawing import Drawing

__all__ = ["GradWatch", "ModuleRecord", "ParamRecord", "watch"]

_nothing: Any = lambda *args: None  # the parts' listeners once the watch is removed


class GradWatch:
    """The hooks :func:`watch` put on a model, and the record of the last step they saw.

    Use it as a context manager (``with gradarg.watch(model) as w:``) or call :meth:`remove`;
    after a backward, ask :meth:`summary`, :meth:`table`, :meth:`plot`, :meth:`why_no_grad`, :meth:`draw`.

    Three parts make the record, with read-only views for the findings: ``calls`` (module
    calls), ``grads`` (``.grad`` events), ``graph`` (graph, values); smaller parts one thing each.

    Attributes
    ----------
    model : torch.nn.Module
        The watched model.
    backward_passes : int
        Number of backward passes that reached the model during the recorded step.
    ranks : list or None
        Under DDP or FSDP2 with more than one process, what each process saw of its own
        gradients, gathered from all of them when the block ended, by rank: named tuples
        ``(rank, nonfinite, first_at, missing)``; else ``None``.
    targets : list
        Losses of the last ``backward()`` whose target (second argument) leads to parameters.
    """

    def __init__(self, model: torch.nn.Module, *, full_steps: int | None = 3):
        full_steps = check_full_steps(full_steps)
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"watch(): model must be a torch.nn.Module, got {type(model).__name__}"
                            f"; wrap a function in a module, or use gradarg.trace_backward(loss)")
        self.model = model
        self.watched = watched = Watched.of(model)
        self.grads = GradEvents(watched)
        self.detail = Detail(full_steps, sum(p.requires_grad for p in watched.owner))
        self.calls = Recorder(watched, self.grads, self.detail)
        self.graph = GraphNotes(watched, self.calls, self.grads)
        self.calls.listen(new_step=self.graph.reset, outer_return=self.graph.note_forward)
        self.grads.listen(on_zero=self.graph.note_zeros, running=self.calls.running)
        self._cache: tuple | None = None
        self._passes = 0
        self.ranks: list[ranks.RankSeen] | None = None
        self.targets: list[targets.TargetGrad] = []
        self.zero_made: zeroops.ZeroMade | None = None
        self.row_reads: RowSelect | None = None  # a parameter read as table[i] only
        self.terms, self.draws = GraphlessTerms(), draws.Draws()  # gradient-made terms; sample()
        self.modes, self.edits, self.left = ModeSeen(model), GradEdits(watched, self.detail), StepLeft(watched.owner)
        self.nones, self.shapes, self.ascent = NoneReturned(watched.owner), LossShapes(model), LossAscent()
        self.tokens, self.cuts = TokenShift(model), IntCuts(model, self.calls, self.detail)
        self.boot, self.seeds = Bootstrap(model, self.calls, watched.names), SeedCalls(model, self.calls)
        self.lossnodes = LossNodes({**READERS, "bootstrap": (BOOTSTRAP_NODE, self.boot.read)})
        self.pads, self.closures, self.plateaus, self.snapshots = PadReads(model), ClosureSteps(), Plateaus(self.grads), Snapshots(model, self.grads)
        self.inputs, self.factors, self.failed = inputpasses.InputPasses(model, watched), stepsums.LossFactors(watched), ForwardErrors(model)
        self.silent = SilentEdits(model, watched.param_names(), self.detail)  # .data edits
        self.calls.attach(Sentinel(watched, self.detail, self.graph))
        self._parts = (self.terms, self.modes, self.nones, self.shapes, self.ascent, self.tokens,
                       self.cuts, self.inputs, self.factors, self.draws, self.lossnodes, self.pads, self.closures, self.left, self.seeds, self.plateaus, self.silent, self.snapshots, self.failed)
        for part in (self.edits, self.grads, *self._parts):
            part.attach()  # edits first: its window closes before the watch's reads at a step
        watched.active = True

    @property
    def engine(self) -> str | None:
        """``"DDP"``, ``"FSDP2"`` or ``None``: the engine that spreads the model over processes."""
        return self.watched.engine

    @property
    def rank(self) -> int:
        """This process's rank (0 without ``torch.distributed``)."""
        return self.watched.rank

    @property
    def world(self) -> int:
        """The number of processes (1 without ``torch.distributed``)."""
        return self.watched.world

    # -- life cycle ---------------------------------------------------------------------------
    def remove(self) -> None:
        """Remove every hook this watch put on the model, its parameters and tensors.

        The record stays readable. Calling it twice is harmless.

        Examples
        --------
        >>> import torch
        >>> net = torch.nn.Linear(3, 1)
        >>> w = watch(net)
        >>> w.remove()
        >>> net._forward_hooks, net._forward_pre_hooks
        (OrderedDict(), OrderedDict())
        """
        watched = self.watched
        if watched.active:
            try:  # every process's own gradients, gathered (a collective under DDP/FSDP2),
                # not after an exception: another process may not be leaving its block
                self.ranks = None if self.grads.ended else ranks.gather(watched, self.grads)
            except Exception:  # noqa: BLE001 (a process group that cannot gather: not known)
                self.ranks = None
            if watched.backward_seen:
                # .grad at the block's end against what backward left (a clip, unscale_, edits)
                self.grads.end()
                self._cache = None
            self._finish()
        # the edits' mode is pushed after the graphless terms' (at a backward's end): left first
        for part in (self.calls, self.grads, self.edits, *self._parts):
            for h in part.detach():
                h.remove()
        if watched.active:
            self.graph.note_stop()  # the graph is still held; no hook fires while it is read
            self.graph.note_unregistered()
            if any(e.grad is not None and not math.isfinite(e.grad)
                   for e in self.grads.passes):  # named by the non-finite finding
                first = self.first_nonfinite()
                self.graph.note_operations(None if first is None else first.index)
            self.zero_made = zeroops.find(self)  # an all-zero gradient made between calls
            self.targets, self.row_reads = last_graph(self.grads.losses[0], watched.owner)
            self.grads.forget_losses()
        self.calls.forget()
        watched.active = False
        # the parts' callbacks into each other (bound methods: cycles) go with the hooks: the
        # record is freed by reference counting, not by a later collection of the old generation
        self.calls.listen(new_step=_nothing, outer_return=_nothing)
        self.grads.listen(on_zero=_nothing, running=_nothing)

    def __enter__(self) -> GradWatch:  # noqa: PYI034 (a final class in practice)
        return self

    def __exit__(self, *exc: object) -> None:
        if isinstance(error := exc[1] if len(exc) > 1 else None, Exception) and self.watched.active:
            self.grads.ended_by(error)  # what ended the block: said by the summary
        self.remove()

    # -- the record ---------------------------------------------------------------------------
    def _finish(self) -> tuple[list[ModuleRecord], dict[str, ParamRecord]]:
        noted, grads = self.calls.notes(), self.grads
        key = (*self.calls.key(), len(grads.passes), grads.changes, len(grads.replaced))
        if self._cache is not None and self._cache[2] == key:
            return self._cache[:2]
        calls, params, self._passes = assemble(
            noted["raw"], noted["arrivals"], noted["shapes"], self.watched.names, noted["dead"],
            grads.passes, self.watched.owner, grads.final, noted["sent"], grads.notes())
        self._cache = (calls, params, key)
        return calls, params

    @property
    def modules(self) -> list[ModuleRecord]:
        """Every module call of the recorded step, in forward order."""
        return self._finish()[0]

    @property
    def parameters(self) -> dict[str, ParamRecord]:
        """Every parameter of the model, by name, with what it received."""
        return self._finish()[1]

    @property
    def backward_passes(self) -> int:
        """The backward passes of the recorded step (see the class docstring)."""
        self._finish()
        return self._passes

    def layers(self) -> list[ModuleRecord]:  # the innermost calls, in forward order
        return [c for c in self.modules if not c.children] or self.modules[:1]

    def first_nonfinite(self) -> ModuleRecord | None:
        """The first module, in backward order, that received a finite gradient but sent NaN/Inf
        (to its inputs, its own parameters or a call inside it); ``None`` if there is none.
        Parameter gradients (summed over a module's calls) count where no call received NaN."""
        return self._first("nonfinite")

    def first_zero(self) -> ModuleRecord | None:
        """The first module, in backward order, that received a nonzero gradient and sent zero
        to its inputs (its parameters' gradients do not count here); ``None`` if none."""
        return self._first("zero")

    def _first(self, state: str) -> ModuleRecord | None:
        ran = [c for c in self.modules if c.backward_rank is not None]
        ran = sorted(ran, key=lambda c: (c.backward_rank, -c.depth))
        fed = {c.name for c in self.modules if _state(c.grad_out) == "nonfinite"}  # see below
        sent = [lambda c: [c.grad_in] + ([c.param_norm] if state == "nonfinite"
                                         and c.name not in fed else []),
                lambda c: [self.modules[k].grad_out for k in c.children]]  # its own operations
        for of in sent[:2 if state == "nonfinite" else 1]:  # a call inside it: none sent it
            for c in ran:
                if _state(c.grad_out) == "ok" and any(_state(v) == state for v in of(c)):
                    return c
        return None

    def why_no_grad(self, param: str | torch.Tensor) -> str:
        """Why a parameter's gradient was None, zero or NaN in the recorded step.

        Parameters
        ----------
        param : str or torch.Tensor
            The parameter's name (as in ``model.named_parameters()``) or the parameter itself.

        Returns
        -------
        str
            One or two sentences built from what the hooks saw; where the record cannot decide
            between causes it says so (``gradarg.why_no_grad(loss, param)`` reads the graph).

        Raises
        ------
        KeyError
            ``param`` is not a parameter of the watched model: neither one registered when the
            watch began nor the tensor the model holds now under such a name (a parameter
            re-created in ``forward`` is answered for, with what was seen of it).

        Examples
        --------
        >>> import torch
        >>> torch.manual_seed(0) and None
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
        >>> with watch(net) as w:
        ...     net[0](torch.randn(4, 2)).sum().backward()   # net[1] skipped
        >>> w.why_no_grad("1.weight")
        "no gradient reached 1.weight: module '1' (Linear) was never called ..."
        """
        return explain.why_no_grad(self, param)

    def param_name(self, param: str | torch.Tensor) -> str:
        """The full name of ``param``: the tensor itself, its name in the watched model, or
        its name in one of the model's submodules (``"blocks.0.weight"`` for the model's
        ``"unet.blocks.0.weight"``) when exactly one parameter's name ends so.

        Raises
        ------
        KeyError
            ``param`` is not a parameter of the watched model, or names the parameters of
            several submodules (the candidates are listed).
        """
        if isinstance(param, torch.Tensor):
            if (found := next((n for p, (n, _) in self.watched.owner.items() if p is param), "")):
                return found
            raise KeyError("that tensor is not a parameter of the watched model")
        return full_name(list(self.parameters), param)

    def problems(self, *, factor: float = 1e3, dead_fraction: float = 0.5) -> list[str]:
        """Each thing wrong with the recorded step, one phrase each (empty if none).

        Each phrase comes from one finding of ``gradarg.trace.watching.findings`` (a backward that
        stopped at a saved tensor edited in place, non-finite gradients, parameters re-created
        by an assignment, missing gradients, modules cut from the graph or whose output went
        unused, vanishing or exploding flow, dead units, all-zero gradients and what is behind
        them (an all-zero factor, a float16 underflow), a hook of the user's that replaced a
        gradient, several backward passes accumulated into ``.grad``, a step that read
        ``.grad`` at another scale than the loss's (a ``GradScaler`` used halfway), a
        ``.grad`` reset, zeroed or rescaled, a clip too, between the backward and the step), in
        that order.  Those after the all-zero gradients are read from events the hooks
        observed (see :func:`watch`), not from the final ``.grad`` alone.

        Parameters
        ----------
        factor : float
            Vanishing: the gradient arriving at the first layer is at least ``factor`` times
            smaller than at the last; exploding: at least ``factor`` times larger. When one
            innermost module accounts for at least half of that change (and for at least an
            order of magnitude by itself), the phrase names it with the norms at its output and
            input: a sudden drop inside one module (a loss a layer norm makes constant, say) is
            not the gradual shrinking of a deep stack.
        dead_fraction : float
            Report a ReLU-like module when at least this fraction of its units is dead.
        """
        return findings.problems(self, factor=factor, dead_fraction=dead_fraction)

    def summary(self, *, checks: bool = True, **kwargs: Any) -> str:
        """One line: what is wrong with the recorded step's gradient flow, or that nothing is.

        "gradients ok" only when every check that ran passed and something was checked (then
        with what a watch cannot see: whether the loss computes what you meant, a missing
        ``.detach()`` passes every check): the ``.grad`` each optimizer step read (with no
        step seen, ``.grad`` at the end of the block, which the line then says).  Frozen
        parameters are named after it (no gradient, on purpose or by mistake; "gradients ok"
        then speaks of the trainable ones); with ``checks`` (default) the line ends with the
        checks that ran and those that could not, and why (the final ``.grad`` needs the block
        ended; what an optimizer holds, its step or ``zero_grad``).  Keywords: :meth:`problems`.
        """
        checks = check_flag("checks", checks, "GradWatch.summary")
        return findings.summary(self, checks=checks, **kwargs)

    def rows(self) -> list[dict[str, Any]]:
        """The gradient-flow table as dicts, one per innermost module call in forward order.

        Keys: ``module``, ``type``, ``shape`` (output), ``grad_out`` (norm of the gradient
        arriving at the output), ``grad_in`` (norm of the gradient with respect to the input),
        ``params`` (norm of the module's parameter gradients), ``flags``.
        """
        return view.rows(self)

    def table(self) -> str:
        """The gradient-flow table as aligned text (innermost modules in forward order)."""
        return view.table(self)

    def plot(self, ax: Any = None, *, title: str | None = None) -> Any:
        """Gradient norms per module in forward order, log scale, zero and NaN/Inf marked;
        see ``gradarg.trace.watching.view.plot``.

        Returns
        -------
        matplotlib.figure.Figure

        Raises
        ------
        ImportError
            matplotlib is not installed (``pip install gradarg[plot]``).
        """
        return view.plot(self, ax, title=title)

    def draw(self, **kwargs: Any) -> Drawing:
        """The module-level drawing; see :func:`gradarg.draw_modules` for the options."""
        from ..draw.modules import draw_modules

        return draw_modules(self, **kwargs)

    def __repr__(self) -> str:
        if not self.calls.raw and self.detail.full:
            return f"GradWatch({type(self.model).__name__}): nothing recorded yet"
        return f"{self.summary()}\n{self.table()}"


def watch(model: torch.nn.Module, *, full_steps: int | None = 3) -> GradWatch:
    """Record the gradient through every module and parameter of ``model`` during your own step.

    Hooks go on at once; run your forward and backward passes as usual, then leave the
    ``with`` block (or call :meth:`GradWatch.remove`): no hook is left behind. The record keeps
    floats and shapes only, never the graph or your tensors. A forward pass of the model that
    starts after a backward pass starts a new record: the watch holds the last step.

    Parameters
    ----------
    model : torch.nn.Module
        The model; every submodule and parameter is watched.
    full_steps : int or None
        An int ``k >= 1`` (default 3): the first ``k`` steps of the block, and every step
        after one where something was off (a non-finite or zero pass gradient, a parameter
        without one, a ``backward()`` that raised, a non-finite loss), are recorded in full;
        the others are light: the modules inside the model get lighter hooks (no gradient
        inside the model is recorded; the module-level checks are then reported "not
        checked", a zero or missing gradient "not located inside the model", and
        ``why_no_grad`` says so), yet a NaN/Inf made in the forward is still located at the
        module that made it, and every check of what the optimizer reads still runs (see
        ``gradarg.trace.watching.detail``).  ``None``: every step is recorded in full.  A
        light step costs about the parameter hooks (``benchmarks/watch.py``).

    Returns
    -------
    GradWatch
        The hooks and the record: :meth:`~GradWatch.summary`, :meth:`~GradWatch.table`,
        :meth:`~GradWatch.plot`, :meth:`~GradWatch.why_no_grad`, :meth:`~GradWatch.draw`.

    Raises
    ------
    TypeError
        ``model`` is not a ``torch.nn.Module``, or ``full_steps`` is not ``None`` nor an int.
    ValueError
        ``full_steps`` is below 1.

    Notes
    -----
    Norms are taken in the gradient's own dtype and redone in float64 where that could be
    wrong (a norm of exactly 0 or Inf): a gradient is zero only if every entry is, non-finite
    only if an entry is NaN or Inf.  Sparse gradients are measured on their coalesced values.
    A module that ran several times has one record per call; its parameters' gradients are
    the sum over the calls, shown at the first.  Until the block ends (or the next step
    starts) the record holds the step's autograd nodes, as the loss does (a forward with
    grad enabled and no backward keeps its graph until then).  Under
    ``torch.utils.checkpoint`` the checkpointed modules appear twice, the second (their
    recomputation in the backward) flagged in the table as run after the backward; the
    findings read the first.  Under ``torch.compile`` the hooks run eagerly, outside the
    compiled graph (``torch.compiler.disable``: a graph break at each module call).

    What happens to each parameter's ``.grad`` is observed as it happens, over the whole
    block: a post-accumulate-grad hook (``Tensor.register_post_accumulate_grad_hook``) counts
    the backward passes that accumulated into it; a global optimizer step pre-hook
    (``torch.optim.optimizer.register_optimizer_step_pre_hook``) sees, when a
    ``torch.optim`` step holding it begins, whether ``.grad`` is None, and reads the norm of
    the smallest parameter's ``.grad`` (all of them when that one changed since its pass:
    a clip or a scaler's ``unscale_`` acts on all); ``.grad`` is read again when the block
    ends.  So the summary says how many passes the final ``.grad`` sums (micro-batches, each
    after its own forward: a note; the same graph twice: a problem), and whether ``.grad``
    was reset, zeroed or scaled between the backward and the step, with the factor read
    from two norms.  A global parameter registration hook
    (``torch.nn.modules.module.register_module_parameter_registration_hook``) sees a
    registered parameter's attribute assigned a new ``nn.Parameter`` (one made in
    ``forward``).  Updates made without a ``torch.optim`` optimizer are told by the sum of
    the smallest parameter, read at each call of the model.

    "ok" is a checked claim about what the optimizer reads: at each optimizer step the pre-hook
    reads the norm of every ``.grad`` the step holds (present, finite, nonzero, equal to what the
    observed passes left), and ``.grad`` is read again when the block ends; the summary also names
    tensors that require grad and feed the forward without being parameters of the model (read from
    the step's graph when the block ends), parameters no optimizer seen holds (an optimizer is seen
    by its step or its ``zero_grad``), a module replaced after the optimizer was built, a frozen
    parameter an optimizer step still moved (its sum before and after the step, read only for frozen
    parameters with a ``.grad``), a ``GradScaler.step`` that skipped the optimizer's step, and the
    exception that ended the block (what raised and where, from ``__exit__``).  "ok" also means that
    each step read ``.grad`` at the loss's scale: every backward of a loss a ``GradScaler`` scaled
    (its ``scale`` is observed, and each ``backward()``'s loss looked up) was unscaled
    (``unscale_``, or ``scaler.step``) before the step that read it, and nothing was unscaled that
    was not scaled (else the factor is named); that no parameter was read by the steps of two
    optimizers with no backward in between (it would be updated twice); and, under DDP, that the
    backward before the step synchronised the gradients (``no_sync()``, read at each forward: else
    ``.grad`` was not averaged).  On a parameter with hooks of the user's (``Tensor.register_hook``,
    before the watch or while it runs) the watch reads the gradient before and after them (one hook
    of its own goes first): a hook that replaced it with zeros is named as the cause, with what an
    optimizer step still did to the parameter (weight decay, momentum: its sum before and after the
    step); one that scaled it, in a note; a hook registered on a tensor of the forward while the
    watch runs is read the same way (``Tensor.register_hook`` is observed while the watch runs).
    All-zero gradients already zero at a float16 module output (autocast), with no ``GradScaler``,
    are named a possible float16 underflow.  Also named: a scheduler stepped before its optimizer,
    an edit of ``.grad`` thrown away (``clamp`` for ``clamp_``), a NaN loss with finite gradients,
    entries a hook masked that a step moved, statistics updated again by a checkpoint's
    recomputation, a module output that reached the loss only through an integer result (``argmax``)
    in the forward, backward passes taken for an input's gradient (a sampler's) summed into
    ``.grad``.  With nothing checked there is no "ok"; without an optimizer step the line says so.

    Under ``DistributedDataParallel`` and FSDP2 (``torch.distributed.fsdp.fully_shard``) each
    process records its own step: module and parameter norms are this process's gradients before the
    processes average them (under FSDP2, of the unsharded parameters it computes with), and the
    final ``.grad`` norms, read when the block ends, are those of the averaged gradient (of the
    whole sharded ``DTensor``: a collective, so every process must leave the block). Parameters
    without a gradient under DDP are named with the error DDP raises for them at the next forward.
    When the block ends, each process sends every other one a small record of its own gradients (the
    parameters whose own gradient held NaN/Inf and when the first arrived, those that got none:
    ``torch.distributed.all_gather_object``, a collective, so every process must leave the block;
    not when the block ended with an exception), and the summary says which process saw a non-finite
    gradient first (``GradWatch.ranks``).

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
    ...                           torch.nn.Linear(8, 1))
    >>> with watch(net) as w:
    ...     loss = net(torch.randn(16, 4)).pow(2).mean()
    ...     loss.backward()
    >>> [r["module"] for r in w.rows()]
    ['0', '1', '2']
    >>> w.summary()
    'gradients ok: every parameter got a finite, nonzero gradient, norms ...'
    >>> net._forward_hooks or net[0].weight._backward_hooks  # nothing left behind
    OrderedDict()
    """
    return GradWatch(model, full_steps=full_steps)
