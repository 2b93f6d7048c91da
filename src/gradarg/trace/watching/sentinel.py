"""Where a light step's forward first made NaN/Inf: a sum per module call, read only when needed.

On a light step (``watch(model, full_steps=k)``, :mod:`.detail`) the module calls inside the
model are not recorded.  A forward hook on each of them still takes, as the call returns, the
sum of each floating output and of each floating input that no earlier call of the step
returned (an input an earlier call returned is that call's output: its sum is reused).  The
sums stay 0-d tensors: no ``.item()``, no synchronisation, one reduction per call on a healthy
step.  Only when the model's output is not finite (found by :mod:`.graphnotes` when the
model's call returns) are they read, all at once (one ``.tolist()``).

A sum is finite exactly when every entry is (IEEE arithmetic: a NaN or an Inf makes the sum
NaN or Inf), except when finite entries add up beyond the dtype's range: floats narrower than
32 bits are summed in float32 (float16's 65504 cannot overflow it), float32 and float64 in
their own dtype (entries near 1e38 / numel).  A sum found not finite is checked entry by
entry when the tensor is still alive at the reading.

The call located is the one :func:`.graphnotes.first_nonfinite_call` names on a full step:
an output not finite while every input is finite (checked: each input's sum), the innermost
such call, first in forward order.  Hooks fire as calls return (an inner call before the call
it runs in, calls side by side in forward order), so it is the first such call in that order.
Then, as on a full step, the graph below its outputs tells whether the first NaN/Inf was made
by an operation or taken from a value without history (data, a constant:
:func:`.graphnotes.takes_bad_data`).
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

import torch

from ..graph.values import finite
from ..graph.values import tensors as _tensors
from . import graphnotes
from .patches import eager_unless_traced

__all__ = ["Located", "Sentinel"]


class Located(NamedTuple):
    """The module call of a light step whose output first held NaN/Inf: its ``name``, class
    ``kind``, ``how`` (``"made"``: an operation made it; ``"input"``: taken from a value
    without history) and ``overflow`` (``(dtype, largest finite value)`` when it returned Inf
    in a float narrower than 32 bits, else ``None``)."""

    name: str
    kind: str
    how: str
    overflow: tuple[str, float] | None


class _Call(NamedTuple):
    module: Any
    ins: list[int]  # flag numbers of its floating inputs (-1: not checked)
    outs: list[int]  # flag numbers of its floating outputs (-1: not checked)
    refs: list[Any]  # weak references to its floating outputs
    nodes: list[Any]  # its outputs' autograd nodes
    dtypes: list[Any]  # its outputs' dtypes


class Sentinel:
    """The sums of a light step's module calls (see the module's text).

    Parameters
    ----------
    watched : Watched
        The model's names and the step's progress (``backward_seen``: calls after a backward
        pass reached the model, recomputations under checkpointing, are not taken).
    detail : Detail
        Which steps are light; a new step (``detail.step``) drops the last one's sums.  The
        call located is put in ``detail.located`` (:class:`Located`).
    graph : GraphNotes
        Where the forward's first NaN/Inf was found at the model's level (``forward_nan``).
    """

    def __init__(self, watched: Any, detail: Any, graph: Any):
        self.watched, self._detail, self._graph = watched, detail, graph
        self.hook = eager_unless_traced(self._hook)
        self._step = -1
        self._reset()

    def _reset(self) -> None:
        self._flags: list[torch.Tensor] = []  # 0-d sums
        self._calls: list[_Call] = []  # in the order they returned
        self._seen: dict[int, tuple[int, Any]] = {}  # id of an output -> (flag, weak ref)
        self._depth = 0  # model calls running
        self._start = 0  # the first call inside the model call running
        self._read_once = False  # the sums were read in this step

    def root_pre(self, module: Any, args: Any) -> None:
        """The model's forward pre-hook (after the recorder's: the step has begun)."""
        if self._detail.step != self._step:
            self._step = self._detail.step
            self._reset()
        if self._depth == 0:
            self._start = len(self._calls)
        self._depth += 1

    def root_post(self, module: Any, args: Any, output: Any) -> None:
        """The model's forward hook (after the recorder's: ``graph.forward_nan`` is read)."""
        self._depth = max(self._depth - 1, 0)
        made = self._graph.forward_nan
        if (self._depth or self._read_once or self._detail.full or made is None
                or made[1] != "made"):
            return
        self._read_once = True
        try:
            self._detail.located = self._locate(self._calls[self._start:])
        except Exception:  # noqa: BLE001 (never break the user's forward)
            self._detail.located = None

    def _flag(self, t: torch.Tensor) -> int:
        if t.layout != torch.strided:
            return -1
        d = t.detach()
        self._flags.append(d.sum(dtype=torch.float32) if d.element_size() < 4
                           and d.is_floating_point() else d.sum())
        return len(self._flags) - 1

    def _hook(self, module: Any, args: Any, output: Any) -> None:
        if not self._depth or self.watched.backward_seen or self._detail.full:
            return
        seen = self._seen
        ins = []
        for t in ((args[0],) if len(args) == 1 and type(args[0]) is torch.Tensor
                  else _tensors(args)):
            if not (t.is_floating_point() or t.is_complex()):
                continue
            hit = seen.get(id(t))
            ins.append(hit[0] if hit is not None and hit[1]() is t else self._flag(t))
        outs, refs, nodes, dtypes = [], [], [], []
        for t in (output,) if type(output) is torch.Tensor else _tensors(output):
            if not (t.is_floating_point() or t.is_complex()):
                continue
            flag = self._flag(t)
            ref = weakref.ref(t)
            outs.append(flag)
            refs.append(ref)
            nodes.append(t.grad_fn)
            dtypes.append(t.dtype)
            seen[id(t)] = (flag, ref)
        self._calls.append(_Call(module, ins, outs, refs, nodes, dtypes))

    def _read(self) -> list[bool]:
        """Whether each sum is finite (one synchronisation when all are on one device)."""
        flags = [torch.view_as_real(f).sum() if f.is_complex() else f for f in self._flags]
        if not flags:
            return []
        try:
            return torch.isfinite(torch.stack([f.double() for f in flags])).tolist()
        except RuntimeError:  # sums on several devices
            return [bool(torch.isfinite(f)) for f in flags]

    def _locate(self, calls: list[_Call]) -> Located | None:
        ok = self._read()
        for c in calls:
            if not c.outs or any(i < 0 or not ok[i] for i in c.ins):
                continue
            bad = [k for k, i in enumerate(c.outs) if i >= 0 and not ok[i]]
            alive = [c.refs[k]() for k in bad]
            # a sum found not finite, its entries checked when alive (finite: an overflow of
            # the sum alone)
            if not bad or all(t is not None and finite(t) for t in alive):
                continue
            how = "made"
            origin = graphnotes.nonfinite_origin([n for n in c.nodes if n is not None])
            if origin is not None and graphnotes.takes_bad_data(origin):
                how = "input"
            return Located(self.watched.names.get(c.module, "(model)"), type(c.module).__name__,
                           how, _overflow(c, bad, alive, self._flags))
        return None


def _overflow(c: _Call, bad: list[int], alive: list[Any],
              flags: list[torch.Tensor]) -> tuple[str, float] | None:
    """``(dtype, largest finite value)`` when a non-finite output of call ``c`` in a float
    narrower than 32 bits held Inf: read from the tensor if alive, else from its float32 sum
    (+-Inf: an Inf entry; NaN: not known, not claimed)."""
    for k, t in zip(bad, alive, strict=True):
        dtype = c.dtypes[k]
        if not dtype.is_floating_point or torch.finfo(dtype).bits >= 32:
            continue
        inf = (bool(torch.isinf(t.detach()).any()) if t is not None
               else bool(torch.isinf(flags[c.outs[k]])))
        if inf:
            return str(dtype).removeprefix("torch."), float(torch.finfo(dtype).max)
    return None
