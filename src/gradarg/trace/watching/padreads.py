"""A recurrent module run on a padded batch whose output the loss reads at padding positions.

``nn.LSTM``, ``nn.GRU`` and ``nn.RNN`` given a plain tensor run every sequence to the batch's
full length: on a right-padded batch, the output of a shorter sequence at a padding position
(``out[:, -1]`` above all) is the state after the recurrence has also read the padding, not
the state after the sequence's own last token.  ``nn.utils.rnn.pack_padded_sequence`` runs each
sequence to its own length
(https://docs.pytorch.org/docs/stable/generated/torch.nn.utils.rnn.pack_padded_sequence.html);
so does reading each sequence at its last step, ``out[torch.arange(B), lengths - 1]``.

Seen here: a forward hook on each recurrent module (``nn.RNNBase``) reads a plain tensor input
(a ``PackedSequence`` is left alone) for runs of all-zero rows at the end of the time axis (the
zero vectors of an embedding's ``padding_idx``) whose lengths differ between sequences: the
signature of right padding.  A tensor hook on the output then reads, in the backward, whether
the gradient arriving at those padding positions is nonzero: the loss read the output there.

Imports :mod:`.finding` and :mod:`.patches` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch
from torch import nn

from . import patches
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["PadRead", "PadReads", "pad_read"]

MOST_HOOKED = 8  # tensor hooks kept on recurrent outputs (the latest calls')


class PadRead(NamedTuple):
    """The output of ``name`` (``kind``) got gradient at padding positions of ``read`` of the
    ``padded`` sequences (of ``batch``) whose input ends with all-zero rows; ``last``: the
    output got gradient at the last position only, of every sequence."""

    name: str
    kind: str
    read: int
    padded: int
    batch: int
    last: bool


class PadReads:
    """The first :class:`PadRead` of the block (``found``), from hooks on recurrent modules."""

    def __init__(self, model: nn.Module):
        self.model = model
        self.found: PadRead | None = None
        self._handles: list[Any] = []
        self._hooked: list[Any] = []

    def attach(self) -> None:
        for name, m in self.model.named_modules():
            if isinstance(m, nn.RNNBase):
                self._handles.append(m.register_forward_hook(patches.module_hook(
                    patches.eager_unless_traced(self._returned(name)))))

    def detach(self) -> list[Any]:
        handles, self._handles, self._hooked = self._handles + self._hooked, [], []
        return handles

    def _returned(self, name: str) -> Any:
        def hook(module: nn.RNNBase, args: Any, out: Any) -> None:
            x = args[0] if args else None
            y = out[0] if isinstance(out, tuple) and out else None
            if (self.found is not None or not isinstance(x, torch.Tensor) or x.dim() != 3
                    or not isinstance(y, torch.Tensor) or not y.requires_grad
                    or y.shape[:2] != x.shape[:2]):
                return
            first = bool(module.batch_first)
            zero = (x.detach() == 0).all(-1)  # (batch, time) or (time, batch)
            zero = zero if first else zero.t()
            trailing = zero.flip(1).int().cumprod(1).sum(1)  # zero rows at each sequence's end
            t = zero.shape[1]
            if int(trailing.max()) == 0 or int(trailing.min()) == int(trailing.max()) \
                    or int(trailing.max()) >= t:
                return  # no padding, the same at every sequence's end, or an empty sequence
            pad = torch.arange(t, device=x.device) >= (t - trailing).unsqueeze(1)
            self._hooked.append(y.register_hook(self._read(module, name, pad, first)))
            del self._hooked[:-MOST_HOOKED]

        return hook

    def _read(self, module: nn.Module, name: str, pad: torch.Tensor, first: bool) -> Any:
        def hook(g: torch.Tensor) -> None:
            if self.found is not None:
                return
            sent = g.detach().abs().amax(-1) != 0
            sent = sent if first else sent.t()  # (batch, time): gradient arrived there
            k = int((sent & pad).any(1).sum())
            if k:  # last: the loss read no other position of any sequence
                self.found = PadRead(name, type(module).__name__, k, int(pad.any(1).sum()),
                                     pad.shape[0], not bool(sent[:, :-1].any()))

        return hook


def pad_read(w: GradWatch, o: Options) -> Finding:
    """The :class:`PadRead` of the block, in words."""
    p = w.pads.found
    if p is None:
        return Finding("padding positions", True)
    where = ("at the last position only, out[:, -1]: for a shorter sequence, the state after "
             "the padding, not after its last token" if p.last else
             "where the recurrence has read padding, not the sequence's tokens")
    return Finding("padding positions", True, (
        f"the loss reads the output of '{p.name}' ({p.kind}) at padding positions: its input "
        f"ends with all-zero rows (right padding) in {p.padded} of {p.batch} sequences, and "
        f"the gradient arriving at its output is nonzero at those positions in {p.read} of them "
        f"(observed), {where}; pack the batch (nn.utils.rnn.pack_padded_sequence with the "
        f"lengths) or read each sequence at its own last step (out[torch.arange(B), "
        f"lengths - 1]), and leave padding positions out of the loss"))
