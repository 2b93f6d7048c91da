"""A trainable tensor the model holds under several names (tied weights: GPT-2's ``lm_head.weight``
is ``transformer.wte.weight``) while other parameters are frozen: training "the head" trains
the input embeddings too, since it is one tensor.  Read from the model
(``named_parameters(remove_duplicate=False)``) when the block ends.

Imports :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["tied_trainable"]


def tied_trainable(w: GradWatch, o: Options) -> Finding:
    """Trainable tensors with several names, said when some parameters are frozen (a partial
    fine-tuning): each with all its names."""
    names: dict[Any, list[str]] = {}
    for n, p in w.model.named_parameters(remove_duplicate=False):
        names.setdefault(p, []).append(n)
    if all(p.requires_grad for p in names):
        return Finding("tied parameters", True)
    tied = [ns for p, ns in names.items() if p.requires_grad and len(ns) > 1]
    if not tied:
        return Finding("tied parameters", True)
    shown = "; ".join(f"{ns[0]} is {', '.join(ns[1:])}" for ns in tied[:3])
    return Finding("tied parameters", True, (
        f"{len(tied)} trainable tensor(s) the model holds under several names (tied) while "
        f"other parameters are frozen: {shown} (read from model.named_parameters("
        f"remove_duplicate=False)): one tensor, so training one name trains every use of it "
        f"(an output layer tied to the input embeddings moves the embeddings too); untie it "
        f"(a copy of the weight) to train one use alone"))
