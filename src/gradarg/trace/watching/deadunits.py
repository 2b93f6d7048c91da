"""Dead units of the ReLU-like module calls of a watched step, read when the record is.

A unit (a feature, or a channel after a convolution) is dead in a batch when the activation's
output is exactly 0 for every example and position.  The hook on the call's return keeps a
reference to the output (``detach()``: the same storage and version counter, no graph) and
its version; the largest value of each unit is taken only when the record is read (the
record of the last step is read once, not at every step of a watched loop).  An output that
does not require grad (no graph saves it: under ``torch.no_grad()``) is read at once, so the
watch never keeps alive a tensor the step would have freed by then.  An output modified in
place after its call returned (its version counter went up) no longer shows what the call
returned: its units are then not reported.

Imports nothing of the trace room but :mod:`.records`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .records import DeadUnits, RawCall

__all__ = ["DYING", "DyingOutputs"]

# activations whose units can die: the unit's output is exactly 0 for every example
DYING = (torch.nn.ReLU, torch.nn.ReLU6)
# modules whose output has its units (channels) on dimension 1
_CHANNELS_FIRST = (torch.nn.modules.conv._ConvNd, torch.nn.modules.batchnorm._BatchNorm,
                   torch.nn.GroupNorm, torch.nn.modules.pooling._MaxPoolNd,
                   torch.nn.modules.pooling._AvgPoolNd)


def peak(out: torch.Tensor, producers: Sequence[Any]) -> DeadUnits:
    """The largest value of each unit of ``out`` (a ReLU-like output, ``dim() >= 2``) over the
    batch: the units are channels (dimension 1) when one of the ``producers`` (the modules
    whose outputs reached the call's input) is a convolution, batch norm or pooling, else
    features (the last dimension: a ``Linear`` on ``(batch, sequence, features)`` input works
    on the last one)."""
    channels = any(isinstance(m, _CHANNELS_FIRST) for m in producers)
    axis = 1 if channels else out.dim() - 1
    dims = [d for d in range(out.dim()) if d != axis]
    top = out.amax(dim=dims[0] if len(dims) == 1 else dims)  # an int: faster
    kind = "channels, dimension 1" if channels else "features, the last dimension"
    # ReLU outputs are >= 0: a unit whose largest value is 0 is 0 everywhere
    return DeadUnits(top, out.shape[axis], kind, out.numel() // max(out.shape[axis], 1))


class DyingOutputs:
    """The outputs of a step's ReLU-like calls, and their units' peaks once read."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """A new step: nothing kept (the references of the last step are dropped)."""
        self._pending: dict[int, tuple[torch.Tensor, int]] = {}
        self._dead: dict[int, DeadUnits] = {}

    def note(self, index: int, module: Any, output: Any, raw: Sequence[RawCall]) -> None:
        """Call ``index`` of ``module`` returned ``output``; ``raw`` the step's calls so far."""
        if not (isinstance(module, DYING) and type(output) is torch.Tensor
                and output.dim() >= 2):
            return
        out = output.detach()
        if output.requires_grad:  # alive anyway while its graph is: read with the record
            self._pending[index] = (out, out._version)
        else:
            self._dead[index] = peak(out, [raw[i].module for i in raw[index].producers])

    def read(self, raw: Sequence[RawCall]) -> dict[int, DeadUnits]:
        """Call -> its units' peaks; the outputs kept are read now and let go."""
        pending, self._pending = self._pending, {}
        for index, (out, version) in pending.items():
            if out._version == version:
                self._dead[index] = peak(out, [raw[i].module for i in raw[index].producers])
        return self._dead
