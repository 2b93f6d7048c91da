"""The two autodiff routes to a Jacobian: reverse (rows from VJPs) and forward (columns from JVPs).

Everything here works on flat bookkeeping: ``xs`` is a tuple of input tensors, the
function returns a tuple of output tensors, and a Jacobian is a nested list
``J[k][j]`` of blocks of shape ``ys[k].shape + xs[j].shape``.  ``jacobian.py``
turns that into the structure the caller asked for.

Each route first tries one vectorized call (``torch.func.vmap`` over a batch of one-hot
cotangents or tangents, as ``torch.func.jacrev``/``jacfwd`` do), and falls back to a Python
loop of single VJPs/JVPs when that cannot be batched.  Reverse mode evaluates ``fn`` once,
unbatched, and batches only the backward passes over that one graph (so a failed batched
attempt falls back to a loop over the same graph); forward mode batches ``fn`` itself, which
fails on ``.item()``, data-dependent control flow, in-place writes into captured buffers or
ops without batching rules.  Random draws are handled by replaying the same RNG state for
every evaluation (and ``randomness="same"`` inside ``vmap``).
"""

from __future__ import annotations

import contextlib
import math
import os
import weakref
from collections.abc import Callable, Container, Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import torch
import torch.autograd.forward_ad as fwAD
from torch.func import jvp as func_jvp
from torch.func import vmap


def _load_private_functorch() -> SimpleNamespace | None:
    """torch's private pieces of ``torch.func.vmap``/``jvp``, or ``None`` if they have moved.

    Only the optional fast path uses them (see :func:`use_private_functorch`); every result
    is computed through the public ``torch.func`` unless that switch is on.
    """
    try:
        from torch._C import _functorch as raw
        from torch._functorch import eager_transforms as eager
        from torch._functorch.vmap import lazy_load_decompositions

        if not isinstance(eager.JVP_NESTING, int):  # changed meaning: stay public
            return None
        return SimpleNamespace(
            add_batch_dim=raw._add_batch_dim,
            remove_batch_dim=raw._remove_batch_dim,
            vmap_increment_nesting=raw._vmap_increment_nesting,
            vmap_decrement_nesting=raw._vmap_decrement_nesting,
            unwrap_for_grad=raw._unwrap_for_grad,
            lazy_load_decompositions=lazy_load_decompositions,
            enter_jvp_nesting=eager.enter_jvp_nesting,
            exit_jvp_nesting=eager.exit_jvp_nesting,
            jvp_nesting=lambda: eager.JVP_NESTING,
        )
    except (ImportError, AttributeError):
        return None


# The private fast path: off unless asked for (GRADARG_PRIVATE_FUNCTORCH=1 in the environment,
# or use_private_functorch(True)).  None = off or unavailable.
_PRIVATE: SimpleNamespace | None = None


def use_private_functorch(enable: bool = True) -> bool:
    """Switch the private functorch fast path on or off; return whether it is now on.

    On, :func:`batched` and :func:`_jvp` call torch's private building blocks of
    ``torch.func.vmap`` and ``torch.func.jvp`` directly, skipping their per-call argument and
    pytree handling (``nox -s bench`` reports what that saves).  Off (the default), they call
    ``torch.func``.  Both give the same results (``tests/core/test_public_fallback.py``).  When the
    private pieces cannot be found (another torch version), the switch stays off.
    """
    global _PRIVATE
    _PRIVATE = _load_private_functorch() if enable else None
    return _PRIVATE is not None


if os.environ.get("GRADARG_PRIVATE_FUNCTORCH", "") == "1":
    use_private_functorch(True)

from .._validate import as_output_tuple

Blocks = list[list[torch.Tensor]]

# What a failed vectorized attempt may raise; anything else is the caller's bug and propagates.
_VMAP_ERRORS = (RuntimeError, NotImplementedError, ValueError, TypeError, UserWarning)


class VectorizationError(RuntimeError):
    """Raised when ``vectorize=True`` was requested but the function cannot be batched."""


def call(
    fn: Callable[..., Any], xs: Sequence[torch.Tensor]
) -> tuple[tuple[torch.Tensor, ...], bool]:
    """Evaluate ``fn(*xs)`` and check its outputs (tensors with differentiable dtypes)."""
    outs, is_tuple = as_output_tuple(fn, fn(*xs))
    name = getattr(fn, "__name__", "fn")
    for k, yk in enumerate(outs):
        if not (yk.is_floating_point() or yk.is_complex()):
            label = f"output {k} of {name}" if is_tuple else f"the output of {name}"
            raise TypeError(
                f"{label} has dtype {yk.dtype}, which is not differentiable; expected a floating "
                f"or complex output (integer and bool results such as argmax or comparisons "
                f"have no Jacobian)"
            )
    return outs, is_tuple


# The one-hot basis (an identity matrix) of the last sizes used, kept between calls.  Building it
# is a full-size allocation of m x m (reverse) or n x n (forward) values, as large as the
# Jacobian itself; without glibc tunables a fresh allocation of that size is mmapped and every
# page faults on first touch, which for an elementwise function costs more than the backward
# pass.  Bounded: at most _BASIS_ENTRIES identities of at most _BASIS_MAX_BYTES each (64 MiB).
# A backward that writes into its grad_output would write into the cached basis: the version
# counter shows it and the basis is rebuilt; results never share memory with it (_unshared).
_BASIS_MAX_BYTES = 32 * 2**20
_BASIS_ENTRIES = 2
_BASIS: dict[tuple[tuple[int, ...], torch.dtype, torch.device], tuple[torch.Tensor, int]] = {}


def _identity(
    total: int, dtype: torch.dtype, device: torch.device, shape: Sequence[int] | None = None
) -> torch.Tensor:
    """``torch.eye(total)`` with its columns shaped as ``shape`` (default ``(total,)``), i.e.
    a tensor of shape ``(total, *shape)``, from the cache when an unmodified one is there.

    The tensor is its own base, not a view: a view as the batched argument of ``vmap`` costs
    about 10-20 us more per call (measured with torch 2.13), a sixth of a 64-element Jacobian.
    """
    full = (total, *(shape if shape is not None else (total,)))
    key = (full, dtype, device)
    hit = _BASIS.pop(key, None)
    if hit is not None and hit[0]._version == hit[1]:
        eye = hit[0]
    else:
        eye = torch.zeros(full, dtype=dtype, device=device)
        if total:
            eye.view(total, total).fill_diagonal_(1)
    small = eye.numel() * eye.element_size() <= _BASIS_MAX_BYTES
    if small and not torch.is_inference_mode_enabled():
        _BASIS[key] = (eye, eye._version)  # most recently used last
        while len(_BASIS) > _BASIS_ENTRIES:
            del _BASIS[next(iter(_BASIS))]
    return eye


def clear_basis_cache() -> None:
    """Free the cached one-hot bases (at most ``_BASIS_ENTRIES`` x ``_BASIS_MAX_BYTES``)."""
    _BASIS.clear()


def _unshared(t: torch.Tensor, basis: Sequence[torch.Tensor]) -> torch.Tensor:
    """``t``, or a copy if it shares memory with the cached basis (a backward or a JVP that
    passes its cotangent/tangent through unchanged, e.g. ``clone`` or ``view``).

    A ``__torch_dispatch__`` wrapper subclass (``LoggingTensor``) has no storage of its own
    to compare: it may wrap the basis itself, so it is copied.
    """
    try:
        ptr = t.untyped_storage().data_ptr()
    except RuntimeError:  # "invalid python storage": a wrapper subclass
        return t.clone()
    if any(ptr == b.untyped_storage().data_ptr() for b in basis):
        return t.clone()
    return t


def eye_blocks(
    shapes: Sequence[torch.Size], like: Sequence[torch.Tensor], *, cached: bool = False
) -> list[torch.Tensor]:
    """One-hot basis of the concatenated flat space, split into batched blocks per tensor.

    Block ``k`` has shape ``(total, *shapes[k])``; row ``r`` of the concatenation is the
    ``r``-th standard basis vector.  ``cached=True``: the blocks are views of a cached
    identity matrix (see ``_identity``); the caller must not write into them.
    """
    sizes = [math.prod(s) for s in shapes]
    total = sum(sizes)
    ref = like[0]
    same_kind = all(t.dtype == ref.dtype and t.device == ref.device for t in like)
    if cached and same_kind and len(shapes) == 1:  # the common case: the identity itself
        return [_identity(total, ref.dtype, ref.device, tuple(shapes[0]))]
    if cached and same_kind:
        eye = _identity(total, ref.dtype, ref.device)
        blocks, start = [], 0
        for shape, size in zip(shapes, sizes, strict=True):
            # columns start:start+size, stride 1 along them: a view splits them into shape
            blocks.append(eye[:, start : start + size].view((total, *shape)))
            start += size
        return blocks
    if len(shapes) == 1:  # the common case: one identity matrix
        return [torch.eye(total, dtype=ref.dtype, device=ref.device).view((total, *shapes[0]))]
    blocks, start = [], 0
    for shape, size, ref in zip(shapes, sizes, like, strict=True):
        b = torch.zeros(total, size, dtype=ref.dtype, device=ref.device)
        b[start : start + size].fill_diagonal_(1)
        blocks.append(b.view((total, *shape)))
        start += size
    return blocks


def _split_rows(per_input: Sequence[torch.Tensor], out_shapes: Sequence[torch.Size]) -> Blocks:
    """Rows from VJPs: ``per_input[j]`` has shape ``(m, *x_j.shape)``; split ``m`` per output."""
    if len(out_shapes) == 1:
        shape = tuple(out_shapes[0])
        targets = [shape + tuple(g.shape[1:]) for g in per_input]
        # a 1-d output: the rows already have the block's shape (no reshape call)
        pairs = zip(per_input, targets, strict=True)
        return [[g if g.shape == t else g.reshape(t) for g, t in pairs]]
    sizes = [math.prod(s) for s in out_shapes]
    blocks: Blocks = [[] for _ in out_shapes]
    for g in per_input:
        for k, chunk in enumerate(torch.split(g, sizes, dim=0)):
            blocks[k].append(chunk.reshape(tuple(out_shapes[k]) + tuple(g.shape[1:])))
    return blocks


def _split_cols(per_output: Sequence[torch.Tensor], in_shapes: Sequence[torch.Size]) -> Blocks:
    """Columns from JVPs: ``per_output[k]`` has shape ``(n, *y_k.shape)``; split ``n`` per input."""
    sizes = [math.prod(s) for s in in_shapes]
    blocks: Blocks = []
    for t in per_output:
        chunks = (t,) if len(in_shapes) == 1 else torch.split(t, sizes, dim=0)
        row = []
        for j, chunk in enumerate(chunks):
            moved = chunk.movedim(0, -1)  # (*y_k.shape, n_j)
            row.append(moved.reshape(tuple(t.shape[1:]) + tuple(in_shapes[j])))
        blocks.append(row)
    return blocks


def _zeros_like_grad(x: torch.Tensor, batch: int) -> torch.Tensor:
    return torch.zeros((batch, *x.shape), dtype=x.dtype, device=x.device)


def batched(
    f: Callable[..., tuple[torch.Tensor, ...]],
    args: Sequence[torch.Tensor],
    randomness: str = "error",
) -> tuple[torch.Tensor, ...]:
    """``torch.func.vmap(f, randomness=randomness)(*args)`` over dim 0 of every argument.

    ``f`` returns a tensor or a tuple of tensors (a single tensor is cheaper: less pytree work
    in ``vmap``); the result is always a tuple, every output with the batch dimension first (an
    output that does not depend on the batch is expanded).  With the private fast path on
    (:func:`use_private_functorch`), the same steps as ``torch.func.vmap`` for flat tensor
    arguments and outputs, without its per-call pytree and argument processing.
    """
    p = _PRIVATE
    if p is None:
        out = vmap(f, randomness=randomness)(*args)
        return (out,) if isinstance(out, torch.Tensor) else tuple(out)
    p.lazy_load_decompositions()
    size = args[0].shape[0]
    level = p.vmap_increment_nesting(size, randomness)
    try:
        outs = f(*(p.add_batch_dim(a, 0, level) for a in args))
        if isinstance(outs, torch.Tensor):
            outs = (outs,)
        return tuple(p.remove_batch_dim(y, level, size, 0) for y in outs)
    finally:
        p.vmap_decrement_nesting()


# --------------------------------------------------------------------------- reverse mode


def reverse_graph(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...], *, create_graph: bool = False
) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...], bool]:
    """One plain forward pass recorded by autograd: ``(leaves, outputs, is_tuple)``.

    ``fn`` is evaluated once, unbatched, so it may do anything a normal forward pass may
    (``.item()``, data-dependent control flow, random draws); only the backward passes are
    batched.  The leaves share memory with ``xs``, which are already private copies.  With
    ``create_graph`` an ``x`` that requires grad is used as it is (not detached), so that
    the Jacobian stays connected to the caller's graph.
    """
    leaves = tuple(
        x if create_graph and x.requires_grad else x.detach().requires_grad_(True) for x in xs
    )
    with torch.enable_grad():
        outs, is_tuple = call(fn, leaves)
    return leaves, outs, is_tuple


# Backward nodes whose functorch batching rule gives wrong results in the torch versions tested
# (torch 2.13: every row of cdist's batched backward is wrong, and torch.func.jacrev with it;
# tests/core/test_ops_corpus.py checks that torch still has the bug).  A graph containing one is
# differentiated with the loop instead: slower, right.
WRONG_BATCHED_BACKWARD = frozenset({"CdistBackward0"})


def walk_graph(roots: Sequence[Any], stop: Container[int] = ()) -> Iterator[Any]:
    """Every backward node reachable from the ``roots`` (``grad_fn`` nodes), each once; the
    walk does not go on behind a node whose ``id`` is in ``stop``.

    Visited nodes are kept referenced until the walk ends: autograd may hand out a new Python
    object for a node each time it is reached (torch 2.1 does), and a dropped object's ``id``
    can be reused by the next one, which would make an unvisited node look visited.
    """
    stack = [r for r in roots if r is not None]
    seen: dict[int, Any] = {}
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        yield node
        if id(node) not in stop:
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)


def reachable_inputs(y: torch.Tensor, inputs: Sequence[torch.Tensor]) -> set[int]:
    """Indices ``j`` of the ``inputs`` that the autograd graph of ``y`` reaches.

    What ``torch.autograd.grad(y, inputs, allow_unused=True)`` answers with ``None`` for an
    unreached input, found by walking the graph instead of running a backward pass.  The
    graph behind a non-leaf input is not part of ``fn``: the walk stops there.
    """
    leaf_ids = {id(x): j for j, x in enumerate(inputs) if x.grad_fn is None}
    input_nodes = [(x.grad_fn, j) for j, x in enumerate(inputs) if x.grad_fn is not None]
    node_ids = {id(node): j for node, j in input_nodes}  # input_nodes keeps them referenced
    found: set[int] = set()
    for node in walk_graph([y.grad_fn], stop=node_ids):
        if id(node) in node_ids:
            found.add(node_ids[id(node)])
        variable = getattr(node, "variable", None)  # AccumulateGrad: the leaf it feeds
        if variable is not None and id(variable) in leaf_ids:
            found.add(leaf_ids[id(variable)])
        if len(found) == len(inputs):
            break
    return found


def _graph_names(outs: Sequence[torch.Tensor]) -> set[str]:
    """The names of every backward node reachable from ``outs`` (``"MmBackward0"``, ...)."""
    return {node.name() for node in walk_graph([y.grad_fn for y in outs])}


# Backward nodes for which torch.autograd.grad(..., is_grads_batched=True) (public; torch's older
# batching rules) is faster than torch.func.vmap over torch.autograd.grad: measured with torch
# 2.13, one thread, 64 and 256 batched cotangents, every op of tests/core/test_ops_corpus.py plus
# common view and arithmetic nodes (benchmarks/batched_grad_nodes.py times each node alone).
# For these the older path takes 0.70-0.92x the time of vmap at both sizes (its per-call Python
# overhead is smaller, its rules are as fast).  Nodes without an older rule (tanh, softmax,
# linalg, convolution, indexing, ...) make it loop per cotangent instead, 1.2-25x slower,
# growing with the batch: they are not listed, and one such node in the graph keeps the whole
# backward on torch.func.vmap.  MvBackward0 (``W @ x`` with a 1-d ``x``) and AddmvBackward0 are
# out: the older rule for mv's backward is 2.3x slower at 64 rows, 33x at 256, 200x at 1024
# (``x @ W.T`` goes through MmBackward0, which is fast on both paths).
LEGACY_FAST_BACKWARD = frozenset(
    {
        "torch::autograd::AccumulateGrad",
        # elementwise
        "AbsBackward0", "AddBackward0", "AddcmulBackward0", "Atan2Backward0", "AtanBackward0",
        "CosBackward0", "DivBackward0", "ErfBackward0", "ExpBackward0", "HypotBackward0",
        "LerpBackward0", "Log1PBackward0", "LogBackward0", "MulBackward0", "NegBackward0",
        "PowBackward0", "ReciprocalBackward0", "ReluBackward0", "RsqrtBackward0",
        "SigmoidBackward0", "SinBackward0", "SinhBackward0", "SqrtBackward0", "SubBackward0",
        # reductions
        "AmaxBackward0", "LogsumexpBackward0", "MaxBackward1", "MeanBackward0", "ProdBackward0",
        "ProdBackward1", "SumBackward0", "SumBackward1", "TraceBackward0", "VarBackward0",
        # matrix products
        "AddmmBackward0", "BmmBackward0", "MmBackward0",
        # views and copies
        "CatBackward0", "CloneBackward0", "DiagonalBackward0", "ExpandBackward0",
        "PermuteBackward0", "RepeatBackward0", "SliceBackward0", "SqueezeBackward1",
        "SqueezeBackward4", "StackBackward0", "TBackward0", "UnfoldBackward0",
        "UnsafeViewBackward0", "UnsqueezeBackward0", "ViewBackward0",
    }
)  # fmt: skip

# The older batched path only up to this many rows (cotangents): the range measured.
LEGACY_MAX_ROWS = 1024
# False: every batched backward goes through torch.func.vmap (the tests run both paths).
USE_LEGACY_BATCHED_GRAD = True


def _legacy_batched_grad(
    live_outs: Sequence[torch.Tensor],
    leaves: tuple[torch.Tensor, ...],
    cots: Sequence[torch.Tensor],
    create_graph: bool = False,
) -> tuple[torch.Tensor | None, ...]:
    """All VJPs in one call of ``torch.autograd.grad(..., is_grads_batched=True)``."""
    return torch.autograd.grad(
        live_outs,
        leaves,
        cots,
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
        is_grads_batched=True,
    )


def reverse_grads_batched(
    leaves: tuple[torch.Tensor, ...],
    outs: tuple[torch.Tensor, ...],
    *,
    create_graph: bool = False,
) -> Blocks:
    """All rows from one ``torch.autograd.grad(..., is_grads_batched=True)`` call, whatever
    the graph holds: what ``torch.autograd.functional.jacobian(vectorize=True)`` does.

    The second vectorized attempt of ``vectorize=True`` when ``torch.func.vmap`` could not batch
    the backward pass (torch's older batching rules loop per row where they have no rule,
    with torch's performance warning).  Refuses graphs with a node of
    :data:`WRONG_BATCHED_BACKWARD`, as :func:`reverse_vectorized` does.
    """
    shapes = [y.shape for y in outs]
    m = sum(y.numel() for y in outs)
    live = [k for k, y in enumerate(outs) if y.requires_grad]
    if not live or m == 0:
        return _split_rows([_zeros_like_grad(x, m) for x in leaves], shapes)
    live_outs = [outs[k] for k in live]
    wrong = _graph_names(live_outs) & WRONG_BATCHED_BACKWARD
    if wrong:
        raise NotImplementedError(f"torch's batched {min(wrong)} gives wrong results; use the loop")
    cot = eye_blocks(shapes, outs, cached=True)
    return _rows_from_is_grads_batched(leaves, outs, live, cot, create_graph)


def _rows_from_is_grads_batched(
    leaves: tuple[torch.Tensor, ...],
    outs: tuple[torch.Tensor, ...],
    live: Sequence[int],
    cot: Sequence[torch.Tensor],
    create_graph: bool = False,
) -> Blocks:
    """The rows of the outputs ``live`` (those with a graph) from one
    :func:`_legacy_batched_grad` call; an unreached input gets plain zeros."""
    m = sum(y.numel() for y in outs)
    found = _legacy_batched_grad([outs[k] for k in live], leaves, [cot[k] for k in live],
                                 create_graph)
    grads = tuple(
        _zeros_like_grad(x, m) if g is None else _unshared(g, cot)
        for x, g in zip(leaves, found, strict=True)
    )
    return _split_rows(grads, [y.shape for y in outs])


def reverse_vectorized(
    leaves: tuple[torch.Tensor, ...],
    outs: tuple[torch.Tensor, ...],
    *,
    create_graph: bool = False,
) -> Blocks:
    """All rows in one batched backward pass: ``vmap`` over one-hot cotangents.

    ``torch.func.jacrev`` vmaps the VJP of ``torch.func.vjp``, which runs every backward with
    ``create_graph=True``; here the graph of an ordinary forward pass is reused with
    ``torch.autograd.grad`` (what ``torch.autograd.functional.jacobian(vectorize=True)`` does,
    but with functorch's batching rules instead of the legacy ones, which are slow for e.g.
    softmax or tanh).  Works for complex tensors too (PyTorch's conjugate convention).
    ``create_graph`` records the backward passes, so that the rows can be differentiated.

    The rule for the cheaper public path: when every backward node of the graph is in
    :data:`LEGACY_FAST_BACKWARD` (measured faster there), the result is real, ``create_graph``
    is off and there are at most :data:`LEGACY_MAX_ROWS` rows, the rows come from one
    ``torch.autograd.grad(..., is_grads_batched=True)`` call instead (what
    ``torch.autograd.functional.jacobian(vectorize=True)`` does), about 30 us less per call.
    """
    shapes = [y.shape for y in outs]
    m = sum(y.numel() for y in outs)
    live = [k for k, y in enumerate(outs) if y.requires_grad]
    if not live or m == 0:
        return _split_rows([_zeros_like_grad(x, m) for x in leaves], shapes)
    live_outs = [outs[k] for k in live]
    names = _graph_names(live_outs)
    wrong = names & WRONG_BATCHED_BACKWARD
    if wrong:
        raise NotImplementedError(f"torch's batched {min(wrong)} gives wrong results; use the loop")
    cot = eye_blocks(shapes, outs, cached=True)
    if (
        USE_LEGACY_BATCHED_GRAD
        and not create_graph
        and m <= LEGACY_MAX_ROWS
        and names <= LEGACY_FAST_BACKWARD
        and not any(t.is_complex() for t in (*leaves, *live_outs))
    ):
        with contextlib.suppress(*_VMAP_ERRORS):  # else torch.func.vmap below
            return _rows_from_is_grads_batched(leaves, outs, live, cot)
    unused: set[int] = set()

    def vjp(*v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        grads = torch.autograd.grad(
            live_outs, leaves, v, retain_graph=True, create_graph=create_graph, allow_unused=True
        )
        unused.update(j for j, g in enumerate(grads) if g is None)
        # a stand-in for an unreached input; replaced by real zeros below
        out = tuple(
            torch.zeros_like(x) if g is None else g for x, g in zip(leaves, grads, strict=True)
        )
        return out[0] if len(out) == 1 else out  # a tensor: less pytree work in vmap

    grads = batched(vjp, [cot[k] for k in live])
    # an input no output reaches: plain zeros (no autograd history, not an expanded view)
    grads = tuple(
        _zeros_like_grad(x, m) if j in unused else _unshared(g, cot)
        for j, (x, g) in enumerate(zip(leaves, grads, strict=True))
    )
    return _split_rows(grads, shapes)


def reverse_loop(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...], *, create_graph: bool = False
) -> tuple[Blocks, bool]:
    """One backward pass per output element, each with a one-hot ``gradient``.

    This is literally what the site teaches: ``y.backward(gradient=e_i)`` puts row ``i`` of the
    Jacobian in ``x.grad``; ``torch.autograd.grad`` computes the same without accumulating.
    """
    leaves, outs, is_tuple = reverse_graph(fn, xs, create_graph=create_graph)
    return reverse_loop_graph(leaves, outs, create_graph=create_graph), is_tuple


def reverse_loop_graph(
    leaves: tuple[torch.Tensor, ...],
    outs: tuple[torch.Tensor, ...],
    *,
    create_graph: bool = False,
) -> Blocks:
    """The loop of :func:`reverse_loop` on an already recorded graph (``retain_graph`` kept it)."""
    shapes = [y.shape for y in outs]
    m = sum(y.numel() for y in outs)
    live = [k for k, y in enumerate(outs) if y.requires_grad]
    if not live or m == 0:
        return _split_rows([_zeros_like_grad(x, m) for x in leaves], shapes)
    cot = eye_blocks(shapes, outs, cached=True)  # torch.stack below copies every row
    rows: list[list[torch.Tensor]] = [[] for _ in leaves]
    for r in range(m):
        grads = torch.autograd.grad(
            [outs[k] for k in live],
            leaves,
            grad_outputs=[cot[k][r] for k in live],
            # a differentiable Jacobian needs the forward graph for its own backward
            retain_graph=create_graph or r < m - 1,
            create_graph=create_graph,
            allow_unused=True,
        )
        for j, g in enumerate(grads):
            rows[j].append(g)
    per_input = [
        _zeros_like_grad(x, m)
        if all(g is None for g in rj)
        else torch.stack([torch.zeros_like(x) if g is None else g for g in rj])
        for x, rj in zip(leaves, rows, strict=True)
    ]
    return _split_rows(per_input, shapes)


# --------------------------------------------------------------------------- forward mode


def _jvp(
    fn: Callable[..., torch.Tensor | tuple[torch.Tensor, ...]],
    primals: tuple[torch.Tensor, ...],
    tangents: Sequence[torch.Tensor],
) -> torch.Tensor | tuple[torch.Tensor, ...]:
    """``torch.func.jvp(fn, primals, tangents)[1]`` for flat tuples of tensors.

    ``fn`` returns a tensor or a tuple of tensors; the tangent has the same structure.

    With the private fast path on (:func:`use_private_functorch`), the same steps as
    ``torch.func.jvp`` (a functorch JVP level, forward-mode dual tensors, a zero tangent for an
    output that does not depend on the inputs) without its pytree handling and argument checks.
    """
    p = _PRIVATE
    if p is None:
        return func_jvp(fn, primals, tuple(tangents))[1]
    level = p.enter_jvp_nesting()
    try:
        prev = torch._C._is_fwd_grad_enabled()
        torch._C._set_fwd_grad_enabled(True)
        try:
            # only the outermost functorch JVP opens the forward-AD dual level (as torch.func.jvp)
            ctx = fwAD.dual_level() if p.jvp_nesting() == 1 else contextlib.nullcontext()
            with ctx:
                duals = tuple(fwAD.make_dual(x, t) for x, t in zip(primals, tangents, strict=True))
                res = fn(*duals)
                single = isinstance(res, torch.Tensor)
                out = []
                for y in (res,) if single else res:
                    tangent = fwAD.unpack_dual(y).tangent
                    if tangent is None:
                        tangent = torch.zeros_like(y)
                    out.append(p.unwrap_for_grad(tangent, level))
                return out[0] if single else tuple(out)
        finally:
            torch._C._set_fwd_grad_enabled(prev)
    finally:
        p.exit_jvp_nesting()


# The double-VJP (forward_by_double_vjp) is taken only for graphs with a matrix product plus bias
# (``nn.Linear``, ``F.linear`` with bias: AddmmBackward0 / AddmvBackward0), whose forward-mode
# rule is slow under both batching implementations: measured with torch 2.13, one thread, 16 to
# 256 inputs and 256 to 1024 outputs (benchmarks/forward_routes.py), the double-VJP takes
# 0.58-0.86x the time of the best forward-mode path on one or two linear layers with bias and
# tanh, relu or softmax (once 1.06x), but 1.09-1.42x on the same layers without bias (except
# a plain 256 -> 1024 product, 0.88x), so without bias it is not used.
DOUBLE_VJP_WINS = frozenset({"AddmmBackward0", "AddmvBackward0"})
# Backward-of-backward nodes (what a backward pass records under ``create_graph=True``) allowed
# in the double-VJP's batched pass: torch's older batching rules handle them without a loop
# (the graphs above).  MvBackward0 is out (2.3-200x slower on the older path, see above).
LEGACY_FAST_DOUBLE_BACKWARD = (LEGACY_FAST_BACKWARD - {"MvBackward0"}) | frozenset(
    {
        "SoftmaxBackwardDataBackward0", "TanhBackwardBackward0", "SigmoidBackwardBackward0",
        "ThresholdBackwardBackward0", "LogSoftmaxBackwardDataBackward0",
    }
)  # fmt: skip


def _custom_nodes(nodes: Sequence[Any]) -> list[str]:
    """Names of the nodes whose backward is user code (``autograd.Function``, compiled regions)."""
    custom = torch.autograd.function.BackwardCFunction
    return [n.name() for n in nodes if isinstance(n, custom)]


def _double_vjp_columns(
    leaves: tuple[torch.Tensor, ...],
    outs: tuple[torch.Tensor, ...],
    forward_nodes: Sequence[Any],
) -> list[torch.Tensor] | None:
    """The columns ``(n, *y_k.shape)`` per output from a recorded forward pass, or ``None``.

    See :func:`forward_by_double_vjp`; ``forward_nodes`` are the graph's nodes (already checked
    to hold no ``autograd.Function``).
    """
    n = sum(x.numel() for x in leaves)
    live = [k for k, y in enumerate(outs) if y.requires_grad]
    live_outs = [outs[k] for k in live]
    with torch.enable_grad():
        us = [torch.zeros_like(y, requires_grad=True) for y in live_outs]
        gs = torch.autograd.grad(live_outs, leaves, us, create_graph=True, allow_unused=True)
    used = [j for j, g in enumerate(gs) if g is not None]
    if not used or any(gs[j].grad_fn is None for j in used):
        return None
    stop = {id(node) for node in forward_nodes}
    recorded = [
        node for node in walk_graph([gs[j].grad_fn for j in used], stop=stop) if id(node) not in stop
    ]
    if _custom_nodes(recorded) or not all(
        node.name() in LEGACY_FAST_DOUBLE_BACKWARD for node in recorded
    ):
        return None
    tangents = eye_blocks([x.shape for x in leaves], leaves, cached=True)
    found = torch.autograd.grad(
        [gs[j] for j in used], us, [tangents[j] for j in used],
        is_grads_batched=True, allow_unused=True,
    )  # fmt: skip
    by_output = dict(zip(live, found, strict=True))
    return [
        _zeros_like_grad(y, n) if by_output.get(k) is None else _unshared(by_output[k], tangents)
        for k, y in enumerate(outs)
    ]


def _recorded_forward(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...]
) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...], bool, list[Any]] | None:
    """One forward pass recorded by autograd, for the older batched paths: ``(leaves, outs,
    is_tuple, graph nodes)``, or ``None`` when they do not apply (complex or non-floating
    tensors, no output depending on ``xs``, an ``autograd.Function`` or a node of
    :data:`WRONG_BATCHED_BACKWARD` in the graph)."""
    if not all(x.is_floating_point() for x in xs):
        return None
    leaves = tuple(x.detach().requires_grad_(True) for x in xs)
    with torch.enable_grad():
        outs, is_tuple = call(fn, leaves)
    if any(y.is_complex() for y in outs) or not any(y.requires_grad for y in outs):
        return None
    nodes = list(walk_graph([y.grad_fn for y in outs if y.requires_grad]))
    if _custom_nodes(nodes) or any(node.name() in WRONG_BATCHED_BACKWARD for node in nodes):
        return None
    return leaves, outs, is_tuple, nodes


def forward_by_double_vjp(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...]
) -> tuple[Blocks, bool] | None:
    """All columns from the derivative of a VJP with respect to its cotangent, or ``None``.

    The VJP ``g(u) = J^T u`` is linear in ``u``, so its own VJP with cotangent ``t`` is
    ``J t``: one forward pass, one backward pass recorded with ``create_graph=True``, and one
    ``torch.autograd.grad(g, u, tangents, is_grads_batched=True)`` call give every column (the
    "double-VJP" trick: J. Townsend, *A new trick for calculating Jacobian vector products*,
    2017; the batched call is the public one ``torch.autograd.functional.jacobian`` uses).
    For few inputs and many outputs through non-linear layers (an MLP) it is cheaper than
    ``torch.func.vmap`` over ``torch.func.jvp``.

    Used only where the result is the forward-mode one: real floating tensors, no
    ``autograd.Function`` (or compiled region) in the graph (its backward, not its forward-mode
    formula, would be differentiated), every recorded backward node in
    :data:`LEGACY_FAST_DOUBLE_BACKWARD`, at most :data:`LEGACY_MAX_ROWS` columns.  ``None``
    otherwise, or when torch refuses (an op with no double backward).
    """
    n = sum(x.numel() for x in xs)
    if not USE_LEGACY_BATCHED_GRAD or n == 0 or n > LEGACY_MAX_ROWS:
        return None
    try:
        rec = _recorded_forward(fn, xs)
        if rec is None:
            return None
        leaves, outs, is_tuple, nodes = rec
        cols = _double_vjp_columns(leaves, outs, nodes)
    except _VMAP_ERRORS:
        return None
    return (None if cols is None else (_split_cols(cols, [x.shape for x in xs]), is_tuple))


def forward_legacy_batched(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...]
) -> tuple[Blocks, bool]:
    """All columns from torch's own vectorized forward mode:
    ``torch.autograd.functional.jacobian(fn, xs, vectorize=True, strategy="forward-mode")``
    (public; dual tensors batched by torch's older batching rules).

    Fastest of torch's routes for small Jacobians of matrix products and elementwise ops
    (``nox -s bench``); slow where the older rules loop (``W @ x``: ``mv``), so
    :func:`forward_vectorized` takes it only for graphs of :data:`LEGACY_FAST_BACKWARD` nodes.
    Raises what torch raises (random ops, ops without a forward-mode formula).
    """
    holder: list[bool] = []

    def flat_fn(*args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outs, is_tuple = call(fn, args)
        holder.append(is_tuple)
        return outs

    found = torch.autograd.functional.jacobian(
        flat_fn, xs, vectorize=True, strategy="forward-mode"
    )
    blocks = [list(row) for row in found]
    return blocks, holder[0]


# What forward_vectorized did for a function and input signature (the older batched forward,
# the double-VJP, or torch.func), so that the graph is recorded and inspected once, not on every
# call.  A plan only picks the faster route: each route checks what its correctness needs
# (forward_by_double_vjp walks the graph every time); a route that fails drops back to
# torch.func.
_FORWARD_PLANS: weakref.WeakKeyDictionary[Any, dict[tuple, str]] = weakref.WeakKeyDictionary()
_MAX_PLANS = 32


def _plan_key(xs: Sequence[torch.Tensor]) -> tuple:
    return tuple((tuple(x.shape), x.dtype, x.device) for x in xs)


def _set_plan(fn: Callable[..., Any], key: tuple, plan: str) -> None:
    with contextlib.suppress(TypeError):  # fn cannot be weakly referenced (some builtins)
        plans = _FORWARD_PLANS.setdefault(fn, {})
        if len(plans) >= _MAX_PLANS:
            plans.clear()
        plans[key] = plan


def _get_plan(fn: Callable[..., Any], key: tuple) -> str | None:
    try:
        return _FORWARD_PLANS.get(fn, {}).get(key)
    except TypeError:
        return None


def _legacy_forward_plan(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...], allow_double: bool = True
) -> tuple[str, tuple[Blocks, bool] | None]:
    """Record ``fn`` once and choose: ``"double"`` (:func:`forward_by_double_vjp`, computed here
    from the same recorded pass; only with ``allow_double``, for graphs with a node of
    :data:`DOUBLE_VJP_WINS`), ``"legacy"`` (every node in :data:`LEGACY_FAST_BACKWARD`:
    :func:`forward_legacy_batched`) or ``"func"`` (``torch.func``)."""
    try:
        rec = _recorded_forward(fn, xs)
        if rec is None:
            return "func", None
        leaves, outs, is_tuple, nodes = rec
        names = {node.name() for node in nodes}
        cols = None
        if allow_double and names & DOUBLE_VJP_WINS:
            cols = _double_vjp_columns(leaves, outs, nodes)
    except _VMAP_ERRORS:
        return "func", None
    if cols is not None:
        return "double", (_split_cols(cols, [x.shape for x in xs]), is_tuple)
    return ("legacy" if names <= LEGACY_FAST_BACKWARD else "func"), None


def forward_vectorized(
    fn: Callable[..., Any],
    xs: tuple[torch.Tensor, ...],
    *,
    create_graph: bool = False,
    allow_double: bool = False,
) -> tuple[Blocks, bool]:
    """All columns in one batched call.

    Without ``create_graph``, for real tensors and at most :data:`LEGACY_MAX_ROWS` columns, the
    older batched paths where measured faster: torch's vectorized forward mode
    (:func:`forward_legacy_batched`) when every node of the graph is in
    :data:`LEGACY_FAST_BACKWARD`, but with ``allow_double`` the double-VJP
    (:func:`forward_by_double_vjp`) first for graphs with a linear layer's bias
    (:data:`DOUBLE_VJP_WINS`) when its nodes allow; otherwise, and whenever those refuse,
    ``vmap`` over one-hot tangents (as ``torch.func.jacfwd``).  The double-VJP differentiates
    the backward formulas, so it is not independent of them: ``jacobian(method="auto")`` allows
    it, ``method="forward"`` (forward-mode formulas only, e.g. to check a backward) does not.  ``create_graph`` needs nothing more there: the tangents are
    computed with differentiable operations, recorded by autograd when ``xs`` (or tensors
    ``fn`` captures) require grad.
    """
    n = sum(x.numel() for x in xs)
    if not create_graph and USE_LEGACY_BATCHED_GRAD and 0 < n <= LEGACY_MAX_ROWS:
        state = torch.get_rng_state()
        key = (_plan_key(xs), allow_double)
        plan = _get_plan(fn, key)
        found = None
        if plan is None:
            plan, found = _legacy_forward_plan(fn, xs, allow_double)
            _set_plan(fn, key, plan)
            torch.set_rng_state(state)
        if found is None and plan == "legacy":
            try:
                found = forward_legacy_batched(fn, xs)
            except _VMAP_ERRORS:
                _set_plan(fn, key, "func")
                torch.set_rng_state(state)
        elif found is None and plan == "double":
            found = forward_by_double_vjp(fn, xs)
            if found is None:
                torch.set_rng_state(state)
        if found is not None:
            return found
    holder: list[bool] = []

    def flat_fn(*args: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, ...]:
        outs, is_tuple = call(fn, args)
        holder.append(is_tuple)
        # one output as a tensor, not a 1-tuple: ~30 us less pytree work in jvp and vmap
        return outs[0] if len(outs) == 1 else outs

    in_shapes = [x.shape for x in xs]
    tangents = eye_blocks(in_shapes, xs, cached=True)
    cols = batched(lambda *t: _jvp(flat_fn, xs, t), tangents, randomness="same")
    cols = tuple(_unshared(c, tangents) for c in cols)
    return _split_cols(cols, in_shapes), holder[0]


def forward_loop(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...], *, create_graph: bool = False
) -> tuple[Blocks, bool]:
    """One JVP per input element with ``torch.autograd.forward_ad`` dual tensors.

    ``create_graph`` keeps ``xs`` attached (not detached), so the tangents are recorded.
    """
    n = sum(x.numel() for x in xs)
    tangents = eye_blocks([x.shape for x in xs], xs, cached=True)  # torch.stack below copies
    state = torch.get_rng_state()
    primals = xs if create_graph else tuple(x.detach() for x in xs)
    per_col: list[list[torch.Tensor]] | None = None
    is_tuple = False
    for c in range(n):
        torch.set_rng_state(state)
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(x, t[c]) for x, t in zip(primals, tangents, strict=True))
            outs, is_tuple = call(fn, duals)
            if per_col is None:
                per_col = [[] for _ in outs]
            for k, y in enumerate(outs):
                tangent = fwAD.unpack_dual(y).tangent
                per_col[k].append(torch.zeros_like(y) if tangent is None else tangent)
    if per_col is None:  # no input elements, so no columns: one plain call gives the output shapes
        with torch.no_grad():
            outs, is_tuple = call(fn, xs)
        cols = [torch.zeros((0, *y.shape), dtype=y.dtype, device=y.device) for y in outs]
    else:
        cols = [torch.stack(col) for col in per_col]
    return _split_cols(cols, [x.shape for x in xs]), is_tuple
