"""Two notes the module-call hooks of :class:`~.recorder.Recorder` take at each call, kept
here: in-place edits of a module's own parameters during its call (their version counters,
read at the call's start and end), integer tensors a call took as inputs, and softmax outputs
a call took whose rows are exactly one-hot (saturated).

Imports ``trace.graph``'s ``saved_value`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import torch

from ..graph.nodes import saved_value

__all__ = ["CallNotes"]


class CallNotes:
    """In-place edits of parameters inside the forward and integer inputs, per module call.

    Parameters
    ----------
    owner : dict
        Parameter -> ``(full name, module name)`` (``Watched.owner``).
    names : dict
        Module -> its name.
    """

    def __init__(self, owner: Mapping[Any, tuple[str, str]], names: Mapping[Any, str]):
        self._owner, self._names = owner, names
        # each module's own parameters that require grad
        self._own = {m: [p for _, p in m.named_parameters(recurse=False)
                         if p.requires_grad and p in owner] for m in names}
        self.reset()

    def reset(self) -> None:
        """A new step: nothing noted."""
        self._versions: dict[int, list[tuple[torch.Tensor, int]]] = {}
        self._edited: dict[str, tuple[str, str]] = {}  # param name -> (module, class)
        self._ints: dict[int, str] = {}  # call -> dtype of an integer tensor it took
        self._padding: dict[int, int] = {}  # Embedding call -> padding_idx: all its indices
        # id(parameter) -> its version when its module returned (by id: a tensor's hash is a
        # Python-level call; the owner keeps every parameter alive, so ids stay unique)
        self._used: dict[int, int] = {}
        # call -> (outputs finite, dtype, an Inf among them)
        self._narrow: dict[int, tuple[bool, torch.dtype, bool]] = {}
        self._saturated: dict[int, tuple[int, int]] = {}  # call -> (one-hot rows, rows)

    @property
    def edited(self) -> Mapping[str, tuple[str, str]]:
        """Parameter name -> ``(module name, class name)`` of the call during which its
        version counter went up: modified in place inside the forward (observed)."""
        return MappingProxyType(self._edited)

    @property
    def integer_inputs(self) -> Mapping[int, str]:
        """Call -> the dtype of an integer (or bool) tensor it took as an input (observed)."""
        return MappingProxyType(self._ints)

    @property
    def padding_only(self) -> Mapping[int, int]:
        """Call of an ``nn.Embedding`` -> its ``padding_idx``, for the calls whose indices were
        all that index (observed at the call): the padding row gets no gradient, so such a
        call sends none to the weight."""
        return MappingProxyType(self._padding)

    @property
    def narrow(self) -> Mapping[int, tuple[bool, torch.dtype, bool]]:
        """Call -> ``(finite, dtype, inf)`` for a call that returned a floating tensor narrower
        than float32 (float16, bfloat16: autocast), read when it returned: whether every
        output entry was finite, and whether one was Inf.  Read there because such an output is often freed before
        the model's output is (a ReLU after it saves its own output), and overflows happen
        in these types."""
        return MappingProxyType(self._narrow)

    @property
    def saturated(self) -> Mapping[int, tuple[int, int]]:
        """Call -> ``(k, n)``: it took a softmax's output (its ``grad_fn`` a
        ``SoftmaxBackward0``) of which ``k`` of the ``n`` rows along the softmax's dimension
        were exactly one-hot (every entry 0 or 1: saturated), read at the call.  The softmax's
        Jacobian on a row y is ``diag(y) - y yᵀ``, 0 on such a row: no gradient goes back
        through it."""
        return MappingProxyType(self._saturated)

    def changed_since_forward(self, params: Any) -> list[Any]:
        """Those of ``params`` whose version counter went up since their module's last call
        in this step returned: modified in place after the forward used them (observed)."""
        used = self._used
        return [p for p in params if id(p) in used and p._version != used[id(p)]]

    def begin(self, index: int, module: Any, inputs: Any) -> None:
        """Call ``index`` of ``module`` starts with tensors ``inputs``."""
        for t in inputs:
            if isinstance(t, torch.Tensor) and not (t.is_floating_point() or t.is_complex()):
                self._ints.setdefault(index, str(t.dtype).removeprefix("torch."))
                pad = getattr(module, "padding_idx", None)
                if (isinstance(module, torch.nn.Embedding) and pad is not None and t.numel()
                        and bool((t == pad).all())):
                    self._padding[index] = pad
                break
        for t in inputs:
            if (isinstance(t, torch.Tensor) and t.grad_fn is not None
                    and type(t.grad_fn).__name__ == "SoftmaxBackward0"):
                self._note_softmax(index, t)
                break
        own = self._own.get(module)
        if own:
            self._versions[index] = [(p, p._version) for p in own]

    def _note_softmax(self, index: int, t: torch.Tensor) -> None:
        dim = saved_value(t.grad_fn, "_saved_dim", hooked=False)  # signed, as saved
        if not t.dim() or not isinstance(dim, int) or not -t.dim() <= dim < t.dim():
            return
        rows = t.detach().movedim(dim, -1).reshape(-1, t.shape[dim])
        k = int(((rows == 0) | (rows == 1)).all(-1).sum())
        if k:
            self._saturated[index] = (k, rows.shape[0])

    def end(self, index: int, module: Any, outputs: Any = ()) -> None:
        """Call ``index`` of ``module`` returned ``outputs`` (tensors)."""
        for t in outputs:
            if isinstance(t, torch.Tensor) and t.is_floating_point() and t.element_size() < 4:
                d = t.detach()
                ok = bool(torch.isfinite(d.float().sum())) or bool(torch.isfinite(d).all())
                self._narrow[index] = (ok, t.dtype, not ok and bool(torch.isinf(d).any()))
                break
        versions = self._versions.pop(index, None)
        if not versions:
            return
        used, edited = self._used, None
        for p, v in versions:
            now = used[id(p)] = p._version  # as the forward left it
            if now != v:
                edited = edited or []
                edited.append(p)
        for p in edited or ():
            self._edited.setdefault(self._owner[p][0], (
                self._names.get(module, "(model)"), type(module).__name__))
