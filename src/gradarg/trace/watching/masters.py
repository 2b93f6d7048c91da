"""An optimizer that steps float32 copies of a float16 / bfloat16 model's parameters (master
weights), told apart from a module replaced after the optimizer was built.

Mixed precision by hand keeps float32 "master" copies of the narrow parameters: the optimizer
holds the copies, each step reads their ``.grad`` (set from the model's) and the new values are
copied back into the model (Micikevicius et al., "Mixed Precision Training", ICLR 2018).
The optimizer then holds tensors that are not parameters of the model, of the same shapes,
which is also what a module replaced after the optimizer was built looks like.  What tells
them apart, both read when the summary is made: the tensors held are float32 where the
parameters of those shapes are narrower, and each equals a parameter of the model once rounded
to its dtype (the values were copied back; a replaced module's parameters stay where they
were while the optimizer moves the old ones).

Imports nothing of the trace room.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["NARROW", "master_copies"]

NARROW = (torch.float16, torch.bfloat16)


def _copied(f: torch.Tensor, params: Sequence[torch.Tensor]) -> bool:
    """Whether float32 ``f`` equals one of ``params`` once rounded to its dtype."""
    try:
        return any(tuple(p.shape) == tuple(f.shape) and p.dtype in NARROW
                   and torch.equal(f.detach().to(p.dtype), p.detach()) for p in params)
    except (RuntimeError, TypeError):  # a sharded or meta tensor: not read
        return False


def master_copies(w: GradWatch, foreign: Sequence[Any], left: Sequence[str]) -> str | None:
    """A note when each of the optimizer's ``foreign`` tensors is a float32 copy of one of
    the narrow parameters ``left`` (no optimizer holds them), equal to it once rounded;
    ``None`` otherwise."""
    named = {name: p for p, (name, _) in w.watched.owner.items()}
    params = [named[n] for n in left if n in named]
    if not (params and foreign and all(f.dtype == torch.float32 and _copied(f, params)
                                       for f in foreign)):
        return None
    dtype = str(params[0].dtype).replace("torch.", "")
    return (f"the optimizer steps {len(foreign)} float32 tensor(s) of the shapes of the "
            f"model's {dtype} parameters and holds none of the model's (observed: at the "
            f"block's end each equals one of them rounded to {dtype}): float32 master copies, "
            f"their values copied back into the model; the watch checks the model's .grad, "
            f"not the copies' .grad the step reads")
