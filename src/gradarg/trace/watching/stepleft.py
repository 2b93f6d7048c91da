"""What each optimizer step left in ``.grad``: the tensor and its version counter, read when the
step ended (torch's global step post-hook), so that a ``.grad`` that differs from what the step
read at its start is put down to the step itself (an optimizer that edits the gradient before
its update: gradient centralization, a projection) when nothing touched it after the step.

Reading the identity and the version counter costs no arithmetic; an in-place edit bumps the
counter, an assignment replaces the tensor.  Imports nothing of the trace room.
"""

from __future__ import annotations

from typing import Any

from torch.optim.optimizer import register_optimizer_step_post_hook as _post_hook

__all__ = ["StepLeft"]


class StepLeft:
    """``.grad`` as the last step holding each watched parameter left it.

    Parameters
    ----------
    owner : dict
        Parameter -> ``(full name, module name)`` (``Watched.owner``).
    """

    def __init__(self, owner: dict[Any, tuple[str, str]]):
        self._names = {id(p): name for p, (name, _) in owner.items()}  # by id: no tensor hash
        self._params = {name: p for p, (name, _) in owner.items()}
        self._left: dict[str, tuple[int, int]] = {}  # name -> (id of .grad, its version)
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [_post_hook(self._ended)]

    def detach(self) -> list[Any]:
        handles, self._handles = self._handles, []
        return handles

    def _ended(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        names = self._names
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is not None and (name := names.get(id(p))) is not None:
                    self._left[name] = (id(g), g._version)

    def untouched(self, name: str) -> bool:
        """Whether the ``.grad`` of parameter ``name`` is still the tensor, unmodified, that
        the last step holding it left (so any difference from what that step read at its
        start was made inside the step)."""
        left, p = self._left.get(name), self._params.get(name)
        g = None if p is None else p.grad
        return left is not None and g is not None and left == (id(g), g._version)
