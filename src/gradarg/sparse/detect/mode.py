"""The tracing mode: every ATen operator ``fn`` runs, and the sets its outputs get.

:class:`Tracer` is a ``TorchDispatchMode`` (``torch.utils._python_dispatch``: the documented
extension point for ``__torch_dispatch__`` modes).  It keeps the sets, refuses conversions of
tensors that depend on ``x`` to Python numbers, and asks :mod:`.registry` for each operator's
rule (:meth:`Tracer.rule`); for Hessians it collects the pairs that nonlinear operators create.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

from . import rules  # noqa: F401  (registers every rule family)
from .aliases import Aliases
from .registry import BY_NAME, CONSTANT, RULES, floating, leaves, refusal, value_dependent
from .rules.pointwise import pointwise
from .sets import Dep, UnsupportedOpError, sorted_unique

__all__ = ["Tracer"]

aten = torch.ops.aten
# in-place views (metadata only) and their out-of-place forms
INPLACE_VIEWS = {
    getattr(aten, a): getattr(aten, b)
    for a, b in (("transpose_", "transpose"), ("squeeze_", "squeeze"),
                 ("unsqueeze_", "unsqueeze"), ("t_", "t"), ("as_strided_", "as_strided"),
                 ("swapaxes_", "swapaxes"), ("swapdims_", "swapdims"))
    if hasattr(aten, a) and hasattr(aten, b)
}


class Tracer(TorchDispatchMode):
    """Carries, next to every floating tensor computed from ``x``, the sets of input elements
    its elements depend on (:class:`~.sets.Dep`), operator by operator."""

    def __init__(self, n: int, hessian: bool) -> None:
        super().__init__()
        self.n = n
        self.deps: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self.tainted: WeakIdKeyDictionary = WeakIdKeyDictionary()  # value-dependent, no deriv.
        self.hessian = hessian
        self.pairs: list[np.ndarray] = []
        self.pair_count = 0
        self.aliases = Aliases()

    # -- bookkeeping
    def dep(self, t: Any) -> Dep | None:
        return self.deps.get(t) if isinstance(t, torch.Tensor) else None

    def is_tainted(self, t: Any) -> bool:
        return isinstance(t, torch.Tensor) and t in self.tainted

    def add_square(self, dep: Dep) -> None:
        """Hessian: every pair within each row may interact (a nonlinear operator)."""
        lens = dep.lengths()
        sq = lens * lens
        total = int(sq.sum())
        if total == 0:
            return
        row = np.repeat(np.arange(dep.m, dtype=np.int64), sq)
        start = np.repeat(np.cumsum(sq) - sq, sq)
        local = np.arange(total, dtype=np.int64) - start
        a, b = np.divmod(local, lens[row])
        base = dep.indptr[row]
        keys = sorted_unique(dep.indices[base + a] * self.n + dep.indices[base + b])
        self.pairs.append(keys)
        self.pair_count += keys.size
        if self.pair_count > 4 * 10**6 and len(self.pairs) > 1:
            merged = sorted_unique(np.concatenate(self.pairs))
            self.pairs, self.pair_count = [merged], merged.size

    # -- dispatch
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        packet = func.overloadpacket
        if packet in INPLACE_VIEWS and args and self.dep(args[0]) is not None:
            return self.inplace_view(func, types, args, kwargs)
        out = func(*args, **kwargs)
        found = leaves((args, kwargs))
        for t in found:
            self.aliases.add(t)
        for t in leaves(out):
            self.aliases.add(t)
        written = self.written(func, args, kwargs)
        tracked = [t for t in found if self.dep(t) is not None]
        tainted = any(self.is_tainted(t) for t in found)
        if not tracked:
            if tainted and func.overloadpacket is aten._local_scalar_dense:
                raise value_dependent(
                    "fn converts a value computed from x into a Python number (control flow or "
                    "an index taken from the values of x)"
                )
            if tainted:
                for o in leaves(out):
                    if isinstance(o, torch.Tensor):
                        self.tainted[o] = True
            for w in written:  # a constant written over elements that may have had sets
                if w in self.deps:
                    del self.deps[w]
                self.aliases.after_write(self, w)
            return out
        packet = func.overloadpacket
        if packet is aten._local_scalar_dense:
            raise UnsupportedOpError(
                "fn turns a tensor that depends on x into a Python number (.item(), bool(), "
                "int(), a Python `if` on its value): the dependency would be lost, or the "
                "pattern would hold only for the branch taken; keep the computation in "
                "tensors (torch.where) or use gradarg.sparsity_pattern (a local pattern)"
            )
        outs = [o for o in leaves(out) if isinstance(o, torch.Tensor)]
        if packet in CONSTANT:
            new: list[Dep | None] = [None] * len(outs)
        else:
            new = self.rule(func, packet, args, kwargs, out, outs)
        for o, d in zip(outs, new, strict=True):
            if d is not None and floating(o):
                if d.m != o.numel():  # pragma: no cover - a rule's shape bug, never silent
                    raise AssertionError(f"{func}: {d.m} rows for {o.numel()} elements")
                self.deps[o] = d
            else:
                self.deps.pop(o, None)
                self.tainted[o] = True
        # in-place operators (squeeze_, t_, copy_, ...) update their target, and every tensor
        # that shares its memory (a write through a view reaches its base)
        target = args[0] if args else None
        if written and written[0] is target and outs and outs[0] is not target:
            if outs[0] in self.deps:
                self.deps[target] = self.deps[outs[0]]
            else:
                self.deps.pop(target, None)
        for w in written:
            self.aliases.after_write(self, w)
        return out

    def inplace_view(self, func, types, args, kwargs):
        """``transpose_``, ``squeeze_``... change their target's shape and strides in place:
        the sets follow the out-of-place view, taken of an alias with the old metadata
        (the operator has run by the time a rule would see the target)."""
        before = args[0].detach()  # an alias with the metadata before the operator
        self.deps[before] = self.deps[args[0]]
        packet = INPLACE_VIEWS[func.overloadpacket]
        name = func._overloadname
        overload = getattr(packet, name if name in packet.overloads() else
                           next(o for o in ("int", "dim", "default") if o in packet.overloads()))
        moved = self.__torch_dispatch__(overload, (), (before, *args[1:]), kwargs)
        out = func(*args, **kwargs)
        d = self.deps.get(moved)
        if d is None:
            self.deps.pop(args[0], None)
        else:
            self.deps[args[0]] = d
        self.aliases.add(args[0])
        return out

    @staticmethod
    def written(func, args, kwargs) -> list[torch.Tensor]:
        """The tensor arguments the operator writes into (``self`` of ``copy_``, ``out=``)."""
        found = []
        for i, a in enumerate(func._schema.arguments):
            if a.alias_info is None or not a.alias_info.is_write:
                continue
            v = args[i] if i < len(args) else kwargs.get(a.name)
            found += [t for t in leaves(v) if isinstance(t, torch.Tensor)]
        return found

    def rule(self, func, packet, args, kwargs, out, outs) -> list[Dep | None]:
        """The sets of ``outs``, by the lookup order of :mod:`.registry`."""
        if not any(floating(o) for o in outs):  # argmax, comparisons: no derivative
            return [None] * len(outs)
        if packet is aten._to_copy or packet is aten.to or packet is aten.lift_fresh:
            d = self.dep(args[0])
            return [d if floating(outs[0]) else None]
        if torch.Tag.pointwise in func.tags:  # frexp: several outputs of the same shape
            first = next(o for o in outs if floating(o))
            (d,) = pointwise(self, func, args, kwargs, [first])
            return [d if floating(o) and o.shape == first.shape else None for o in outs]
        rule = RULES.get(packet) or BY_NAME.get(str(packet))
        if rule is None:
            raise refusal(func, " (called on a tensor that depends on x)")
        return rule(self, func, args, kwargs, outs)

    def nonlinear(self, d: Dep | None) -> None:
        if self.hessian and d is not None:
            self.add_square(d)
