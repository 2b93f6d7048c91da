"""A bootstrapped target that carries gradient: ``V(s) - (r + gamma * V(s'))`` regressed with
both sides from the same module.

Temporal-difference learning regresses a value ``V(s)`` onto a target built from the same
network's value of the next state, ``r + gamma * V(s')``; the target is held fixed (computed
under ``torch.no_grad()`` or detached: the *semi-gradient* update, Sutton and Barto,
Reinforcement Learning, 2nd ed., section 9.3).  Left with its history, the loss's gradient
also flows through ``V(s')``: the network is pushed to move its next-state value towards its
current one (the residual gradient), a different, slower update, and nothing raises.

Seen here, at each outermost ``backward()``, as a reader of :class:`.lossnodes.LossNodes`
(:data:`NODE`): among the loss's first nodes, a subtraction whose
two operands lead, through views only on one side and through constant factors and added
constants on the other, a product by a constant among them (``+ r``, ``* gamma``,
``* (1 - done)``), to the outputs of two calls of the same module (the recorder's node
owners).  Two outputs of one module compared directly (a Siamese distance) or apart by an
added margin only (a ranking loss) are not named; nor is an undiscounted target.

Imports :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["NODE", "Bootstrap", "Bootstrapped", "bootstrapped_target"]

NODE = "SubBackward0"  # the node read
_VIEWS = {"SqueezeBackward0", "SqueezeBackward1", "UnsqueezeBackward0", "ViewBackward0",
          "ReshapeAliasBackward0", "SelectBackward0", "SliceBackward0", "IndexBackward0",
          "CloneBackward0", "ExpandBackward0", "UnsafeViewBackward0"}
_AFFINE = {"AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0", "NegBackward0"}


class Bootstrapped(NamedTuple):
    """Module ``name`` (``kind``): the output of one call regressed onto an affine function
    of the output of another call (``steps`` constant factors and added constants)."""

    name: str
    kind: str
    steps: int


def _to_call(node: Any, owner: dict[Any, int]) -> tuple[int | None, int, int]:
    """The call whose output ``node`` leads to through views and one-operand affine nodes
    (``None``: it leads elsewhere), how many affine nodes that took, how many of them were
    products (a discount)."""
    steps = muls = 0
    for _ in range(12):
        if node is None:
            return None, steps, muls
        if (at := owner.get(node)) is not None:
            return at, steps, muls
        live = [c for c, _ in node.next_functions if c is not None]
        kind = type(node).__name__
        if len(live) != 1 or kind not in _VIEWS | _AFFINE:
            return None, steps, muls
        steps, muls = steps + (kind in _AFFINE), muls + (kind == "MulBackward0")
        node = live[0]
    return None, steps, muls


class Bootstrap:
    """The first :class:`Bootstrapped` of the block (``found``); ``calls``: the recorder
    (its read-only ``node_owner`` and ``raw``), ``names``: module -> name, of ``model``."""

    def __init__(self, model: Any, calls: Any, names: dict[Any, str]):
        self.model, self.calls, self.names = model, calls, names
        self.found: Bootstrapped | None = None

    def _outer(self, i: int) -> int:
        """The outermost call that call ``i`` runs inside, below the model's own call."""
        raw = self.calls.raw
        while (p := raw[i].parent) is not None and raw[p].module is not self.model:
            i = p
        return i

    def read(self, n: Any) -> Bootstrapped | None:
        """For a ``SubBackward0`` among the loss's first nodes: the block's first
        :class:`Bootstrapped` (this node's, when none was found before); ``None``: none."""
        live = [c for c, _ in n.next_functions if c is not None]
        if self.found is not None or len(live) != 2:
            return self.found
        owner, raw = self.calls.node_owner, self.calls.raw
        (a, sa, ka), (b, sb, kb) = _to_call(live[0], owner), _to_call(live[1], owner)
        # one side direct, the other discounted (a margin alone, as in a ranking loss's
        # margin + d(positive) - d(negative), is not a bootstrapped target)
        if a is None or b is None or a == b or min(sa, sb) != 0 or max(ka, kb) == 0:
            return None
        ma, mb = raw[self._outer(a)].module, raw[self._outer(b)].module
        if ma is mb and ma in self.names:
            self.found = Bootstrapped(self.names[ma], type(ma).__name__, max(sa, sb))
        return self.found


def bootstrapped_target(w: GradWatch, o: Options) -> Finding:
    """The :class:`Bootstrapped` of the block, in words."""
    b = w.boot.found
    if b is None:
        return Finding("bootstrapped targets", True)
    return Finding("bootstrapped targets", True, (
        f"the loss subtracts from one output of '{b.name}' ({b.kind}) a target computed from "
        f"another call of '{b.name}' through constant factors and added constants (observed: "
        f"a subtraction near the loss whose two sides lead to two calls of that module), "
        f"r + gamma * V(next state): that bootstrapped target carries gradient, so the "
        f"next-state call is trained too (the residual gradient, not the TD update); compute "
        f"the target under torch.no_grad() or detach it"))
