"""The global random seed set inside the model's forward.

``torch.manual_seed`` resets the default generator
(https://docs.pytorch.org/docs/stable/generated/torch.manual_seed.html): called inside
``forward`` (a template's reproducibility line in the wrong place), it makes every call draw
the same random numbers, so dropout drops the same units at every step and the noise meant to
regularise is a fixed mask; data augmentation or sampling inside the forward repeat too.

Seen here: while a watch listens, ``torch.manual_seed`` is observed (:mod:`.patches`); a call
made while a module call of the model runs is kept, with that module, and whether a dropout
module of the model was in train mode then.

Imports :mod:`.finding` and :mod:`.patches` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from torch import nn

from . import patches
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["SeedCalls", "Seeded", "seeded"]

_DROPOUT = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout,
            nn.FeatureAlphaDropout)


class Seeded(NamedTuple):
    """``torch.manual_seed(seed)`` called ``times`` times inside a call of ``module``
    (``kind``); ``dropout``: the model's dropout modules in train mode then."""

    module: str
    kind: str
    seed: str
    times: int
    dropout: tuple[str, ...]


class SeedCalls:
    """The first module inside whose call ``torch.manual_seed`` ran (``found``); ``running``:
    the recorder's innermost module call, ``(name, class name)`` or ``None``."""

    def __init__(self, model: nn.Module, calls: Any):
        self.model, self.calls = model, calls
        self.found: Seeded | None = None
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [patches.register_seed_hook(self._seeded)]

    def detach(self) -> list[Any]:
        handles, self._handles = self._handles, []
        return handles

    def _seeded(self, seed: Any) -> None:
        at = self.calls.running()
        if at is None:
            return
        if self.found is not None and self.found.module == at[0]:
            self.found = self.found._replace(times=self.found.times + 1)
        elif self.found is None:
            drops = tuple(n for n, m in self.model.named_modules()
                          if isinstance(m, _DROPOUT) and m.training and m.p > 0)
            self.found = Seeded(at[0], at[1], repr(seed), 1, drops)


def seeded(w: GradWatch, o: Options) -> Finding:
    """``torch.manual_seed`` inside the forward, in words: a problem with dropout in train
    mode, a note otherwise."""
    s = w.seeds.found
    if s is None:
        return Finding("random seed", True)
    text = (f"torch.manual_seed({s.seed}) ran inside the forward of '{s.module}' ({s.kind}), "
            f"{s.times} time(s) (observed): it resets the global generator at every call, so "
            f"every call draws the same random numbers")
    if not s.dropout:
        return Finding("random seed", True, note=text + " (no dropout module in train mode)")
    return Finding("random seed", True, (
        f"{text}: dropout ({', '.join(s.dropout[:3])}) drops the same units at every step, a "
        f"fixed mask instead of noise; seed once, before training, outside the model"))
