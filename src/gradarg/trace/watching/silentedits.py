"""Parameters edited between the forward and the backward where autograd cannot see it: an
edit through ``param.data`` (``weight.data.mul_(...)`` for a max-norm constraint, a
``.data.clamp_()``) changes the storage the forward's saved tensors read, but not the
parameter's version counter, so nothing raises ("in-place correctness checks" in PyTorch's
autograd mechanics note, https://pytorch.org/docs/stable/notes/autograd.html, and
``Tensor.data``'s warning that autograd does not track it).  The backward then multiplies by
the edited values: the gradients of everything before the operation that saved the parameter
belong to another network than the one that produced the loss.

Read: :data:`SAMPLE` evenly spaced entries of each watched parameter when the model's
outermost call returns (on a step recorded in full), and again at the outermost
``backward()`` call.  Named when entries differ while the parameter's storage
(``untyped_storage().data_ptr()``) and version counter (``_version``) are the ones the forward
left, and a node of that backward's graph saved a tensor on the parameter's storage.  An edit
inside the forward (a renormalisation before the use) comes before the reading and is not
named; an edit of a tensor no node saved (a bias) does not change the gradients and is not
named either; ``param.data = t`` (a new storage) leaves the saved tensors on the old one.

Imports :mod:`.patches`, :mod:`.finding`, :mod:`.detail` and ``trace.graph`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import saved_tensors, walk
from ..graph.values import plain, tensors
from . import patches
from .finding import Finding, Options, shown

if TYPE_CHECKING:
    from .detail import Detail
    from .watch import GradWatch

__all__ = ["SAMPLE", "SilentEdit", "SilentEdits", "silent_edit"]

SAMPLE = 16  # entries read per parameter, evenly spaced


class SilentEdit(NamedTuple):
    """Parameters (``names``) whose sampled entries changed between the forward and a
    ``backward()`` with their storage and version unchanged, saved by ``nodes`` of that
    backward's graph; ``differ`` of ``read`` sampled entries of the first differ."""

    names: tuple[str, ...]
    nodes: tuple[str, ...]
    differ: int
    read: int


class _Reading(NamedTuple):
    param: torch.Tensor
    ptr: int
    version: int
    values: torch.Tensor


def _index(n: int) -> torch.Tensor:
    return torch.linspace(0, n - 1, min(n, SAMPLE)).round().long().unique()


def _differ(a: torch.Tensor, b: torch.Tensor) -> int:
    same = (a == b) | (a.isnan() & b.isnan())
    return int((~same).sum())


class SilentEdits:
    """The readings of each watched parameter at the model's last return, and the first
    :class:`SilentEdit` seen at a ``backward()`` (:attr:`found`)."""

    def __init__(self, model: torch.nn.Module, names: dict[Any, str], detail: Detail):
        self.model, self.names, self.detail = model, names, detail
        self.found: SilentEdit | None = None
        self._read: list[_Reading] = []
        self._then: torch.Tensor | None = None  # the readings, one tensor
        self._params: list[torch.Tensor] | None = None
        self._idx: dict[int, torch.Tensor] = {}
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [
            self.model.register_forward_hook(patches.module_hook(self._returned)),
            patches.register_backward_call_hook(self._backward, outer=True)]

    def detach(self) -> list[Any]:
        handles, self._handles, self._read = self._handles, [], []
        return handles

    def _sample(self, p: torch.Tensor) -> torch.Tensor:
        n = p.numel()
        idx = self._idx.get(n)
        if idx is None:
            idx = self._idx[n] = _index(n)
        return torch.take(p.detach(), idx)

    def _returned(self, module: Any, args: Any, output: Any) -> None:
        if patches.backward_depth() or not self.detail.full or self.found is not None:
            self._read, self._then = [], None
            return
        if self._params is None:  # trainable CPU tensors with entries, read once
            self._params = [p for p in self.names
                            if p.requires_grad and p.numel() and p.device.type == "cpu"]
        with torch.no_grad():
            self._read = [_Reading(p, p.untyped_storage().data_ptr(), p._version,
                                   self._sample(p)) for p in self._params if plain(p)]
            self._then = torch.cat([r.values for r in self._read]) if self._read else None

    def _backward(self, given: Any) -> None:
        read, self._read = self._read, []
        if not read or self.found is not None or self._then is None:
            return
        edited = []
        with torch.no_grad():
            now = [self._sample(r.param) for r in read]
            if torch.equal(torch.cat(now), self._then):  # one comparison in the common case
                return
            for r, values in zip(read, now, strict=True):
                p = r.param
                if p.untyped_storage().data_ptr() != r.ptr or p._version != r.version:
                    continue  # a new storage, or an edit autograd saw (it raises if saved)
                k = _differ(values, r.values)
                if k:
                    edited.append((r, k))
        if not edited:
            return
        roots = [t.grad_fn for t in tensors(given) if t.grad_fn is not None]
        if not roots:
            return
        nodes, _ = walk(*roots)
        ptrs = {r.ptr for r, _ in edited}
        saving: dict[int, set[str]] = {}
        for node, _, t in saved_tensors(nodes):
            try:
                ptr = t.untyped_storage().data_ptr()
            except (RuntimeError, NotImplementedError):
                continue
            if ptr in ptrs:
                saving.setdefault(ptr, set()).add(type(node).__name__)
        kept = [(r, k) for r, k in edited if r.ptr in saving]
        if kept:
            r, k = kept[0]
            ops = sorted({op for q, _ in kept for op in saving[q.ptr]})
            self.found = SilentEdit(tuple(self.names[q.param] for q, _ in kept), tuple(ops), k,
                                    r.values.numel())


def silent_edit(w: GradWatch, o: Options) -> Finding:
    """The :class:`SilentEdit` of the block, in words."""
    s = w.silent.found
    if s is None:
        return Finding("edits before backward", True)
    return Finding("edits before backward", True, (
        f"{shown(s.names, 3)} changed between the forward and the backward without autograd "
        f"seeing it (observed: {s.differ} of {s.read} sampled entries of {s.names[0]} differ "
        f"at the backward() call from the forward's, with the same storage and version "
        f"counter: an edit through .data), while {shown(s.nodes, 3)} saved it for the "
        f"backward: the backward used the edited values, so the gradients of the layers "
        f"before it are not those of the loss the forward computed; edit after "
        f"optimizer.step() (under torch.no_grad(), on the parameter itself), or before the "
        f"forward"))
