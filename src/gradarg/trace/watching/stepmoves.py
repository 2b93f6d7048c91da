"""Whether each optimizer step changed the parameters it was handed, observed for
:mod:`.gradhooks`: a few entries of each watched parameter the step holds, where its
``.grad`` is finite and not negligible next to the step's largest, are read before the step
and again after it.  A step that
leaves most of them bit for bit the same did not apply the gradient it read: the update was
below the spacing of the weights' floating-point numbers (``bfloat16`` / ``float16``
weights, or a learning rate decayed to almost nothing).  Reading a sample keeps the cost at
two small index operations per parameter and step; the fraction stated is of the sample.

Imports nothing of the trace room.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["SAMPLE", "StepMoves", "Unmoved"]

SAMPLE = 32  # entries read per parameter and step, evenly spaced
UNMOVED = 0.5  # a parameter with at least this fraction of its sample unchanged is named
NEGLIGIBLE = 1e-6  # entries whose |.grad| is below this times the step's largest are not read


@dataclass(frozen=True)
class Unmoved:
    """A parameter the last optimizer step holding it left (mostly) unchanged: ``same`` of the
    ``read`` entries sampled where its ``.grad`` was finite and not negligible (above
    :data:`NEGLIGIBLE` times the largest sampled in the step) are bit for bit the same
    after ``optimizer``'s step; its dtype, its group's learning rate (``lr``) and the one a
    learning-rate scheduler started from (``initial_lr``, ``None`` without a scheduler), and
    the largest ``|.grad|`` among the entries read (``largest``)."""

    name: str
    optimizer: str
    same: int
    read: int
    dtype: torch.dtype
    lr: float | None
    initial_lr: float | None
    largest: float = 0.0


def _plain(t: Any) -> bool:
    return type(t) in (torch.Tensor, torch.nn.Parameter) and t.layout is torch.strided


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError, RuntimeError):
        return None


class StepMoves:
    """The entries read around each optimizer step (:meth:`before`, :meth:`after`) and the
    parameters the last step holding them left unchanged (:attr:`unmoved`, by name)."""

    def __init__(self) -> None:
        self._read: dict[int, list[tuple[Any, ...]]] = {}
        self._spaced: dict[int, torch.Tensor] = {}  # numel -> the sampled positions
        self.unmoved: dict[str, Unmoved] = {}
        # id(optimizer) -> (parameters left unchanged, parameters read) at its last step
        self.last: dict[int, tuple[int, int]] = {}

    def _positions(self, n: int) -> torch.Tensor:
        idx = self._spaced.get(n)
        if idx is None:
            idx = self._spaced[n] = torch.linspace(0, n - 1, min(n, SAMPLE)).round().long()
        return idx

    def before(self, optimizer: Any, held: list[Any], names: Any) -> None:
        """``optimizer``'s step is about to run; ``held``: the watched parameters it holds,
        ``names[p]``: a parameter's ``(name, ...)``."""
        kept = {id(p) for p in held}
        found, top = [], 0.0
        with torch.no_grad():
            for group in optimizer.param_groups:
                lr, initial = _number(group.get("lr")), _number(group.get("initial_lr"))
                for p in group["params"]:
                    g = p.grad if id(p) in kept else None
                    if g is None or not (_plain(p) and _plain(g)) or not p.numel():
                        continue
                    idx = self._positions(p.numel()).to(p.device)
                    gs = g.reshape(-1)[idx].abs().float()
                    gs = torch.where(torch.isfinite(gs), gs, 0.0)
                    top = max(top, float(gs.max()))
                    found.append((p, (names[p][0], lr, initial), idx, gs))
            read = []
            for p, info, idx, gs in found:
                # entries whose gradient is not negligible: a gradient at rounding level next
                # to the step's largest (a bias before a normalisation) is not the step's doing
                mask = gs > NEGLIGIBLE * top
                if bool(mask.any()):
                    read.append((p, (*info, float(gs.max())), idx,
                                 p.detach().reshape(-1)[idx].clone(), mask))
        self._read[id(optimizer)] = read

    def after(self, optimizer: Any) -> None:
        """``optimizer``'s step ran: each parameter read before it is named in
        :attr:`unmoved` when at least half its sample is unchanged, and dropped from it
        otherwise."""
        kind = type(optimizer).__name__
        done = self._read.pop(id(optimizer), [])
        stuck = 0
        with torch.no_grad():
            for p, (name, lr, initial, largest), idx, was, mask in done:
                now = p.detach().reshape(-1)[idx]
                read = int(mask.sum())
                same = int(((now == was) & mask).sum())
                if same >= UNMOVED * read:
                    self.unmoved[name] = Unmoved(name, kind, same, read, p.dtype, lr, initial,
                                                 largest)
                    stuck += 1
                else:
                    self.unmoved.pop(name, None)
        if done:
            self.last[id(optimizer)] = (stuck, len(done))
