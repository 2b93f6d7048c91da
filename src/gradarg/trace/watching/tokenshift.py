"""A language model's loss scored against the token two places ahead: labels shifted by hand
and shifted again inside the model.

A causal language model's logits at position ``t`` predict token ``t + 1``; Hugging Face's
``*ForCausalLM`` / ``*LMHeadModel`` models take ``labels`` equal to ``input_ids`` and shift them
inside their loss, so a user who shifts them as well scores position ``t`` against ``t + 2``.
Every gradient is finite and nonzero; only the loss "cannot go down".

Seen here: a forward pre-hook on the model keeps a copy of its token ids at each call (the
first integer tensor of two dimensions among its arguments, ``(batch, positions)``); at each
outermost ``backward()``, the ``nll_loss`` nodes among the losses' first nodes
(``cross_entropy`` records its target on ``NllLossBackward0`` as ``_saved_target``) give the
targets, each read as ``(batch, L)`` with ``L`` at most the positions.  A target equal to the
ids at offset 2 on every scored position (not ``ignore_index``), and not at offset 1, on at
least :data:`MIN_POSITIONS` positions, is reported with its support, unless another of the
losses is scored at another offset (a multi-token prediction head predicts ``t + 2`` on
purpose, beside the next-token head or heads for ``t + 3``, ``t + 4``: Medusa's).  Offset 0 is not judged: a model whose output at ``t`` sees
only token ``t`` (a tied-embedding autoencoder) is trained to reconstruct it on purpose.

Next-token targets (offset 1 on every position whose next token is among the ids) are also
where :mod:`.causalleak` looks for attention or a convolution that reads later positions
(:attr:`TokenShift.leak`); so are the targets of a regression loss (``mse_loss``,
``smooth_l1_loss``, ``huber_loss``) equal to the model's floating input one step ahead along its
last dimension (a next-sample predictor: WaveNet, a TCN), the input kept by a weak reference.

Imports nothing of the trace room but :mod:`.causalleak`, :mod:`.maskedcopies`,
:mod:`.ownvalue`, :mod:`.finding`,
:mod:`.patches` and
``trace.graph.nodes`` (a node's saved values).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import first_nodes, saved_value
from . import patches
from .causalleak import Leak, conv_leak, future_leak
from .finding import Finding, Options
from .maskedcopies import Copies, Unshifted, copies, unshifted
from .ownvalue import Call, OwnValue, candidate

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["MIN_POSITIONS", "Shifted", "TokenShift", "token_shift"]

MIN_POSITIONS = 8
"""Scored positions needed before an offset is stated (fewer: repeated tokens can match)."""

MOST_IDS = 1 << 20
"""Token ids kept per call at most (a larger integer input is not read)."""

MOST_AHEAD = 8
"""Offsets read (a multi-token prediction's heads, Medusa's, score tokens 2, 3, 4... ahead)."""

_NLL = ("NllLossBackward0", "NllLoss2DBackward0")
# (``l1_loss`` is recorded as a mean of ``abs`` of a difference, which saves no target)
_REGRESSION = ("MseLossBackward0", "SmoothL1LossBackward0", "HuberLossBackward0")
_FIRST_NODES = 12


class Shifted(NamedTuple):
    """The targets of a loss node (``node``) equal the model's token ids at ``offset`` on all
    ``scored`` positions (``ignored``: positions at ``ignore_index``)."""

    node: str
    offset: int
    scored: int
    ignored: int


def _int_inputs(args: Any, kwargs: Any) -> list[torch.Tensor]:
    """The ``(batch, positions)`` integer tensors among a call's arguments, in order."""
    return [a for a in (*args, *(kwargs or {}).values())
            if isinstance(a, torch.Tensor) and a.dim() == 2 and not a.is_floating_point()
            and not a.is_complex() and a.dtype != torch.bool and a.shape[1] >= 2]


def _series(args: Any, kwargs: Any) -> torch.Tensor | None:
    """The first floating tensor argument with positions along its last dimension (a
    sequence of samples, ``(batch, channels, T)``); kept by a weak reference, not copied."""
    for a in (*args, *(kwargs or {}).values()):
        if (isinstance(a, torch.Tensor) and a.is_floating_point() and a.dim() >= 2
                and a.shape[-1] >= 2 and a.numel() <= MOST_IDS):
            return a
    return None


def next_step(target: torch.Tensor, series: torch.Tensor) -> bool:
    """Whether a regression ``target`` is the model's input ``series`` one step ahead along
    the last dimension (``x[..., 1:]``), exactly, on at least :data:`MIN_POSITIONS`
    positions."""
    n = target.shape[-1] if target.dim() else 0
    if (target.dim() != series.dim() or target.shape[:-1] != series.shape[:-1]
            or not 0 < n < series.shape[-1] or n < MIN_POSITIONS):
        return False
    return bool(torch.equal(target.detach(), series.detach()[..., 1:1 + n].to(target.dtype)))


def _rows(target: torch.Tensor, ids: torch.Tensor) -> torch.Tensor | None:
    """``target`` (flat, ``batch * L`` entries) as ``(batch, L)`` rows in the ids' dtype, when
    ``L`` is at most the positions of ``ids`` ``(batch, T)``; ``None`` otherwise."""
    b, t = ids.shape
    if target.dim() != 1 or target.numel() % b or target.numel() // b > t:
        return None
    return target.reshape(b, -1).to(ids.dtype)


def _offset(target: torch.Tensor, ids: torch.Tensor, ignore: int) -> Shifted | None:
    """The least offset, 1 to :data:`MOST_AHEAD`, at which ``target`` (flat, ``batch * L`` entries)
    equals ``ids`` ``(batch, T)`` on every scored position, at least :data:`MIN_POSITIONS`."""
    tgt = _rows(target, ids)
    if tgt is None:
        return None
    t = ids.shape[1]
    scored = tgt != ignore

    def agree(k: int) -> bool:
        n = min(tgt.shape[1], t - k)  # the positions whose token k ahead exists
        m = scored[:, :n]
        return (int(m.sum()) >= MIN_POSITIONS and not bool(scored[:, n:].any())
                and bool((tgt[:, :n][m] == ids[:, k:k + n][m]).all()))

    k = next((k for k in range(1, MOST_AHEAD + 1) if agree(k)), None)
    return None if k is None else Shifted("", k, int(scored.sum()), int((~scored).sum()))


def next_token(target: torch.Tensor, ids: torch.Tensor, ignore: int) -> bool:
    """Whether ``target`` (flat, ``batch * L`` entries, ``L`` at most the positions ``T`` of
    ``ids``) equals the ids one position ahead on every scored position whose next token is
    among them (the last position's target lies beyond them), at least
    :data:`MIN_POSITIONS`."""
    tgt = _rows(target, ids)
    if tgt is None:
        return False
    n = min(tgt.shape[1], ids.shape[1] - 1)
    m = tgt[:, :n] != ignore
    return int(m.sum()) >= MIN_POSITIONS and bool((tgt[:, :n][m] == ids[:, 1:1 + n][m]).all())


class TokenShift:
    """The model's token ids of its last call, and the first :class:`Shifted` seen at a
    ``backward()`` (:attr:`found`)."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.found: Shifted | None = None
        self.leak: Leak | None = None  # attention reading later positions, next-token targets
        self._looked = False  # for a leak, once per watch
        self._ids: torch.Tensor | None = None
        self._series: tuple[Any, int] | None = None  # a float input (weakly), its version
        self.steps = False  # the leak's targets are float samples one step ahead
        self.copies: Copies | None = None  # a masked-token loss scored at visible positions
        self.unshifted: Unshifted | None = None  # a decoder fed its labels unshifted
        self.own: OwnValue | None = None  # an autoregressive model reproducing its input
        self._own_looked = False
        self._call: Call | None = None  # the model's last call, for self.own
        self._inputs: list[torch.Tensor] = []  # the model's integer inputs, copied
        self._count = 0  # how many integer inputs the model's last call took
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [
            self.model.register_forward_pre_hook(patches.module_hook(self._called),
                                                 with_kwargs=True),
            patches.register_backward_call_hook(self._backward, outer=True)]

    def detach(self) -> list[Any]:
        handles, self._handles, self._ids, self._series = self._handles, [], None, None
        self._call = None
        self._inputs = []
        return handles

    def _called(self, module: Any, args: Any, kwargs: Any) -> None:
        if not patches.backward_depth():  # not a recomputation during a backward (checkpoint)
            found = _int_inputs(args, kwargs)  # read once, each copied once
            self._count = len(found)
            first = found[0] if found and found[0].numel() <= MOST_IDS else None
            self._ids = None if first is None else first.detach().clone()
            self._inputs = ([self._ids, *(t.detach().clone() for t in found[1:])]
                            if self._ids is not None
                            and sum(t.numel() for t in found) <= MOST_IDS else [])
            x = None if self._ids is not None else _series(args, kwargs)
            self._series = None if x is None else (weakref.ref(x), x._version)
            self._call = (None if self._ids is not None or self._own_looked
                          else Call(args, kwargs or {}))

    def _backward(self, tensors: Any) -> None:
        ids = self._ids
        ts = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors or ())
        roots = [t.grad_fn for t in ts if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        if ids is None and self._series is not None and not self._looked:
            series = self._series[0]()
            if series is not None:
                self._regression(roots, series, self._series[1])
        if ids is None and self._call is not None and not self._own_looked:
            self._own_looked = True  # once per watch: a loop repeats its first step
            self.own = candidate(roots, self._call)
        if self.found is not None or ids is None:
            return
        found = []
        for n in first_nodes(roots, _FIRST_NODES):
            if type(n).__name__ in _NLL:
                target = saved_value(n, "_saved_target", hooked=False)
                ignore = saved_value(n, "_saved_ignore_index", hooked=False)
                if isinstance(target, torch.Tensor) and isinstance(ignore, int):
                    if self._count == 1 and self.copies is None:
                        self.copies = copies(target, ids, ignore, MIN_POSITIONS)
                    if len(self._inputs) > 1 and self.unshifted is None:
                        self.unshifted = unshifted(target, self._inputs, ignore, MIN_POSITIONS)
                    hit = _offset(target, ids, ignore)
                    if hit is not None:
                        found.append(hit._replace(node=type(n).__name__))
                    if not self._looked and next_token(target, ids, ignore):
                        self._looked = True
                        self.leak = (future_leak(roots, ids.shape[1])
                                     or conv_leak(self.model, ids.shape[1]))
        if found and all(f.offset == 2 for f in found):  # none at the next token
            self.found = found[0]


    def _regression(self, roots: list[Any], series: torch.Tensor, version: int) -> None:
        """A regression loss whose target is the model's float input one step ahead: a
        next-step predictor, where a layer reading later positions is a leak."""
        if series._version != version:  # edited since the forward: not the input it read
            return
        for n in first_nodes(roots, _FIRST_NODES):
            if type(n).__name__ in _REGRESSION:
                target = saved_value(n, "_saved_target", hooked=False)
                if isinstance(target, torch.Tensor) and next_step(target, series):
                    self._looked, self.steps = True, True
                    t = series.shape[-1]
                    self.leak = future_leak(roots, t) or conv_leak(self.model, t)
                    return


def token_shift(w: GradWatch, o: Options) -> Finding:
    """The :class:`Shifted` targets of the block, in words."""
    s, leak = w.tokens.found, w.tokens.leak
    if s is None and leak is not None and leak.conv:
        targets = ("the model's input one step ahead along its last dimension" if w.tokens.steps
                   else "the model's token ids one position ahead")
        return Finding("token targets", True, (
            f"each position is trained to predict the next step while its convolution reads "
            f"later positions, the target included: a future leak, the convolution is not "
            f"causal (observed: the targets are {targets}; {leak.op} has {leak.how}), so the "
            f"loss falls by copying the target instead of predicting it; pad on the left only "
            f"(F.pad(x, (dilation * (kernel - 1), 0)) and padding=0), or drop the last "
            f"outputs of a convolution padded by dilation * (kernel - 1) on both sides"))
    if s is None and leak is not None:
        read = ("" if leak.weight is None else
                f", a row giving {leak.weight:.3g} of its weight to later positions on average")
        how = leak.how or ("the weights it saved" if leak.weight is not None else
                           "its saved is_causal=False and mask, which hides no later position")
        who = "a normalisation" if leak.fix else "its attention"
        fix = leak.fix or ("mask every later position (is_causal=True, or a causal mask "
                           "keeping the lower triangle, torch.tril)")
        return Finding("token targets", True, (
            f"each position is trained to predict the next token while {who} reads "
            f"later positions, the next token included: a future leak (observed: the targets "
            f"are the model's token ids one position ahead; {leak.op} over {leak.positions} "
            f"positions lets row t read columns after t{read}, from {how}), so the loss falls "
            f"by copying the target instead of predicting it; {fix}"))
    if s is None:
        return Finding("token targets", True)
    return Finding("token targets", True, (
        f"each position's loss is scored against the token two places ahead (observed: the "
        f"targets {s.node} saved equal the token ids the model was called with, 2 positions "
        f"ahead, on all {s.scored} scored positions ({s.ignored} at ignore_index), and not 1 "
        f"ahead): the labels were shifted twice; a model that takes labels=input_ids (Hugging "
        f"Face's *ForCausalLM / *LMHeadModel) shifts them inside its loss, so pass the labels "
        f"unshifted"))
