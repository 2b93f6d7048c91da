"""What the hooks of :mod:`.gradhooks` observe beyond each ``.grad``'s own events, as records:
a ``backward()`` that raised (:class:`Raised`), the exception that ended the block
(:class:`Ended`), what an optimizer holds (:class:`Holding`) and a frozen parameter an
optimizer step moved (:class:`FrozenMoved`).

Imports nothing of the trace room.
"""

from __future__ import annotations

import os
import traceback
from typing import Any, NamedTuple

import torch

__all__ = ["Ended", "FrozenMoved", "Holding", "Raised", "message", "where"]


class Raised(NamedTuple):
    """A ``backward()`` that raised: the error's type, its message (the first sentences,
    without torch's hint), the calls of the model started by then, and whether a gradient
    of that pass had reached a watched parameter."""

    kind: str
    message: str
    forward: int
    reached: bool


def message(error: BaseException) -> str:
    """``error``'s message on one line, without torch's hint, at most 300 characters."""
    text = " ".join(str(error).split())
    text = text.split(" Hint:")[0]
    return text if len(text) <= 300 else text[:297] + "..."


class Ended(NamedTuple):
    """The exception that ended the ``with`` block (seen by its ``__exit__``): its type, its
    message (the first sentences), where it was raised (``file:line in function``, the
    innermost frame outside torch), whether a ``backward()`` raised it (observed by
    :mod:`.patches`), and the calls of the model started by then."""

    kind: str
    message: str
    where: str
    by_backward: bool
    forward: int


class FrozenMoved(NamedTuple):
    """A parameter with ``requires_grad=False`` that an optimizer step held with a ``.grad``
    that is not None, and that the step changed (its sum before and after differ): ``name``,
    the optimizer's class, and what in its state or its group moves it (momentum, weight
    decay)."""

    name: str
    optimizer: str
    why: str


class Holding(NamedTuple):
    """What one optimizer holds: the watched parameters (``held``), the number of tensors in
    its groups (``size``), whether it holds the probe, and the tensors it holds that require
    grad and are not parameters of the watched model (``foreign``)."""

    optimizer: Any
    size: int
    held: list[torch.Tensor]
    has_probe: bool
    foreign: list[torch.Tensor]


def where(error: BaseException) -> str:
    """``file:line in function`` of the innermost frame of ``error``'s traceback outside
    torch and this package (the user's line that raised), or ``""``."""
    torch_dir = os.path.dirname(torch.__file__)
    ours = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    frames = traceback.extract_tb(error.__traceback__)
    for f in reversed(frames):
        if not (f.filename.startswith(torch_dir) or f.filename.startswith(ours)):
            line = f" ({f.line.strip()})" if f.line else ""
            return f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}{line}"
    return ""
