"""An output layer whose weight is frozen while its bias trains.

Freezing by parameter name (``p.requires_grad = "bias" in name``: BitFit, Ben Zaken et al.,
2022, trains the biases and the task's head) catches the new head's weight too: the outputs
are then a fixed random projection of the features that only the biases shift, and nothing
raises.  What the watch shows: the last module call of the forward that holds parameters has
a ``weight`` with ``requires_grad=False`` and a ``bias`` with ``requires_grad=True``.  A head
frozen whole (weight and bias, as a classifier kept fixed under temperature scaling) is not named: that
is a choice the record cannot question.

Imports :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["frozen_head"]


def frozen_head(w: GradWatch, o: Options) -> Finding:
    """The output layer (the last call holding parameters) with a frozen ``weight`` and a
    trainable ``bias``, in words."""
    owned: dict[str, dict[str, Any]] = {}  # module -> {local name: requires_grad}
    for name, r in w.parameters.items():
        owned.setdefault(r.module, {})[name.rsplit(".", 1)[-1]] = r.requires_grad
    last = next((c for c in reversed(w.layers()) if c.name in owned), None)
    kept = owned.get(last.name, {}) if last is not None else {}
    if last is None or kept.get("weight") is not False or kept.get("bias") is not True:
        return Finding("frozen output weight", True)
    weight = f"{last.name}.weight" if last.name else "weight"
    return Finding("frozen output weight", True, (
        f"the output layer '{last.name}' ({last.kind}) has its weight frozen ({weight}: "
        f"requires_grad=False, no gradient) while its bias trains (observed: the last module "
        f"of the forward holding parameters): the outputs are a fixed projection of the "
        f"features that only biases shift; a freeze by parameter name ('bias' in name, as "
        f"for BitFit) catches a new head too: set {weight}.requires_grad = True and give it "
        f"to the optimizer if the head is new for this task"))
