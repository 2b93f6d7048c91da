"""Names and labels of a graph's nodes, as the trace shows them: ``c = 8 * b`` for a node whose
tensor the caller named, the operation (``relu``) otherwise.

The expression comes from the operation's row in :mod:`.operators`; constant operands are
read from what the node saved (:func:`.nodes.constant_operands`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ..._validate import check_tensor
from ...show.render import fmt
from .nodes import children, constant_operands, leaf_tensor, op_name
from .operators import row

__all__ = ["forward_values", "label", "names_by_node"]


def _key(t: torch.Tensor, walk_index: dict[Any, int], leaves: dict[int, int]) -> int | None:
    return walk_index.get(t.grad_fn) if t.grad_fn is not None else leaves.get(id(t))


def _leaves(nodes: list[Any]) -> dict[int, int]:
    """``id`` of each leaf tensor -> its node's position."""
    return {id(v): k for k, n in enumerate(nodes) if (v := leaf_tensor(n)) is not None}


def names_by_node(names: Mapping[str, Any] | None, walk_index: dict[Any, int],
                  nodes: list[Any]) -> dict[int, str]:
    """The caller's name of each named node, by position (the first name given wins).

    Raises
    ------
    TypeError
        ``names`` is not a mapping, or one of its values is not a tensor.
    """
    if names is None:
        return {}
    if not isinstance(names, Mapping):
        raise TypeError(f"names must be a mapping of str to tensors, got {type(names).__name__}")
    leaves = _leaves(nodes)
    out: dict[int, str] = {}
    for name, t in names.items():
        check_tensor(f"names[{name!r}]", t)
        key = _key(t, walk_index, leaves)
        if key is not None and key not in out:
            out[key] = str(name)
    return out


def forward_values(names: Mapping[str, Any] | None, labels_by_key: dict[int, str],
                   walk_index: dict[Any, int], nodes: list[Any]) -> dict[int, torch.Tensor]:
    """Forward values of the named one-element tensors, by node key (for the drawings)."""
    if not names:
        return {}
    leaves = _leaves(nodes)
    out: dict[int, torch.Tensor] = {}
    for name, t in names.items():
        key = _key(t, walk_index, leaves)
        if (key is not None and labels_by_key.get(key) == str(name) and t.numel() == 1
                and t.layout == torch.strided):
            out[key] = t.detach().clone()
    return out


def _constant(node: Any, slot: int, consts: dict[str, torch.Tensor]) -> str | None:
    """The constant operand in ``slot``: its value if a number, its name if the caller named it."""
    for val in constant_operands(node, slot):
        if isinstance(val, torch.Tensor) and val.numel() == 1:
            return fmt(val)
        if isinstance(val, (int, float)):
            return fmt(val)
        if isinstance(val, torch.Tensor):
            for name, t in consts.items():
                if (t.shape == val.shape and t.numel() and
                        t.untyped_storage().data_ptr() == val.untyped_storage().data_ptr()):
                    return name
    return None


def label(node: Any, key: int, names: dict[int, str], index: dict[Any, int],
          consts: dict[str, torch.Tensor]) -> str:
    """``"c = 8 * b"`` for a named node, its operation otherwise; a leaf is its name or
    ``"leaf (shape)"``.  ``consts``: the caller's named tensors that do not require grad."""
    op = op_name(node)
    name = names.get(key)
    if op == "leaf":
        leaf = leaf_tensor(node)
        assert leaf is not None  # an AccumulateGrad node holds its leaf
        if name:
            return name
        if leaf.is_nested:  # a nested tensor has no single shape
            return f"nested leaf ({leaf.size(0)} tensors)"
        return f"leaf {tuple(leaf.shape)}"
    args = []
    nexts = children(node)
    for slot, (child, _) in enumerate(nexts):
        if child is None:
            args.append(_constant(node, slot, consts) or "·")
        else:
            ck = index[child]
            args.append(names.get(ck) or ("·" if op_name(child) == "leaf" else op_name(child)))
    operator = row(op)
    template = operator.label
    if (operator.constant_first and template is not None and len(args) == 2
            and nexts[1][0] is None and args[1] != "·"):
        expr = template.format(args[1], args[0])  # 8 * b: torch records it as mul(b, 8)
    elif template is not None and len(args) >= template.count("{"):
        expr = template.format(*args)
    elif args:
        expr = f"{op}({', '.join(args)})"
    else:
        expr = f"{op}()"
    return op if name is None else f"{name} = {expr}"
