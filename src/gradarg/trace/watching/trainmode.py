"""The model's training mode at each of its calls in the block, observed by a forward pre-hook
on the model (``torch.nn.Module.register_forward_pre_hook``).

``model.eval()`` switches the modules whose forward depends on it: dropout drops nothing,
batch normalization normalises with its running statistics and stops updating them
(https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval).
A training step run in that mode trains a different function from the one ``model.train()``
gives, silently.  What is kept per call: whether the model itself was in training mode, and
the names of its mode-dependent modules (:data:`DEPENDENT`) that were in eval mode.

Batch normalization called again during a backward in train mode (the recomputation of a
checkpointed function, ``torch.utils.checkpoint``) updates its running statistics a second
time in the step: observed by hooks on those modules and on ``backward()`` calls
(:mod:`.patches`), with ``num_batches_tracked`` read before and after the call.

Batch normalization whose affine parameters are frozen (``requires_grad=False``) while it
runs in train mode still normalises each batch with that batch's statistics, not the running
statistics it was given, and with ``momentum=0`` never updates them (:func:`frozen_norm`).

Batch normalization in train mode over micro-batches of a few examples, accumulated into one
step, normalises each micro-batch by its own statistics: the step's gradient is not the
gradient of the batch they make together (:func:`small_batch_norm`).

Imports :mod:`.events`, :mod:`.finding` and :mod:`.patches` only (for :func:`eval_mode`,
:func:`frozen_norm`, :func:`small_batch_norm` and :func:`stats_again`, the findings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from . import events, patches
from .finding import Finding, Options, shown

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["BATCH_NORMS", "DEPENDENT", "MANY", "SMALL", "ModeSeen", "eval_mode", "frozen_norm", "small_batch_norm",
           "stats_again"]

DEPENDENT: tuple[type[nn.Module], ...] = (
    nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout,
    nn.FeatureAlphaDropout, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)
"""Modules whose forward differs between training and eval mode (torch's dropout and batch
normalization classes; lazy batch normalization becomes one of these once initialised)."""


BATCH_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
"""Batch normalization over one process's batch (``nn.SyncBatchNorm`` also spans processes)."""
SMALL = 4
"""Examples per call at most for batch statistics to be named too few to normalise by."""
MANY = 4
"""Micro-batches per step from which that is a problem (fewer: a note)."""


class ModeSeen:
    """Per call of the model in the block: ``(model.training, [eval-mode modules])``
    (:attr:`calls`), the dependent modules as ``"'name' (Class)"``, named as in
    ``model.named_modules()``."""

    def __init__(self, model: nn.Module):
        self.model = model
        self.calls: list[tuple[bool, list[str]]] = []
        # every call's first tensor argument had one example (dimension 0 of size 1): batch
        # normalization cannot train on one value per channel, so eval mode may be on purpose
        self.single = True
        self.batch: int | None = None  # dimension 0 of the last call's first tensor argument
        self.batches: list[int | None] = []  # that of each call
        self._handle: Any = None
        self._dependent: list[tuple[str, nn.Module]] | None = None
        self._handles: list[Any] = []
        self._names: dict[Any, str] = {}  # batch normalization module -> its name
        self._count: dict[Any, int] = {}  # its num_batches_tracked before a call in a backward
        # name -> (class, num_batches_tracked before and after): batch normalization called
        # during a backward in train mode, its running statistics updated again
        self.again: dict[str, tuple[str, int, int]] = {}

    def attach(self) -> None:
        self._handle = self.model.register_forward_pre_hook(patches.module_hook(self._called))
        self._handles = [patches.register_backward_done_hook(self._backward_done, outer=True)]
        for name, m in self.model.named_modules():
            # batch (and instance) normalization keeping running statistics, by their
            # documented attributes
            if hasattr(m, "track_running_stats") and hasattr(m, "num_batches_tracked"):
                self._handles.append(m.register_forward_pre_hook(patches.module_hook(
                    patches.eager_unless_traced(self._stats_before))))
                self._names[m] = name

    def detach(self) -> list[Any]:
        handle, self._handle = self._handle, None
        handles, self._handles = self._handles, []
        return handles + ([] if handle is None else [handle])

    # -- a call during the backward (a checkpoint's recomputation) ---------------------------
    def _backward_done(self) -> None:
        """The outermost ``backward()`` returned: the counts read at calls made during it are
        compared (a non-reentrant checkpoint stops its recomputation as soon as the saved
        tensors it needs are made again, inside the layer's forward: no forward hook runs)."""
        if not self._count:
            return
        count, self._count = self._count, {}
        for m, before in count.items():
            now = int(m.num_batches_tracked)
            if now != before:
                self.again[self._names[m]] = (type(m).__name__, before, now)

    def _stats_before(self, m: Any, args: Any) -> None:
        if patches.backward_depth() and m.training and m.track_running_stats and m not in self._count \
                and isinstance(m.num_batches_tracked, torch.Tensor):
            self._count[m] = int(m.num_batches_tracked)

    def _called(self, module: nn.Module, args: Any) -> None:
        if torch.compiler.is_compiling():
            return
        if self._dependent is None:  # the modules are read once, at the first call
            self._dependent = [(n, m) for n, m in module.named_modules()
                               if isinstance(m, DEPENDENT)]
        self.calls.append((module.training, [f"'{n}' ({type(m).__name__})"
                                             for n, m in self._dependent if not m.training]))
        first = next((a for a in args if isinstance(a, torch.Tensor)), None)
        self.batch = first.shape[0] if first is not None and first.dim() > 0 else None
        self.batches.append(self.batch)
        self.single = self.single and self.batch == 1

    def all_in_eval(self) -> list[str]:
        """The dependent modules in eval mode when every call of the block had the model in
        eval mode and at least one such module (their names, from the last call); else
        ``[]``."""
        if not self.calls or any(training or not names for training, names in self.calls):
            return []
        return self.calls[-1][1]



def eval_mode(w: GradWatch, o: Options) -> Finding:
    """An optimizer step after a backward of a block whose every call of the model ran in
    eval mode, with dropout or batch normalization in it (observed: :mod:`.trainmode`)."""
    names = w.modes.all_in_eval()
    if not names or not w.grads.steps_seen:
        return Finding("training mode", True)
    if w.modes.single:  # batch normalization raises in training mode on one example
        return Finding("training mode", True, note=(
            f"the model was in eval mode at every call, on batches of one example "
            f"({shown(names, 3)} in eval mode): batch normalization cannot train on one "
            f"value per channel, so this may be on purpose"))
    return Finding("training mode", True, (
        f"the model was in eval mode (model.training False) at every call in this block, "
        f"with {len(names)} dropout / batch-normalization module(s) in eval mode "
        f"({shown(names, 3)}; observed at each call), and an optimizer step followed the "
        f"backward: this step trained with dropout off and batch normalization on its running "
        f"statistics, which it did not update; call model.train() before the training forward "
        f"(after validating under model.eval())"))


def stats_again(w: GradWatch, o: Options) -> Finding:
    """Batch normalization called during a backward in train mode, which updated its running
    statistics again (observed: :class:`ModeSeen`'s ``again``)."""
    if not w.modes.again:
        return Finding("running statistics", True)
    name, (kind, a, b) = next(iter(w.modes.again.items()))
    more = len(w.modes.again) - 1
    return Finding("running statistics", True, (
        f"{kind} '{name}'{f' and {more} more' if more else ''} ran again during the backward "
        f"in train mode (observed: its forward was called while backward() ran: the "
        f"recomputation of a checkpointed function), so its running statistics "
        f"(running_mean, running_var) were updated twice in this step (num_batches_tracked "
        f"{a} -> {b} across that backward); the gradients are not affected, the statistics used "
        f"in eval mode are: keep batch normalization out of the checkpointed function, or "
        f"save and restore its running statistics around the backward"))


def frozen_norm(w: GradWatch, o: Options) -> Finding:
    """Batch normalization with frozen affine parameters that ran in train mode at every call
    of the block, with ``momentum=0``: a problem (running statistics never used nor
    updated); with another momentum: a note."""
    calls = w.modes.calls
    bn = (*BATCH_NORMS, nn.SyncBatchNorm)
    if not calls:
        return Finding("frozen normalization", True)
    found = []
    for name, m in w.model.named_modules():
        params = list(m.parameters(recurse=False))
        label = f"'{name}' ({type(m).__name__})"
        if (isinstance(m, bn) and m.track_running_stats and params
                and not any(p.requires_grad for p in params)
                and not any(label in names for _, names in calls)):
            found.append((label, m.momentum))
    if not found:
        return Finding("frozen normalization", True)
    label, momentum = found[0]
    text = (f"batch normalization {label} has its affine parameters frozen (requires_grad="
            f"False) but ran in train mode at every call of the model in this block (observed "
            f"at each call): it normalises each batch with that batch's statistics, not its "
            f"running_mean / running_var")
    more = f"; also {shown([x[0] for x in found[1:]], 3)}" if len(found) > 1 else ""
    if momentum == 0:
        return Finding("frozen normalization", True, (
            f"{text}, which momentum=0 never updates: the step trains on statistics that "
            f"eval() does not use; call .eval() on it after model.train() to freeze it{more}"))
    return Finding("frozen normalization", True, note=(
        f"{text}, and updates them (momentum={momentum}); to freeze it, call .eval() on it "
        f"after model.train(){more}"))


def small_batch_norm(w: GradWatch, o: Options) -> Finding:
    """Batch normalization in train mode over micro-batches of at most :data:`SMALL` examples
    whose passes one step summed (two or more, each after its own call of the model): a
    problem from :data:`MANY` micro-batches (the step's batch many times the one each
    normalization sees), a note below."""
    bn = BATCH_NORMS
    calls, batches = w.modes.calls, w.modes.batches
    names = [f"'{n}' ({type(m).__name__})" for n, m in w.model.named_modules()
             if isinstance(m, bn)]
    train = [n for n in names if calls and not any(n in off for _, off in calls)]
    chains = [events.chain(r.events) for r in w.parameters.values() if r.events]
    passes = max(chains, key=len, default=[])
    forwards = sorted({n.forward for n in passes})
    sizes = [b for f in forwards if 0 < f <= len(batches) and (b := batches[f - 1])]
    if (not train or len(forwards) < 2 or len(sizes) != len(forwards)
            or any(not 1 < b <= SMALL for b in sizes)):
        return Finding("batch statistics", True)
    few = f"{min(sizes)}" if min(sizes) == max(sizes) else f"{min(sizes)} to {max(sizes)}"
    text = (
        f"batch normalization {shown(train, 3)} ran in train mode on micro-batches of "
        f"{', '.join(map(str, sizes[:6]))}{', ...' if len(sizes) > 6 else ''} examples whose "
        f"{len(sizes)} backward passes one step accumulated (observed: the first argument of "
        f"each call, the passes .grad summed): each micro-batch is normalised by its own "
        f"statistics of {few} examples, so the accumulated gradient is not "
        f"that of one batch of {sum(sizes)} and the running statistics are noisy; use "
        f"GroupNorm or LayerNorm, larger micro-batches, or batch norm in eval mode")
    if len(sizes) >= MANY:  # the step's batch is many times the one normalization sees
        return Finding("batch statistics", True, text)
    return Finding("batch statistics", True, note=text)
